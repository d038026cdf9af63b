/*
 * reduce_scatter_hier.c - hierarchical ReduceScatter.
 *
 * Uniform hosts (H hosts x L ranks): the blocks are regrouped by the local
 * rank of their destination, so that segment j holds, in host order, the H
 * blocks destined for local rank j of every host. (1) shm reduce-scatter over
 * the host: local rank j gets segment j summed over its host; (2) reduce-
 * scatter of segment j among cross(j) = local rank j of every host: member h
 * gets the block of its own rank, summed over all hosts. Only 1/L of the data
 * crosses the network per rank.
 *
 * Uneven hosts: (1) shm reduce of the whole vector (host-major order) to the
 * host leader, (2) leaders reduce-scatterv: host h gets its ranks' blocks,
 * (3) shm scatter from the leader.
 *
 * Example, hosts 2,2 (ranks 0,1 | 2,3), blocks b0..b3: segment 0 = [b0 b2]
 * (for local rank 0 of hosts 0,1), segment 1 = [b1 b3]. Rank 0 gets host-0's
 * [b0 b2], rank 2 host-1's [b0 b2]; cross(0) = {0,2} reduce-scatters them:
 * 0 gets b0, 2 gets b2.
 *
 * Cost (p ranks, H hosts, L ranks per host, n = p * count bytes):
 *   uniform: n beta_shm (regroup) + shm reduce-scatter(L, n) + tcp reduce-scatter(H, n/L)
 *   uneven:  n beta_shm + shm reduce(L, n) + tcp reduce-scatter(H, n) + shm scatter(L, n)
 * Constraint: the world group, more than one host (COLL_ALGO_F_HIER).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/execution/hier.h"

static coll_status_t run_uniform(coll_comm *comm, const char *sb, char *rb, char *tmp, size_t count, coll_dtype_t dt,
                                 coll_op_t op)
{
    int H = comm->nhosts, lr = comm->local_rank;
    size_t bb = count * coll_dtype_size(dt);
    for (int r = 0; r < comm->nranks; r++) /* block r -> segment lr(r), position host(r) */
        memcpy(tmp + ((size_t)comm->rank_local[r] * (size_t)H + (size_t)comm->rank_host[r]) * bb, sb + (size_t)r * bb,
               bb);
    char *seg = tmp + (size_t)lr * (size_t)H * bb;
    COLL_CHECK(coll_sub_reduce_scatter(comm, &comm->local, tmp, seg, (size_t)H * count, dt, op));
    int *cross = malloc(sizeof(int) * (size_t)H);
    if (!cross)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce_scatter hier: out of memory");
    coll_group_t cg;
    coll_hier_cross(comm, lr, cross, &cg);
    coll_status_t st = coll_sub_reduce_scatter(comm, &cg, seg, rb, count, dt, op);
    free(cross);
    return st;
}

static coll_status_t run_uneven(coll_comm *comm, const char *sb, char *rb, char *tmp, size_t count, coll_dtype_t dt,
                                coll_op_t op)
{
    int H = comm->nhosts, p = comm->nranks, leader = comm->leader_ranks[comm->host];
    size_t es = coll_dtype_size(dt), bb = count * es;
    for (int r = 0; r < p; r++) /* host-major order */
        memcpy(tmp + coll_hier_host_displ(comm, comm->rank_host[r], bb) + (size_t)comm->rank_local[r] * bb,
               sb + (size_t)r * bb, bb);
    int is_leader = comm->rank == leader;
    COLL_CHECK(coll_sub_reduce(comm, &comm->local, tmp, is_leader ? tmp : NULL, (size_t)p * count, dt, op, leader));
    char *mine = tmp + coll_hier_host_displ(comm, comm->host, bb);
    if (is_leader) {
        size_t *counts = malloc(sizeof(size_t) * 2 * (size_t)H);
        if (!counts)
            return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce_scatter hier: out of memory");
        size_t *displs = counts + H;
        for (int h = 0; h < H; h++) {
            counts[h] = (size_t)comm->host_nranks[h] * count;
            displs[h] = coll_hier_host_displ(comm, h, count);
        }
        coll_status_t st = coll_sub_reduce_scatterv(comm, &comm->leaders, tmp, mine, counts, displs, dt, op);
        free(counts);
        COLL_CHECK(st);
    }
    return coll_sub_scatter(comm, &comm->local, is_leader ? mine : NULL, rb, count, dt, leader);
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    size_t count = a->count, bytes = count * coll_dtype_size(a->dt) * (size_t)comm->nranks;
    if (count == 0)
        return COLL_SUCCESS;
    char *tmp = coll_work_alloc(comm, bytes);
    if (!tmp)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce_scatter hier: out of memory (%zu bytes)", bytes);
    coll_status_t st = comm->uniform_hosts ? run_uniform(comm, a->sendbuf, a->recvbuf, tmp, count, a->dt, a->op)
                                           : run_uneven(comm, a->sendbuf, a->recvbuf, tmp, count, a->dt, a->op);
    coll_work_free(comm, tmp);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int L = coll_hier_max_local(comm), H = comm->nhosts;
    double n = (double)a->bytes, copy = n * coll_tuning_shm()->beta_us_per_b;
    if (comm->uniform_hosts)
        return copy + coll_hcost_shm_reduce_scatter(comm, L, n) + coll_hcost_tcp_reduce_scatter(comm, H, n / L, L);
    return copy + coll_hcost_shm_reduce(comm, L, n) + coll_hcost_tcp_reduce_scatter(comm, H, n, 1)
        + coll_hcost_shm_allgather(comm, L, n);
}

const coll_algo_t coll_algo_reduce_scatter_hier = COLL_ALGO(
    COLL_REDUCE_SCATTER, "hier", .flags = COLL_ALGO_F_HIER,
    .desc = "hierarchical: shm reduce-scatter of blocks regrouped by local rank, tcp reduce-scatter per local rank");
