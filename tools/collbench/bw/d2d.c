/*
 * d2d.c - `collbench bw -t d2d`: host memory copy bandwidth ("device to
 * device" on a CPU node: DRAM to DRAM), for two copy methods
 *   memcpy  libc memcpy (normal stores: read-for-ownership of the destination)
 *   nt      SSE2 non-temporal stores (movntdq, bypass the cache; x86 only)
 * each on one core and on all cores (one pinned thread per physical core, the
 * buffer split in 64-byte aligned slices). Size = bytes copied per execution;
 * Bandwidth = Size / mean Elapsed Time of one execution (decimal GB/s). Memory
 * traffic is twice that (read + write), plus the read-for-ownership with memcpy.
 *
 * Buffers are mmap'ed (transparent huge pages requested), touched in parallel
 * before timing, the destination cleared before each run and compared with the
 * source after it. Untimed copies come before each run: at least one, and
 * CBT_BW_WARMUP_S (bw.h) of them in all before the first. Sizes that do not
 * fit MemAvailable are refused up front.
 *
 * Devices (ascend-dmi's ids, dev.c): -d D puts both buffers and the copying
 * threads on device D (a NUMA node; -m card: a socket); --ds S --dd D puts the
 * source buffer on S and the destination buffer on D (mbind), and the copying
 * threads on D's CPUs. Threads on the destination make the copy a pull: each
 * source line crosses the interconnect once (a read) and the stores stay local.
 * Threads on the source would push, and a memcpy store to a remote line crosses
 * twice (read-for-ownership, then write-back), so the number would mix the
 * store method into the link's rate; the pull is also how a receiving node
 * fills its own memory. "one core" is then one core of D, "all cores" every
 * physical core of D.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bw.h"
#include "../calib.h"
#include "../cb.h"
#include "../../common/coll_internal.h"

static const char *TOOL = "bw";

typedef void (*copy_fn)(void *restrict dst, const void *restrict src, size_t n);

static void copy_memcpy(void *restrict dst, const void *restrict src, size_t n) { memcpy(dst, src, n); }

/* the library's own streaming copy (core/copy.c), so the tool measures what
 * the transports do from COLL_COPY_NT_MIN up */
static void copy_nt(void *restrict dst, const void *restrict src, size_t n) { coll_copy_nt(dst, src, n); }

typedef enum { JOB_TOUCH, JOB_CLEAR, JOB_COPY, JOB_CHECK } job_t;

typedef struct run_s run_t;
typedef struct {
    run_t *r;
    int idx, cpu;
    size_t off, len;
    int bad;
} worker_t;

struct run_s {
    unsigned char *src, *dst;
    size_t size;
    long long times;
    copy_fn copy;
    job_t job;
    int nthreads;
    pthread_barrier_t bar;
    double warm_until; /* copy untimed until then (at least once) */
    double t0, t1;
    worker_t w[];
};

static void *worker(void *arg)
{
    worker_t *w = arg;
    run_t *r = w->r;
    cbt_pin_self(w->cpu);
    unsigned char *s = r->src + w->off, *d = r->dst + w->off;
    switch (r->job) {
    case JOB_TOUCH:
        for (size_t i = 0; i < w->len; i++)
            s[i] = (unsigned char)((w->off + i) * 131u + 7u);
        memset(d, 0, w->len);
        break;
    case JOB_CLEAR: memset(d, 0, w->len); break;
    case JOB_CHECK: w->bad = memcmp(d, s, w->len) != 0; break;
    case JOB_COPY:
        do {
            if (w->len)
                r->copy(d, s, w->len);
            __asm__ volatile("" : : : "memory");
        } while (cbt_now() < r->warm_until);
        pthread_barrier_wait(&r->bar);
        if (w->idx == 0)
            r->t0 = cbt_now();
        for (long long t = 0; t < r->times; t++) {
            if (w->len)
                r->copy(d, s, w->len);
            __asm__ volatile("" : : : "memory");
        }
        pthread_barrier_wait(&r->bar);
        if (w->idx == 0)
            r->t1 = cbt_now();
        break;
    }
    return NULL;
}

/* Runs one job on all threads of r; returns 0 or -1. */
static int run_job(run_t *r, job_t job)
{
    pthread_t tid[CBT_MAX_CPUS];
    r->job = job;
    int n = 0;
    for (; n < r->nthreads; n++)
        if (pthread_create(&tid[n], NULL, worker, &r->w[n]) != 0)
            break;
    for (int i = 0; i < n; i++)
        pthread_join(tid[i], NULL);
    return n == r->nthreads ? 0 : -1;
}

static run_t *run_new(unsigned char *src, unsigned char *dst, size_t size, const int *cpus, int nt)
{
    run_t *r = calloc(1, sizeof *r + (size_t)nt * sizeof(worker_t));
    if (!r)
        return NULL;
    r->src = src, r->dst = dst, r->size = size, r->nthreads = nt;
    size_t chunk = (size + (size_t)nt - 1) / (size_t)nt;
    chunk = (chunk + 63) & ~(size_t)63;
    for (int i = 0; i < nt; i++) {
        size_t off = (size_t)i * chunk;
        if (off > size)
            off = size;
        size_t len = size - off < chunk ? size - off : chunk;
        r->w[i] = (worker_t){.r = r, .idx = i, .cpu = cpus[i], .off = off, .len = len};
    }
    pthread_barrier_init(&r->bar, NULL, (unsigned)nt);
    return r;
}

static void run_free(run_t *r)
{
    if (r) {
        pthread_barrier_destroy(&r->bar);
        free(r);
    }
}

/* Place [addr, addr+len) on the device's NUMA node(s) before its first touch;
 * 0, or -1 with a message in err. ENOSYS (no NUMA in the kernel) is not an error. */
static int place(void *addr, size_t len, const cbt_dev_t *d, const char *what, char *err, size_t errlen)
{
    if (syscall(SYS_mbind, addr, len, 2 /* MPOL_BIND */, d->nodemask, (unsigned long)(64 * CBT_DEV_MASK_WORDS + 1), 0UL)
            != 0
        && errno != ENOSYS) {
        snprintf(err, errlen, "cannot place the %s buffer on %s %d: %s", what, d->card ? "card" : "device", d->id,
                 strerror(errno));
        return -1;
    }
    return 0;
}

typedef struct {
    const char *method;
    int threads;
    double gbs, us;
    int ok;
} result_t;

double cbt_d2d_probe(void *dst, const void *src, size_t n, double warmup, double seconds)
{
    double t0 = cbt_now(), end = t0 + warmup;
    while (cbt_now() < end)
        copy_memcpy(dst, src, n);
    unsigned long long bytes = 0;
    double start = cbt_now(), now;
    end = start + seconds;
    do {
        copy_memcpy(dst, src, n);
        bytes += n;
        now = cbt_now();
    } while (now < end);
    return (double)bytes / (now - start) / 1e9;
}

/* A d2d run: its options, CPUs, buffers and results. */
typedef struct {
    int cpus[CBT_MAX_CPUS], ncpu, ncores;
    int all;               /* -c threads of the all-cores rows (0: every core) */
    int do_memcpy, do_nt;  /* --method */
    int card, ds, dd, dev; /* -m, --ds, --dd, -d (-1: not given) */
    int m_set;
    cbt_dev_t sdev, ddev; /* with --ds/--dd */
    unsigned char *src, *dst;
    size_t size, map; /* -s, and the mapped length */
    result_t res[4];
    int nres;
} d2d_t;

/* The options after -t d2d, and the device ids they give. */
static int parse_d2d(const cbt_bw_opts_t *o, d2d_t *d)
{
    for (int i = 0; i < o->nextra; i++) {
        const char *a = o->extra[i];
        long long ll;
        if ((!strcmp(a, "-c") || !strcmp(a, "--cores")) && i + 1 < o->nextra) {
            if (cbt_parse_ll(TOOL, "-c", o->extra[++i], 1, d->ncpu, &ll))
                return CBT_EXIT_USAGE;
            d->all = (int)ll;
        } else if (!strcmp(a, "--method") && i + 1 < o->nextra) {
            const char *v = o->extra[++i];
            d->do_memcpy = !strcmp(v, "memcpy") || !strcmp(v, "all");
            d->do_nt = !strcmp(v, "nt") || !strcmp(v, "all");
            if (!d->do_memcpy && !d->do_nt)
                return cbt_usage_error(TOOL, "invalid --method '%s' (allowed: memcpy, nt, all)", v);
        } else if ((!strcmp(a, "-d") || !strcmp(a, "--device")) && i + 1 < o->nextra) {
            if (cbt_parse_ll(TOOL, "-d", o->extra[++i], 0, CBT_DEV_MAX - 1, &ll))
                return CBT_EXIT_USAGE;
            d->dev = (int)ll;
        } else if ((!strcmp(a, "-ds") || !strcmp(a, "--ds") || !strcmp(a, "--device-src")) && i + 1 < o->nextra) {
            if (cbt_parse_ll(TOOL, "--ds", o->extra[++i], 0, CBT_DEV_MAX - 1, &ll))
                return CBT_EXIT_USAGE;
            d->ds = (int)ll;
        } else if ((!strcmp(a, "-dd") || !strcmp(a, "--dd") || !strcmp(a, "--device-dst")) && i + 1 < o->nextra) {
            if (cbt_parse_ll(TOOL, "--dd", o->extra[++i], 0, CBT_DEV_MAX - 1, &ll))
                return CBT_EXIT_USAGE;
            d->dd = (int)ll;
        } else if ((!strcmp(a, "-m") || !strcmp(a, "--mode")) && i + 1 < o->nextra) {
            if ((d->card = cbt_parse_devmode(TOOL, o->extra[++i])) < 0)
                return CBT_EXIT_USAGE;
            d->m_set = 1;
        } else {
            return cbt_usage_error(TOOL, "unknown option '%s' for -t d2d (see collbench bw --help)", a);
        }
    }
    if ((d->ds >= 0) != (d->dd >= 0))
        return cbt_usage_error(TOOL, "--ds and --dd go together (source and destination device)");
    if (d->ds >= 0 && d->dev >= 0)
        return cbt_usage_error(TOOL, "-d does not go with --ds/--dd (-d D is --ds D --dd D)");
    if (d->dev >= 0)
        d->ds = d->dd = d->dev;
    else if (d->m_set && d->ds < 0)
        d->ds = d->dd = 0; /* -m alone: device (card) 0, as in p2p */
    return 0;
}

/* --ds/--dd: both devices looked up, this thread bound to the destination's
 * CPUs (the copying threads run there, see the top of this file; the threads
 * started below inherit them, cbt_cpu_list sees only them). */
static int bind_devices(d2d_t *d)
{
    char e[512];
    for (int k = 0; k < 2; k++)
        if (cbt_dev_lookup(d->card, k ? d->dd : d->ds, k ? &d->ddev : &d->sdev, e, sizeof e) != 0)
            return cbt_usage_error(TOOL,
                                   "%s %d: %s (--ds/--dd are device ids on the source and the target "
                                   "node, not ranks)",
                                   d->dev >= 0 ? "-d"
                                       : k     ? "--dd"
                                               : "--ds",
                                   k ? d->dd : d->ds, e);
    if (cbt_dev_bind(&d->ddev, e, sizeof e) != 0)
        return cbt_error(TOOL, CBT_EXIT_FAIL, "%s", e);
    d->ncpu = cbt_cpu_list(d->cpus, CBT_MAX_CPUS, &d->ncores);
    if (d->all > d->ncpu)
        return cbt_usage_error(TOOL, "invalid -c '%d' (allowed: integer 1..%d, the CPUs of %s %d)", d->all, d->ncpu,
                               d->card ? "card" : "device", d->dd);
    return 0;
}

/* Source and destination (-s each) must fit in 90% of MemAvailable. */
static int check_memory(const cbt_bw_opts_t *o)
{
    unsigned long long need = 2ULL * (size_t)o->size, avail = cbt_mem_available();
    if (avail && need > avail / 10 * 9) {
        char a[32], b[32], c[32];
        cbt_fmt_bytes(a, sizeof a, o->size);
        cbt_fmt_bytes(b, sizeof b, need);
        cbt_fmt_bytes(c, sizeof c, avail);
        return cbt_usage_error(TOOL,
                               "-s %llu (%s) needs %s for source and destination but only %s is available "
                               "(MemAvailable, 90%% usable); use a smaller -s",
                               o->size, a, b, c);
    }
    return 0;
}

/* The two buffers (huge pages from 2 MiB); both or neither mapped. */
static int map_buffers(d2d_t *d)
{
    d->map = (d->size + 4095) & ~(size_t)4095;
    d->src = mmap(NULL, d->map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    d->dst = mmap(NULL, d->map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (d->src == MAP_FAILED || d->dst == MAP_FAILED) {
        if (d->src != MAP_FAILED)
            munmap(d->src, d->map);
        if (d->dst != MAP_FAILED)
            munmap(d->dst, d->map);
        return cbt_error(TOOL, CBT_EXIT_FAIL, "cannot map 2 x %llu bytes", (unsigned long long)d->map);
    }
#ifdef MADV_HUGEPAGE
    if (d->map >= (2u << 20)) {
        madvise(d->src, d->map, MADV_HUGEPAGE);
        madvise(d->dst, d->map, MADV_HUGEPAGE);
    }
#endif
    return 0;
}

/* One method on `threads` threads: a row in d->res (its table unless
 * --json). -1 when the threads cannot start (*rc: that error's exit code);
 * a destination that differs sets *rc and goes on. */
static int measure_one(const cbt_bw_opts_t *o, d2d_t *d, const char *name, copy_fn fn, int threads, double *busy,
                       const char *where, int *rc)
{
    run_t *r = run_new(d->src, d->dst, d->size, d->cpus, threads);
    if (!r || run_job(r, JOB_CLEAR)) {
        run_free(r);
        *rc = cbt_error(TOOL, CBT_EXIT_FAIL, "cannot start %d threads", threads);
        return -1;
    }
    r->copy = fn;
    r->times = o->exec_times;
    double tc = cbt_now();
    r->warm_until = tc + (*busy < CBT_BW_WARMUP_S ? CBT_BW_WARMUP_S - *busy : 0.0);
    run_job(r, JOB_COPY);
    *busy += cbt_now() - tc;
    run_job(r, JOB_CHECK);
    int bad = 0;
    for (int i = 0; i < r->nthreads; i++)
        bad |= r->w[i].bad;
    double per = (r->t1 - r->t0) / (double)o->exec_times;
    result_t *x = &d->res[d->nres++];
    *x = (result_t){name, threads, (double)d->size / per / 1e9, per * 1e6, !bad};
    if (bad)
        *rc = cbt_error(TOOL, CBT_EXIT_FAIL, "%s with %d thread(s): destination differs from source", name, threads);
    if (!o->json) {
        char title[160];
        snprintf(title, sizeof title, "Host Memory Copy Test: %s, %d thread%s%s%s", x->method, x->threads,
                 x->threads > 1 ? "s" : "", x->threads > 1 ? " (all cores)" : " (one core)", where);
        cbt_bw_table_head(title);
        cbt_bw_table_row(o->size, o->exec_times, x->gbs, x->us);
        cbt_bw_table_foot();
        printf("\n");
        fflush(stdout);
    }
    run_free(r);
    return 0;
}

/* Each method asked for, on one core then on all (once when they are one). */
static int measure_all(const cbt_bw_opts_t *o, d2d_t *d, const char *where, int *rc)
{
    const struct {
        const char *name;
        copy_fn fn;
        int on;
    } methods[2] = {{"memcpy", copy_memcpy, d->do_memcpy}, {"nt", copy_nt, d->do_nt}};
    int counts[2] = {1, d->all};
    double busy = 0; /* seconds spent copying so far (warm-up, bw.h) */
    for (int m = 0; m < 2; m++) {
        if (!methods[m].on)
            continue;
        for (int c = 0; c < 2; c++) {
            if (c == 1 && d->all == 1)
                continue;
            if (measure_one(o, d, methods[m].name, methods[m].fn, counts[c], &busy, where, rc))
                return -1;
        }
    }
    return 0;
}

static void print_json(const cbt_bw_opts_t *o, const d2d_t *d)
{
    printf("{\"schema\": \"collbench-bw/1\", \"type\": \"d2d\", \"size\": %llu, \"execute_times\": %lld, ", o->size,
           o->exec_times);
    if (d->ds >= 0)
        printf("\"mode\": \"%s\", \"src_device\": %d, \"dst_device\": %d, \"threads_on\": \"dst\", ",
               d->card ? "card" : "device", d->ds, d->dd);
    printf("\"results\": [");
    for (int i = 0; i < d->nres; i++)
        printf("%s\n  {\"method\": \"%s\", \"threads\": %d, \"bytes\": %llu, \"execute_times\": %lld, "
               "\"bandwidth_gbs\": %.6f, \"elapsed_us\": %.3f, \"check\": \"%s\"}",
               i ? "," : "", d->res[i].method, d->res[i].threads, o->size, o->exec_times, d->res[i].gbs, d->res[i].us,
               d->res[i].ok ? "success" : "failed");
    printf("]}\n");
}

/* --calibration-out: one core's copy (memcpy if it ran): a shared-memory
 * message is copied twice (in and out of the segment) by one core each; the
 * reduction measured on the same core; the same method on all cores at
 * once, per core: what each gets of the memory bandwidth they share. */
static int write_calibration(const cbt_bw_opts_t *o, const d2d_t *d)
{
    const result_t *one = &d->res[0], *every = one;
    for (int i = 1; i < d->nres; i++)
        if (!strcmp(d->res[i].method, one->method) && d->res[i].threads == d->all)
            every = &d->res[i];
    size_t rb = o->size < (64u << 20) ? (size_t)o->size : (size_t)64 << 20;
    double red = cbt_calib_reduce_gbps(rb < 4096 ? 4096 : rb, 0.5);
    char by[200];
    snprintf(by, sizeof by, "collbench bw -t d2d -s %llu (%s one core %.3f GB/s; %d cores %.3f GB/s)", o->size,
             one->method, one->gbs, d->all, every->gbs * (every == one ? d->all : 1));
    cbt_calib_kv_t kv[5] = {{"shm_gbps", one->gbs * 8 / 2},
                            {"reduce_gbps", red},
                            {"cores_per_host", d->all},
                            {"copy_core_gbps", every->gbs * 8 / every->threads},
                            {"cache_bytes", (double)coll_llc_bytes()}};
    return cbt_calib_write(TOOL, o->calib_out, by, kv, 5);
}

static void print_notes(const d2d_t *d)
{
    const char *kind = d->card ? "card" : "device";
    if (d->ds >= 0)
        printf("Source buffer on %s %d, destination buffer and copying threads on %s %d (CPUs of %s %d).\n", kind,
               d->ds, kind, d->dd, kind, d->dd);
#if !defined(__SSE2__)
    printf("nt: no non-temporal store path on this architecture, memcpy used.\n");
#endif
}

int cbt_bw_d2d(const cbt_bw_opts_t *o)
{
    d2d_t d = {.do_memcpy = 1, .do_nt = 1, .ds = -1, .dd = -1, .dev = -1, .size = (size_t)o->size};
    d.ncpu = cbt_cpu_list(d.cpus, CBT_MAX_CPUS, &d.ncores);
    int rc = parse_d2d(o, &d);
    if (rc || (d.ds >= 0 && (rc = bind_devices(&d))))
        return rc;
    if (!d.all)
        d.all = d.ncores;
    if ((rc = check_memory(o)) || (rc = map_buffers(&d)))
        return rc;
    if (d.ds >= 0) {
        char e[512];
        if (place(d.src, d.map, &d.sdev, "source", e, sizeof e) != 0
            || place(d.dst, d.map, &d.ddev, "destination", e, sizeof e) != 0) {
            rc = cbt_error(TOOL, CBT_EXIT_FAIL, "%s", e);
            goto out;
        }
    }
    char where[96] = "";
    if (d.ds >= 0)
        snprintf(where, sizeof where, ", %s %d -> %d", d.card ? "card" : "device", d.ds, d.dd);
    run_t *touch = run_new(d.src, d.dst, d.size, d.cpus, d.all);
    if (!touch || run_job(touch, JOB_TOUCH)) {
        run_free(touch);
        rc = cbt_error(TOOL, CBT_EXIT_FAIL, "cannot start %d threads", d.all);
        goto out;
    }
    run_free(touch);
    if (measure_all(o, &d, where, &rc))
        goto out;
    if (o->json)
        print_json(o, &d);
    else if (!o->quiet)
        printf("Bandwidth = Size / Elapsed Time of one execution (bytes copied; memory traffic is 2x that).\n");
    if (o->calib_out && !rc && d.nres)
        rc = write_calibration(o, &d);
    if (!o->json && !o->quiet)
        print_notes(&d);
out:
    munmap(d.src, d.map);
    munmap(d.dst, d.map);
    return rc;
}
