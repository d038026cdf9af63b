/*
 * sweep.c - what one launch runs: for each pass (one, or a burn-in's many:
 * --duration / --cycles), for each dtype (-d list/all) and op (-o list/all),
 * one table over the sizes (the -b/-e sweep or --sizes). A burn-in catches
 * SIGINT/SIGTERM: after the size in progress every rank agrees to stop (one
 * small all-reduce per size, burn-in only), so the footer, the result files
 * and the communicator's teardown all happen.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../common/coll_internal.h"
#include "driver.h"

static volatile sig_atomic_t stop_sig;
static void on_stop(int sig) { stop_sig = sig; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int burn_in(const cb_opts_t *o) { return o->duration > 0 || o->cycles >= 0; }

/* Every rank's vote (a signal seen, or rank 0's time/pass limit reached):
 * *stop = any. */
static coll_status_t agree_stop(cb_ctx_t *c, int mine, int *stop)
{
    double v = mine || stop_sig ? 1 : 0;
    coll_status_t st = coll_all_reduce(&v, &v, 1, COLL_FP64, COLL_MAX, c->comm);
    *stop = v > 0;
    return st;
}

/* Switches to dtype dt and op op: new test data; rank 0 prints the table's
 * header (a '# datatype' line first when the launch covers several). */
static int set_combo(cb_ctx_t *c, cb_results_t *res, coll_dtype_t dt, coll_op_t op, int print_header)
{
    const cb_opts_t *o = c->opts;
    cb_data_free(&c->data);
    c->dt = dt;
    c->op = op;
    c->esize = coll_dtype_size(dt);
    if (cb_data_init(&c->data, dt, (c->desc->flags & CB_F_REDUCE) != 0, op, c->nranks))
        return cb_fail_call(c, res, "allocation", COLL_ERR_NO_MEMORY);
    if (c->rank != 0 || !print_header)
        return 0;
    if (o->check && !c->data.exact)
        fprintf(stderr, "%s: note: %s %s over %d ranks is not exact: check_result NULL\n", o->prog, coll_dtype_name(dt),
                coll_op_name(op), c->nranks);
    if ((o->ndt > 1 || o->nop > 1) && o->format == CB_FMT_COLLBENCH)
        printf("# datatype %s%s%s\n", coll_dtype_name(dt), c->desc->flags & CB_F_REDUCE ? ", op " : "",
               c->desc->flags & CB_F_REDUCE ? coll_op_name(op) : "");
    cb_table_header(o);
    return 0;
}

/* The sizes of one table; *stop set when a burn-in is to end. */
static int run_table(cb_ctx_t *c, cb_results_t *res, int *any_failed, int *stop)
{
    const cb_opts_t *o = c->opts;
    unsigned long long s = o->nsizes ? o->sizes[0] : o->minbytes;
    int rc, i = 0;
    coll_status_t st;
    for (;;) {
        if ((rc = cb_run_size(c, res, (size_t)s, any_failed)) != 0)
            return rc;
        if (burn_in(o) && (st = agree_stop(c, 0, stop)) != COLL_SUCCESS)
            return cb_fail_call(c, res, "stop agreement", st);
        if (*stop)
            return 0;
        if (o->nsizes ? ++i >= o->nsizes : !cb_next_size(o, s, &s))
            return 0;
        if (o->nsizes)
            s = o->sizes[i];
    }
}

/* One pass: every dtype x op table. */
static int run_pass(cb_ctx_t *c, cb_results_t *res, long long pass, int *any_failed, int *stop)
{
    const cb_opts_t *o = c->opts;
    int nop = c->desc->flags & CB_F_REDUCE ? o->nop : 1, rc;
    int several = o->ndt * nop > 1;
    for (int i = 0; i < o->ndt && !*stop; i++)
        for (int j = 0; j < nop && !*stop; j++) {
            if ((rc = set_combo(c, res, o->dts[i], o->ops[j], pass == 1 || several)) != 0
                || (rc = run_table(c, res, any_failed, stop)) != 0)
                return rc;
        }
    return 0;
}

static void install_stop(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cb_sweep(cb_ctx_t *c, cb_results_t *res, int *any_failed)
{
    const cb_opts_t *o = c->opts;
    int stop = 0, rc;
    double t0 = now_s();
    if (burn_in(o))
        install_stop();
    for (long long pass = 1;; pass++) {
        int rows0 = c->nrows;
        double bus0 = c->busbw_sum;
        uint64_t wrong0 = c->wrong_total;
        if ((rc = run_pass(c, res, pass, any_failed, &stop)) != 0)
            return rc;
        if (!burn_in(o))
            return 0;
        int n = c->nrows - rows0;
        if (c->rank == 0 && o->format == CB_FMT_COLLBENCH) {
            printf("# pass %lld: %d rows, %llu wrong, avg bus bandwidth %g GB/s, %.1f s%s\n", pass, n,
                   (unsigned long long)(c->wrong_total - wrong0), n ? (c->busbw_sum - bus0) / n : 0, now_s() - t0,
                   stop ? " (stopped)" : "");
            fflush(stdout);
        }
        if (stop)
            break;
        int done = (o->duration > 0 && now_s() - t0 >= o->duration) || (o->cycles > 0 && pass >= o->cycles);
        coll_status_t st = agree_stop(c, c->rank == 0 && done, &stop);
        if (st != COLL_SUCCESS)
            return cb_fail_call(c, res, "stop agreement", st);
        if (stop)
            break;
    }
    if (c->rank == 0 && stop_sig) {
        fprintf(stderr, "%s: %s: burn-in stopped after %d rows\n", o->prog, strsignal(stop_sig), c->nrows);
        fflush(stderr);
    }
    return 0;
}

/* Last-level cache of CPU 0 in bytes (sysfs), 32 MiB if unknown. */
size_t cb_llc_bytes(void)
{
    size_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], buf[32];
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof(buf), f)) {
            char *end;
            unsigned long long v = strtoull(buf, &end, 10);
            v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : 0;
            if (v > best)
                best = (size_t)v;
        }
        fclose(f);
    }
    return best ? best : (size_t)32 << 20;
}
