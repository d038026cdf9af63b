/*
 * group.c - topology questions about a group of ranks (coll_group_t), asked
 * by the cost models and by the algorithms' usable() checks. See topo.h.
 */
#include "topo/topo.h"

#include <stdlib.h>

int coll_group_is_local(const coll_comm *comm, const coll_group_t *g)
{
    if (!comm->direct)
        return g->size <= 1;
    for (int i = 0; i < g->size; i++)
        if (!coll_topo_is_mine(comm, g->ranks[i]))
            return 0;
    return 1;
}

int coll_group_is_host(const coll_comm *comm, const coll_group_t *g)
{
    if (g->size == 1)
        return 1;
    return comm->direct && g->size == comm->local_size && coll_group_is_local(comm, g);
}

int coll_group_busiest_host(const coll_comm *comm, const coll_group_t *g)
{
    int most = 1;
    if (g == &comm->world) {
        if (comm->max_local > 0) /* set at init: O(1) instead of O(H) per selection */
            return comm->max_local;
        for (int h = 0; h < comm->nhosts; h++)
            if (comm->host_nranks[h] > most)
                most = comm->host_nranks[h];
        return most;
    }
    /* one counter per host: on the stack up to MAXH hosts, else on the heap
     * (counting by rescanning the group was O(g^2) per call: the leaders'
     * group at 4,096 hosts spent 8 M steps in every selection) */
    enum { MAXH = 512 };
    int stack_cnt[MAXH] = {0};
    int *cnt = comm->nhosts <= MAXH ? stack_cnt : calloc((size_t)comm->nhosts, sizeof(int));
    for (int i = 0; i < g->size; i++) {
        int h = comm->rank_host[g->ranks[i]], k = 0;
        if (cnt) {
            k = ++cnt[h];
        } else { /* out of memory: the slow count */
            for (int j = 0; j <= i; j++)
                k += comm->rank_host[g->ranks[j]] == h;
        }
        if (k > most)
            most = k;
    }
    if (cnt != stack_cnt)
        free(cnt);
    return most;
}
