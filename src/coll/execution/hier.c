/*
 * hier.c - sub-group calls, inter-host groups and level costs shared by the
 * hierarchical algorithms (see hier.h).
 */
#include "coll/execution/hier.h"

#include "coll/allreduce/allreduce.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/tree.h"
#include "core/config.h"

/* Every sub-group call: its arguments completed for g, then selected and run. */
static coll_status_t sub_run(coll_comm *comm, const coll_group_t *g, coll_args_t a)
{
    coll_args_finish(comm, g, &a);
    return coll_algo_run(comm, g, &a);
}

coll_status_t coll_sub_allreduce(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf, size_t n,
                                 coll_dtype_t dt, coll_op_t op)
{
    return sub_run(comm, g, coll_args_make(COLL_ALLREDUCE, sendbuf, recvbuf, n, dt, op, 0));
}

coll_status_t coll_sub_reduce(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf, size_t n,
                              coll_dtype_t dt, coll_op_t op, int root)
{
    return sub_run(comm, g, coll_args_make(COLL_REDUCE, sendbuf, recvbuf, n, dt, op, root));
}

coll_status_t coll_sub_barrier(coll_comm *comm, const coll_group_t *g)
{
    return sub_run(comm, g, coll_args_make(COLL_BARRIER, NULL, NULL, 0, COLL_UINT8, COLL_SUM, 0));
}

coll_status_t coll_sub_broadcast(coll_comm *comm, const coll_group_t *g, void *buf, size_t n, coll_dtype_t dt, int root)
{
    return sub_run(comm, g, coll_args_make(COLL_BROADCAST, buf, buf, n, dt, COLL_SUM, root));
}

coll_status_t coll_sub_reduce_scatter(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                      size_t count, coll_dtype_t dt, coll_op_t op)
{
    return sub_run(comm, g, coll_args_make(COLL_REDUCE_SCATTER, sendbuf, recvbuf, count, dt, op, 0));
}

coll_status_t coll_sub_reduce_scatterv(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                       const size_t *counts, const size_t *displs, coll_dtype_t dt, coll_op_t op)
{
    return sub_run(comm, g,
                   coll_args_make_v(COLL_REDUCE_SCATTERV, sendbuf, recvbuf, counts[g->me], counts, displs, dt, op));
}

coll_status_t coll_sub_allgatherv(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                  const size_t *counts, const size_t *displs, coll_dtype_t dt)
{
    return sub_run(comm, g,
                   coll_args_make_v(COLL_ALLGATHERV, sendbuf, recvbuf, counts[g->me], counts, displs, dt, COLL_SUM));
}

coll_status_t coll_sub_scatter(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf, size_t count,
                               coll_dtype_t dt, int root)
{
    return sub_run(comm, g, coll_args_make(COLL_SCATTER, sendbuf, recvbuf, count, dt, COLL_SUM, root));
}

coll_status_t coll_sub_gather(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf, size_t count,
                              coll_dtype_t dt, int root)
{
    return sub_run(comm, g, coll_args_make(COLL_GATHER, sendbuf, recvbuf, count, dt, COLL_SUM, root));
}

coll_status_t coll_sub_alltoallv(coll_comm *comm, const coll_group_t *g, const void *sendbuf, const size_t *scounts,
                                 const size_t *sdispls, void *recvbuf, const size_t *rcounts, const size_t *rdispls,
                                 coll_dtype_t dt)
{
    return sub_run(comm, g, coll_args_make_alltoallv(sendbuf, scounts, sdispls, recvbuf, rcounts, rdispls, dt));
}

/* min / max: set at init (O(1); counting is O(H) per call, on every rank: at
 * 4,096 hosts a tenth of a simulated sweep's small sizes); counted when unset */
int coll_hier_min_local(const coll_comm *comm)
{
    if (comm->min_local > 0)
        return comm->min_local;
    int m = comm->host_nranks[0];
    for (int h = 1; h < comm->nhosts; h++)
        if (comm->host_nranks[h] < m)
            m = comm->host_nranks[h];
    return m;
}

int coll_hier_max_local(const coll_comm *comm)
{
    if (comm->max_local > 0)
        return comm->max_local;
    int m = comm->host_nranks[0];
    for (int h = 1; h < comm->nhosts; h++)
        if (comm->host_nranks[h] > m)
            m = comm->host_nranks[h];
    return m;
}

int coll_hier_rank_at(const coll_comm *comm, int h, int lr)
{
    for (int r = 0; r < comm->nranks; r++)
        if (comm->rank_host[r] == h && comm->rank_local[r] == lr)
            return r;
    return -1;
}

void coll_hier_cross(const coll_comm *comm, int lr, int *ranks, coll_group_t *g)
{
    /* ranks numbered host by host (the usual launch): local rank lr of host h
     * is its leader + lr, checked, O(H); otherwise a scan of every rank, O(N)
     * (at 32,768 ranks the scan was a fifth of a simulated sweep, and as many
     * steps on every rank of a real run per call) */
    int h = 0;
    for (; h < comm->nhosts; h++) {
        int r = comm->leader_ranks[h] + lr;
        if (r >= comm->nranks || comm->rank_host[r] != h || comm->rank_local[r] != lr)
            break;
        ranks[h] = r;
    }
    if (h < comm->nhosts)
        for (int r = 0; r < comm->nranks; r++)
            if (comm->rank_local[r] == lr)
                ranks[comm->rank_host[r]] = r;
    g->size = comm->nhosts;
    g->me = comm->local_rank == lr ? comm->host : -1;
    g->ranks = ranks;
}

int coll_hier_contiguous(const coll_comm *comm) { return comm->host_major; }

size_t coll_hier_host_displ(const coll_comm *comm, int h, size_t count) { return (size_t)comm->host_displ[h] * count; }

/* ---- level costs ----
 * Every level follows cost.h's rule for the oversubscription factor ov: it
 * scales alpha (tcp steps too: the peer may have to be scheduled first), the
 * shm barriers and gamma. */

/* A shm level: 2 barriers, `copied` bytes through the stage, `reduced` bytes reduced. */
static double shm_level(const coll_comm *comm, int p, double copied, double reduced)
{
    const coll_link_cost_t *l = coll_tuning_shm();
    double ov = coll_tuning_oversub(comm);
    if (p == 1)
        return 0;
    return 2 * l->bar_us * ov + copied * l->beta_us_per_b + reduced * l->gamma_us_per_b * ov;
}

double coll_hcost_shm_reduce_scatter(const coll_comm *comm, int p, double n)
{
    return shm_level(comm, p, n * (1.0 + 1.0 / p), (p - 1.0) / p * n);
}

double coll_hcost_shm_allgather(const coll_comm *comm, int p, double n)
{
    return shm_level(comm, p, n * (1.0 + 1.0 / p), 0);
}

double coll_hcost_shm_broadcast(const coll_comm *comm, int p, double n) { return shm_level(comm, p, 2 * n, 0); }

double coll_hcost_shm_reduce(const coll_comm *comm, int p, double n)
{
    return shm_level(comm, p, 2 * n, (p - 1.0) / p * n);
}

/* A tcp level of p members, `flows` groups at once through each host's link:
 * its constants and *alpha; NULL for a level of one member (it costs nothing). */
static const coll_link_cost_t *tcp_level(const coll_comm *comm, int p, int flows, double *alpha)
{
    if (p == 1)
        return NULL;
    const coll_link_cost_t *l = coll_tuning_tcp_shared(flows);
    *alpha = coll_cost_alpha(comm, l);
    return l;
}

double coll_hcost_tcp_allreduce(const coll_comm *comm, int p, double n, int flows)
{
    double alpha, ov = coll_tuning_oversub(comm);
    const coll_link_cost_t *l = tcp_level(comm, p, flows, &alpha);
    if (!l)
        return 0;
    double ring = 2 * (p - 1) * coll_cost_chunks(n / p) * alpha + 2.0 * (p - 1) / p * n * l->beta_us_per_b
        + (p - 1.0) / p * n * l->gamma_us_per_b * ov;
    double hd = coll_allreduce_hd_cost(l, l->beta_us_per_b, p, n, ov);
    return ring < hd ? ring : hd;
}

double coll_hcost_tcp_broadcast(const coll_comm *comm, int p, double n, int flows)
{
    double alpha;
    const coll_link_cost_t *l = tcp_level(comm, p, flows, &alpha);
    if (!l)
        return 0;
    int d = coll_tree_binomial_depth(p);
    double binomial = d * (alpha + n * l->beta_us_per_b);
    double sag = (d + p - 1) * alpha + 2.0 * (p - 1) / p * n * l->beta_us_per_b;
    return binomial < sag ? binomial : sag;
}

double coll_hcost_tcp_allgather(const coll_comm *comm, int p, double n, int flows)
{
    double alpha;
    const coll_link_cost_t *l = tcp_level(comm, p, flows, &alpha);
    if (!l)
        return 0;
    double ring = (p - 1) * coll_cost_chunks(n / p) * alpha + (p - 1.0) / p * n * l->beta_us_per_b;
    double bruck = coll_tree_binomial_depth(p) * alpha + (p - 1.0) / p * n * l->beta_us_per_b;
    return ring < bruck ? ring : bruck;
}

double coll_hcost_tcp_reduce_scatter(const coll_comm *comm, int p, double n, int flows)
{
    double alpha;
    const coll_link_cost_t *l = tcp_level(comm, p, flows, &alpha);
    if (!l)
        return 0;
    return (p - 1) * coll_cost_chunks(n / p) * alpha
        + (p - 1.0) / p * n * (l->beta_us_per_b + l->gamma_us_per_b * coll_tuning_oversub(comm));
}
