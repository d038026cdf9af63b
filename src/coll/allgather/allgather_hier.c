/*
 * allgather_hier.c - hierarchical AllGather: (1) shm allgather of the host's
 * blocks straight into their global positions, (2) the host leaders exchange
 * whole host blocks over the network (allgatherv, one contiguous piece per
 * host), (3) each leader broadcasts the full result over shared memory.
 *
 * Rank order: the output is in GLOBAL rank order even when a host's ranks are
 * not contiguous. Step 1 writes block r at offset r (allgatherv with gaps);
 * when host-major order equals rank order (the usual launcher layout) step 2
 * runs in place in recvbuf, otherwise the leaders pack their host's blocks
 * into host-major order in a temporary buffer, exchange, and unpack.
 *
 * Example, interleaved hosts: ranks 0,2,4 on host A and 1,3 on host B.
 *   Step 1: A's ranks fill blocks 0,2,4; B's fill 1,3.  Step 2: leader 0 packs
 *   [0 2 4], leader 1 packs [1 3]; after the exchange both hold [0 2 4 | 1 3]
 *   and unpack the other host's blocks to 1,3 (resp. 0,2,4). Step 3: 0 -> 2,4
 *   and 1 -> 3 over shm.
 *
 * Cost (p ranks, H hosts, L = most ranks on a host, n = p * count bytes):
 *   shm allgather(L, n L/p) + tcp allgather(H, n) + shm broadcast(L, n).
 * Constraint: the world group, more than one host (COLL_ALGO_F_HIER).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/execution/hier.h"

static coll_status_t leaders_exchange(coll_comm *comm, char *rb, size_t count, coll_dtype_t dt, size_t es)
{
    int H = comm->nhosts, p = comm->nranks;
    size_t *counts = malloc(sizeof(size_t) * 2 * (size_t)H);
    if (!counts)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "allgather hier: out of memory");
    size_t *displs = counts + H;
    for (int h = 0; h < H; h++) {
        counts[h] = (size_t)comm->host_nranks[h] * count;
        displs[h] = coll_hier_host_displ(comm, h, count);
    }
    coll_status_t st;
    size_t bb = count * es;
    if (coll_hier_contiguous(comm)) {
        st = coll_sub_allgatherv(comm, &comm->leaders, rb + displs[comm->host] * es, rb, counts, displs, dt);
    } else {
        char *tmp = coll_work_alloc(comm, (size_t)p * bb);
        if (!tmp) {
            free(counts);
            return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "allgather hier: out of memory (%zu bytes)",
                              (size_t)p * bb);
        }
        for (int j = 0; j < comm->local_size; j++)
            memcpy(tmp + displs[comm->host] * es + (size_t)j * bb, rb + (size_t)comm->local_ranks[j] * bb, bb);
        st = coll_sub_allgatherv(comm, &comm->leaders, tmp + displs[comm->host] * es, tmp, counts, displs, dt);
        for (int r = 0; st == COLL_SUCCESS && r < p; r++)
            if (comm->rank_host[r] != comm->host)
                memcpy(rb + (size_t)r * bb, tmp + displs[comm->rank_host[r]] * es + (size_t)comm->rank_local[r] * bb,
                       bb);
        coll_work_free(comm, tmp);
    }
    free(counts);
    return st;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    size_t count = a->count, es = coll_dtype_size(a->dt);
    if (count == 0)
        return COLL_SUCCESS;
    char *rb = a->recvbuf;
    int L = comm->local_size;
    size_t *counts = malloc(sizeof(size_t) * 2 * (size_t)L);
    if (!counts)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "allgather hier: out of memory");
    size_t *displs = counts + L;
    for (int j = 0; j < L; j++) {
        counts[j] = count;
        displs[j] = (size_t)comm->local_ranks[j] * count;
    }
    coll_status_t st = coll_sub_allgatherv(comm, &comm->local, a->sendbuf, rb, counts, displs, a->dt);
    free(counts);
    if (st == COLL_SUCCESS && comm->local_rank == 0)
        st = leaders_exchange(comm, rb, count, a->dt, es);
    if (st == COLL_SUCCESS)
        st = coll_sub_broadcast(comm, &comm->local, rb, count * (size_t)comm->nranks, a->dt,
                                comm->leader_ranks[comm->host]);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int L = coll_hier_max_local(comm);
    double n = (double)a->bytes;
    return coll_hcost_shm_allgather(comm, L, n * L / comm->nranks) + coll_hcost_tcp_allgather(comm, comm->nhosts, n, 1)
        + coll_hcost_shm_broadcast(comm, L, n);
}

const coll_algo_t coll_algo_allgather_hier = COLL_ALGO(
    COLL_ALLGATHER, "hier", .flags = COLL_ALGO_F_HIER,
    .desc = "hierarchical: shm allgather per host, leaders exchange host blocks (tcp), shm broadcast; any rank layout");
