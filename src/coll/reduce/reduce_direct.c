/*
 * reduce_direct.c - shared-memory Reduce for the ranks of one host.
 *
 * Per chunk of half a stage: every rank copies its input chunk, but for its
 * own slice, into the first half of its staging buffer; a barrier; rank i
 * reduces slice i of the chunk straight from every peer's stage and its own
 * send buffer (fixed order 0..p-1, so the result is bitwise identical to
 * allreduce_direct's and reproducible), the root into its recvbuf, the others
 * into the second half of their own stage; a barrier; the root copies the
 * other p-1 slices out into recvbuf (streaming when the call is large:
 * coll_direct_copy_out, coll_direct_reduce_out) while the others stage the next chunk. So the
 * reduction work is spread over all p ranks, and the root's serial copy-out
 * is (p-1)/p of the chunk (as allreduce_direct: no rank stages or copies out
 * the slice it reduces itself).
 * Zero-copy (coll_mem_alloc buffers): a rank whose send buffer is registered
 * publishes it instead of staging it; when every send buffer and the root's
 * receive buffer are published, rank i reduces slice i of the whole message
 * from the send buffers directly into the root's recvbuf: one barrier and no
 * copy at all. In place at the root, slice i of the root's buffer is both an
 * input and the output of rank i only (coll_reduce_multi allows that).
 *
 * Stage protocol (shared with the other direct algorithms, see
 * allgather_direct.c): before its first barrier a call writes only the first
 * half of its own stage; it returns after a final barrier, so no peer touches
 * this rank's stage or buffers once it has returned.
 *
 * Cost (p ranks, n bytes, c = ceil(n / (COLL_BUFFSIZE/2)) chunks):
 *   (2c + 1) barriers + (p-1)/p n beta (copy in, in parallel) + (p-1)/p n gamma
 *   (in parallel) + (p-1)/p n beta (root copies out); zero-copy: 2 barriers +
 *   (p-1)/p n gamma.
 * Constraint: the group is exactly the ranks of this host.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/reduce/reduce.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0, PUB_RECV = 1 };

/* Stage cnt elements of input at in (slice j at its block offset) for the
 * ranks that reduce them: every slice but mine, which I read from sendbuf. */
static void stage_others(coll_comm *comm, char *stage, const char *in, size_t cnt, int p, int me, size_t es)
{
    for (int j = 0; j < p; j++) {
        size_t jo = coll_block_offset(cnt, p, j), jc = coll_block_count(cnt, p, j);
        if (j != me && jc)
            coll_direct_copy(comm, stage + jo * es, in + jo * es, jc * es);
    }
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v);
    int is_root = v.me == v.ri;
    size_t half = coll_direct_stage_bytes(comm) / 2, chunk = half / v.es;
    size_t rot = coll_stage_rot(comm, v.n * v.es, half); /* a small call's windows (both halves): one chunk */
    char *mine = (char *)coll_direct_stage(comm, coll_group_lr(comm, g, v.me)) + rot;
    int send_reg = coll_direct_is_registered(comm, v.sb, v.n * v.es);
    int recv_reg = is_root && coll_direct_is_registered(comm, v.rb, v.n * v.es);
    coll_direct_publish(comm, PUB_SEND, send_reg ? v.sb : NULL);
    coll_direct_publish(comm, PUB_RECV, recv_reg ? v.rb : NULL);
    const void *src[COLL_MAX_LOCAL];
    const char *zc[COLL_MAX_LOCAL];
    for (size_t off = 0; off < v.n; off += chunk) {
        size_t cnt = coll_min_sz(chunk, v.n - off);
        if (!send_reg)
            stage_others(comm, mine, v.sb + off * v.es, cnt, v.p, v.me, v.es);
        COLL_CHECK(coll_direct_barrier(comm));
        if (off == 0) {
            int all = coll_group_peer_ptrs(comm, g, PUB_SEND, v.n * v.es, NULL, zc);
            char *out = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, v.ri), PUB_RECV, v.n * v.es);
            if (all && out) {
                size_t so = coll_block_offset(v.n, v.p, v.me), sc = coll_block_count(v.n, v.p, v.me);
                for (int j = 0; j < v.p; j++)
                    src[j] = zc[j] + so * v.es;
                if (sc)
                    coll_direct_reduce_out(comm, out + so * v.es, src, v.p, sc, a->dt, a->op, v.n * v.es);
                return coll_direct_barrier(comm); /* the root's recvbuf is complete */
            }
        }
        size_t so = coll_block_offset(cnt, v.p, v.me), sc = coll_block_count(cnt, v.p, v.me);
        for (int j = 0; j < v.p; j++)
            src[j] = (zc[j]           ? zc[j] + off * v.es
                          : j == v.me ? v.sb + off * v.es
                                      : (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + rot)
                + so * v.es;
        /* the root's slice straight into recvbuf, the others' into their output stage */
        if (sc && is_root)
            coll_direct_reduce_out(comm, v.rb + (off + so) * v.es, src, v.p, sc, a->dt, a->op, v.n * v.es);
        else if (sc)
            coll_direct_reduce(comm, mine + half + so * v.es, src, v.p, sc, a->dt, a->op);
        COLL_CHECK(coll_direct_barrier(comm));
        if (is_root)
            for (int j = 0; j < v.p; j++) {
                if (j == v.me)
                    continue;
                size_t jo = coll_block_offset(cnt, v.p, j), jc = coll_block_count(cnt, v.p, j);
                const char *out_j = (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + rot + half;
                coll_direct_copy_out(comm, v.rb + (off + jo) * v.es, out_j + jo * v.es, jc * v.es, v.n * v.es);
            }
    }
    return coll_direct_barrier(comm); /* the root is done reading the stages */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    if (g->size == 1)
        return 0; /* nothing to move (and no stage to divide by) */
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes, ov = coll_tuning_oversub(comm);
    return (2 * coll_cost_direct_rounds(comm, n) + 1) * l->bar_us * ov + (p - 1) / p * n * l->beta_us_per_b * ov
        + (p - 1) / p * n * l->gamma_us_per_b * ov + (p - 1) / p * n * l->beta_us_per_b;
}

const coll_algo_t coll_algo_reduce_direct
    = COLL_ALGO(COLL_REDUCE, "direct", .flags = COLL_ALGO_F_SINGLE_HOST | COLL_ALGO_F_DETERMINISTIC,
                .desc = "shm, one host: each rank reduces a 1/p slice of staged (or zero-copy) inputs; 2 barriers per "
                        "chunk + 1",
                .usable = coll_direct_usable_64);
