/*
 * reduce_scatter_halving.c - recursive-halving ReduceScatter, any p: the
 * halving half of Rabenseifner's AllReduce (hd.h), as reduce_scatterv_halving.c
 * does it with per-rank counts, here with p equal blocks, so a window of
 * virtual ranks is a byte range computed from its ends and nothing is O(p):
 * log2(p2) steps (p2 = largest power of two <= p) plus a fold and an unfold
 * when p is not a power of two, each to one peer. The ring needs p - 1 steps:
 * 4,095 among 4,096 hosts, where this takes 12.
 *
 * The input is copied into a private buffer (sendbuf is never written), which
 * the steps (coll_halving_rs_steps, shared with the v variant) reduce in place: step s sends the half window virtual rank v gives
 * away and reduces the partner's copy of the half it keeps into its own.
 * Virtual rank v stands for members {2v, 2v+1} for v < r (the pair that folded
 * into 2v+1), {v + r} otherwise (r = p - p2); after the last step v holds its
 * segment fully reduced, keeps its member's block and hands block 2v back to
 * the folded member 2v.
 *
 * Cost (p ranks, n = total input bytes = p blocks):
 *   (log2 p2 + 2 [p != p2]) alpha + (1 - 1/p2) n (beta + gamma)
 *   + [p != p2] (n (beta + gamma) + n/p beta) + n beta_mem (the copy)
 * Memory: n bytes private. Any p, any transport. The reduction order differs
 * from block to block (not allowed with COLL_DETERMINISTIC).
 *
 * Example, p = 3 (p2 = 2, r = 1), blocks A B C: member 0 folds its copy into
 * member 1 (v0, segment {0, 1} = blocks A B); member 2 is v1 (segment {2} =
 * C). Step 0: v0 sends C to v1 and reduces v1's A B into its own; v1 the
 * converse. Member 1 keeps B and sends A to member 0.
 */
#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/hd.h"
#include "coll/reduce_scatter/reduce_scatter.h"
#include "coll/reduce_scatterv/reduce_scatterv.h"
#include "coll/selection/tuning.h"

coll_status_t coll_reduce_scatter_halving_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                              void *recvbuf, size_t count, coll_dtype_t dt, coll_op_t op)
{
    int p = g->size, me = g->me;
    size_t blk = count * coll_dtype_size(dt), total = (size_t)p * blk;
    const char *sb = sendbuf;
    char *rb = recvbuf;
    if (count == 0 || coll_alone(p, sb, rb, blk))
        return COLL_SUCCESS;
    char *tmp = coll_work_alloc(comm, total);
    if (!tmp)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce_scatter halving: cannot allocate %zu bytes",
                          total);
    coll_status_t st = COLL_SUCCESS;
    coll_local_copy(comm, tmp, sb, total);
    int folded;
    COLL_CHECK_GOTO(coll_halving_rs_steps(comm, g, tmp, NULL, blk, rb, dt, op, &folded), st, out);
    if (!folded)
        coll_local_copy(comm, rb, tmp + (size_t)me * blk, blk);
out:
    coll_work_free(comm, tmp);
    return st;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_reduce_scatter_halving_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt, a->op);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double mem = coll_tuning_shm()->beta_us_per_b, n = (double)a->bytes, p = g->size;
    int p2 = coll_hd_pof2(g->size), odd = p2 != g->size;
    double beta = coll_cost_beta(comm, g, l), bg = beta + l->gamma_us_per_b * coll_tuning_oversub(comm);
    return (coll_hd_nsteps(g->size) + 2 * odd) * coll_cost_alpha(comm, l) + (1.0 - 1.0 / p2) * n * bg
        + odd * (n * bg + n / p * beta) + n * mem;
}

const coll_algo_t coll_algo_reduce_scatter_halving
    = COLL_ALGO(COLL_REDUCE_SCATTER, "halving",
                .desc = "recursive halving (fold/unfold for non-powers of two): log2 p steps, log2 p + 1 peers, "
                        "(1 - 1/p) n bytes; any p");
