/*
 * reduce_scatterv_direct.c - shared-memory ReduceScatterV for the ranks of
 * one host: reduce_scatter_direct.c with unequal counts. Each rank stages its
 * input blocks for the others, a barrier, then rank i reduces block i out of
 * every peer's stage (its own part out of its send buffer) into its receive
 * buffer, in the fixed order 0..p-1 (in place too: coll_reduce_multi accepts
 * out == one of its inputs).
 *
 * Chunking keeps every rank busy in every chunk: the data go in K chunks and
 * block j contributes c_j = ceil(counts[j] / K) elements to each, so a stage
 * half holds slot j (c_j elements) for every j, laid out in order, and each
 * rank's share of the work per chunk follows its share of the data. With
 * K = ceil(total / (H - p)) (H = half a stage, in elements) the slots fit:
 * sum c_j <= total/K + p <= H. Everybody computes the same K and layout from
 * the shared counts. Chunks alternate between the stage halves (one barrier
 * per chunk); zero-copy send buffers on every rank: one barrier, then each
 * rank reduces its block from the peers' send buffers. Stage protocol as in
 * allgather_direct.c (first half only before the first barrier, final barrier).
 * When the whole input fits a small slot (coll_direct_small_max) it goes through
 * the double-buffered small exchange instead: one synchronisation in all.
 *
 * Example: counts {6, 0, 2}, H = 7 elements: K = ceil(8 / 4) = 2, c = {3, 0, 1};
 * chunk 0 stages [b0[0..3) b2[0]], chunk 1 [b0[3..6) b2[1]].
 *
 * Cost (p ranks, n = total bytes, m = largest block, K chunks):
 *   (K + 1) barriers + (n - own block) beta (copy in) + (p-1) m gamma   (m: the largest block's owner)
 * small input: 1 sync + n beta + (p-1) m gamma.
 * Constraint: the group is exactly the ranks of this host.
 */
#include <math.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/reduce_scatterv/reduce_scatterv.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0 };

static size_t piece(size_t cnt, size_t off, size_t chunk) { return off < cnt ? coll_min_sz(chunk, cnt - off) : 0; }

coll_status_t coll_reduce_scatterv_direct_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                              void *recvbuf, const size_t *counts, const size_t *displs,
                                              coll_dtype_t dt, coll_op_t op)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt), total = 0, extent = 0;
    const char *sb = sendbuf;
    char *rb = recvbuf;
    if (coll_alone(p, sb + displs[0] * es, rb, counts[0] * es))
        return COLL_SUCCESS;
    for (int i = 0; i < p; i++) {
        total += counts[i];
        if (counts[i] && displs[i] + counts[i] > extent)
            extent = displs[i] + counts[i];
    }
    if (total == 0)
        return COLL_SUCCESS;
    /* small, one synchronisation: every rank posts its input extent and reduces its block */
    if (extent * es <= coll_direct_small_max(comm))
        return coll_direct_small_reduce(comm, g, sb, extent * es, displs[me] * es, rb, counts[me], dt, op);
    size_t half = coll_direct_stage_bytes(comm) / 2, cap = half / es;
    if (cap <= (size_t)p)
        return coll_error(COLL_ERR_UNSUPPORTED, COLL_SUB_COLL,
                          "reduce_scatterv direct: stage of %zu bytes too small for %d ranks", half * 2, p);
    size_t nk = (total + (cap - (size_t)p) - 1) / (cap - (size_t)p);
    size_t myc = (counts[me] + nk - 1) / nk, myslot = 0;
    for (int j = 0; j < me; j++)
        myslot += (counts[j] + nk - 1) / nk;
    int reg = coll_direct_is_registered(comm, sb, extent * es);
    coll_direct_publish(comm, PUB_SEND, reg ? sb : NULL);
    char *mine = coll_direct_stage(comm, coll_group_lr(comm, g, me));
    const char *zc[COLL_MAX_LOCAL], *src[COLL_MAX_LOCAL];
    for (size_t k = 0; k < nk; k++) {
        size_t h = (k % 2) * half;
        if (!reg)
            for (size_t i = 0, o = 0; i < (size_t)p; i++) {
                size_t ci = (counts[i] + nk - 1) / nk, cnt = piece(counts[i], k * ci, ci);
                if (cnt && i != (size_t)me) /* my own block is read from sendbuf */
                    coll_direct_copy(comm, mine + h + o * es, sb + (displs[i] + k * ci) * es, cnt * es);
                o += ci;
            }
        COLL_CHECK(coll_direct_barrier(comm));
        if (k == 0 && coll_group_peer_ptrs(comm, g, PUB_SEND, extent * es, NULL, zc)) {
            for (int j = 0; j < p; j++)
                src[j] = zc[j] + displs[me] * es;
            if (counts[me])
                coll_direct_reduce_out(comm, rb, (const void *const *)src, p, counts[me], dt, op, counts[me] * es);
            break;
        }
        size_t cnt = piece(counts[me], k * myc, myc);
        if (!cnt)
            continue;
        for (int j = 0; j < p; j++)
            src[j] = zc[j] ? zc[j] + (displs[me] + k * myc) * es
                : j == me  ? sb + (displs[me] + k * myc) * es
                           : (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + h + myslot * es;
        coll_direct_reduce_out(comm, rb + k * myc * es, (const void *const *)src, p, cnt, dt, op, counts[me] * es);
    }
    return coll_direct_barrier(comm); /* peers are done reading my stage and buffers */
}

static int usable(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_direct_usable(comm, g, ((size_t)g->size + 1) * coll_dtype_size(a->dt)); /* p + 1 elements */
}

/* a->counts / a->displs are indexed by member of g (global rank on the world). */
static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_reduce_scatterv_direct_run(comm, g, a->sendbuf, a->recvbuf, a->counts, a->displs, a->dt, a->op);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes, ov = coll_tuning_oversub(comm), m;
    coll_cost_v_bytes(g, a, &m, NULL);
    if (n <= (double)coll_direct_small_max(comm)) /* small exchange: everything copied in, 1 sync */
        return l->bar_us * ov + n * l->beta_us_per_b + (p - 1) * m * l->gamma_us_per_b * ov;
    return (coll_cost_direct_rounds(comm, n) + 1) * l->bar_us * ov + (p - 1) / p * n * l->beta_us_per_b
        + (p - 1) * m * l->gamma_us_per_b * ov;
}

const coll_algo_t coll_algo_reduce_scatterv_direct
    = COLL_ALGO(COLL_REDUCE_SCATTERV, "direct", .flags = COLL_ALGO_F_SINGLE_HOST | COLL_ALGO_F_DETERMINISTIC,
                .desc = "shared memory, one host: inputs staged in proportional slots (or zero-copy), rank i reduces "
                        "block i in order 0..p-1",
                .usable = usable);
