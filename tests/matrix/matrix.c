/*
 * matrix.c - the algorithm matrix test: every collective x every algorithm of
 * the registry forced in turn x counts (0, 1, odd, large) x dtypes x ops x
 * roots, in place and out of place, on N real processes forked here.
 * Expected results are computed independently (every rank regenerates every
 * rank's input) and compared exactly: inputs are small integers, so sums,
 * products, max and min are exact in every datatype.
 *
 *   matrix -n RANKS [-H R0,R1,...] [-I] [-k COLLECTIVE] [-a ALGO] [-q] [-v]
 * Exit 0 when every case passed; prints one line per (collective, algorithm).
 *
 * -H simulates hosts on this machine: host h gets R_h ranks (sum = -n, which
 * may then be omitted), each rank sets COLL_HOST_ID=simhost<h>, so ranks of
 * one simulated host talk over shm and ranks of different ones over TCP on
 * 127.0.0.1 only (COLL_IF_IP): hierarchical algorithms run, flat ones cross
 * the simulated hosts. Ranks are dealt to hosts in blocks (0..R0-1 on host 0,
 * ...); -I deals them round-robin instead, so a host's ranks are not
 * contiguous (rank order vs host order).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "coll/algo.h"
#include "core/config.h"
#include "core/reduce.h"
#include "../lib/sim_hosts.h"

static int nranks = 2, quick = 0, verbose = 0, zero_copy = 0;
static int interleave = 0; /* -H ... -I: ranks dealt round-robin */
static cb_sim_hosts_t sim; /* -H: simulated hosts */
static const char *only_kind = NULL, *only_algo = NULL;

/* Small-integer input: element i of rank r, kept exact for every dtype/op. */
static double gen(int r, size_t i, coll_op_t op, coll_dtype_t dt)
{
    int is_unsigned = dt >= COLL_UINT8 && dt <= COLL_UINT64;
    switch (op) {
    case COLL_PROD: /* mostly 1, sometimes 2 (and -1 for signed): |product| <= 2^(p/3+1) */
        if ((i + (size_t)r) % 3 == 0)
            return 2;
        if (!is_unsigned && (i * 7 + (size_t)r) % 5 == 0)
            return -1;
        return 1;
    case COLL_SUM: return (double)((i * 13 + (size_t)r * 7) % 5) - (is_unsigned ? 0 : 2);
    default: return (double)((i * 31 + (size_t)r * 17) % 100) - (is_unsigned ? 0 : 50);
    }
}

static void put(void *buf, size_t i, coll_dtype_t dt, double v)
{
    switch (dt) {
    case COLL_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case COLL_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case COLL_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case COLL_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case COLL_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case COLL_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case COLL_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case COLL_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case COLL_FP16: ((uint16_t *)buf)[i] = coll_fp32_to_fp16((float)v); break;
    case COLL_BF16: ((uint16_t *)buf)[i] = coll_fp32_to_bf16((float)v); break;
    case COLL_FP32: ((float *)buf)[i] = (float)v; break;
    case COLL_FP64: ((double *)buf)[i] = v; break;
    default: break;
    }
}

static double get(const void *buf, size_t i, coll_dtype_t dt)
{
    switch (dt) {
    case COLL_INT8: return ((const int8_t *)buf)[i];
    case COLL_INT16: return ((const int16_t *)buf)[i];
    case COLL_INT32: return ((const int32_t *)buf)[i];
    case COLL_INT64: return (double)((const int64_t *)buf)[i];
    case COLL_UINT8: return ((const uint8_t *)buf)[i];
    case COLL_UINT16: return ((const uint16_t *)buf)[i];
    case COLL_UINT32: return ((const uint32_t *)buf)[i];
    case COLL_UINT64: return (double)((const uint64_t *)buf)[i];
    case COLL_FP16: return coll_fp16_to_fp32(((const uint16_t *)buf)[i]);
    case COLL_BF16: return coll_bf16_to_fp32(((const uint16_t *)buf)[i]);
    case COLL_FP32: return ((const float *)buf)[i];
    case COLL_FP64: return ((const double *)buf)[i];
    default: return 0;
    }
}

/* The reduction of element i over all ranks, as the dtype stores it. */
static double expect_red(size_t i, coll_op_t op, coll_dtype_t dt, int p)
{
    double acc = gen(0, i, op, dt);
    for (int r = 1; r < p; r++) {
        double v = gen(r, i, op, dt);
        switch (op) {
        case COLL_SUM: acc += v; break;
        case COLL_PROD: acc *= v; break;
        case COLL_MAX: acc = v > acc ? v : acc; break;
        case COLL_MIN: acc = v < acc ? v : acc; break;
        default: break;
        }
    }
    unsigned char tmp[8];
    put(tmp, 0, dt, acc); /* wrap like the dtype (unsigned never negative here) */
    return get(tmp, 0, dt);
}

/* Value of element i that rank r contributes in non-reducing collectives. */
static double tag(int r, size_t i, coll_dtype_t dt)
{
    double m = (dt == COLL_INT8) ? 120 : (dt == COLL_UINT8 ? 250 : (dt == COLL_BF16 ? 250 : 2000));
    double v = (double)(((size_t)r * 37 + i * 11) % (size_t)m);
    return dt == COLL_INT8 ? v - 60 : v;
}

typedef struct {
    int rank, p;
    coll_comm_t comm;
    long cases, failures;
    const char *algo;
} ctx_t;

static void report(ctx_t *c, const char *what, coll_dtype_t dt, int op, size_t n, int root, int inplace, size_t idx,
                   double exp, double act)
{
    c->failures++;
    if (c->failures <= 5)
        fprintf(stderr,
                "rank %d: %s algo %s dtype %s op %s count %zu root %d inplace %d: element %zu expected %g got %g\n",
                c->rank, what, c->algo, coll_dtype_name(dt), op >= 0 ? coll_op_name((coll_op_t)op) : "-", n, root,
                inplace, idx, exp, act);
}

static int call_failed(ctx_t *c, const char *what, coll_status_t st)
{
    if (st == COLL_SUCCESS)
        return 0;
    c->failures++;
    fprintf(stderr, "rank %d: %s (%s) failed: %s: %s\n", c->rank, what, c->algo, coll_strerror(st), coll_last_error());
    return 1;
}

#include "matrix_cases.h"
#include "../lib/fork_ranks.h"

static const size_t counts_full[] = {0, 1, 7, 1021, 70001};
static const size_t counts_quick[] = {0, 1, 7, 1021};
static const coll_dtype_t dtypes_full[] = {COLL_INT8,  COLL_UINT8,  COLL_INT16, COLL_UINT16, COLL_INT32, COLL_UINT32,
                                           COLL_INT64, COLL_UINT64, COLL_FP16,  COLL_BF16,   COLL_FP32,  COLL_FP64};

static int run_rank(int rank, void *arg)
{
    coll_unique_id_t id = *(const coll_unique_id_t *)arg;
    ctx_t c = {rank, nranks, NULL, 0, 0, ""};
    cb_sim_hosts_claim(&sim, rank);
    coll_status_t st = coll_comm_init_rank(&c.comm, nranks, id, rank);
    if (st != COLL_SUCCESS) {
        fprintf(stderr, "rank %d: init failed: %s\n", rank, coll_last_error());
        return 3;
    }
    char *arena = NULL;
    if (zero_copy) { /* collective: every rank allocates; with -Z the odd ranks keep private buffers */
        zc_cap = (size_t)64 << 20;
        if (coll_mem_alloc(c.comm, zc_cap, (void **)&arena) != COLL_SUCCESS) {
            fprintf(stderr, "rank %d: coll_mem_alloc: %s\n", rank, coll_last_error());
            return 3;
        }
        zc_arena = zero_copy == 2 && rank % 2 ? NULL : arena;
    }
    const size_t *counts = quick ? counts_quick : counts_full;
    size_t ncounts = quick ? sizeof counts_quick / sizeof counts_quick[0] : sizeof counts_full / sizeof counts_full[0];
    for (int i = 0; coll_algo_table[i]; i++) {
        const coll_algo_t *al = coll_algo_table[i];
        if (only_kind && strcmp(only_kind, coll_kind_name(al->kind)))
            continue;
        if (only_algo && strcmp(only_algo, al->name))
            continue;
        char spec[96];
        snprintf(spec, sizeof spec, "%s=%s", coll_kind_name(al->kind), al->name);
        coll_algo_force(spec);
        c.algo = al->name;
        long f0 = c.failures, c0 = c.cases;
        int applicable = 1;
        for (size_t ci = 0; ci < ncounts && applicable; ci++)
            for (size_t di = 0; di < sizeof dtypes_full / sizeof dtypes_full[0]; di++) {
                /* keep the large count to a few dtypes to bound the run time */
                if (counts[ci] > 5000 && di % 4 != 2)
                    continue;
                run_case(&c, al->kind, counts[ci], dtypes_full[di], &applicable);
                if (!applicable)
                    break;
            }
        if (rank == 0)
            printf("%-16s %-14s %s (%ld cases, %ld failures on rank 0)\n", coll_kind_name(al->kind), al->name,
                   !applicable            ? "n/a here"
                       : c.failures == f0 ? "ok"
                                          : "FAILED",
                   c.cases - c0, c.failures - f0);
        fflush(stdout);
        coll_algo_force(NULL);
    }
    /* Ranks leave the last collective at different times (a gather's senders
     * return before the root has drained them). Synchronise before tearing
     * down: the shm executor's liveness check treats any exited local peer as
     * dead, even one it no longer waits for, and would fail the slower ranks. */
    if (coll_barrier(c.comm) != COLL_SUCCESS)
        c.failures++;
    if (arena)
        coll_mem_free(c.comm, arena);
    coll_comm_destroy(c.comm);
    return c.failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    int opt, nset = 0;
    const char *hosts = NULL;
    while ((opt = getopt(argc, argv, "n:H:Ik:a:qvzZ")) != -1) {
        switch (opt) {
        case 'n':
            nranks = atoi(optarg);
            nset = 1;
            break;
        case 'H': hosts = optarg; break;
        case 'I': interleave = 1; break;
        case 'k': only_kind = optarg; break;
        case 'a': only_algo = optarg; break;
        case 'q': quick = 1; break;
        case 'z': zero_copy = 1; break;
        case 'Z': zero_copy = 2; break;
        case 'v': verbose = 1; break;
        default:
            fprintf(stderr, "usage: matrix -n RANKS [-H R0,R1,...] [-I] [-k COLLECTIVE] [-a ALGO] [-q] [-z | -Z]\n");
            return 2;
        }
    }
    if (hosts) {
        if (cb_sim_hosts_parse(hosts, interleave, &sim)) {
            fprintf(stderr, "matrix: invalid -H '%s' (ranks per simulated host, e.g. 2,1,2; 1..64 in all)\n", hosts);
            return 2;
        }
        if (nset && sim.nranks != nranks) {
            fprintf(stderr, "matrix: -H %s has %d ranks but -n is %d\n", hosts, sim.nranks, nranks);
            return 2;
        }
        nranks = sim.nranks;
        printf("matrix: %d simulated hosts (%s), ranks dealt %s:", sim.nhosts, hosts,
               interleave ? "round-robin" : "in blocks");
        for (int r = 0; r < nranks; r++)
            printf(" %d@h%d", r, sim.host[r]);
        printf("\n");
    }
    if (nranks < 1 || nranks > 64) {
        fprintf(stderr, "matrix: invalid -n %d (allowed 1..64)\n", nranks);
        return 2;
    }
    coll_unique_id_t id;
    if (coll_unique_id_listen("127.0.0.1", 0, NULL, &id) != COLL_SUCCESS) {
        fprintf(stderr, "matrix: coll_get_unique_id: %s\n", coll_last_error());
        return 3;
    }
    int worst = cb_ranks_run(nranks, run_rank, &id, "matrix");
    coll_unique_id_release(&id);
    printf("matrix: %d ranks%s%s: %s\n", nranks, hosts ? " on simulated hosts " : "", hosts ? hosts : "",
           worst ? "FAILED" : "all cases passed");
    return worst ? 1 : 0;
}
