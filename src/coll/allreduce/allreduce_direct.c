/*
 * allreduce_direct.c - shared-memory AllReduce for the ranks of one host.
 *
 * Each rank copies its input chunk, but for its own slice, into its staging
 * buffer; after a barrier rank i reduces slice i of the chunk straight from
 * every peer's staging buffer and its own send buffer (fixed order 0..p-1,
 * so all ranks get bitwise identical results) into its output stage and its
 * receive buffer (reduce_slice); after a second barrier every rank copies the
 * other slices out. A call of at most COLL_STAGE_RING/2 bytes uses the next
 * windows of its stage halves (coll_stage_rot), not the lines the peers read
 * in the last call. With zero-copy buffers
 * (coll_mem_alloc on every rank) the staging copies vanish: slices are
 * reduced from the peers' send buffers straight into the owner's receive
 * buffer, then copied from the owners' receive buffers.
 *
 * Up to 32 KiB a one-synchronisation variant is used instead: each rank posts
 * its input to a double-buffered small slot and reduces the whole vector
 * itself (cost: 1 sync + n beta + (p-1) n gamma).
 *
 * Cost (p ranks, n bytes, c = n / (COLL_BUFFSIZE/2) chunks):
 *   2c barriers + (p-1)/p n beta (copy in) + (p-1)/p n gamma + n beta (own slice
 *   from L1, the others' slices out).
 * Constraint: the group is exactly the ranks of this host.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/allreduce/allreduce.h"
#include "coll/util/coll_util.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = COLL_AR_PUB_SEND, PUB_RECV = COLL_AR_PUB_RECV };

/* Up to this size every rank reduces the whole vector (one synchronisation);
 * above, each reduces a 1/p slice (two barriers, p times less reduction work). */
#define COLL_ALLREDUCE_SMALL_BYTES (32 * 1024)

int coll_allreduce_all_zero_copy(coll_comm *comm, const coll_group_t *g, size_t bytes)
{
    for (int i = 0; i < g->size; i++) {
        int lr = coll_group_lr(comm, g, i);
        if (!coll_direct_peer_ptr(comm, lr, PUB_SEND, bytes) || !coll_direct_peer_ptr(comm, lr, PUB_RECV, bytes))
            return 0;
    }
    return 1;
}

coll_status_t coll_allreduce_zero_copy(coll_comm *comm, const coll_group_t *g, void *recvbuf, size_t n, coll_dtype_t dt,
                                       coll_op_t op)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt);
    const void *src[COLL_MAX_LOCAL];
    size_t so = coll_block_offset(n, p, me), sc = coll_block_count(n, p, me);
    for (int j = 0; j < p; j++)
        src[j] = (const char *)coll_direct_peer_ptr(comm, coll_group_lr(comm, g, j), PUB_SEND, n * es) + so * es;
    if (sc)
        coll_direct_reduce_out(comm, (char *)recvbuf + so * es, src, p, sc, dt, op, n * es);
    COLL_CHECK(coll_direct_barrier(comm));
    for (int j = 0; j < p; j++) {
        if (j == me)
            continue;
        size_t jo = coll_block_offset(n, p, j), jc = coll_block_count(n, p, j);
        const char *peer = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, j), PUB_RECV, n * es);
        coll_direct_copy(comm, (char *)recvbuf + jo * es, peer + jo * es, jc * es);
    }
    return coll_direct_barrier(comm); /* peers are done reading my buffers */
}

/* My slice's result, sc elements from src[0..p-1], into my receive buffer
 * (rb) and my output stage (ob) for the peers. Two ways, the same reduction
 * order (bitwise the same result):
 * - one pass (coll_direct_reduce_out_dup): each result vector stored twice
 *   while in a register. Where every rank has a core: 2 ranks 1M 54 -> 48 us,
 *   4M 1.15x (a 512 KiB slice: 28 -> 22 us alone);
 * - reduced into ob piece by piece and each piece copied on, while in L1,
 *   into rb. With ranks sharing cores this was faster below 1 MiB slices
 *   (3 ranks 1M 160 vs 179 us, 256K 47 vs 58; 4 ranks 1M 169 vs 187),
 *   slower above (3 ranks 4M 0.95x, 4 ranks 4M 0.9x): 2026-12-05,
 *   bench/results/stage-ring-20261205.md.
 * The stores into rb stream (non-temporal) when the call's total is large
 * (COLL_COPY_NT_MIN). */
#define COLL_ALLREDUCE_PIECE (16 * 1024)
#define COLL_ALLREDUCE_DUP_MIN (1024 * 1024)
static void reduce_slice(coll_comm *comm, char *rb, char *ob, const void *const *src, int p, size_t sc, coll_dtype_t dt,
                         coll_op_t op, size_t total)
{
    size_t es = coll_dtype_size(dt);
    if (comm->machine_fits || sc * es >= COLL_ALLREDUCE_DUP_MIN) {
        coll_direct_reduce_out_dup(comm, rb, ob, src, p, sc, dt, op, total);
        return;
    }
    const void *in[COLL_MAX_LOCAL];
    size_t piece = COLL_ALLREDUCE_PIECE / es;
    for (size_t d = 0; d < sc; d += piece) {
        size_t k = coll_min_sz(piece, sc - d);
        for (int j = 0; j < p; j++)
            in[j] = (const char *)src[j] + d * es;
        coll_direct_reduce(comm, ob + d * es, in, p, k, dt, op);
        coll_direct_copy_out(comm, rb + d * es, ob + d * es, k * es, total);
    }
}

/* Stage the chunk (len bytes) for the peers, all but my own slice [so, so +
 * sc): only I reduce that slice, and I read it from my send buffer. */
static void stage_in(coll_comm *comm, int mylr, const char *chunk, size_t so, size_t sc, size_t len, size_t rot)
{
    char *in_me = (char *)coll_direct_stage(comm, mylr) + rot;
    if (so)
        coll_direct_copy(comm, in_me, chunk, so);
    if (so + sc < len)
        coll_direct_copy(comm, in_me + so + sc, chunk + so + sc, len - so - sc);
}

coll_status_t coll_allreduce_direct_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                        size_t n, coll_dtype_t dt, coll_op_t op)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt);
    if (n == 0 || coll_alone(p, sendbuf, recvbuf, n * es))
        return p == 1 ? COLL_SUCCESS : coll_direct_barrier(comm);
    /* small, one synchronisation: every rank posts its whole input and reduces the whole vector */
    if (n * es <= coll_direct_small_max(comm) && n * es <= COLL_ALLREDUCE_SMALL_BYTES)
        return coll_direct_small_reduce(comm, g, sendbuf, n * es, 0, recvbuf, n, dt, op);
    int mylr = coll_group_lr(comm, g, me);
    size_t half = coll_direct_stage_bytes(comm) / 2;
    size_t chunk = half / es;
    size_t rot = coll_stage_rot(comm, n * es, half); /* rotating (small) calls: one chunk, windows at rot, half + rot */
    int send_reg = coll_direct_is_registered(comm, sendbuf, n * es);
    coll_direct_publish(comm, PUB_SEND, sendbuf);
    coll_direct_publish(comm, PUB_RECV, recvbuf);
    const void *src[COLL_MAX_LOCAL];
    int zc_send[COLL_MAX_LOCAL];
    for (size_t off = 0; off < n; off += chunk) {
        size_t cnt = coll_min_sz(chunk, n - off);
        size_t so = coll_block_offset(cnt, p, me), sc = coll_block_count(cnt, p, me);
        if (!send_reg)
            stage_in(comm, mylr, (const char *)sendbuf + off * es, so * es, sc * es, cnt * es, rot);
        COLL_CHECK(coll_direct_barrier(comm));
        if (off == 0) {
            if (coll_allreduce_all_zero_copy(comm, g, n * es))
                return coll_allreduce_zero_copy(comm, g, recvbuf, n, dt, op);
            for (int j = 0; j < p; j++)
                zc_send[j] = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, j), PUB_SEND, n * es) != NULL;
        }
        for (int j = 0; j < p; j++) {
            int lr = coll_group_lr(comm, g, j);
            const char *base = zc_send[j] ? (const char *)coll_direct_peer_ptr(comm, lr, PUB_SEND, n * es) + off * es
                                          : (const char *)coll_direct_stage(comm, lr) + rot;
            src[j] = base + so * es;
        }
        if (!send_reg) /* my own slice was not staged: read from my send buffer */
            src[me] = (const char *)sendbuf + (off + so) * es;
        char *out_me = (char *)coll_direct_stage(comm, mylr) + half + rot;
        if (sc)
            reduce_slice(comm, (char *)recvbuf + (off + so) * es, out_me + so * es, src, p, sc, dt, op, n * es);
        COLL_CHECK(coll_direct_barrier(comm));
        for (int j = 0; j < p; j++) {
            if (j == me) /* already in place (reduce_slice) */
                continue;
            size_t jo = coll_block_offset(cnt, p, j), jc = coll_block_count(cnt, p, j);
            const char *out_j = (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + half + rot;
            coll_direct_copy_out(comm, (char *)recvbuf + (off + jo) * es, out_j + jo * es, jc * es, n * es);
        }
    }
    return COLL_SUCCESS;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_allreduce_direct_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt, a->op);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes;
    double chunks = 1.0 + n / ((double)coll_direct_stage_bytes(comm) / 2.0);
    double ov = coll_tuning_oversub(comm);
    if (n <= COLL_ALLREDUCE_SMALL_BYTES && n <= (double)coll_direct_small_max(comm))
        return l->bar_us * ov + 2 * n * l->beta_us_per_b + (p - 1) * n * l->gamma_us_per_b * ov;
    return 2 * chunks * l->bar_us * ov + (2 * p - 1) / p * n * l->beta_us_per_b
        + (p - 1) / p * n * l->gamma_us_per_b * ov;
}

const coll_algo_t coll_algo_allreduce_direct = COLL_ALGO(
    COLL_ALLREDUCE, "direct", .flags = COLL_ALGO_F_SINGLE_HOST | COLL_ALGO_F_DETERMINISTIC,
    .desc
    = "shared memory, one host: each rank reduces its 1/p slice from every peer's staged (or zero-copy) data; 2 barriers per chunk",
    .usable = coll_direct_usable_any);
