/*
 * broadcast_scatter_allgather.c - van de Geijn Broadcast for large messages:
 * the buffer is cut into p blocks, block v belonging to relative rank v
 * (v = member - root mod p); a binomial scatter gives every member its block,
 * then a ring allgather (p-1 steps over relative ranks) completes everyone.
 *
 * Binomial scatter: the subtree of relative rank v is [v, v + size) (tree.h),
 * and blocks are laid out in relative order, so the blocks a subtree needs are
 * one contiguous byte range of buf: a member receives its subtree's range from
 * its parent straight into buf, then sends each child's range (deepest child
 * first). No scratch, in place.
 *
 * Cost (p ranks, n bytes, L = ceil(log2 p)):
 *   scatter   L alpha + (p-1)/p n beta
 *   allgather (p-1) alpha + (p-1)/p n beta
 *   total     (L + p - 1) alpha + 2 (p-1)/p n beta
 * vs binomial L n beta: wins for large n on p >= 3. Any p, any root, any
 * transport; n < p leaves some blocks empty (zero-length steps are skipped).
 *
 * Example, p = 3, root = 1, n = 7 elements: blocks (relative) 0:[0,3) 1:[3,5)
 * 2:[5,7). Scatter: 1 -> 0 (relative 2) elements [5,7); 1 -> 2 (relative 1)
 * elements [3,5). Ring over relative ranks 0 -> 1 -> 2 -> 0 (members 1 -> 2 ->
 * 0 -> 1): step 0 each sends its own block, step 1 the block it just got.
 */
#include "coll/algo.h"
#include "coll/broadcast/broadcast.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/execution/tree.h"
#include "coll/selection/tuning.h"

/* Byte range of relative blocks [v, v + k). */
static void range(size_t n, int p, int v, int k, size_t es, size_t *off, size_t *len)
{
    size_t a = coll_block_offset(n, p, v), b = v + k < p ? coll_block_offset(n, p, v + k) : n;
    *off = a * es;
    *len = (b - a) * es;
}

coll_status_t coll_broadcast_scatter_allgather_run(coll_comm *comm, const coll_group_t *g, void *buf, size_t n,
                                                   coll_dtype_t dt, int root)
{
    int p = g->size, me = g->me, ri;
    size_t es = coll_dtype_size(dt), off, len;
    char *b = buf;
    COLL_CHECK(coll_root_index(g, "broadcast", root, &ri));
    if (p == 1 || n == 0)
        return COLL_SUCCESS;
    int v = coll_tree_rel(me, ri, p);
    /* scatter */
    int parent = coll_tree_binomial_parent(me, ri, p);
    if (parent >= 0) {
        range(n, p, v, coll_tree_binomial_subtree(me, ri, p), es, &off, &len);
        COLL_CHECK(coll_prim_sendrecv(comm, NULL, 0, -1, b + off, len, g->ranks[parent]));
    }
    int kids[COLL_TREE_MAX_CHILDREN];
    int nk = coll_tree_binomial_children(me, ri, p, kids);
    for (int k = 0; k < nk; k++) {
        range(n, p, coll_tree_rel(kids[k], ri, p), coll_tree_binomial_subtree(kids[k], ri, p), es, &off, &len);
        COLL_CHECK(coll_prim_sendrecv(comm, b + off, len, g->ranks[kids[k]], NULL, 0, -1));
    }
    /* ring allgather over relative ranks: step s sends block v-s, receives v-s-1 */
    int right = g->ranks[coll_tree_abs(coll_ring_next(v, p), ri, p)];
    int left = g->ranks[coll_tree_abs(coll_ring_prev(v, p), ri, p)];
    for (int s = 0; s < p - 1; s++) {
        size_t soff, slen, roff, rlen;
        range(n, p, coll_mod(v - s, p), 1, es, &soff, &slen);
        range(n, p, coll_mod(v - s - 1, p), 1, es, &roff, &rlen);
        COLL_CHECK(coll_prim_sendrecv(comm, b + soff, slen, right, b + roff, rlen, left));
    }
    return COLL_SUCCESS;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_broadcast_scatter_allgather_run(comm, g, a->recvbuf, a->count, a->dt, a->root);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double p = g->size, n = (double)a->bytes;
    coll_cost_step_t s = coll_cost_tree_step(comm, g);
    return (coll_tree_binomial_depth(g->size) + p - 1) * s.alpha + 2 * (p - 1) / p * n * s.beta;
}

const coll_algo_t coll_algo_broadcast_scatter_allgather = COLL_ALGO(
    COLL_BROADCAST, "scatter_allgather",
    .desc = "van de Geijn: binomial scatter + ring allgather; (log p + p-1) alpha + 2(p-1)/p n beta, large");
