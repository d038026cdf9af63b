/*
 * bench_common.h - the measurement loop shared by coll_bench (libcoll) and
 * mpi_bench (MPI), so both sides are timed exactly the same way:
 * W warm-up calls, a barrier, N timed calls; each rank's average, the
 * slowest rank's average reported; repeated R times, best repetition kept.
 * Also the CPU time (user + system, getrusage) of the timed calls, summed over
 * the ranks, per call: on a loaded machine wall time is CPU time over the
 * share of the cores a side got, and this separates the two.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* This process's user + system CPU time, microseconds. */
static inline double bench_cpu_us(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6
        + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

typedef enum {
    B_ALLREDUCE,
    B_ALLGATHER,
    B_REDUCE_SCATTER,
    B_BCAST,
    B_REDUCE,
    B_ALLTOALL,
    B_SCATTER,
    B_GATHER,
    B_NCOLL
} bench_coll_t;
static const char *bench_coll_names[B_NCOLL] = {"allreduce", "allgather", "reduce_scatter", "broadcast",
                                                "reduce",    "alltoall",  "scatter",        "gather"};

static inline int bench_coll_from_name(const char *s)
{
    for (int i = 0; i < B_NCOLL; i++)
        if (!strcmp(s, bench_coll_names[i]))
            return i;
    return -1;
}

/* nccl-tests bus bandwidth factor */
static inline double bench_busbw_factor(int c, int p)
{
    switch (c) {
    case B_ALLREDUCE: return 2.0 * (p - 1) / p;
    case B_BCAST:
    case B_REDUCE: return 1.0;
    default: return (double)(p - 1) / p;
    }
}

/* Parse "8K,1M,64M" */
static inline int bench_parse_sizes(const char *s, size_t *out, int max)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(t, &end);
        if (*end == 'K' || *end == 'k')
            v *= 1024;
        else if (*end == 'M' || *end == 'm')
            v *= 1048576;
        else if (*end == 'G' || *end == 'g')
            v *= 1073741824.0;
        out[n++] = (size_t)v;
    }
    return n;
}

#endif
