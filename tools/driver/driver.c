/*
 * driver.c - the size loop, timing, checking and the table, shared by the ten
 * test executables.
 *
 * For each size: layout -> init (send data; receive buffers poisoned) ->
 * warm-up -> barrier -> timed loop of -n iterations (each rank's average) ->
 * check -> one all-reduce of {time, wrong} (sum) and one of {time, -time}
 * (max) -> rank 0 prints the row.
 * Check strategy: out-of-place collectives are idempotent for fixed input, so
 * the result of the last timed iteration is checked (the receive buffer was
 * poisoned before the warm-up, so an element never written is caught). In-place
 * ones (broadcast) would find the data already there: the buffers are
 * re-initialised and the collective run once more, untimed, before the check.
 * Wrong elements are summed over all ranks; any > 0 marks the row `failed` and
 * makes the exit code 1 (the sweep goes on).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../common/coll_internal.h"
#include "../common/huge_buf.h"
#include "../common/huge_hint.h"
#include "driver.h"
#include "../launch/launch.h"

typedef struct {
    const cb_desc_t *desc;
    cb_opts_t *opts;
} cb_job_t;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int code_of(coll_status_t st)
{
    if (st == COLL_ERR_TIMEOUT)
        return CB_EXIT_TIMEOUT;
    if (st == COLL_ERR_ABORTED || st == COLL_ERR_NETWORK)
        return CB_EXIT_ABORTED;
    return CB_EXIT_SETUP;
}

/* What buf_alloc allocates for `bytes` (and buf_free must be told). */
static size_t buf_bytes(size_t bytes) { return bytes < 64 ? 64 : bytes; }

static void *buf_alloc(cb_ctx_t *c, size_t bytes, coll_status_t *st)
{
    void *p = NULL;
    bytes = buf_bytes(bytes);
    if (c->opts->zero_copy) {
        *st = coll_mem_alloc(c->comm, bytes, &p);
        return *st == COLL_SUCCESS ? p : NULL;
    }
    p = cb_buf_alloc(bytes, coll_cfg_bool(COLL_CFG_TEST_HUGE)); /* huge pages first, as hccl_test */
    *st = p ? COLL_SUCCESS : COLL_ERR_NO_MEMORY;
    return p;
}

static void buf_free(cb_ctx_t *c, void *p, size_t bytes)
{
    if (!p)
        return;
    if (c->opts->zero_copy)
        coll_mem_free(c->comm, p);
    else
        cb_buf_free(p, buf_bytes(bytes), coll_cfg_bool(COLL_CFG_TEST_HUGE));
}

int cb_fail_call(cb_ctx_t *c, cb_results_t *res, const char *what, coll_status_t st)
{
    fprintf(stderr, "%s: rank %d: %s failed (%s, %zu bytes): %s: %s\n", c->opts->prog, c->rank, what,
            coll_kind_name(c->desc->kind), c->bytes, coll_strerror(st), coll_last_error());
    fflush(stderr);
    int code = code_of(st);
    if (res) {
        res->exit_code = code;
        snprintf(res->error, sizeof(res->error), "rank %d: %s: %s: %s", c->rank, what, coll_strerror(st),
                 coll_last_error());
    }
    coll_comm_abort(c->comm);
    return code;
}

/* Host names of every rank (fixed 64-byte records) -> results header. */
static coll_status_t gather_hosts(cb_ctx_t *c, cb_results_t *res)
{
    char me[64] = "";
    gethostname(me, sizeof(me) - 1);
    /* only rank 0 prints them: a gather (log-peer tree), not an allgather that
     * would connect every rank to log2 N others across hosts */
    char(*all)[64] = calloc((size_t)c->nranks, 64);
    if (!all)
        return COLL_ERR_NO_MEMORY;
    coll_status_t st = coll_gather(me, all, 64, COLL_UINT8, 0, c->comm);
    if (st != COLL_SUCCESS) {
        free(all);
        return st;
    }
    if (c->rank == 0) {
        res->hosts = calloc((size_t)c->nranks, 64);
        res->ranks_per_host = calloc((size_t)c->nranks, sizeof(int));
        res->rank_host = calloc((size_t)c->nranks, sizeof(int));
        if (!res->hosts || !res->ranks_per_host || !res->rank_host) {
            free(all);
            return COLL_ERR_NO_MEMORY;
        }
        int nh = 0;
        for (int r = 0; r < c->nranks; r++) {
            all[r][63] = '\0';
            int h = 0;
            while (h < nh && strcmp(res->hosts[h], all[r]))
                h++;
            if (h == nh)
                memcpy(res->hosts[nh++], all[r], 64);
            res->ranks_per_host[h]++;
            res->rank_host[r] = h;
        }
        res->nhosts = nh;
    }
    free(all);
    return COLL_SUCCESS;
}

/* Per-iteration times are gathered for a result file or --stats only. */
static int want_iter(const cb_opts_t *o) { return o->json || o->csv || o->stats; }

/* The timed iterations (right after a barrier): *avg = mean time per
 * iteration (us); c->iter_us[i] = when iteration i ended, from the barrier's
 * exit, for the first CB_ITER_MAX iterations (each iteration starts when the
 * one before ended: these are the arrival times too). */
static coll_status_t timed_loop(cb_ctx_t *c, double *avg)
{
    int n = c->opts->iters, k = n < CB_ITER_MAX ? n : CB_ITER_MAX;
    coll_status_t st;
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        if (c->pool)
            cb_use_set(c, i);
        if ((st = cb_run(c)) != COLL_SUCCESS)
            return st;
        if (i < k)
            c->iter_us[i] = now_us() - t0;
    }
    *avg = (now_us() - t0) / n;
    cb_stall_charge(t0, c->iter_us, k, c->iter_us + k);
    return COLL_SUCCESS;
}

/* --off-cache: a buffer set's part rounded to whole pages */
static size_t set_bytes(size_t b) { return (b + 4095) & ~(size_t)4095; }

/* --off-cache: the sets of the current size in the pool (as many as fit, at
 * most 4096), set 0 in use. */
static void place_sets(cb_ctx_t *c)
{
    size_t s = set_bytes(c->send_elems * c->esize), r = set_bytes(c->recv_elems * c->esize);
    c->set_recv_off = s;
    c->set_stride = s + r ? s + r : 4096;
    size_t n = c->pool_cap / c->set_stride;
    c->nsets = n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
    cb_use_set(c, 0);
}

void cb_use_set(cb_ctx_t *c, int i)
{
    if (!c->pool)
        return;
    c->sendbuf = c->pool + (size_t)(i % c->nsets) * c->set_stride;
    c->recvbuf = (char *)c->sendbuf + c->set_recv_off;
}

/* The descriptor's calls for the group being timed (c->in_place: the
 * collective's in-place form, see cb_desc.init_ip). */
static void do_init(cb_ctx_t *c) { (c->in_place ? c->desc->init_ip : c->desc->init)(c); }
coll_status_t cb_run(cb_ctx_t *c) { return (c->in_place ? c->desc->run_ip : c->desc->run)(c); }
static uint64_t do_check(cb_ctx_t *c)
{
    return (c->in_place && c->desc->check_ip ? c->desc->check_ip : c->desc->check)(c);
}

/* Checks the last result (in place: the data was overwritten by the timed
 * calls, so re-initialise and run once more, untimed). *wrong = this rank's
 * wrong elements. Returns COLL_SUCCESS or the failed call's status. */
static coll_status_t check_group(cb_ctx_t *c, int checking, uint64_t *wrong)
{
    coll_status_t st;
    *wrong = 0;
    c->bad_seen = 0;
    if (!checking)
        return COLL_SUCCESS;
    if ((c->desc->flags & CB_F_INPLACE) || c->in_place) {
        do_init(c);
        if ((st = cb_run(c)) != COLL_SUCCESS)
            return st;
    }
    c->plant_due = c->opts->plant_rank == c->rank; /* COLL_TEST_PLANT: data.c cb_plant */
    *wrong = do_check(c);
    if (*wrong) {
        printf("total err is %llu (rank %d)\n", (unsigned long long)*wrong, c->rank);
        fflush(stdout);
    }
    return COLL_SUCCESS;
}

/* row's times, wrong count, check and bandwidths from every rank's avg and
 * wrong (the same figures on every rank). */
static coll_status_t reduce_row(cb_ctx_t *c, double avg, uint64_t wrong, int checking, cb_row_t *row)
{
    const cb_opts_t *o = c->opts;
    double in_sum[2] = {avg, (double)wrong}, out_sum[2];
    double in_max[2] = {avg, -avg}, out_max[2];
    coll_status_t st;
    if ((st = coll_all_reduce(in_sum, out_sum, 2, COLL_FP64, COLL_SUM, c->comm)) != COLL_SUCCESS
        || (st = coll_all_reduce(in_max, out_max, 2, COLL_FP64, COLL_MAX, c->comm)) != COLL_SUCCESS)
        return st;
    row->bytes = c->bytes;
    row->count = c->bytes / c->esize;
    row->in_place = c->in_place;
    row->dt = c->dt;
    row->op = c->op;
    row->tavg = out_sum[0] / c->nranks;
    row->tmax = out_max[0];
    row->tmin = -out_max[1];
    row->wrong = (uint64_t)out_sum[1];
    row->check = !checking ? "NULL" : row->wrong ? "failed" : "success";
    row->t = o->agg == CB_AGG_AVG ? row->tavg : o->agg == CB_AGG_MIN ? row->tmin : row->tmax;
    row->algbw = row->t > 0 ? (double)row->bytes / row->t / 1e3 : 0;
    row->busbw = row->algbw * c->desc->busbw_factor(c->nranks);
    c->wrong_total += row->wrong;
    c->busbw_sum += row->busbw;
    c->nrows++;
    return COLL_SUCCESS;
}

/* One group (out of place or in place, c->in_place) of one data size, laid
 * out already: init, warm-up, barrier, timed loop, check, reduction into
 * row. Returns 0, or an exit code >= 3 after a failed call. */
static int run_group(cb_ctx_t *c, cb_results_t *res, cb_row_t *row)
{
    const cb_opts_t *o = c->opts;
    coll_status_t st;
    memset(row, 0, sizeof(*row));
    row->it.counted = -1;
    row->it.straggler = -1;
    for (int j = 0; j < (c->pool ? c->nsets : 1); j++) { /* --off-cache: every set */
        cb_use_set(c, j);
        do_init(c);
    }
    for (int i = 0; i < o->warmup; i++) {
        cb_use_set(c, i);
        if ((st = cb_run(c)) != COLL_SUCCESS)
            return cb_fail_call(c, res, "warm-up", st);
    }
    if ((st = coll_barrier(c->comm)) != COLL_SUCCESS)
        return cb_fail_call(c, res, "coll_barrier", st);
    double avg;
    if ((st = timed_loop(c, &avg)) != COLL_SUCCESS)
        return cb_fail_call(c, res, "timed loop", st);
    if (want_iter(o)
        && (st = cb_iter_reduce(c->comm, c->rank, c->nranks, c->iter_us, o->iters, &row->it)) != COLL_SUCCESS
        && st != COLL_ERR_UNSUPPORTED)
        return cb_fail_call(c, res, "iteration times gather", st);
    const char *algo = coll_comm_last_algo(c->comm);
    snprintf(row->algo, sizeof(row->algo), "%s", algo ? algo : "");
    int checking = o->check && c->data.exact;
    uint64_t wrong;
    if ((st = check_group(c, checking, &wrong)) != COLL_SUCCESS)
        return cb_fail_call(c, res, "check run", st);
    if ((st = reduce_row(c, avg, wrong, checking, row)) != COLL_SUCCESS)
        return cb_fail_call(c, res, "time/check reduction", st);
    return 0;
}

/* One data size: out of place and/or in place (--in-place), then rank 0's
 * table row and result rows. Returns 0, or an exit code >= 3. */
int cb_run_size(cb_ctx_t *c, cb_results_t *res, size_t bytes, int *any_failed)
{
    const cb_opts_t *o = c->opts;
    cb_row_t rows[2];
    int n = 0, rc;
    c->desc->layout(c, bytes);
    if (c->pool)
        place_sets(c);
    for (int ip = 0; ip < 2; ip++) {
        if ((ip == 0 && o->in_place == CB_IP_ONLY) || (ip == 1 && o->in_place == CB_IP_OFF))
            continue;
        c->in_place = ip && c->desc->run_ip; /* broadcast: always in place, its one form */
        if ((rc = run_group(c, res, &rows[n])) != 0)
            return rc;
        if (rows[n].wrong)
            *any_failed = 1;
        n++;
    }
    if (c->rank == 0) {
        cb_table_row(o, res, &rows[0], n > 1 ? &rows[1] : NULL);
        for (int i = 0; i < n; i++)
            cb_results_add(res, &rows[i]);
    }
    return 0;
}

void cb_ctx_set_arrays(cb_ctx_t *c, size_t *a, size_t n)
{
    c->counts = a;
    c->displs = a + n;
    c->scounts = a + 2 * n;
    c->sdispls = a + 3 * n;
    c->rcounts = a + 4 * n;
    c->rdispls = a + 5 * n;
}

static int alloc_arrays(cb_ctx_t *c)
{
    size_t n = (size_t)c->nranks, *a = calloc(CB_CTX_ARRAYS * n, sizeof *a);
    if (!a)
        return -1;
    cb_ctx_set_arrays(c, a, n);
    return 0;
}

static void free_arrays(cb_ctx_t *c) { free(c->counts); /* the block of all six */ }

static void init_ctx(cb_ctx_t *c, const cb_job_t *job, int rank, int nranks)
{
    const cb_opts_t *o = job->opts;
    memset(c, 0, sizeof(*c));
    c->desc = job->desc;
    c->opts = o;
    c->rank = rank;
    c->nranks = nranks;
    c->root = o->root;
    c->dt = o->dt;
    c->op = o->op;
    c->esize = coll_dtype_size(o->dt);
    c->equal_counts = o->equal_counts;
}

/* The result set's header fields known before the communicator exists. */
static void init_results(cb_results_t *res, const cb_job_t *job, const cb_launch_t *l, int nranks)
{
    memset(res, 0, sizeof(*res));
    res->desc = job->desc;
    res->opts = job->opts;
    res->launcher = l->name;
    res->nranks = nranks;
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(res->start_time, sizeof(res->start_time), "%Y-%m-%dT%H:%M:%SZ", &tmv);
}

/* Host names, only for the result files (every rank sees the same options):
 * gathered, else (no all-gather algorithm) this host's on rank 0 of a
 * one-host job; res->nhosts at least the communicator's count. */
static int host_names(cb_ctx_t *c, cb_results_t *res, int nhosts)
{
    const cb_opts_t *o = c->opts;
    coll_status_t st;
    if ((o->json || o->csv || o->stats) && (st = gather_hosts(c, res)) != COLL_SUCCESS) {
        if (st != COLL_ERR_UNSUPPORTED)
            return cb_fail_call(c, res, "host name exchange", st);
        res->nhosts = 0; /* no all-gather algorithm: header without host names */
    }
    if ((o->json || o->csv || o->stats) && c->rank == 0 && !res->hosts && nhosts == 1) {
        res->hosts = calloc(1, 64);
        res->ranks_per_host = calloc(1, sizeof(int));
        res->rank_host = calloc((size_t)c->nranks, sizeof(int)); /* all on host 0 */
        if (res->hosts && res->ranks_per_host && res->rank_host) {
            gethostname(res->hosts[0], 63);
            res->ranks_per_host[0] = c->nranks;
            res->nhosts = 1;
        }
    }
    res->nhosts = nhosts > res->nhosts ? nhosts : res->nhosts;
    return 0;
}

/* Test data, count arrays and the buffers, once, for the largest size
 * (sizes only shrink when rounded). */
static int alloc_all(cb_ctx_t *c, cb_results_t *res)
{
    const cb_desc_t *d = c->desc;
    const cb_opts_t *o = c->opts;
    coll_status_t st;
    int reducing = (d->flags & CB_F_REDUCE) != 0;
    if (cb_data_init(&c->data, c->dt, reducing, c->op, c->nranks) || alloc_arrays(c))
        return cb_fail_call(c, res, "allocation", COLL_ERR_NO_MEMORY);
    for (int i = 0; i < o->ndt; i++) { /* the largest layout of every dtype of the launch */
        c->esize = coll_dtype_size(o->dts[i]);
        d->layout(c, (size_t)o->maxbytes);
        c->send_cap = c->send_elems * c->esize > c->send_cap ? c->send_elems * c->esize : c->send_cap;
        c->recv_cap = c->recv_elems * c->esize > c->recv_cap ? c->recv_elems * c->esize : c->recv_cap;
    }
    c->esize = coll_dtype_size(c->dt);
    c->iter_us = malloc(2 * (size_t)(o->iters < CB_ITER_MAX ? o->iters : CB_ITER_MAX) * sizeof(double));
    if (!c->iter_us)
        return cb_fail_call(c, res, "allocation", COLL_ERR_NO_MEMORY);
    if (o->off_cache) {
        /* one pool: twice the last-level cache, and at least one set */
        c->pool_cap = 2 * cb_llc_bytes() + set_bytes(c->send_cap) + set_bytes(c->recv_cap);
        if (!(c->pool = buf_alloc(c, c->pool_cap, &st)))
            return cb_fail_call(c, res, "buffer allocation", st);
        return 0;
    }
    if (!(c->sendbuf = buf_alloc(c, c->send_cap, &st)) || !(c->recvbuf = buf_alloc(c, c->recv_cap, &st)))
        return cb_fail_call(c, res, o->zero_copy ? "coll_mem_alloc" : "buffer allocation", st);
    return 0;
}

/* After the last size: what the run cost (reduced over ranks), and rank 0's
 * footer. Returns 0 or an exit code >= 3. */
static int sweep_end(cb_ctx_t *c, cb_results_t *res, double init_s, int local_rank)
{
    cb_cost_local(&res->cost, init_s, c->rank, local_rank);
    coll_status_t st = cb_cost_reduce(c->comm, &res->cost);
    if (st != COLL_SUCCESS)
        return cb_fail_call(c, res, "run cost reduction", st);
    res->cost_known = 1;
    if (c->rank == 0)
        cb_table_footer(c->opts, res, c->wrong_total, c->nrows ? c->busbw_sum / c->nrows : -1);
    return 0;
}

/* --min-bw / COLL_TEST_MIN_BW: 1 when the average bus bandwidth is below it
 * (rank 0 says so on stderr; every rank has the same figures). */
static int gate(const cb_ctx_t *c)
{
    const cb_opts_t *o = c->opts;
    double avg = c->nrows ? c->busbw_sum / c->nrows : 0;
    if (o->min_bw < 0 || avg >= o->min_bw)
        return 0;
    if (c->rank == 0) {
        fprintf(stderr, "%s: average bus bandwidth %g GB/s is below the limit %g GB/s (%s): exit %d\n", o->prog, avg,
                o->min_bw, o->min_bw_src, CB_EXIT_MIN_BW);
        fflush(stderr);
    }
    return 1;
}

/* --hold-after (tests/lib/scale.sh): one line per rank once its sweep is
 * done, then the communicator stays up SEC seconds for /proc/PID/fd sampling. */
static void hold_after(const cb_opts_t *o, int rank, double init_s)
{
    fprintf(stderr, "%s: rank %d pid %d: init_s %.3f, sweep done, holding %g s before destroy\n", o->prog, rank,
            (int)getpid(), init_s, o->hold_after);
    fflush(stderr);
    struct timespec hold = {(time_t)o->hold_after, (long)((o->hold_after - (double)(time_t)o->hold_after) * 1e9)};
    while (nanosleep(&hold, &hold) != 0 && errno == EINTR) {
    }
}

static int run_rank(void *arg, const cb_launch_t *l, int rank, int nranks, const coll_unique_id_t *id)
{
    cb_job_t *job = arg;
    const cb_opts_t *o = job->opts;
    cb_ctx_t c;
    init_ctx(&c, job, rank, nranks);
    cb_results_t res;
    init_results(&res, job, l, nranks);

    struct timespec t_init0, t_init1;
    clock_gettime(CLOCK_MONOTONIC, &t_init0);
    coll_status_t st = coll_comm_init_rank(&c.comm, nranks, *id, rank);
    clock_gettime(CLOCK_MONOTONIC, &t_init1);
    double init_s = (double)(t_init1.tv_sec - t_init0.tv_sec) + (t_init1.tv_nsec - t_init0.tv_nsec) * 1e-9;
    if (st != COLL_SUCCESS) {
        fprintf(stderr, "%s: rank %d: communicator setup failed: %s: %s\n", o->prog, rank, coll_strerror(st),
                coll_last_error());
        /* Exit 2 is for what is checked before any rank starts (docs/troubleshooting.md);
         * a setting found unworkable here (COLL_ENCRYPT=1 in an open run, an interface
         * name matching nothing) is a failed setup, exit 3, with the line above. */
        return st == COLL_ERR_TIMEOUT ? CB_EXIT_TIMEOUT : st == COLL_ERR_ABORTED ? CB_EXIT_ABORTED : CB_EXIT_SETUP;
    }
    int local_rank = 0, local_size = 1, nhosts = 1;
    coll_comm_local(c.comm, &local_rank, &local_size);
    coll_comm_nhosts(c.comm, &nhosts);
    cb_pin_local_rank(o->prog, local_rank);
    res.local_size = local_size;
    if (rank == 0 && l->kind != CB_LAUNCH_STANDALONE && o->npus_set && o->npus != local_size)
        fprintf(stderr, "%s: warning: -p %d but %d ranks run on this node\n", o->prog, o->npus, local_size);

    int rc = 0, any_failed = 0;
    if ((rc = cb_agree_opts(&c)) != 0 || (rc = host_names(&c, &res, nhosts)) != 0 || (rc = alloc_all(&c, &res)) != 0)
        goto out;
    if (want_iter(o) && cb_stall_start() != 0)
        fprintf(stderr, "%s: rank %d: warning: no stall watcher thread: stragglers from arrival times only\n", o->prog,
                rank);
    rc = cb_sweep(&c, &res, &any_failed);
    cb_stall_stop();
    if (rc != 0 || (rc = sweep_end(&c, &res, init_s, local_rank)) != 0)
        goto out;
    rc = any_failed ? CB_EXIT_CHECK : gate(&c) ? CB_EXIT_MIN_BW : CB_EXIT_OK;
    if (o->hold_after >= 0)
        hold_after(o, rank, init_s);

out:
    if (rank == 0 && (o->json || o->csv) && rc != CB_EXIT_USAGE) { /* a usage error leaves no file */
        if (!res.exit_code)
            res.exit_code = rc;
        if (cb_results_write(&res) != 0 && rc == CB_EXIT_OK)
            rc = CB_EXIT_CHECK; /* the results asked for are not there: not a success */
    }
    if (rc < CB_EXIT_SETUP) {
        if (c.pool) { /* --off-cache: the buffer sets live in the pool */
            buf_free(&c, c.pool, c.pool_cap);
        } else {
            buf_free(&c, c.sendbuf, c.send_cap);
            buf_free(&c, c.recvbuf, c.recv_cap);
        }
        coll_comm_destroy(c.comm);
    }
    free_arrays(&c);
    free(c.iter_us);
    cb_data_free(&c.data);
    cb_results_free(&res);
    return rc;
}

int cb_main(const cb_desc_t *d, int argc, char **argv)
{
    static cb_opts_t opts;
    char err[1024];
    if (coll_cfg_check() != COLL_SUCCESS) {
        fprintf(stderr, "%s_test: %s\n", d->name, coll_cfg_check_message());
        return CB_EXIT_USAGE;
    }
    if (cb_cli_parse(d, argc, argv, &opts, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return CB_EXIT_USAGE;
    }
    switch (opts.action) {
    case CB_ACT_HELP: cb_cli_usage(d, stdout); return 0;
    case CB_ACT_VERSION: printf("%s (collbench) %s\n", opts.prog, COLL_VERSION_STRING); return 0;
    case CB_ACT_PRINT_CONFIG: coll_cfg_print(stdout); return 0;
    case CB_ACT_LIST_ALGOS: coll_algo_list(stdout); return 0;
    default: break;
    }
    const char *pl = coll_cfg_str(COLL_CFG_TEST_PLANT);
    long long pr, pi;
    char tail;
    if (pl[0] && (sscanf(pl, "%lld:%lld%c", &pr, &pi, &tail) != 2 || pr < 0 || pi < 0 || pr > INT_MAX)) {
        fprintf(stderr, "%s: invalid COLL_TEST_PLANT '%s': allowed RANK:INDEX (two whole numbers >= 0)\n", opts.prog,
                pl);
        return CB_EXIT_USAGE;
    }
    if (pl[0])
        opts.plant_rank = (int)pr, opts.plant_index = pi;
    const char *cpus = coll_cfg_str(COLL_CFG_TEST_CPUS);
    if (cpus[0] && cb_cpulist_count(cpus) < 0) {
        fprintf(stderr, "%s: invalid COLL_TEST_CPUS '%s': allowed a CPU list like 0-3,8\n", opts.prog, cpus);
        return CB_EXIT_USAGE;
    }
    cb_launch_t l;
    int rc = cb_launch_detect(&l, opts.prog, opts.npus, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return rc;
    }
    if (l.kind == CB_LAUNCH_STANDALONE && opts.npus > CB_MAX_NPUS_STANDALONE) {
        fprintf(stderr, "%s: invalid -p '%d': allowed 1..%d ranks when forking them (standalone)\n", opts.prog,
                opts.npus, CB_MAX_NPUS_STANDALONE);
        return CB_EXIT_USAGE;
    }
    if (cb_cli_check_ranks(&opts, l.nranks, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return CB_EXIT_USAGE;
    }
    cb_buf_huge_hint(!opts.zero_copy && coll_cfg_bool(COLL_CFG_TEST_HUGE)); /* the COLL_RULE_HUGE rules */
    if (opts.timeout >= 0) {
        char b[32];
        snprintf(b, sizeof(b), "%g", opts.timeout);
        coll_cfg_set(COLL_CFG_EXEC_TIMEOUT, b);
    }
    /* what was taken from where, HCCL_* warnings: once, from the launching
     * process (standalone: before the fork) or rank 0 of a launcher's job */
    coll_cfg_report(l.kind == CB_LAUNCH_STANDALONE ? -1 : l.rank >= 0 ? l.rank : coll_cfg_env_rank());
    cb_job_t job = {d, &opts};
    return cb_launch_run(&l, &argc, &argv, run_rank, &job);
}
