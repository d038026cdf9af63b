/*
 * broadcast_binomial.c - binomial-tree Broadcast: a member receives the whole
 * message from its parent, then sends it to its children one after another,
 * deepest subtree first (tree.h), so that after round k 2^k members hold it.
 *
 * Cost (p ranks, n bytes, L = ceil(log2 p)): L (alpha + n beta).
 * Latency-optimal; best for small messages. Not chunk-pipelined on purpose:
 * the root sends every byte L times whatever the chunking, so pipelining would
 * only add alpha per chunk without lowering the L n beta term (for large
 * messages use pipeline or scatter_allgather). Any p, any root, any transport.
 *
 * Example, p = 5, root = 0: round 1: 0 -> 4; round 2: 0 -> 2; round 3: 0 -> 1,
 * 2 -> 3. Member 4 (relative rank 4, subtree {4}) has no children.
 */
#include "coll/algo.h"
#include "coll/broadcast/broadcast.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/execution/tree.h"
#include "coll/selection/tuning.h"

coll_status_t coll_broadcast_binomial_run(coll_comm *comm, const coll_group_t *g, void *buf, size_t n, coll_dtype_t dt,
                                          int root)
{
    int p = g->size, me = g->me, ri;
    size_t bytes = n * coll_dtype_size(dt);
    COLL_CHECK(coll_root_index(g, "broadcast", root, &ri));
    if (p == 1 || bytes == 0)
        return COLL_SUCCESS;
    int parent = coll_tree_binomial_parent(me, ri, p);
    if (parent >= 0)
        COLL_CHECK(coll_prim_sendrecv(comm, NULL, 0, -1, buf, bytes, g->ranks[parent]));
    int kids[COLL_TREE_MAX_CHILDREN];
    int nk = coll_tree_binomial_children(me, ri, p, kids);
    for (int k = 0; k < nk; k++)
        COLL_CHECK(coll_prim_sendrecv(comm, buf, bytes, g->ranks[kids[k]], NULL, 0, -1));
    return COLL_SUCCESS;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_broadcast_binomial_run(comm, g, a->recvbuf, a->count, a->dt, a->root);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_cost_step_t s = coll_cost_tree_step(comm, g);
    return coll_tree_binomial_depth(g->size) * (s.alpha + (double)a->bytes * s.beta);
}

const coll_algo_t coll_algo_broadcast_binomial = COLL_ALGO(
    COLL_BROADCAST, "binomial", .desc = "binomial tree, ceil(log2 p) rounds of the whole message; small messages");
