/*
 * allreduce_cma.c - AllReduce for the ranks of one host, large messages, with
 * cross-memory attach (process_vm_readv) instead of staging.
 *
 * Every rank publishes the addresses of its buffers; after a barrier rank i
 * reduces slice i: it reads each peer's slice in cache-sized pieces straight
 * from the peer's private send buffer and reduces them (fixed order 0..p-1,
 * bitwise-identical results everywhere) into its own receive buffer. After a
 * second barrier every rank copies the other slices straight out of their
 * owners' receive buffers, one process_vm_readv each; a third barrier keeps
 * buffers alive until every peer has read them.
 *
 * Memory traffic per rank: about 2.5 n for p = 2 (staging: about 5.5 n).
 * Cost: 3 barriers + syscalls + (p-1)/p n (beta_cma + gamma) + (p-1)/p n beta_cma.
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them read each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/allreduce/allreduce.h"
#include "coll/coll_util.h"
#include "coll/tuning.h"
#include "core/reduce.h"
#include "transport/direct.h"

#define PIECE_BYTES (64 * 1024)
enum { PUB_SEND = 2, PUB_RECV = 3 }; /* slots 0/1 are the direct algorithm's */

coll_status_t coll_allreduce_cma_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                     size_t n, coll_dtype_t dt, coll_op_t op)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt);
    if (n == 0 || coll_alone(p, sendbuf, recvbuf, n * es))
        return p == 1 ? COLL_SUCCESS : coll_direct_barrier(comm);
    coll_direct_publish_addr(comm, PUB_SEND, sendbuf);
    coll_direct_publish_addr(comm, PUB_RECV, recvbuf);
    coll_direct_publish(comm, COLL_AR_PUB_SEND, sendbuf);
    coll_direct_publish(comm, COLL_AR_PUB_RECV, recvbuf);
    char *tmp, *acc;
    COLL_CHECK(coll_comm_scratch(comm, 2 * PIECE_BYTES, (void **)&tmp));
    acc = tmp + PIECE_BYTES;
    COLL_CHECK(coll_direct_barrier(comm));
    if (coll_allreduce_all_zero_copy(comm, g)) /* coll_mem_alloc buffers everywhere: no copy at all */
        return coll_allreduce_zero_copy(comm, g, recvbuf, n, dt, op);
    size_t so = coll_block_offset(n, p, me), sc = coll_block_count(n, p, me);
    size_t piece = PIECE_BYTES / es;
    char *out = (char *)recvbuf + so * es;
    const char *mine = (const char *)sendbuf + so * es;
    for (size_t off = 0; off < sc; off += piece) {
        size_t k = coll_min_sz(piece, sc - off);
        /* acc = in[0] op in[1] op ... in fixed order (in place: my input is only
         * read here, and the result is written after the last input is used) */
        for (int j = 0; j < p; j++) {
            const char *src;
            if (j == me) {
                src = mine + off * es;
            } else {
                COLL_CHECK(coll_direct_cma_read(comm, coll_group_lr(comm, g, j), PUB_SEND, (so + off) * es,
                                                j == 0 ? acc : tmp, k * es));
                src = j == 0 ? acc : tmp;
            }
            if (j == 0) {
                if (src != acc)
                    coll_direct_copy(comm, acc, src, k * es);
            } else {
                const void *in[2] = {acc, src};
                coll_direct_reduce(comm, acc, in, 2, k, dt, op);
            }
        }
        coll_direct_copy(comm, out + off * es, acc, k * es);
    }
    COLL_CHECK(coll_direct_barrier(comm));
    for (int j = 0; j < p; j++) {
        if (j == me)
            continue;
        size_t jo = coll_block_offset(n, p, j), jc = coll_block_count(n, p, j);
        if (jc)
            COLL_CHECK(coll_direct_cma_read(comm, coll_group_lr(comm, g, j), PUB_RECV, jo * es,
                                            (char *)recvbuf + jo * es, jc * es));
    }
    return coll_direct_barrier(comm);
}

static int usable(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_direct_usable(comm, g, 0) && (g->size == 1 || coll_direct_cma_ok(comm));
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
    return 3 * l->bar_us * ov + 2.0 * (p - 1) / p * (n / PIECE_BYTES) + 0.05 * pages
        + 2 * (p - 1) / p * n * l->beta_us_per_b * 0.5 + (p - 1) / p * n * l->gamma_us_per_b * ov;
}

const coll_algo_t coll_algo_allreduce_cma = COLL_ALGO(
    COLL_ALLREDUCE, "cma", .flags = COLL_ALGO_F_SINGLE_HOST | COLL_ALGO_F_DETERMINISTIC,
    .desc
    = "one host, large messages: slices reduced straight from peers' private buffers with process_vm_readv; 3 barriers",
    .usable = usable);
