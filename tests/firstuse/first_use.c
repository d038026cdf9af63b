/*
 * first_use.c - the per-call timeline of a fresh communicator: how long call
 * 1, 2, 3 ... of one collective take right after coll_comm_init_rank, the
 * question hccl_test's defaults (-n 20 -w 10) ask, and what set-up work each
 * call did. Forks P local ranks.
 *   first_use -p P -c allreduce -s 8K[,64K...] [-n calls] [-H hosts] [-P ms] [-C]
 * One communicator, the sizes in the order given (a sweep: what a size change
 * costs; one size per run for a cold start of each). For each size prints the
 * init time (slowest rank, first size) and the slowest rank's time of calls
 * 1..10, then the mean over calls 11-20, 21-50, 51-100, 101-200, 201-500,
 * 501-n, and rank 0's minor page faults over calls 1-10 and 11-n. -H N: N
 * simulated hosts (COLL_HOST_ID=simhost<h>, TCP on 127.0.0.1 between them).
 * -P MS: every rank sleeps MS ms before each size (what a pause costs).
 * Buffers are written before the first call, as the test executables do.
 * Also counted, per call and rank: minor page faults (getrusage) and the
 * library's first-use events (core/comm.h: a working block allocated, stage
 * bytes past what init touched, a TCP connection opened).
 * -C (check, tests/mp/25-first-use.sh): exit 1, naming the call, size and
 * rank, when any call after the first of a size faults a page or has a
 * first-use event, or when call 1 of a size up to 256K on one host has a
 * first-use event (init prepares what those calls use). Not a timing test.
 * Built with -DFU_NO_EVENTS it counts page faults only, for a library from
 * before the event counter (the A/B against 56eb239 in docs/performance.md).
 */
#include <getopt.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../bench/bench_common.h"
#include "coll.h"
#include "core/comm.h"
#include "core/config.h"
#include "../lib/fork_ranks.h"
#include "../lib/sim_hosts.h"

enum { MAXN = 100000, MAXS = 32 };
static int nranks = 2, ncalls = 500, nhosts, pause_ms, check;
static const char *coll_s = "allreduce", *sizes_s = "8K,64K,256K";

static coll_status_t call(int c, void *s, void *r, size_t b, coll_comm_t comm)
{
    size_t cnt = b / 4, p = (size_t)nranks;
    switch (c) {
    case B_ALLREDUCE: return coll_all_reduce(s, r, cnt, COLL_FP32, COLL_SUM, comm);
    case B_ALLGATHER: return coll_all_gather(s, r, cnt / p, COLL_FP32, comm);
    case B_REDUCE_SCATTER: return coll_reduce_scatter(s, r, cnt / p, COLL_FP32, COLL_SUM, comm);
    case B_BCAST: return coll_broadcast(s, cnt, COLL_FP32, 0, comm);
    case B_REDUCE: return coll_reduce(s, r, cnt, COLL_FP32, COLL_SUM, 0, comm);
    case B_ALLTOALL: return coll_all_to_all(s, r, cnt / p, COLL_FP32, comm);
    case B_SCATTER: return coll_scatter(s, r, cnt / p, COLL_FP32, 0, comm);
    case B_GATHER: return coll_gather(s, r, cnt / p, COLL_FP32, 0, comm);
    }
    return COLL_ERR_INVALID_ARG;
}

#ifdef FU_NO_EVENTS
#define EVENTS(comm) ((uint64_t)0)
#else
#define EVENTS(comm) ((comm)->first_use)
#endif

static void plant_fault(void)
{
    char *p = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    for (int k = 0; k < 16; k++)
        p[k * 4096] = 1;
    munmap(p, 16 * 4096);
}

static long minflt(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

static int fail(int rank, const char *what)
{
    fprintf(stderr, "first_use: rank %d: %s: %s\n", rank, what, coll_last_error());
    return 1;
}

static coll_status_t join(int rank, const coll_unique_id_t *id, coll_comm_t *comm, double *init_us)
{
    if (nhosts > 0)
        cb_sim_host_claim(rank * nhosts / nranks); /* hosts in blocks */
    double t0 = bench_now_us();
    coll_status_t st = coll_comm_init_rank(comm, nranks, *id, rank);
    *init_us = bench_now_us() - t0;
    return st;
}

static void report(size_t b, double init_us, const double *t, int n, long f10, long frest, const char *algo)
{
    static const int edge[] = {10, 20, 50, 100, 200, 500, MAXN};
    printf("%-8zu init %8.0f us |", b, init_us);
    for (int i = 0; i < 10 && i < n; i++)
        printf(" %7.1f", t[i]);
    printf(" |");
    for (int e = 0; e + 1 < (int)(sizeof edge / sizeof *edge) && edge[e] < n; e++) {
        int hi = edge[e + 1] < n ? edge[e + 1] : n;
        double sum = 0;
        for (int i = edge[e]; i < hi; i++)
            sum += t[i];
        printf(" %d-%d:%.1f", edge[e] + 1, hi, sum / (hi - edge[e]));
    }
    printf(" | minflt 1-10: %ld, 11-%d: %ld | %s\n", f10, n, frest, algo);
    fflush(stdout);
}

/* Times ncalls calls of size b on comm; rank 0 prints the slowest rank's timeline. */
static int timeline(int rank, int c, size_t b, void *s, void *r, coll_comm_t comm, double init_us)
{
    static double t[MAXN], tmax[MAXN];
    long f0 = minflt(), f10 = 0;
    int bad = 0, plant = getenv("FU_PLANT_FAULT") ? atoi(getenv("FU_PLANT_FAULT")) : 0;
    for (int i = 0; i < ncalls; i++) {
        long fa = minflt();
        uint64_t ea = EVENTS(comm);
        double t0 = bench_now_us();
        if (call(c, s, r, b, comm))
            return fail(rank, "call");
        if (i + 1 == plant) /* the check's own test (25-first-use.sh): fresh pages inside call K */
            plant_fault();
        t[i] = bench_now_us() - t0;
        long df = minflt() - fa;
        uint64_t de = EVENTS(comm) - ea;
        if (i == 9)
            f10 = minflt() - f0;
        int want_none = i > 0 || (nhosts <= 1 && b <= 256 * 1024);
        if (check && ((i > 0 && df > 0) || (want_none && de > 0)) && bad++ < 3)
            fprintf(stderr, "first_use: FAIL %s %zu bytes, rank %d, call %d: %ld page faults, %llu first-use events\n",
                    coll_s, b, rank, i + 1, df, (unsigned long long)de);
    }
    long frest = minflt() - f0 - f10;
    if (bad)
        return 1;
    char algo[64];
    snprintf(algo, sizeof algo, "%s", coll_comm_last_algo(comm));
    if (coll_all_reduce(t, tmax, (size_t)ncalls, COLL_FP64, COLL_MAX, comm)
        || coll_all_reduce(&init_us, &init_us, 1, COLL_FP64, COLL_MAX, comm))
        return fail(rank, "gathering the times");
    if (rank == 0)
        report(b, init_us, tmax, ncalls, f10, frest, algo);
    return 0;
}

static int rank_main(int rank, void *arg)
{
    size_t sizes[MAXS], maxb = 0;
    int ns = bench_parse_sizes(sizes_s, sizes, MAXS), c = bench_coll_from_name(coll_s);
    for (int i = 0; i < ns; i++)
        maxb = sizes[i] > maxb ? sizes[i] : maxb;
    char *s = malloc(maxb + 4096), *r = malloc(maxb + 4096);
    if (!s || !r)
        return fprintf(stderr, "first_use: out of memory\n"), 1;
    memset(s, 1, maxb + 4096);
    memset(r, 0x5a, maxb + 4096); /* not 0: malloc + memset 0 may become calloc, leaving pages untouched */
    coll_comm_t comm = NULL;
    double init_us = 0;
    for (int i = 0; i < ns; i++) {
        size_t b = sizes[i] / (4 * (size_t)nranks) * 4 * (size_t)nranks;
        if (i == 0 && join(rank, arg, &comm, &init_us))
            return fail(rank, "coll_comm_init_rank");
        if (pause_ms > 0)
            usleep((useconds_t)pause_ms * 1000u);
        if (timeline(rank, c, b, s, r, comm, init_us))
            return 1;
        init_us = 0;
    }
    coll_comm_destroy(comm);
    free(s);
    free(r);
    return 0;
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "p:c:s:n:H:P:C")) != -1) {
        switch (opt) {
        case 'p': nranks = atoi(optarg); break;
        case 'c': coll_s = optarg; break;
        case 's': sizes_s = optarg; break;
        case 'n': ncalls = atoi(optarg); break;
        case 'H': nhosts = atoi(optarg); break;
        case 'P': pause_ms = atoi(optarg); break;
        case 'C': check = 1; break;
        default:
            fprintf(stderr, "usage: first_call -p P -c COLL -s SIZES [-n calls] [-H hosts] [-P ms] [-C]\n");
            return 2;
        }
    }
    if (nranks < 1 || ncalls < 1 || ncalls > MAXN || nhosts < 0 || nhosts > nranks
        || bench_coll_from_name(coll_s) < 0) {
        fprintf(stderr, "first_use: bad -p %d / -n %d (1..%d) / -H %d (0..P) / -c %s\n", nranks, ncalls, MAXN, nhosts,
                coll_s);
        return 2;
    }
    printf("# first_use -p %d -c %s -n %d: slowest rank's us per call\n", nranks, coll_s, ncalls);
    coll_unique_id_t id;
    if (coll_unique_id_listen("127.0.0.1", 0, NULL, &id))
        return fprintf(stderr, "first_use: unique id: %s\n", coll_last_error()), 3;
    int rc = cb_ranks_run(nranks, rank_main, &id, "first_use");
    coll_unique_id_release(&id);
    return rc ? 1 : 0;
}
