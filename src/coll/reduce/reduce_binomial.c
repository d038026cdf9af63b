/*
 * reduce_binomial.c - binomial-tree Reduce: a member receives its children's
 * partial results one after another (nearest child first: relative rank v+1,
 * v+2, v+4, ..., the shallow subtrees that are ready first), reducing each
 * into its accumulator as it arrives (acc = mine OP child_1, then
 * acc = acc OP child_2, ...), then sends the accumulator to its parent. Leaves send their input untouched;
 * inner non-root members accumulate in working memory (n bytes); the root accumulates in recvbuf (in place
 * when sendbuf == recvbuf).
 *
 * Cost (p ranks, n bytes, L = ceil(log2 p)): L (alpha + n beta + n gamma).
 * Latency-optimal; best for small messages (large: pipeline or rs_gather).
 * The reduction order is fixed for a given (p, root): results are bitwise
 * reproducible. Any p, any root, any transport.
 *
 * Example, p = 5, root = 0: 1 -> 0; 3 -> 2; 2 -> 0 (acc = x2 OP x3);
 * 4 -> 0. Root: acc = x0 OP x1, acc OP (x2 OP x3), acc OP x4.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/reduce/reduce.h"
#include "coll/execution/tree.h"
#include "coll/selection/tuning.h"

coll_status_t coll_reduce_binomial_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                       size_t n, coll_dtype_t dt, coll_op_t op, int root)
{
    int p = g->size, me = g->me, ri;
    size_t bytes = n * coll_dtype_size(dt);
    COLL_CHECK(coll_root_index(g, "reduce", root, &ri));
    if (bytes == 0 || coll_alone(p, sendbuf, recvbuf, bytes))
        return COLL_SUCCESS;
    int kids[COLL_TREE_MAX_CHILDREN];
    int nk = coll_tree_binomial_children(me, ri, p, kids);
    int parent = coll_tree_binomial_parent(me, ri, p);
    int inner = parent >= 0 && nk > 0;
    const void *src = sendbuf;
    void *acc = recvbuf;
    if (inner)
        COLL_CHECK(coll_tmp_get(comm, g, bytes, &acc));
    coll_status_t st = COLL_SUCCESS;
    for (int k = nk - 1; k >= 0; k--) { /* nearest (shallowest) child first */
        COLL_CHECK_GOTO(coll_prim_send_recv_reduce(comm, NULL, 0, -1, acc, src, bytes, g->ranks[kids[k]], dt, op), st,
                        out);
        src = acc;
    }
    if (parent >= 0)
        COLL_CHECK_GOTO(coll_prim_sendrecv(comm, src, bytes, g->ranks[parent], NULL, 0, -1), st, out);
out:
    if (inner)
        coll_tmp_put(comm, g, acc);
    return st;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_reduce_binomial_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->root);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double n = (double)a->bytes;
    coll_cost_step_t s = coll_cost_tree_step(comm, g);
    return coll_tree_binomial_depth(g->size) * (s.alpha + n * s.beta + n * s.gamma);
}

const coll_algo_t coll_algo_reduce_binomial
    = COLL_ALGO(COLL_REDUCE, "binomial",
                .desc = "binomial tree with receive-reduce, ceil(log2 p) rounds of the whole message; small messages");
