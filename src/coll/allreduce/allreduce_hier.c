/*
 * allreduce_hier.c - hierarchical AllReduce (HCCL/NCCL "hybrid", Open MPI
 * han): intra-host reduce-scatter over shared memory, inter-host AllReduce of
 * each block among the ranks that hold it on the other hosts (ring or
 * halving-doubling, whichever the cost model picks for that group), intra-host
 * allgather. Only the 1/B of the vector each rank owns crosses the network.
 *
 * Blocks: B = the smallest number of ranks on any host. The vector is split
 * into B blocks; local rank j < B owns block j; local ranks >= B own nothing
 * (count 0) and sit out the inter-host level. Uniform hosts (L ranks each)
 * give B = L: every rank works. Uneven hosts stay correct: with B = 1 this is
 * exactly "reduce to the host leader -> leaders AllReduce -> broadcast".
 *
 * Example, hosts with 2,1,2 ranks (ranks 0,1 | 2 | 3,4), B = 1:
 *   intra reduce-scatterv on {0,1}: rank 0 gets the host sum, rank 1 nothing;
 *   {2} alone; {3,4}: rank 3 gets the sum.  Cross group of local rank 0 =
 *   {0,2,3}: AllReduce of the whole vector. Intra allgatherv: 1 and 4 copy
 *   the result from 0 and 3.
 * Hosts 2,2 (ranks 0,1 | 2,3), B = 2: 0 and 2 own the first half, 1 and 3 the
 *   second; cross groups {0,2} and {1,3} run at the same time.
 *
 * Cost (H hosts, L = most ranks on a host, n bytes, shm/tcp constants):
 *   shm reduce-scatter(L, n) + tcp allreduce(H, n/B) + shm allgather(L, n)
 *   = 4 bar + ~2(1+1/L) n beta_shm + n gamma + min(ring, hd)(H, n/B) over tcp.
 * Constraint: the world group, more than one host (COLL_ALGO_F_HIER).
 */
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/execution/hier.h"

static coll_status_t run_hier(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t n, coll_dtype_t dt,
                              coll_op_t op)
{
    size_t es = coll_dtype_size(dt);
    int L = comm->local_size, lr = comm->local_rank, B = coll_hier_min_local(comm);
    size_t *counts = malloc(sizeof(size_t) * 2 * (size_t)L);
    int *cross = malloc(sizeof(int) * (size_t)comm->nhosts);
    if (!counts || !cross) {
        free(counts);
        free(cross);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "allreduce hier: out of memory");
    }
    size_t *displs = counts + L;
    for (int j = 0; j < L; j++) {
        counts[j] = j < B ? coll_block_count(n, B, j) : 0;
        displs[j] = j < B ? coll_block_offset(n, B, j) : n;
    }
    char *mine = (char *)recvbuf + displs[lr] * es;
    coll_status_t st = coll_sub_reduce_scatterv(comm, &comm->local, sendbuf, mine, counts, displs, dt, op);
    if (st == COLL_SUCCESS && lr < B) {
        coll_group_t cg;
        coll_hier_cross(comm, lr, cross, &cg);
        st = coll_sub_allreduce(comm, &cg, mine, mine, counts[lr], dt, op);
    }
    if (st == COLL_SUCCESS)
        st = coll_sub_allgatherv(comm, &comm->local, mine, recvbuf, counts, displs, dt);
    free(counts);
    free(cross);
    return st;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    if (a->count == 0)
        return COLL_SUCCESS;
    return run_hier(comm, a->sendbuf, a->recvbuf, a->count, a->dt, a->op);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int L = coll_hier_max_local(comm), B = coll_hier_min_local(comm);
    double n = (double)a->bytes;
    return coll_hcost_shm_reduce_scatter(comm, L, n) + coll_hcost_tcp_allreduce(comm, comm->nhosts, n / B, B)
        + coll_hcost_shm_allgather(comm, L, n);
}

const coll_algo_t coll_algo_allreduce_hier
    = COLL_ALGO(COLL_ALLREDUCE, "hier", .flags = COLL_ALGO_F_HIER,
                .desc = "hierarchical: shm reduce-scatter, inter-host allreduce per block (ring/hd), shm allgather");
