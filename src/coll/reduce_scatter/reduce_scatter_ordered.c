/*
 * reduce_scatter_ordered.c - deterministic ReduceScatter for COLL_DETERMINISTIC=1,
 * any host layout: member i gathers block i from every member and reduces it
 * in member order 0..p-1 (coll_ordered_reduce_scatterv, ordered.h), so the
 * bits equal reduce_scatter_direct's and do not depend on timing or hosts.
 *
 * Cost (p ranks, n = total input bytes, c = 1 + n/p / COLL_CHUNK chunks):
 *   c (p-1) alpha + (p-1)/p n (beta + gamma)
 * The ring's bandwidth, but every rank talks to every other (O(p) peers).
 * Chosen automatically only with COLL_DETERMINISTIC=1.
 */
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/execution/ordered.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    size_t *cd = malloc(sizeof(size_t) * 2 * (size_t)g->size);
    if (!cd)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce_scatter ordered: out of memory");
    for (int i = 0; i < g->size; i++) {
        cd[i] = a->count;
        cd[g->size + i] = (size_t)i * a->count;
    }
    coll_status_t st = coll_ordered_reduce_scatterv(comm, g, a->sendbuf, a->recvbuf, cd, cd + g->size, a->dt, a->op);
    free(cd);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_ordered_rsv_cost(comm, g, a->count * a->esize);
}

const coll_algo_t coll_algo_reduce_scatter_ordered = COLL_ALGO(
    COLL_REDUCE_SCATTER, "ordered",
    .flags = COLL_ALGO_F_DETERMINISTIC | COLL_ALGO_F_ORDERED_ONLY | COLL_ALGO_F_ALL_PEERS,
    .desc
    = "deterministic: each rank gathers its block from all and reduces in rank order; (p-1)/p n bytes, O(p) peers");
