/*
 * reduce_scatterv_ordered.c - deterministic ReduceScatterV for COLL_DETERMINISTIC=1,
 * any host layout: member i gathers block i from every member and reduces it
 * in member order 0..p-1 (coll_ordered_reduce_scatterv, ordered.h), so the
 * bits equal reduce_scatterv_direct's and do not depend on timing or hosts.
 *
 * Cost (p ranks, m = largest block in bytes, c = 1 + m / COLL_CHUNK chunks):
 *   c (p-1) alpha + (p-1) m (beta + gamma)
 * The ring's bandwidth, but every rank talks to every other (O(p) peers).
 * Chosen automatically only with COLL_DETERMINISTIC=1.
 */
#include "coll/algo.h"
#include "coll/execution/ordered.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_ordered_reduce_scatterv(comm, g, a->sendbuf, a->recvbuf, a->counts, a->displs, a->dt, a->op);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    size_t m = 0;
    for (int i = 0; i < g->size; i++)
        m = a->counts[i] > m ? a->counts[i] : m;
    return coll_ordered_rsv_cost(comm, g, m * a->esize);
}

const coll_algo_t coll_algo_reduce_scatterv_ordered = COLL_ALGO(
    COLL_REDUCE_SCATTERV, "ordered",
    .flags = COLL_ALGO_F_DETERMINISTIC | COLL_ALGO_F_ORDERED_ONLY | COLL_ALGO_F_ALL_PEERS,
    .desc = "deterministic: each rank gathers its block from all and reduces in rank order; (p-1) m bytes, O(p) peers");
