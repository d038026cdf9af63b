/*
 * roofline.c - the floor of each benchmark row (bench/roofline.h's bytes over
 * this machine's copy and reduce rates, measured now at the row's working set).
 *   roofline -p P -c allreduce,allgather -s 8K,1M,64M [-F] [-t MS]
 *   roofline -p P -H HOSTS -D GBS -c allreduce -s 64M [-F] [-t MS]
 * -F: bytes only (no measurement), for the docs check (tests/mp/49-bench-roofline.sh).
 * -t: milliseconds each rate is timed for (default 30; best of 3 such runs).
 * -H: across HOSTS hosts (P/HOSTS ranks each; roof_host_bytes), -D the link's
 *     measured duplex capacity, both directions summed, decimal GB/s
 *     (bench/hostfloor.sh measures it).
 * Prints per row (sizes rounded as coll_bench/mpi_bench round them):
 *   FLOOR coll p bytes copy red_rd red_wr ws                            (-F)
 *   FLOOR coll p bytes copy red_rd red_wr ws k copy1 copyk red1 redk floor_us bound
 *   HFLOOR coll p H bytes net copy red_rd red_wr ws                     (-H -F)
 *   HFLOOR coll p H bytes net copy red_rd red_wr ws dir k copy1 copyk red1 redk net_us floor_us
 * (-H: net = bytes each host sends and receives, copy/red = the ranks' local
 * work, dir = the rate one way with both busy = GBS / 2.)
 * Rates in decimal GB/s: copy1/copyk = a copy (memcpy or non-temporal stores,
 * the better) on 1 and on k = min(p, cores) threads, red1/redk = fp32
 * c = a + b (bytes of c; normal or non-temporal stores). One thread copies one
 * rank's working set (ws/2 -> ws/2); k threads together span all p ranks'
 * (p ws, split evenly), as the p ranks do. Rates are cached per shape.
 */
#include <getopt.h>
#include <pthread.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "roofline.h"

/* Each rate is the better of normal and non-temporal stores (x86: movntdq /
 * movntps; elsewhere both are the plain loop): glibc's memcpy keeps normal
 * stores up to a threshold (measured 2026-12-03: 2.5 GB/s against 4.8 for
 * non-temporal at 32 MiB) and a collective may use either. */
typedef enum { K_COPY, K_COPY_NT, K_RED, K_RED_NT } kind_t;

typedef struct {
    kind_t kind;
    size_t n; /* bytes per buffer */
    char *a, *b, *c;
    long reps;
    pthread_barrier_t *bar;
    double t0, t1;
} job_t;

/* Buffers are 4096-aligned and n a multiple of 64. */
static void pass(const job_t *j)
{
    const float *restrict x = (const float *)j->a, *restrict y = (const float *)j->b;
    float *restrict z = (float *)j->c;
    switch (j->kind) {
    case K_COPY: memcpy(j->b, j->a, j->n); break;
    case K_RED:
        for (size_t i = 0; i < j->n / 4; i++)
            z[i] = x[i] + y[i];
        break;
#if defined(__SSE2__)
    case K_COPY_NT:
        for (size_t i = 0; i < j->n; i += 64)
            for (size_t q = 0; q < 64; q += 16)
                _mm_stream_si128((__m128i *)(j->b + i + q), _mm_load_si128((const __m128i *)(j->a + i + q)));
        _mm_sfence();
        break;
    case K_RED_NT:
        for (size_t i = 0; i < j->n / 4; i += 4)
            _mm_stream_ps(z + i, _mm_add_ps(_mm_load_ps(x + i), _mm_load_ps(y + i)));
        _mm_sfence();
        break;
#else
    case K_COPY_NT: memcpy(j->b, j->a, j->n); break;
    case K_RED_NT:
        for (size_t i = 0; i < j->n / 4; i++)
            z[i] = x[i] + y[i];
        break;
#endif
    }
    __asm__ volatile("" : : : "memory");
}

static void *worker(void *arg)
{
    job_t *j = arg;
    pass(j); /* warm: this thread's caches */
    pthread_barrier_wait(j->bar);
    double t0 = bench_now_us();
    for (long r = 0; r < j->reps; r++)
        pass(j);
    pthread_barrier_wait(j->bar);
    j->t0 = t0, j->t1 = bench_now_us();
    return NULL;
}

/* One timed run of nth threads (buffers in j[]), reps passes each: seconds from the first start to the last end. */
static double run(job_t *j, int nth, long reps)
{
    pthread_t tid[256];
    pthread_barrier_t bar;
    if (pthread_barrier_init(&bar, NULL, (unsigned)nth)) {
        fprintf(stderr, "roofline: pthread_barrier_init failed\n");
        exit(1);
    }
    for (int i = 0; i < nth; i++) {
        j[i].reps = reps, j[i].bar = &bar;
        if (pthread_create(&tid[i], NULL, worker, &j[i])) {
            fprintf(stderr, "roofline: pthread_create failed\n");
            exit(1); /* the barrier would wait for it forever */
        }
    }
    double t0 = 1e300, t1 = 0;
    for (int i = 0; i < nth; i++) {
        pthread_join(tid[i], NULL);
        t0 = j[i].t0 < t0 ? j[i].t0 : t0;
        t1 = j[i].t1 > t1 ? j[i].t1 : t1;
    }
    pthread_barrier_destroy(&bar);
    return (t1 - t0) * 1e-6;
}

static double timed_ms = 30;

/* Rate in decimal GB/s (bytes copied / bytes of c produced, all threads): best of 3 runs of >= timed_ms. */
static double measure(kind_t kind, int nth, size_t n)
{
    job_t j[256];
    int nb = kind == K_RED || kind == K_RED_NT ? 3 : 2;
    for (int i = 0; i < nth; i++) {
        char *buf[3] = {NULL, NULL, NULL};
        for (int q = 0; q < nb; q++)
            if (!(buf[q] = aligned_alloc(4096, n))) {
                fprintf(stderr, "roofline: cannot allocate %d x %zu bytes\n", nth * nb, n);
                exit(1);
            } else {
                memset(buf[q], q + 1, n);
            }
        j[i] = (job_t){.kind = kind, .n = n, .a = buf[0], .b = buf[1], .c = buf[2]};
    }
    long reps = 1;
    double t;
    while ((t = run(j, nth, reps)) < timed_ms * 1e-3 && reps < (1L << 40))
        reps *= t > 0 ? (long)(timed_ms * 1e-3 / t * 1.2) + 1 : 2;
    double best = 0;
    for (int k = 0; k < 3; k++) {
        if (k)
            t = run(j, nth, reps);
        double g = (double)n * nth * reps / t / 1e9;
        best = g > best ? g : best;
    }
    for (int i = 0; i < nth; i++)
        free(j[i].a), free(j[i].b), free(j[i].c);
    return best;
}

/* the better of measure() with normal and with non-temporal stores, cached per (kind, threads, bytes) */
static double rate(kind_t kind, int nth, size_t n)
{
    static struct {
        kind_t kind;
        int nth;
        size_t n;
        double gbs;
    } cache[512];
    static int ncache;
    n = (n + 63) / 64 * 64;
    for (int i = 0; i < ncache; i++)
        if (cache[i].kind == kind && cache[i].nth == nth && cache[i].n == n)
            return cache[i].gbs;
    double best = measure(kind, nth, n), nt = measure(kind == K_COPY ? K_COPY_NT : K_RED_NT, nth, n);
    best = nt > best ? nt : best;
    if (ncache < 512)
        cache[ncache].kind = kind, cache[ncache].nth = nth, cache[ncache].n = n, cache[ncache++].gbs = best;
    return best;
}

/* The rates a row uses, at its working set: one thread = one rank's buffers, k threads = all p ranks'. */
static roof_rates_t row_rates(const roof_bytes_t *rb, int p, int k, double ws)
{
    roof_rates_t r = {0, 0, 0, 0};
    if (rb->copy > 0)
        r.copy1 = rate(K_COPY, 1, (size_t)(ws / 2)), r.copyk = rate(K_COPY, k, (size_t)(ws * p / k / 2));
    if (rb->red_rd > 0)
        r.red1 = rate(K_RED, 1, (size_t)(ws / 3)), r.redk = rate(K_RED, k, (size_t)(ws * p / k / 3));
    return r;
}

/* One row on one machine: FLOOR ... */
static int row(const char *cn, int c, int p, size_t b, int k, int floor_only)
{
    roof_bytes_t rb = {0, 0, 0};
    if (roof_bytes(c, p, (double)b, &rb))
        return -1;
    double ws = roof_ws(c, p, (double)b);
    printf("FLOOR %s %d %zu %.0f %.0f %.0f %.0f", cn, p, b, rb.copy, rb.red_rd, rb.red_wr, ws);
    if (!floor_only) {
        roof_rates_t r = row_rates(&rb, p, k, ws);
        const char *bound;
        double f = roof_floor_us(&rb, &r, k, &bound);
        printf(" %d %.2f %.2f %.2f %.2f %.3f %s", k, r.copy1, r.copyk, r.red1, r.redk, f, bound);
    }
    printf("\n");
    return fflush(stdout) ? -1 : 0;
}

static int hosts;         /* -H */
static double duplex_gbs; /* -D */

/* One row across hosts: HFLOOR ... (the local work measured as row() does; the hosts share this machine) */
static int host_row(const char *cn, int c, int p, size_t b, int k, int floor_only)
{
    roof_host_bytes_t h;
    if (roof_host_bytes(c, p, hosts, (double)b, &h))
        return -1;
    double ws = roof_ws(c, p, (double)b);
    printf("HFLOOR %s %d %d %zu %.0f %.0f %.0f %.0f %.0f", cn, p, hosts, b, h.net, h.local.copy, h.local.red_rd,
           h.local.red_wr, ws);
    if (!floor_only) {
        roof_rates_t r = row_rates(&h.local, p, k, ws);
        double net_us, f = roof_host_floor_us(&h, duplex_gbs / 2, &r, k, &net_us);
        printf(" %.3f %d %.2f %.2f %.2f %.2f %.3f %.3f", duplex_gbs / 2, k, r.copy1, r.copyk, r.red1, r.redk, net_us,
               f);
    }
    printf("\n");
    return fflush(stdout) ? -1 : 0;
}

/* -H and -D: hosts in 2..p dividing p, a collective with a cross-host formula, a duplex rate unless -F */
static int check_hosts(const char *colls, int p, int floor_only)
{
    roof_host_bytes_t h;
    char cbuf[256];
    if (hosts < 2 || hosts > p || p % hosts) {
        fprintf(stderr, "roofline: invalid -H %d: allowed 2..%d hosts dividing -p %d\n", hosts, p, p);
        return -1;
    }
    if (!floor_only && !(duplex_gbs > 0 && duplex_gbs < 1e6)) {
        fprintf(stderr, "roofline: invalid -D %g: allowed the link's duplex capacity in GB/s, > 0\n", duplex_gbs);
        return -1;
    }
    snprintf(cbuf, sizeof cbuf, "%s", colls);
    for (char *save = NULL, *cn = strtok_r(cbuf, ",", &save); cn; cn = strtok_r(NULL, ",", &save))
        if (roof_host_bytes(bench_coll_from_name(cn), p, hosts, 4.0 * p, &h)) {
            fprintf(stderr, "roofline: invalid collective '%s' with -H: allowed allreduce\n", cn);
            return -1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    const char *colls = "allreduce", *sizes_s = "8K,1M,64M";
    int p = 2, floor_only = 0, opt, hset = 0;
    while ((opt = getopt(argc, argv, "p:c:s:Ft:H:D:")) != -1) {
        switch (opt) {
        case 'p': p = atoi(optarg); break;
        case 'c': colls = optarg; break;
        case 's': sizes_s = optarg; break;
        case 'F': floor_only = 1; break;
        case 't': timed_ms = atof(optarg); break;
        case 'H': hosts = atoi(optarg), hset = 1; break;
        case 'D': duplex_gbs = atof(optarg); break;
        default: fprintf(stderr, "usage: roofline -p P [-H HOSTS -D GBS] -c COLLS -s SIZES [-F] [-t MS]\n"); return 2;
        }
    }
    if (p < 1 || p > 4096) {
        fprintf(stderr, "roofline: invalid -p %d: allowed 1..4096\n", p);
        return 2;
    }
    if (!(timed_ms > 0 && timed_ms <= 10000)) {
        fprintf(stderr, "roofline: invalid -t %g: allowed (0, 10000] milliseconds\n", timed_ms);
        return 2;
    }
    size_t sizes[32];
    int ns = bench_parse_sizes(sizes_s, sizes, 32);
    for (int i = 0; i < ns; i++)
        if (sizes[i] < 4 * (size_t)p) {
            fprintf(stderr, "roofline: invalid size %zu in -s %s: allowed >= 4 * p = %d bytes\n", sizes[i], sizes_s,
                    4 * p);
            return 2;
        }
    if (ns < 1) {
        fprintf(stderr, "roofline: invalid -s '%s': allowed a list such as 8K,1M,64M\n", sizes_s);
        return 2;
    }
    char cbuf[256];
    snprintf(cbuf, sizeof cbuf, "%s", colls);
    for (char *save = NULL, *cn = strtok_r(cbuf, ",", &save); cn; cn = strtok_r(NULL, ",", &save))
        if (bench_coll_from_name(cn) < 0) {
            fprintf(
                stderr,
                "roofline: invalid collective '%s': allowed allreduce, allgather, reduce_scatter, broadcast, reduce, alltoall, scatter, gather\n",
                cn);
            return 2;
        }
    if (hset && check_hosts(colls, p, floor_only))
        return 2;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int k = p < ncpu ? p : (int)(ncpu > 0 ? ncpu : 1);
    k = k < 256 ? k : 256; /* threads measured at most */
    if (!floor_only) {     /* a fresh process copies slowly for its first few hundred ms (README) */
        double until = bench_now_us() + 3e5;
        while (bench_now_us() < until)
            measure(K_COPY, k, (size_t)1 << 20);
    }
    snprintf(cbuf, sizeof cbuf, "%s", colls);
    for (char *save = NULL, *cn = strtok_r(cbuf, ",", &save); cn; cn = strtok_r(NULL, ",", &save))
        for (int i = 0; i < ns; i++) {
            size_t b = sizes[i] / (4 * (size_t)p) * 4 * (size_t)p;
            if ((hosts ? host_row : row)(cn, bench_coll_from_name(cn), p, b, k, floor_only))
                return 2; /* c, p and H were checked above */
        }
    return 0;
}
