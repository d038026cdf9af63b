/*
 * allreduce_cma.c - AllReduce for the ranks of one host, large messages, with
 * cross-memory attach (process_vm_readv) instead of staging.
 *
 * Every rank publishes the addresses of its buffers; after a barrier rank i
 * reduces slice i: piece by piece (cache-sized), it reads each peer's part of
 * the piece straight from the peer's private send buffer (process_vm_readv),
 * reduces (fixed order 0..p-1, bitwise-identical results everywhere) into a
 * scratch piece still in cache, and copies that result into its own receive
 * buffer and into every peer's (process_vm_writev). A second barrier proves
 * every slice has been written everywhere and keeps buffers alive until every
 * peer is done with them. In place (sendbuf == recvbuf) is safe: piece k of
 * slice i is read and written by rank i only, reads before writes.
 *
 * Memory traffic per rank: about 2 n for p = 2 (n/2 read of the peer, n/2 of
 * its own, n/2 written to its own and n/2 to the peer's buffer, the written
 * pieces read from cache; staging: about 5.5 n).
 * Cost: 2 barriers + syscalls + (p-1)/p n (beta_cma + gamma) + (p-1)/p n beta_cma.
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them read and write each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/allreduce/allreduce.h"
#include "coll/execution/cma.h"
#include "coll/util/coll_util.h"
#include "coll/selection/tuning.h"
#include "core/reduce.h"
#include "transport/direct.h"

#define PIECE_BYTES (64 * 1024)
enum { PUB_SEND = 2, PUB_RECV = 3 }; /* slots 0/1 are the direct algorithm's */

/* Slice me of the result, piece by piece: every peer's part read into tmp
 * (the first one, when it is not mine, into acc), reduced in rank order into
 * acc, then acc copied to my receive buffer and written into every peer's.
 * Ends with the second barrier. p >= 2 (coll_alone handles 1). */
static coll_status_t reduce_slice(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf, size_t n,
                                  coll_dtype_t dt, coll_op_t op, char *tmp)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt);
    size_t so = coll_block_offset(n, p, me), sc = coll_block_count(n, p, me);
    size_t piece = PIECE_BYTES / es;
    char *acc = tmp + PIECE_BYTES;
    const char *mine = (const char *)sendbuf + so * es;
    for (size_t off = 0; off < sc; off += piece) {
        size_t k = coll_min_sz(piece, sc - off), at = (so + off) * es;
        const char *first = mine + off * es; /* in[0] of the pairwise chain */
        for (int j = 0; j < p; j++) {
            const char *src = mine + off * es;
            if (j != me) {
                char *dst = j == 0 ? acc : tmp;
                COLL_CHECK(coll_direct_cma_read(comm, coll_group_lr(comm, g, j), PUB_SEND, at, dst, k * es));
                src = dst;
            }
            if (j == 0) {
                first = src;
                continue;
            }
            const void *in[2] = {j == 1 ? first : acc, src};
            coll_direct_reduce(comm, acc, in, 2, k, dt, op);
        }
        coll_direct_copy(comm, (char *)recvbuf + at, acc, k * es);
        for (int j = 0; j < p; j++)
            if (j != me)
                COLL_CHECK(coll_direct_cma_write(comm, coll_group_lr(comm, g, j), PUB_RECV, at, acc, k * es));
    }
    return coll_direct_barrier(comm);
}

coll_status_t coll_allreduce_cma_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                     size_t n, coll_dtype_t dt, coll_op_t op)
{
    int p = g->size;
    size_t es = coll_dtype_size(dt);
    if (n == 0 || coll_alone(p, sendbuf, recvbuf, n * es))
        return p == 1 ? COLL_SUCCESS : coll_direct_barrier(comm);
    char *tmp;
    COLL_CHECK(coll_comm_scratch(comm, 2 * PIECE_BYTES, (void **)&tmp));
    const void *bufs[2] = {sendbuf, recvbuf};
    size_t lens[2] = {n * es, n * es};
    COLL_CHECK(coll_cma_open(comm, 2, bufs, lens, PUB_SEND, COLL_AR_PUB_SEND));
    if (coll_allreduce_all_zero_copy(comm, g, n * es)) /* coll_mem_alloc buffers everywhere: no copy at all */
        return coll_allreduce_zero_copy(comm, g, recvbuf, n, dt, op);
    return reduce_slice(comm, g, sendbuf, recvbuf, n, dt, op, tmp);
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_allreduce_cma_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt, a->op);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes, ov = coll_tuning_oversub(comm);
    double pages = n / 4096.0;
    /* syscall per piece and page pinning make it pay only for large messages */
    return 2 * l->bar_us * ov + 2.0 * (p - 1) / p * (n / PIECE_BYTES) + 0.05 * pages
        + 2 * (p - 1) / p * n * l->beta_us_per_b * 0.5 + (p - 1) / p * n * l->gamma_us_per_b * ov;
}

const coll_algo_t coll_algo_allreduce_cma = COLL_ALGO(
    COLL_ALLREDUCE, "cma", .flags = COLL_ALGO_F_SINGLE_HOST | COLL_ALGO_F_DETERMINISTIC,
    .desc
    = "one host, large messages: slices reduced straight from peers' private buffers with process_vm_readv, results written into peers with process_vm_writev; 2 barriers",
    .usable = coll_cma_usable);
