/*
 * run.c - the ranks of `collbench sim`: one test-driver context per rank
 * (tools/driver descriptors give the layout, data and check), run on the
 * simulated transport.
 *
 * Memory: with --verify every rank holds its own buffers, as a real run would
 * (N x the per-rank bytes). Without it, no byte moves: every rank points at
 * the same two buffers (their contents are never looked at; aliased pages,
 * 512 KiB of memory each) and the same scratch. Count arrays (N entries) are per rank only for alltoallv, whose
 * counts differ by rank; the other layouts write the same values for every
 * rank, so one set is shared.
 */
#include <stdlib.h>
#include <string.h>

#include "../cb.h"
#include "coll.h"
#include "sim.h"

/* The driver's gather check regenerates rank b's pattern (CB_PERIOD elements)
 * for every block b on every rank: N^2 patterns, 17 G element computations
 * at 4,096 ranks (allgather --verify took 328 s, the simulation 1 s). Here
 * each pattern is computed once per run and shared. */
static cbt_sim_job_t *check_job;

static uint64_t cached_gather_check(cb_ctx_t *c)
{
    if (c->desc->kind == COLL_GATHER && c->rank != c->root)
        return 0;
    uint64_t wrong = 0;
    size_t pb = (size_t)CB_PERIOD * c->esize;
    for (int b = 0; b < c->nranks; b++)
        if (c->counts[b])
            wrong += cb_compare(c, (char *)c->recvbuf + c->displs[b] * c->esize, c->counts[b],
                                check_job->pats + (size_t)b * pb, 0, c->displs[b]);
    return wrong;
}

/* Gather checks: every rank's pattern computed once (see check_job). */
static int cache_patterns(cbt_sim_job_t *j)
{
    int n = j->so->nranks;
    size_t pb = (size_t)CB_PERIOD * coll_dtype_size(j->so->o.dt);
    if (!(j->pats = malloc(pb * (size_t)n))) {
        fprintf(stderr, "collbench sim: out of memory for %d patterns\n", n);
        return -1;
    }
    for (int b = 0; b < n; b++)
        cb_pattern(&j->data, CB_SEED_RANK(b), j->pats + (size_t)b * pb);
    j->d.check = cached_gather_check;
    return 0;
}

/* Rank r's driver context and layout (its own buffers with --verify); the
 * largest buffers so far in *send_max, *recv_max. */
static int init_rank(cbt_sim_job_t *j, int r, int per_rank, size_t *send_max, size_t *recv_max)
{
    const cbt_sim_opts_t *so = j->so;
    size_t un = (size_t)so->nranks;
    cb_ctx_t *c = &j->c[r];
    c->desc = &j->d;
    c->opts = &so->o;
    c->comm = coll_sim_comm(j->sim, r);
    c->rank = r;
    c->nranks = so->nranks;
    c->root = so->o.root;
    c->dt = so->o.dt;
    c->op = so->o.op;
    c->esize = coll_dtype_size(so->o.dt);
    c->equal_counts = so->o.equal_counts;
    c->data = j->data;
    cb_ctx_set_arrays(c, j->arrays + (per_rank ? (size_t)r * CB_CTX_ARRAYS * un : 0), un);
    j->d.layout(c, (size_t)so->o.maxbytes);
    c->send_cap = c->send_elems * c->esize + 64;
    c->recv_cap = c->recv_elems * c->esize + 64;
    if (c->send_cap > *send_max)
        *send_max = c->send_cap;
    if (c->recv_cap > *recv_max)
        *recv_max = c->recv_cap;
    if (so->o.check) {
        c->sendbuf = malloc(c->send_cap);
        c->recvbuf = malloc(c->recv_cap);
        if (!c->sendbuf || !c->recvbuf) {
            fprintf(stderr,
                    "collbench sim: out of memory at rank %d (--verify holds every rank's buffers: "
                    "%zu + %zu bytes each)\n",
                    r, c->send_cap, c->recv_cap);
            return -1;
        }
    }
    return 0;
}

/* Without --verify: every rank on the same two buffers.
 * Contents never read: allreduce runs in place so that no rank copies its
 * input; aliased pages (sim.h) keep the copies the algorithms make
 * themselves (direct: staging) in cache. */
static int share_buffers(cbt_sim_job_t *j, size_t send_max, size_t recv_max)
{
    j->recv_max = recv_max;
    j->send_max = send_max;
    j->shared_recv = coll_sim_alias_map(recv_max);
    j->shared_send = j->d.kind == COLL_ALLREDUCE ? j->shared_recv : coll_sim_alias_map(send_max);
    if (!j->shared_recv || !j->shared_send) {
        fprintf(stderr, "collbench sim: out of memory\n");
        return -1;
    }
    for (int r = 0; r < j->so->nranks; r++) {
        j->c[r].sendbuf = j->shared_send;
        j->c[r].recvbuf = j->shared_recv;
    }
    /* messages from them carry no bytes (others do: an algorithm's headers) */
    if (coll_sim_blank(j->sim, j->shared_recv, recv_max) != COLL_SUCCESS
        || (j->shared_send != j->shared_recv && coll_sim_blank(j->sim, j->shared_send, send_max) != COLL_SUCCESS)) {
        fprintf(stderr, "collbench sim: %s\n", coll_last_error());
        return -1;
    }
    return 0;
}

int cbt_sim_job_init(cbt_sim_job_t *j, const cbt_sim_opts_t *so)
{
    memset(j, 0, sizeof *j);
    j->so = so;
    int n = so->nranks;
    j->d = *so->desc;
    const cb_desc_t *d = &j->d;
    if (coll_sim_create(so->nhosts, so->host_nranks, &so->p, &j->sim) != COLL_SUCCESS) {
        fprintf(stderr, "collbench sim: %s\n", coll_last_error());
        return -1;
    }
    j->c = calloc((size_t)n, sizeof *j->c);
    j->ws = calloc((size_t)n, sizeof *j->ws);
    int per_rank = d->kind == COLL_ALLTOALLV;
    size_t un = (size_t)n;
    j->arrays = calloc((per_rank ? un : 1) * CB_CTX_ARRAYS * un, sizeof(size_t));
    if (!j->c || !j->ws || !j->arrays || cb_data_init(&j->data, so->o.dt, (d->flags & CB_F_REDUCE) != 0, so->o.op, n)) {
        fprintf(stderr, "collbench sim: out of memory for %d ranks\n", n);
        return -1;
    }
    if (so->o.check && (d->check == cb_gather_check || d->kind == COLL_GATHER) && cache_patterns(j) != 0)
        return -1;
    size_t send_max = 64, recv_max = 64;
    for (int r = 0; r < n; r++)
        if (init_rank(j, r, per_rank, &send_max, &recv_max) != 0)
            return -1;
    if (!so->o.check)
        return share_buffers(j, send_max, recv_max);
    return 0;
}

void cbt_sim_job_free(cbt_sim_job_t *j)
{
    if (j->c && j->so->o.check)
        for (int r = 0; r < j->so->nranks; r++) {
            free(j->c[r].sendbuf);
            free(j->c[r].recvbuf);
        }
    if (j->shared_send != j->shared_recv)
        coll_sim_alias_unmap(j->shared_send, j->send_max);
    coll_sim_alias_unmap(j->shared_recv, j->recv_max);
    free(j->c);
    free(j->ws);
    free(j->arrays);
    free(j->pats);
    cb_data_free(&j->data);
    coll_sim_destroy(j->sim);
    memset(j, 0, sizeof *j);
}

static coll_status_t rank_run(coll_comm *comm, void *arg)
{
    cbt_sim_job_t *j = arg;
    int r;
    coll_comm_rank(comm, &r);
    coll_status_t st = COLL_SUCCESS;
    for (int k = 0; k < j->calls && st == COLL_SUCCESS; k++)
        st = j->d.run(&j->c[r]);
    return st;
}

/* The virtual time of `calls` calls back to back (the links' buckets fill
 * only before the first). */
static coll_status_t run_calls(cbt_sim_job_t *j, int calls, double *t_us)
{
    j->calls = calls;
    *t_us = 0;
    return calls > 0 ? coll_sim_run(j->sim, rank_run, j, t_us) : COLL_SUCCESS;
}

void cbt_sim_job_run(cbt_sim_job_t *j, size_t bytes, cbt_sim_result_t *res)
{
    const cb_desc_t *d = &j->d;
    int n = j->so->nranks;
    memset(res, 0, sizeof *res);
    check_job = j;
    for (int r = 0; r < n; r++) {
        j->c[r].bad_seen = 0;
        d->layout(&j->c[r], bytes);
        if (j->so->o.check)
            d->init(&j->c[r]);
        j->ws[r] = (j->c[r].send_elems + j->c[r].recv_elems) * j->c[r].esize;
    }
    coll_sim_working_set(j->sim, j->ws); /* the cache model (cache_bytes) */
    res->bytes = j->c[0].bytes;
    coll_comm_t c0 = j->c[0].comm;
    double t0 = cbt_now();
    /* --iters K --warmup W: W + K calls less W calls, over K (as the test
     * driver times K calls after W); one call by default */
    int w = j->so->warmup, k = j->so->iters > 0 ? j->so->iters : 1;
    double t_w = 0, t_all = 0;
    coll_status_t st = run_calls(j, w, &t_w);
    if (st == COLL_SUCCESS)
        st = run_calls(j, w + k, &t_all);
    res->t_us = (t_all - t_w) / k;
    res->wall_s = cbt_now() - t0;
    coll_sim_counts(j->sim, &res->msgs, &res->switches);
    if (st != COLL_SUCCESS) {
        fprintf(stderr, "collbench sim: %s of %zu bytes on %d ranks failed: %s\n", d->name, bytes, n,
                coll_last_error());
        res->failed = 1;
        return;
    }
    res->algo = coll_comm_last_algo(c0);
    if (j->so->o.check)
        for (int r = 0; r < n; r++)
            res->wrong += d->check(&j->c[r]);
}
