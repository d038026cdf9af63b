/*
 * reduce_ordered.c - deterministic Reduce for COLL_DETERMINISTIC=1, any host
 * layout: the vector is cut into p nearly equal blocks; member i gathers block
 * i from every member and reduces it in member order 0..p-1
 * (coll_ordered_reduce_scatterv, ordered.h), then every member sends its block
 * to the root, which receives them all at once straight into recvbuf. Every
 * element is ((x0 OP x1) OP x2) ... OP x_{p-1}: the bits of reduce_direct and
 * allreduce_ordered, for any root, timing or hosts.
 *
 * Cost (p ranks, n bytes, c = 1 + n/p / COLL_CHUNK chunks):
 *   c (p-1) alpha + (p-1)/p n (beta + gamma) + alpha + (p-1)/p n beta (the root's link)
 * Working memory: n/p bytes on members other than the root. O(p) peers.
 * Chosen automatically only with COLL_DETERMINISTIC=1.
 */
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/ordered.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int p = g->size, me = g->me, root = coll_group_index(g, a->root);
    size_t n = a->count, es = a->esize;
    if (n == 0)
        return COLL_SUCCESS;
    size_t *cd = malloc(sizeof(size_t) * 2 * (size_t)p);
    coll_prim_t *ops = malloc(sizeof(coll_prim_t) * (size_t)p);
    char *blk = me == root ? (char *)a->recvbuf + coll_block_offset(n, p, me) * es
                           : malloc(coll_block_count(n, p, me) * es + 1);
    coll_status_t st = COLL_SUCCESS;
    if (!cd || !ops || !blk) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce ordered: out of memory");
        goto out;
    }
    for (int i = 0; i < p; i++) {
        cd[i] = coll_block_count(n, p, i);
        cd[p + i] = coll_block_offset(n, p, i);
    }
    COLL_CHECK_GOTO(coll_ordered_reduce_scatterv(comm, g, a->sendbuf, blk, cd, cd + p, a->dt, a->op), st, out);
    int k = 0;
    if (me != root) {
        if (cd[me])
            ops[k++] = coll_prim_send(g->ranks[root], blk, cd[me] * es);
    } else {
        for (int i = 0; i < p; i++)
            if (i != root && cd[i])
                ops[k++] = coll_prim_recv(g->ranks[i], (char *)a->recvbuf + cd[p + i] * es, cd[i] * es);
    }
    if (k)
        st = coll_prim_run(comm, ops, k, a->dt, a->op);
out:
    if (me != root)
        free(blk);
    free(ops);
    free(cd);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_ordered_reduce_cost(comm, g, a, 1);
}

const coll_algo_t coll_algo_reduce_ordered = COLL_ALGO(
    COLL_REDUCE, "ordered", .flags = COLL_ALGO_F_DETERMINISTIC | COLL_ALGO_F_ORDERED_ONLY | COLL_ALGO_F_ALL_PEERS,
    .desc
    = "deterministic: rank-order reduce-scatter (each rank gathers its block from all) + gather to the root; O(p) peers");
