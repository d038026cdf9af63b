/*
 * broadcast_hier.c - hierarchical Broadcast: the root sends to one rank on
 * every other host (the host leaders, local rank 0) with the inter-host
 * algorithm the cost model picks, then every host broadcasts over shared
 * memory from the rank that has the data (the root on its own host).
 *
 * Example, hosts 2,1,2 (ranks 0,1 | 2 | 3,4), root 1: inter group {1,2,3}
 * (root 1 stands in for host 0's leader), then {0,1} from 1, {2} alone,
 * {3,4} from 3.
 *
 * Cost (H hosts, L = most ranks on a host, n bytes):
 *   tcp broadcast(H, n) [min(binomial, scatter-allgather)] + shm broadcast(L, n).
 * Constraint: the world group, more than one host (COLL_ALGO_F_HIER).
 */
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/execution/hier.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    if (a->count == 0)
        return COLL_SUCCESS;
    int root = a->root, rh = comm->rank_host[root];
    int *ranks = malloc(sizeof(int) * (size_t)comm->nhosts);
    if (!ranks)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "broadcast hier: out of memory");
    for (int h = 0; h < comm->nhosts; h++)
        ranks[h] = h == rh ? root : comm->leader_ranks[h];
    coll_group_t inter = {comm->nhosts, ranks[comm->host] == comm->rank ? comm->host : -1, ranks};
    coll_status_t st = COLL_SUCCESS;
    if (inter.me >= 0)
        st = coll_sub_broadcast(comm, &inter, a->recvbuf, a->count, a->dt, root);
    if (st == COLL_SUCCESS)
        st = coll_sub_broadcast(comm, &comm->local, a->recvbuf, a->count, a->dt, ranks[comm->host]);
    free(ranks);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double n = (double)a->bytes;
    return coll_hcost_tcp_broadcast(comm, comm->nhosts, n, 1)
        + coll_hcost_shm_broadcast(comm, coll_hier_max_local(comm), n);
}

const coll_algo_t coll_algo_broadcast_hier
    = COLL_ALGO(COLL_BROADCAST, "hier", .flags = COLL_ALGO_F_HIER,
                .desc = "hierarchical: root to one rank per host (tcp), then shm broadcast on every host");
