/*
 * hier.h - what the hierarchical algorithms (<coll>_hier.c) share: calls of a
 * collective on a sub-group through the registry (so the best intra-host (shm)
 * and inter-host (tcp) algorithm is chosen for each level), the groups that
 * link the hosts, and the closed-form costs of each level.
 *
 * Groups (global ranks, host order):
 *   comm->local           the ranks of my host (shm)
 *   comm->leaders         local rank 0 of every host
 *   cross(lr)             local rank lr of every host (exists when lr < the
 *                         smallest host's rank count); member h is on host h
 *
 * Costs are computed from data every rank agrees on (host counts, measured
 * shm/tcp constants), never from this rank's own host, so that every rank
 * selects the same algorithm.
 */
#ifndef COLL_HIER_H
#define COLL_HIER_H

#include "coll/algo.h"
#include "coll/selection/tuning.h"

/* Sub-collectives on group g, algorithm chosen by coll_algo_run. Arguments
 * follow the conventions of algo.h (counts in elements, roots global). */
coll_status_t coll_sub_allreduce(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf, size_t n,
                                 coll_dtype_t dt, coll_op_t op);
coll_status_t coll_sub_reduce(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf, size_t n,
                              coll_dtype_t dt, coll_op_t op, int root);
coll_status_t coll_sub_barrier(coll_comm *comm, const coll_group_t *g);
coll_status_t coll_sub_broadcast(coll_comm *comm, const coll_group_t *g, void *buf, size_t n, coll_dtype_t dt,
                                 int root);
coll_status_t coll_sub_reduce_scatter(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                      size_t count, coll_dtype_t dt, coll_op_t op);
coll_status_t coll_sub_reduce_scatterv(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                       const size_t *counts, const size_t *displs, coll_dtype_t dt, coll_op_t op);
coll_status_t coll_sub_allgatherv(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                  const size_t *counts, const size_t *displs, coll_dtype_t dt);
coll_status_t coll_sub_gather(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf, size_t count,
                              coll_dtype_t dt, int root);
coll_status_t coll_sub_alltoallv(coll_comm *comm, const coll_group_t *g, const void *sendbuf, const size_t *scounts,
                                 const size_t *sdispls, void *recvbuf, const size_t *rcounts, const size_t *rdispls,
                                 coll_dtype_t dt);
coll_status_t coll_sub_scatter(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf, size_t count,
                               coll_dtype_t dt, int root);

/* Smallest and largest number of ranks on one host. */
int coll_hier_min_local(const coll_comm *comm);
int coll_hier_max_local(const coll_comm *comm);
/* Global rank of local rank lr on host h, -1 if none. */
int coll_hier_rank_at(const coll_comm *comm, int h, int lr);
/* cross(lr) into ranks[comm->nhosts] and *g (my index = my host when my
 * local rank is lr, else -1). lr must be < coll_hier_min_local(comm). */
void coll_hier_cross(const coll_comm *comm, int lr, int *ranks, coll_group_t *g);
/* Does host-major order (host 0's ranks, then host 1's...) equal rank order?
 * O(1): comm->host_major, set once with the topology (O(N)). */
int coll_hier_contiguous(const coll_comm *comm);
/* Element offset of host h's first block in host-major order, blocks of count. O(1) (comm->host_displ). */
size_t coll_hier_host_displ(const coll_comm *comm, int h, size_t count);

/* Closed-form level costs in us; n = bytes, p = members. shm levels use the
 * shm constants (2 copies per byte through the staging buffers), tcp levels
 * the tcp ones with `flows` groups running at once through each host's link
 * (coll_tuning_tcp_shared); each takes the cheapest algorithm of the level. */
double coll_hcost_shm_reduce_scatter(const coll_comm *comm, int p, double n);
double coll_hcost_shm_allgather(const coll_comm *comm, int p, double n);
double coll_hcost_shm_broadcast(const coll_comm *comm, int p, double n);
double coll_hcost_shm_reduce(const coll_comm *comm, int p, double n);
double coll_hcost_tcp_allreduce(const coll_comm *comm, int p, double n, int flows);
double coll_hcost_tcp_broadcast(const coll_comm *comm, int p, double n, int flows);
double coll_hcost_tcp_allgather(const coll_comm *comm, int p, double n, int flows);
double coll_hcost_tcp_reduce_scatter(const coll_comm *comm, int p, double n, int flows);

#endif
