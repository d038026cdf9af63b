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
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bw.h"
#include "cb.h"

static const char *TOOL = "bw";

typedef void (*copy_fn)(void *restrict dst, const void *restrict src, size_t n);

static void copy_memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    memcpy(dst, src, n);
}

static void copy_nt(void *restrict dst, const void *restrict src, size_t n)
{
#if defined(__SSE2__)
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}

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
    case JOB_CLEAR:
        memset(d, 0, w->len);
        break;
    case JOB_CHECK:
        w->bad = memcmp(d, s, w->len) != 0;
        break;
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
    int all = ncores;
    int do_memcpy = 1, do_nt = 1;
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
        } else {
            return cbt_usage_error(TOOL, "unknown option '%s' for -t d2d (see collbench bw --help)", a);
        }
    }
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
                snprintf(title, sizeof title, "Host Memory Copy Test: %s, %d thread%s%s", x->method, x->threads,
                         x->threads > 1 ? "s" : "", x->threads > 1 ? " (all cores)" : " (one core)");
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
        printf("{\"schema\": \"collbench-bw/1\", \"type\": \"d2d\", \"size\": %llu, \"execute_times\": %lld, "
               "\"results\": [",
               o->size, o->exec_times);
        for (int i = 0; i < nres; i++)
            printf("%s\n  {\"method\": \"%s\", \"threads\": %d, \"bytes\": %llu, \"execute_times\": %lld, "
                   "\"bandwidth_gbs\": %.6f, \"elapsed_us\": %.3f, \"check\": \"%s\"}",
                   i ? "," : "", res[i].method, res[i].threads, o->size, o->exec_times, res[i].gbs, res[i].us,
                   res[i].ok ? "success" : "failed");
        printf("]}\n");
    } else if (!o->quiet) {
        printf("Bandwidth = Size / Elapsed Time of one execution (bytes copied; memory traffic is 2x that).\n");
#if !defined(__SSE2__)
        printf("nt: no non-temporal store path on this architecture, memcpy used.\n");
#endif
    }
out:
    munmap(src, map);
    munmap(dst, map);
    return rc;
}
