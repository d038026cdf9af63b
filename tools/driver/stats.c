/*
 * stats.c - per-iteration statistics of one data size, the straggler, and
 * what the run itself cost (init time, memory, shared memory, sockets).
 *
 * Every rank notes when each timed iteration of a size ends, counted from the
 * exit of the barrier before the loop (driver.c); iteration i+1 starts when i
 * ends, so these are also the times each rank arrives at the next call. Rank 0
 * gathers the first CB_ITER_MAX of them from every rank (one gather per size,
 * only when a JSON/CSV file or --stats asks) and computes min, p50, p99 and
 * max of the iteration times over iterations and ranks.
 *
 * The straggler is the rank that entered the collective last most often. In a
 * blocking collective every rank waits for the last one, so mean times all
 * look alike, and so do the per-iteration times of the iteration a rank was
 * held up in (everyone waited through it); what singles a rank out is that it
 * arrives at a call after the others. With A[r][i] the arrival of rank r at
 * call i (from its own barrier exit):
 *   off[r]  = median over i of (A[r][i] - mean over ranks of A[.][i]): the
 *             constant part (barrier exit skew, a host's clock, the order in
 *             which an algorithm lets ranks go), taken out;
 *   a[r]    = A[r][i] - off[r] + S[r][i], S the time rank r did not run
 *             during call i (stall.c: stopped or starved inside the call, it
 *             holds the others but arrives no later than they do next time);
 *             the late rank of call i is argmax a, and the call counts when
 *             it came after the median by more than the median iteration time
 *             (scheduling noise of a few microseconds does not count).
 * Each counted call charges its late rank with how long it held the others
 * (how far after the median it came). The straggler is the rank charged with
 * more than half of all the time charged, with at least 3 calls counted;
 * otherwise none (a run without one names nobody consistently). Weighing by
 * time, not by the number of calls: one rank stopped 50 ms holds the others
 * more than five ranks late by 0.3 ms each, and counting calls would let the
 * scheduling noise of an oversubscribed host outvote it.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "driver.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile p (0..1) of n sorted values. */
static double pct(const double *v, size_t n, double p)
{
    size_t k = (size_t)(p * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

/* Median of n values (v is reordered). */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(double), cmp_double);
    return n ? v[(n - 1) / 2] : 0;
}

/* rank r's end time of call i, and its stalled time in call i (stall.c) */
#define ARR(all, n, r, i) ((all)[(size_t)(r)*2 * (size_t)(n) + (size_t)(i)])
#define STALL(all, n, r, i) ((all)[(size_t)(r)*2 * (size_t)(n) + (size_t)(n) + (size_t)(i)])

/* arrival of rank r at call i: the end of call i-1 (0 for the first) */
static double arrival(const double *all, int n, int r, int i) { return i ? ARR(all, n, r, i - 1) : 0; }

/* off[r] (see the head comment); tmp has max(nranks, n) doubles. */
static void offsets(const double *all, int nranks, int n, double *off, double *tmp)
{
    double *mean = malloc((size_t)n * sizeof(double));
    for (int r = 0; r < nranks; r++)
        off[r] = 0;
    if (!mean)
        return;
    for (int i = 0; i < n; i++) {
        mean[i] = 0;
        for (int r = 0; r < nranks; r++)
            mean[i] += arrival(all, n, r, i) / nranks;
    }
    for (int r = 0; r < nranks; r++) {
        for (int i = 0; i < n; i++)
            tmp[i] = arrival(all, n, r, i) - mean[i];
        off[r] = median(tmp, (size_t)n);
    }
    free(mean);
}

/* The late rank of call i, or -1 if the call does not count; *by = how far
 * after the median it came. */
static int late_rank(const double *all, int nranks, int n, int i, const double *off, double *tmp, double thr,
                     double *by)
{
    int last = 0;
    for (int r = 0; r < nranks; r++) {
        tmp[r] = arrival(all, n, r, i) - off[r] + STALL(all, n, r, i);
        if (tmp[r] > tmp[last])
            last = r;
    }
    double a_last = tmp[last];
    *by = a_last - median(tmp, (size_t)nranks);
    return *by > thr ? last : -1;
}

/* The straggler of nranks x n end times (rank-major); thr = median time. */
static void straggler(const double *all, int nranks, int n, double thr, cb_iter_stats_t *st)
{
    int *late = calloc((size_t)nranks, sizeof(int));
    double *held = calloc((size_t)nranks, sizeof(double)), held_all = 0;
    double *off = malloc((size_t)nranks * sizeof(double));
    double *tmp = malloc((size_t)(nranks > n ? nranks : n) * sizeof(double));
    st->straggler = -1;
    st->late = st->counted = 0;
    if (late && held && off && tmp && nranks > 1) {
        offsets(all, nranks, n, off, tmp);
        for (int i = 1; i < n; i++) { /* call 0 starts at the barrier: no arrival to compare */
            double by;
            int r = late_rank(all, nranks, n, i, off, tmp, thr, &by);
            if (r >= 0) {
                late[r]++;
                held[r] += by;
                held_all += by;
                st->counted++;
            }
        }
        int best = 0;
        for (int r = 1; r < nranks; r++)
            if (held[r] > held[best])
                best = r;
        if (st->counted >= 3 && 2 * held[best] > held_all) {
            st->straggler = best;
            st->late = late[best];
        }
    }
    free(late);
    free(held);
    free(off);
    free(tmp);
}

void cb_iter_stats(const double *all, int nranks, int n, cb_iter_stats_t *st)
{
    size_t total = (size_t)nranks * (size_t)n;
    memset(st, 0, sizeof(*st));
    st->straggler = -1;
    double *v = total ? malloc(total * sizeof(double)) : NULL;
    if (!v) {
        st->counted = -1;
        return;
    }
    for (int r = 0; r < nranks; r++) /* iteration times from the end times */
        for (int i = 0; i < n; i++)
            v[(size_t)r * (size_t)n + (size_t)i] = ARR(all, n, r, i) - arrival(all, n, r, i);
    qsort(v, total, sizeof(double), cmp_double);
    st->min = v[0];
    st->p50 = pct(v, total, 0.50);
    st->p99 = pct(v, total, 0.99);
    st->max = v[total - 1];
    free(v);
    straggler(all, nranks, n, st->p50, st);
}

coll_status_t cb_iter_reduce(coll_comm_t comm, int rank, int nranks, const double *t, int n, cb_iter_stats_t *st)
{
    memset(st, 0, sizeof(*st));
    st->straggler = -1;
    st->counted = -1;
    if (n > CB_ITER_MAX)
        n = CB_ITER_MAX;
    double *all = NULL; /* t: n end times, then n stalled times (driver.c) */
    if (rank == 0 && !(all = malloc((size_t)nranks * 2 * (size_t)n * sizeof(double))))
        return COLL_ERR_NO_MEMORY;
    coll_status_t s = coll_gather(t, all, 2 * (size_t)n, COLL_FP64, 0, comm);
    if (s == COLL_SUCCESS && rank == 0)
        cb_iter_stats(all, nranks, n, st);
    free(all);
    return s;
}

/* Open sockets of this process (/proc/self/fd links "socket:[...]"). */
static int count_sockets(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    char path[300], link[64];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, link, sizeof(link) - 1);
        if (k > 7 && !strncmp(link, "socket:", 7))
            n++;
    }
    closedir(d);
    return n;
}

/* Does this rank own the segment named `name` (a collbench shm name)? The
 * host segment (...-h<H>) is counted by local rank 0, a rank's own
 * zero-copy segments (...-r<R>-m<M>) by rank R: each segment once per job. */
static int owns_segment(const char *name, int rank, int local_rank)
{
    const char *p = strstr(name, "collbench-");
    if (!p)
        return 0;
    const char *r = strstr(p, "-r"), *h = strstr(p, "-h");
    if (r && r[2] >= '0' && r[2] <= '9')
        return atoi(r + 2) == rank;
    return h && local_rank == 0;
}

/* Bytes of /dev/shm mappings this rank owns (from /proc/self/maps). */
static double shm_owned(int rank, int local_rank)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[1024];
    double bytes = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        const char *path = strstr(line, "/dev/shm/");
        if (!path || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
            continue;
        if (owns_segment(path + 9, rank, local_rank))
            bytes += (double)(hi - lo);
    }
    fclose(f);
    return bytes;
}

void cb_cost_local(cb_cost_t *c, double init_s, int rank, int local_rank)
{
    struct rusage ru;
    memset(c, 0, sizeof(*c));
    c->init_s = init_s;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        c->peak_rss_mib = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
    c->shm_bytes = shm_owned(rank, local_rank);
    c->sockets = count_sockets();
}

coll_status_t cb_cost_reduce(coll_comm_t comm, cb_cost_t *c)
{
    double mx[2] = {c->init_s, c->peak_rss_mib}, sum[2] = {c->shm_bytes, c->sockets};
    coll_status_t s = coll_all_reduce(mx, mx, 2, COLL_FP64, COLL_MAX, comm);
    if (s == COLL_SUCCESS)
        s = coll_all_reduce(sum, sum, 2, COLL_FP64, COLL_SUM, comm);
    if (s == COLL_SUCCESS) {
        c->init_s = mx[0];
        c->peak_rss_mib = mx[1];
        c->shm_bytes = sum[0];
        c->sockets = sum[1];
    }
    return s;
}
