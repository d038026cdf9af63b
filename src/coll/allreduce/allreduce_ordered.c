/*
 * allreduce_ordered.c - deterministic AllReduce for COLL_DETERMINISTIC=1, any
 * host layout: the vector is cut into p nearly equal blocks; member i gathers
 * block i from every member and reduces it in member order 0..p-1
 * (coll_ordered_reduce_scatterv, ordered.h) into its recvbuf, then a ring
 * allgather passes the finished blocks around (p-1 steps, copies only). Every
 * element is ((x0 OP x1) OP x2) ... OP x_{p-1}: the bits of allreduce_direct,
 * whatever the timing or the hosts.
 *
 * Cost (p ranks, n bytes, c = 1 + n/p / COLL_CHUNK chunks):
 *   reduce-scatter  c (p-1) alpha + (p-1)/p n (beta + gamma)
 *   allgather         (p-1) alpha + (p-1)/p n beta
 *   total           (c+1)(p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
 * The ring's bandwidth and p-1 more latencies than it per chunk; every rank
 * talks to every other (O(p) peers). Chosen automatically only with
 * COLL_DETERMINISTIC=1.
 *
 * Example, p = 3, n = 7: blocks of 3, 2, 2 elements; member 1 reduces
 * elements 3..4 as (x0 + x1) + x2 and the allgather brings blocks 0 and 2.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/ordered.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int p = g->size, me = g->me;
    size_t n = a->count, es = a->esize;
    char *rb = a->recvbuf;
    if (n == 0)
        return COLL_SUCCESS;
    size_t *cd = malloc(sizeof(size_t) * 2 * (size_t)p);
    if (!cd)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "allreduce ordered: out of memory");
    for (int i = 0; i < p; i++) {
        cd[i] = coll_block_count(n, p, i);
        cd[p + i] = coll_block_offset(n, p, i);
    }
    coll_status_t st = coll_ordered_reduce_scatterv(comm, g, a->sendbuf, rb + cd[p + me] * es, cd, cd + p, a->dt,
                                                    a->op);
    /* ring allgather in recvbuf: step s sends block me - s, receives block me - s - 1 */
    int right = g->ranks[coll_ring_next(me, p)], left = g->ranks[coll_ring_prev(me, p)];
    for (int s = 0; st == COLL_SUCCESS && s < p - 1; s++) {
        int sb = coll_mod(me - s, p), rblk = coll_mod(me - s - 1, p);
        st = coll_prim_sendrecv(comm, rb + cd[p + sb] * es, cd[sb] * es, right, rb + cd[p + rblk] * es, cd[rblk] * es,
                                left);
    }
    free(cd);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_ordered_reduce_cost(comm, g, a, g->size - 1);
}

const coll_algo_t coll_algo_allreduce_ordered = COLL_ALGO(
    COLL_ALLREDUCE, "ordered", .flags = COLL_ALGO_F_DETERMINISTIC | COLL_ALGO_F_ORDERED_ONLY | COLL_ALGO_F_ALL_PEERS,
    .desc
    = "deterministic: rank-order reduce-scatter (each rank gathers its block from all) + ring allgather; O(p) peers");
