/*
 * bw_d2d.c - `collbench bw -t d2d`: host memory copy bandwidth ("device to
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
#include "calib.h"
#include "cb.h"
#include "../common/coll_internal.h"

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

int cbt_bw_d2d(const cbt_bw_opts_t *o)
{
    int cpus[CBT_MAX_CPUS], ncores;
    int ncpu = cbt_cpu_list(cpus, CBT_MAX_CPUS, &ncores);
    int all = 0;
    int do_memcpy = 1, do_nt = 1;
    int card = 0, ds = -1, dd = -1, dev = -1, m_set = 0;
    for (int i = 0; i < o->nextra; i++) {
        const char *a = o->extra[i];
        long long ll;
        if ((!strcmp(a, "-c") || !strcmp(a, "--cores")) && i + 1 < o->nextra) {
            if (cbt_parse_ll(TOOL, "-c", o->extra[++i], 1, ncpu, &ll))
                return CBT_EXIT_USAGE;
            all = (int)ll;
        } else if (!strcmp(a, "--method") && i + 1 < o->nextra) {
            const char *v = o->extra[++i];
            do_memcpy = !strcmp(v, "memcpy") || !strcmp(v, "all");
            do_nt = !strcmp(v, "nt") || !strcmp(v, "all");
            if (!do_memcpy && !do_nt)
                return cbt_usage_error(TOOL, "invalid --method '%s' (allowed: memcpy, nt, all)", v);
        } else if ((!strcmp(a, "-d") || !strcmp(a, "--device")) && i + 1 < o->nextra) {
            if (cbt_parse_ll(TOOL, "-d", o->extra[++i], 0, CBT_DEV_MAX - 1, &ll))
                return CBT_EXIT_USAGE;
            dev = (int)ll;
        } else if ((!strcmp(a, "-ds") || !strcmp(a, "--ds") || !strcmp(a, "--device-src")) && i + 1 < o->nextra) {
            if (cbt_parse_ll(TOOL, "--ds", o->extra[++i], 0, CBT_DEV_MAX - 1, &ll))
                return CBT_EXIT_USAGE;
            ds = (int)ll;
        } else if ((!strcmp(a, "-dd") || !strcmp(a, "--dd") || !strcmp(a, "--device-dst")) && i + 1 < o->nextra) {
            if (cbt_parse_ll(TOOL, "--dd", o->extra[++i], 0, CBT_DEV_MAX - 1, &ll))
                return CBT_EXIT_USAGE;
            dd = (int)ll;
        } else if ((!strcmp(a, "-m") || !strcmp(a, "--mode")) && i + 1 < o->nextra) {
            if ((card = cbt_parse_devmode(TOOL, o->extra[++i])) < 0)
                return CBT_EXIT_USAGE;
            m_set = 1;
        } else {
            return cbt_usage_error(TOOL, "unknown option '%s' for -t d2d (see collbench bw --help)", a);
        }
    }
    if ((ds >= 0) != (dd >= 0))
        return cbt_usage_error(TOOL, "--ds and --dd go together (source and destination device)");
    if (ds >= 0 && dev >= 0)
        return cbt_usage_error(TOOL, "-d does not go with --ds/--dd (-d D is --ds D --dd D)");
    if (dev >= 0)
        ds = dd = dev;
    else if (m_set && ds < 0)
        ds = dd = 0; /* -m alone: device (card) 0, as in p2p */
    cbt_dev_t sdev, ddev;
    if (ds >= 0) {
        char e[512];
        for (int k = 0; k < 2; k++)
            if (cbt_dev_lookup(card, k ? dd : ds, k ? &ddev : &sdev, e, sizeof e) != 0)
                return cbt_usage_error(TOOL,
                                       "%s %d: %s (--ds/--dd are device ids on the source and the target "
                                       "node, not ranks)",
                                       dev >= 0 ? "-d"
                                           : k  ? "--dd"
                                                : "--ds",
                                       k ? dd : ds, e);
        /* the copying threads run on the destination (see the top of this file);
         * the threads started below inherit the CPUs, cbt_cpu_list sees only them */
        if (cbt_dev_bind(&ddev, e, sizeof e) != 0)
            return cbt_error(TOOL, CBT_EXIT_FAIL, "%s", e);
        ncpu = cbt_cpu_list(cpus, CBT_MAX_CPUS, &ncores);
        if (all > ncpu)
            return cbt_usage_error(TOOL, "invalid -c '%d' (allowed: integer 1..%d, the CPUs of %s %d)", all, ncpu,
                                   card ? "card" : "device", dd);
    }
    if (!all)
        all = ncores;
    const size_t size = (size_t)o->size;
    unsigned long long need = 2ULL * size, avail = cbt_mem_available();
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
    size_t map = (size + 4095) & ~(size_t)4095;
    unsigned char *src = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *dst = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (src == MAP_FAILED || dst == MAP_FAILED) {
        if (src != MAP_FAILED)
            munmap(src, map);
        if (dst != MAP_FAILED)
            munmap(dst, map);
        return cbt_error(TOOL, CBT_EXIT_FAIL, "cannot map 2 x %llu bytes", (unsigned long long)map);
    }
#ifdef MADV_HUGEPAGE
    if (map >= (2u << 20)) {
        madvise(src, map, MADV_HUGEPAGE);
        madvise(dst, map, MADV_HUGEPAGE);
    }
#endif
    int rc = 0;
    if (ds >= 0) {
        char e[512];
        if (place(src, map, &sdev, "source", e, sizeof e) != 0
            || place(dst, map, &ddev, "destination", e, sizeof e) != 0) {
            rc = cbt_error(TOOL, CBT_EXIT_FAIL, "%s", e);
            goto out;
        }
    }
    char where[96] = "";
    if (ds >= 0)
        snprintf(where, sizeof where, ", %s %d -> %d", card ? "card" : "device", ds, dd);
    run_t *touch = run_new(src, dst, size, cpus, all);
    if (!touch || run_job(touch, JOB_TOUCH)) {
        run_free(touch);
        rc = cbt_error(TOOL, CBT_EXIT_FAIL, "cannot start %d threads", all);
        goto out;
    }
    run_free(touch);

    result_t res[4];
    int nres = 0;
    const struct {
        const char *name;
        copy_fn fn;
        int on;
    } methods[2] = {{"memcpy", copy_memcpy, do_memcpy}, {"nt", copy_nt, do_nt}};
    int counts[2] = {1, all};
    double busy = 0; /* seconds spent copying so far (warm-up, bw.h) */
    for (int m = 0; m < 2; m++) {
        if (!methods[m].on)
            continue;
        for (int c = 0; c < 2; c++) {
            if (c == 1 && all == 1)
                continue;
            run_t *r = run_new(src, dst, size, cpus, counts[c]);
            if (!r || run_job(r, JOB_CLEAR)) {
                run_free(r);
                rc = cbt_error(TOOL, CBT_EXIT_FAIL, "cannot start %d threads", counts[c]);
                goto out;
            }
            r->copy = methods[m].fn;
            r->times = o->exec_times;
            double tc = cbt_now();
            r->warm_until = tc + (busy < CBT_BW_WARMUP_S ? CBT_BW_WARMUP_S - busy : 0.0);
            run_job(r, JOB_COPY);
            busy += cbt_now() - tc;
            run_job(r, JOB_CHECK);
            int bad = 0;
            for (int i = 0; i < r->nthreads; i++)
                bad |= r->w[i].bad;
            double per = (r->t1 - r->t0) / (double)o->exec_times;
            result_t *x = &res[nres++];
            *x = (result_t){methods[m].name, counts[c], (double)size / per / 1e9, per * 1e6, !bad};
            if (bad)
                rc = cbt_error(TOOL, CBT_EXIT_FAIL, "%s with %d thread(s): destination differs from source",
                               methods[m].name, counts[c]);
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
        }
    }
    if (o->json) {
        printf("{\"schema\": \"collbench-bw/1\", \"type\": \"d2d\", \"size\": %llu, \"execute_times\": %lld, ", o->size,
               o->exec_times);
        if (ds >= 0)
            printf("\"mode\": \"%s\", \"src_device\": %d, \"dst_device\": %d, \"threads_on\": \"dst\", ",
                   card ? "card" : "device", ds, dd);
        printf("\"results\": [");
        for (int i = 0; i < nres; i++)
            printf("%s\n  {\"method\": \"%s\", \"threads\": %d, \"bytes\": %llu, \"execute_times\": %lld, "
                   "\"bandwidth_gbs\": %.6f, \"elapsed_us\": %.3f, \"check\": \"%s\"}",
                   i ? "," : "", res[i].method, res[i].threads, o->size, o->exec_times, res[i].gbs, res[i].us,
                   res[i].ok ? "success" : "failed");
        printf("]}\n");
    } else if (!o->quiet) {
        printf("Bandwidth = Size / Elapsed Time of one execution (bytes copied; memory traffic is 2x that).\n");
    }
    if (o->calib_out && !rc && nres) {
        /* one core's copy (memcpy if it ran): a shared-memory message is copied twice (in and out of
         * the segment) by one core each; the reduction measured on the same core; the same method on
         * all cores at once, per core: what each gets of the memory bandwidth they share */
        const result_t *one = &res[0], *every = one;
        for (int i = 1; i < nres; i++)
            if (!strcmp(res[i].method, one->method) && res[i].threads == all)
                every = &res[i];
        size_t rb = o->size < (64u << 20) ? (size_t)o->size : (size_t)64 << 20;
        double red = cbt_calib_reduce_gbps(rb < 4096 ? 4096 : rb, 0.5);
        char by[200];
        snprintf(by, sizeof by, "collbench bw -t d2d -s %llu (%s one core %.3f GB/s; %d cores %.3f GB/s)", o->size,
                 one->method, one->gbs, all, every->gbs * (every == one ? all : 1));
        cbt_calib_kv_t kv[4] = {{"shm_gbps", one->gbs * 8 / 2},
                                {"reduce_gbps", red},
                                {"cores_per_host", all},
                                {"copy_core_gbps", every->gbs * 8 / every->threads}};
        rc = cbt_calib_write(TOOL, o->calib_out, by, kv, 4);
    }
    if (!o->json && !o->quiet) {
        if (ds >= 0)
            printf("Source buffer on %s %d, destination buffer and copying threads on %s %d (CPUs of %s %d).\n",
                   card ? "card" : "device", ds, card ? "card" : "device", dd, card ? "card" : "device", dd);
#if !defined(__SSE2__)
        printf("nt: no non-temporal store path on this architecture, memcpy used.\n");
#endif
    }
out:
    munmap(src, map);
    munmap(dst, map);
    return rc;
}
