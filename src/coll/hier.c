/*
 * hier.c - sub-group calls, inter-host groups and level costs shared by the
 * hierarchical algorithms (see hier.h).
 */
#include "coll/hier.h"

#include "coll/allreduce/allreduce.h"
#include "coll/coll_util.h"
#include "coll/tree.h"
#include "core/config.h"

static coll_status_t sub_run(coll_comm *comm, const coll_group_t *g, coll_args_t *a)
{
    a->esize = coll_dtype_size(a->dt);
    return coll_algo_run(comm, g, a);
}

coll_status_t coll_sub_allreduce(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                 size_t n, coll_dtype_t dt, coll_op_t op)
{
    coll_args_t a = {.kind = COLL_ALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = n, .dt = dt,
                     .op = op, .inplace = sendbuf == recvbuf};
    a.bytes = n * coll_dtype_size(dt);
    return sub_run(comm, g, &a);
}

coll_status_t coll_sub_reduce(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                              size_t n, coll_dtype_t dt, coll_op_t op, int root)
{
    coll_args_t a = {.kind = COLL_REDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = n, .dt = dt,
                     .op = op, .root = root, .inplace = sendbuf == recvbuf};
    a.bytes = n * coll_dtype_size(dt);
    return sub_run(comm, g, &a);
}

coll_status_t coll_sub_barrier(coll_comm *comm, const coll_group_t *g)
{
    coll_args_t a = {.kind = COLL_BARRIER, .dt = COLL_UINT8};
    return sub_run(comm, g, &a);
}

coll_status_t coll_sub_broadcast(coll_comm *comm, const coll_group_t *g, void *buf, size_t n,
                                 coll_dtype_t dt, int root)
{
    coll_args_t a = {.kind = COLL_BROADCAST, .sendbuf = buf, .recvbuf = buf, .count = n, .dt = dt,
                     .root = root, .inplace = 1};
    a.bytes = n * coll_dtype_size(dt);
    return sub_run(comm, g, &a);
}

coll_status_t coll_sub_reduce_scatter(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                      void *recvbuf, size_t count, coll_dtype_t dt, coll_op_t op)
{
    size_t es = coll_dtype_size(dt);
    coll_args_t a = {.kind = COLL_REDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                     .dt = dt, .op = op,
                     .inplace = (char *)recvbuf == (const char *)sendbuf + (size_t)g->me * count * es};
    a.bytes = count * es * (size_t)g->size;
    return sub_run(comm, g, &a);
}

coll_status_t coll_sub_reduce_scatterv(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                       void *recvbuf, const size_t *counts, const size_t *displs,
                                       coll_dtype_t dt, coll_op_t op)
{
    size_t es = coll_dtype_size(dt), total = 0;
    for (int i = 0; i < g->size; i++)
        total += counts[i];
    coll_args_t a = {.kind = COLL_REDUCE_SCATTERV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                     .count = counts[g->me], .counts = counts, .displs = displs, .dt = dt, .op = op,
                     .inplace = (char *)recvbuf == (const char *)sendbuf + displs[g->me] * es};
    a.bytes = total * es;
    return sub_run(comm, g, &a);
}

coll_status_t coll_sub_allgatherv(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                  const size_t *counts, const size_t *displs, coll_dtype_t dt)
{
    size_t es = coll_dtype_size(dt), total = 0;
    for (int i = 0; i < g->size; i++)
        total += counts[i];
    coll_args_t a = {.kind = COLL_ALLGATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = counts[g->me],
                     .counts = counts, .displs = displs, .dt = dt,
                     .inplace = (const char *)sendbuf == (char *)recvbuf + displs[g->me] * es};
    a.bytes = total * es;
    return sub_run(comm, g, &a);
}

coll_status_t coll_sub_scatter(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                               size_t count, coll_dtype_t dt, int root)
{
    size_t es = coll_dtype_size(dt);
    int ri = coll_group_index(g, root);
    coll_args_t a = {.kind = COLL_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .dt = dt,
                     .root = root,
                     .inplace = comm->rank == root && (char *)recvbuf == (const char *)sendbuf + (size_t)ri * count * es};
    a.bytes = count * es * (size_t)g->size;
    return sub_run(comm, g, &a);
}

coll_status_t coll_sub_gather(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                              size_t count, coll_dtype_t dt, int root)
{
    size_t es = coll_dtype_size(dt);
    int ri = coll_group_index(g, root);
    coll_args_t a = {.kind = COLL_GATHER, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .dt = dt,
                     .root = root,
                     .inplace = comm->rank == root && (const char *)sendbuf == (char *)recvbuf + (size_t)ri * count * es};
    a.bytes = count * es * (size_t)g->size;
    return sub_run(comm, g, &a);
}

coll_status_t coll_sub_alltoallv(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                 const size_t *scounts, const size_t *sdispls, void *recvbuf,
                                 const size_t *rcounts, const size_t *rdispls, coll_dtype_t dt)
{
    size_t stot = 0, rtot = 0;
    for (int i = 0; i < g->size; i++) {
        stot += scounts[i];
        rtot += rcounts[i];
    }
    coll_args_t a = {.kind = COLL_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf, .scounts = scounts,
                     .sdispls = sdispls, .rcounts = rcounts, .rdispls = rdispls, .dt = dt};
    a.bytes = (stot > rtot ? stot : rtot) * coll_dtype_size(dt);
    return sub_run(comm, g, &a);
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

int coll_hier_contiguous(const coll_comm *comm)
{
    /* rank r must be local rank r - displ(h) of host h, hosts in order: O(N)
     * (summing the displacement per rank was O(N x H)) */
    int r = 0;
    for (int h = 0; h < comm->nhosts; h++)
        for (int lr = 0; lr < comm->host_nranks[h]; lr++, r++)
            if (r >= comm->nranks || comm->rank_host[r] != h || comm->rank_local[r] != lr)
                return 0;
    return r == comm->nranks;
}

size_t coll_hier_host_displ(const coll_comm *comm, int h, size_t count)
{
    size_t d = 0;
    for (int k = 0; k < h; k++)
        d += (size_t)comm->host_nranks[k];
    return d * count;
}

/* ---- level costs ---- */

static double chunks(double n, double p)
{
    return 1.0 + n / p / (double)coll_cfg_size(COLL_CFG_CHUNK);
}

double coll_hcost_shm_reduce_scatter(const coll_comm *comm, int p, double n)
{
    const coll_link_cost_t *l = coll_tuning_shm();
    double ov = coll_tuning_oversub(comm);
    if (p == 1)
        return 0;
    return 2 * l->bar_us * ov + n * l->beta_us_per_b * (1.0 + 1.0 / p) + (p - 1.0) / p * n * l->gamma_us_per_b * ov;
}

double coll_hcost_shm_allgather(const coll_comm *comm, int p, double n)
{
    const coll_link_cost_t *l = coll_tuning_shm();
    if (p == 1)
        return 0;
    return 2 * l->bar_us * coll_tuning_oversub(comm) + n * l->beta_us_per_b * (1.0 + 1.0 / p);
}

double coll_hcost_shm_broadcast(const coll_comm *comm, int p, double n)
{
    const coll_link_cost_t *l = coll_tuning_shm();
    if (p == 1)
        return 0;
    return 2 * l->bar_us * coll_tuning_oversub(comm) + 2 * n * l->beta_us_per_b;
}

double coll_hcost_shm_reduce(const coll_comm *comm, int p, double n)
{
    const coll_link_cost_t *l = coll_tuning_shm();
    double ov = coll_tuning_oversub(comm);
    if (p == 1)
        return 0;
    return 2 * l->bar_us * ov + 2 * n * l->beta_us_per_b + (p - 1.0) / p * n * l->gamma_us_per_b * ov;
}

double coll_hcost_tcp_allreduce(const coll_comm *comm, int p, double n, int flows)
{
    const coll_link_cost_t *l = coll_tuning_tcp_shared(flows);
    double ov = coll_tuning_oversub(comm);
    if (p == 1)
        return 0;
    double ring = 2 * (p - 1) * chunks(n, p) * l->alpha_us + 2.0 * (p - 1) / p * n * l->beta_us_per_b +
                  (p - 1.0) / p * n * l->gamma_us_per_b * ov;
    double hd = coll_allreduce_hd_cost(l, l->beta_us_per_b, p, n, ov);
    return ring < hd ? ring : hd;
}

double coll_hcost_tcp_broadcast(const coll_comm *comm, int p, double n, int flows)
{
    const coll_link_cost_t *l = coll_tuning_tcp_shared(flows);
    if (p == 1)
        return 0;
    int d = coll_tree_binomial_depth(p);
    double binomial = d * (l->alpha_us + n * l->beta_us_per_b);
    double sag = (d + p - 1) * l->alpha_us + 2.0 * (p - 1) / p * n * l->beta_us_per_b;
    return binomial < sag ? binomial : sag;
}

double coll_hcost_tcp_allgather(const coll_comm *comm, int p, double n, int flows)
{
    const coll_link_cost_t *l = coll_tuning_tcp_shared(flows);
    if (p == 1)
        return 0;
    double ring = (p - 1) * chunks(n, p) * l->alpha_us + (p - 1.0) / p * n * l->beta_us_per_b;
    double bruck = coll_tree_binomial_depth(p) * l->alpha_us + (p - 1.0) / p * n * l->beta_us_per_b;
    return ring < bruck ? ring : bruck;
}

double coll_hcost_tcp_reduce_scatter(const coll_comm *comm, int p, double n, int flows)
{
    const coll_link_cost_t *l = coll_tuning_tcp_shared(flows);
    if (p == 1)
        return 0;
    return (p - 1) * chunks(n, p) * l->alpha_us +
           (p - 1.0) / p * n * (l->beta_us_per_b + l->gamma_us_per_b * coll_tuning_oversub(comm));
}
