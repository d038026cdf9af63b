/*
 * reduce_scatterv_halving.c - recursive-halving ReduceScatterV with per-rank
 * counts, any p: the halving half of Rabenseifner's AllReduce (hd.h) over
 * blocks of different sizes. log2(p2) steps (p2 = largest power of two <= p)
 * plus a fold and an unfold when p is not a power of two; each to one peer,
 * so a rank talks to at most log2 p + 1 peers, where the ring needs p - 1
 * steps.
 *
 * The input blocks are packed in member order into a private buffer (so
 * sendbuf is never written and displs may leave gaps). Virtual rank v (hd.h)
 * stands for the members of its segment: {2v, 2v+1} for v < r (the pair that
 * folded into 2v+1), {v + r} otherwise; segments are contiguous in the packed
 * buffer, so a window of virtual ranks is one byte range whatever the counts.
 * Step s of coll_hd_halving sends the half window v gives away and reduces
 * the partner's copy of the half it keeps into its own (in place). After the
 * last step v holds its segment fully reduced: it keeps its member's block and
 * hands block 2v back to the folded member 2v.
 *
 * Cost (p ranks, T = sum of the counts in bytes, m = the largest block):
 *   (log2 p2 + 2 [p != p2]) alpha + (1 - 1/p2) T (beta + gamma)
 *   + [p != p2] (T (beta + gamma) + m beta) + T beta_mem (packing)
 * for even counts; uneven ones move what their windows hold.
 * Memory: T bytes private. Any p, any transport.
 *
 * Example, p = 3 (p2 = 2, r = 1), counts {1, 2, 3}: member 0 folds its packed
 * 6 elements into member 1 (v0, segment {0, 1} = elements [0, 3)); member 2 is
 * v1 (segment {2} = [3, 6)). Step 0: v0 sends [3, 6) to v1 and reduces v1's
 * [0, 3) into its own; v1 the converse. Member 1 sends element [0, 1) to 0.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/hd.h"
#include "coll/execution/prim.h"
#include "coll/reduce_scatterv/reduce_scatterv.h"
#include "coll/selection/tuning.h"

/* First member of virtual rank v's segment (v = p2 gives p). */
static int seg_lo(int v, int p)
{
    int r = p - coll_hd_pof2(p);
    return v < r ? 2 * v : v + r;
}

/* Byte offset of member i's block in the packed buffer (i = p: its end). */
static size_t blk_off(const size_t *po, size_t blk, int i) { return po ? po[i] : (size_t)i * blk; }

coll_status_t coll_halving_rs_steps(coll_comm *comm, const coll_group_t *g, char *tmp, const size_t *po, size_t blk,
                                    void *rb, coll_dtype_t dt, coll_op_t op, int *folded)
{
    int p = g->size, me = g->me;
    size_t total = blk_off(po, blk, p);
    int v = coll_hd_vrank(me, p), fold = coll_hd_fold_peer(me, p);
    *folded = fold >= 0 && v < 0;
    if (*folded) { /* even member of a pair: fold out, get my block back at the end */
        COLL_CHECK(coll_prim_sendrecv(comm, tmp, total, g->ranks[fold], NULL, 0, -1));
        return coll_prim_sendrecv(comm, NULL, 0, -1, rb, blk_off(po, blk, me + 1) - blk_off(po, blk, me),
                                  g->ranks[fold]);
    }
    if (fold >= 0)
        COLL_CHECK(coll_prim_send_recv_reduce(comm, NULL, 0, -1, tmp, tmp, total, g->ranks[fold], dt, op));
    for (int s = 0, n = coll_hd_nsteps(p); s < n; s++) {
        coll_hd_step_t h = coll_hd_halving(v, p, s);
        int peer = g->ranks[coll_hd_member(h.peer, p)];
        size_t so = blk_off(po, blk, seg_lo(h.send_lo, p)), se = blk_off(po, blk, seg_lo(h.send_lo + h.send_n, p));
        size_t ko = blk_off(po, blk, seg_lo(h.keep_lo, p)), ke = blk_off(po, blk, seg_lo(h.keep_lo + h.keep_n, p));
        COLL_CHECK(
            coll_prim_send_recv_reduce(comm, tmp + so, se - so, peer, tmp + ko, tmp + ko, ke - ko, peer, dt, op));
    }
    if (fold >= 0)
        return coll_prim_sendrecv(comm, tmp + blk_off(po, blk, fold),
                                  blk_off(po, blk, fold + 1) - blk_off(po, blk, fold), g->ranks[fold], NULL, 0, -1);
    return COLL_SUCCESS;
}

coll_status_t coll_reduce_scatterv_halving_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                               void *recvbuf, const size_t *counts, const size_t *displs,
                                               coll_dtype_t dt, coll_op_t op)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt);
    const char *sb = sendbuf;
    char *rb = recvbuf;
    if (coll_alone(p, sb + displs[0] * es, rb, counts[0] * es))
        return COLL_SUCCESS;
    size_t *po = malloc(sizeof *po * ((size_t)p + 1)); /* packed byte offset of member i's block */
    if (!po)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce_scatterv halving: out of memory");
    po[0] = 0;
    for (int i = 0; i < p; i++)
        po[i + 1] = po[i] + counts[i] * es;
    size_t total = po[p];
    char *tmp = total ? coll_work_alloc(comm, total) : NULL;
    coll_status_t st = COLL_SUCCESS;
    if (total && !tmp) {
        free(po);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce_scatterv halving: cannot allocate %zu bytes",
                          total);
    }
    if (total == 0)
        goto out;
    for (int i = 0; i < p; i++)
        if (counts[i])
            memcpy(tmp + po[i], sb + displs[i] * es, counts[i] * es);
    int folded;
    COLL_CHECK_GOTO(coll_halving_rs_steps(comm, g, tmp, po, 0, rb, dt, op, &folded), st, out);
    if (!folded && counts[me] && rb != tmp + po[me])
        memcpy(rb, tmp + po[me], counts[me] * es);
out:
    coll_work_free(comm, tmp);
    free(po);
    return st;
}

/* a->counts / a->displs are indexed by member of g (global rank on the world). */
static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_reduce_scatterv_halving_run(comm, g, a->sendbuf, a->recvbuf, a->counts, a->displs, a->dt, a->op);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double mem = coll_tuning_shm()->beta_us_per_b, m;
    double T = coll_cost_v_bytes(g, a, &m, NULL);
    int p2 = coll_hd_pof2(g->size), odd = p2 != g->size;
    double beta = coll_cost_beta(comm, g, l), bg = beta + l->gamma_us_per_b * coll_tuning_oversub(comm);
    return (coll_hd_nsteps(g->size) + 2 * odd) * coll_cost_alpha(comm, l) + (1.0 - 1.0 / p2) * T * bg
        + odd * (T * bg + m * beta) + T * mem;
}

const coll_algo_t coll_algo_reduce_scatterv_halving
    = COLL_ALGO(COLL_REDUCE_SCATTERV, "halving",
                .desc = "recursive halving with per-rank counts (fold/unfold for non-powers of two): log2 p steps, "
                        "log2 p + 1 peers; any p");
