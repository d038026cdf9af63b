/*
 * determ.c - bitwise reproducibility of the reducing collectives
 * (tests/mp/19-deterministic.sh). On N real processes forked here, every
 * algorithm of allreduce, reduce, reduce_scatter and reduce_scatterv is forced
 * in turn and run R times on fp32 and bf16 sums of values of mixed magnitudes
 * (so the order of the additions shows in the bits). Each rank reassembles the
 * whole reduced vector (broadcast from the root / allgather of the blocks:
 * copies only) and prints one line per call:
 *
 *   R p=P dt=fp32 n=N kind=allreduce algo=ordered rank=3 rep=0 hash=<fnv64> ordered=1
 *
 * hash: FNV-1a of the result's bytes; ordered=1 when it equals, bit for bit,
 * the rank-order sum ((x0 + x1) + x2) + ... computed here with the scalar
 * reference kernels. Forcing an algorithm that COLL_DETERMINISTIC=1 excludes
 * prints "X kind=K algo=A excluded: <message>" instead.
 *
 *   determ -n RANKS | -H R0,R1,... [-I] [-r REPEATS] [-z]
 * -H / -I simulate hosts as matrix.c does (COLL_HOST_ID per rank, TCP between
 * simulated hosts on 127.0.0.1); -z puts the buffers in coll_mem_alloc memory
 * (the direct algorithms' zero-copy paths). Exit 0 unless a call failed.
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
#include "../lib/fork_ranks.h"

static int nranks = 2, interleave = 0, reps = 2, zero_copy = 0;
static cb_sim_hosts_t sim;                          /* -H */
static const size_t sizes[] = {840 * 9, 840 * 250}; /* multiples of every p in 2..8 */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Element i of rank r: +-[1, 2) x 2^e, e in -12..12: additions round differently in other orders. */
static float gen(int r, size_t i)
{
    uint64_t h = mix(((uint64_t)r << 40) ^ i);
    float m = 1.0f + (float)(h & 0xffffff) / 16777216.0f;
    int e = (int)((h >> 24) % 25) - 12;
    float v = m;
    for (; e > 0; e--)
        v *= 2.0f;
    for (; e < 0; e++)
        v *= 0.5f;
    return (h >> 60) & 1 ? -v : v;
}

static void fill(void *buf, int r, size_t n, coll_dtype_t dt)
{
    for (size_t i = 0; i < n; i++) {
        float v = gen(r, i);
        if (dt == COLL_FP32)
            ((float *)buf)[i] = v;
        else
            ((uint16_t *)buf)[i] = coll_fp32_to_bf16(v);
    }
}

static uint64_t fnv(const void *p, size_t bytes)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ULL;
    return h;
}

static coll_unique_id_t the_id;

static int call(coll_kind_t k, const void *sb, void *rb, size_t n, coll_dtype_t dt, int p, int me, int rep,
                size_t *counts, coll_comm_t comm, const char **used)
{
    size_t es = dt == COLL_FP32 ? 4 : 2;
    coll_status_t st = COLL_SUCCESS;
    *used = "?";
    switch (k) {
    case COLL_ALLREDUCE:
        st = coll_all_reduce(sb, rb, n, dt, COLL_SUM, comm);
        *used = coll_comm_last_algo(comm);
        break;
    case COLL_REDUCE: {
        int root = rep % p;
        st = coll_reduce(sb, rb, n, dt, COLL_SUM, root, comm);
        *used = coll_comm_last_algo(comm);
        if (st == COLL_SUCCESS)
            st = coll_broadcast(rb, n, dt, root, comm);
        break;
    }
    case COLL_REDUCE_SCATTER: {
        size_t c = n / (size_t)p;
        char *blk = malloc(c * es + 1);
        st = coll_reduce_scatter(sb, blk, c, dt, COLL_SUM, comm);
        *used = coll_comm_last_algo(comm);
        if (st == COLL_SUCCESS)
            st = coll_all_gather(blk, rb, c, dt, comm);
        free(blk);
        break;
    }
    case COLL_REDUCE_SCATTERV: {
        size_t *displs = malloc(sizeof(size_t) * (size_t)p), off = 0;
        for (int i = 0; i < p; i++) {
            displs[i] = off;
            off += counts[i];
        }
        char *blk = malloc(counts[me] * es + 1);
        st = coll_reduce_scatterv(sb, blk, counts, dt, COLL_SUM, comm);
        *used = coll_comm_last_algo(comm);
        if (st == COLL_SUCCESS)
            st = coll_all_gatherv(blk, counts[me], rb, counts, displs, dt, comm);
        free(blk);
        free(displs);
        break;
    }
    default: break;
    }
    if (st != COLL_SUCCESS)
        fprintf(stderr, "rank %d: %s: %s\n", me, coll_kind_name(k), coll_last_error());
    return st == COLL_SUCCESS ? 0 : 1;
}

static int rank_main(int rank, void *arg)
{
    cb_sim_hosts_claim(&sim, rank);
    coll_comm_t comm;
    if (coll_comm_init_rank(&comm, nranks, the_id, rank) != COLL_SUCCESS) {
        fprintf(stderr, "rank %d: init failed: %s\n", rank, coll_last_error());
        return 3;
    }
    int p = nranks, fails = 0;
    static const coll_dtype_t dts[] = {COLL_FP32, COLL_BF16};
    size_t *counts = malloc(sizeof(size_t) * (size_t)p);
    for (size_t di = 0; di < 2; di++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            coll_dtype_t dt = dts[di];
            size_t n = sizes[si], es = dt == COLL_FP32 ? 4 : 2;
            char *sb = NULL, *rb = NULL, *ref = malloc(n * es), *x = malloc(n * es);
            if (!zero_copy) {
                sb = malloc(n * es);
                rb = malloc(n * es);
            } else if (coll_mem_alloc(comm, n * es, (void **)&sb) != COLL_SUCCESS
                       || coll_mem_alloc(comm, n * es, (void **)&rb) != COLL_SUCCESS) {
                fprintf(stderr, "rank %d: coll_mem_alloc: %s\n", rank, coll_last_error());
                return 3;
            }
            fill(sb, rank, n, dt);
            /* the rank-order reference, scalar kernels */
            fill(ref, 0, n, dt);
            for (int r = 1; r < p; r++) {
                fill(x, r, n, dt);
                coll_reduce_kernel_ref(COLL_SUM, dt)(ref, ref, x, n);
            }
            for (int i = 0; i < p; i++) /* uneven blocks for reduce_scatterv */
                counts[i] = n / (size_t)p;
            counts[0] += counts[p - 1] / 2;
            counts[p - 1] -= counts[p - 1] / 2;
            for (int i = 0; coll_algo_table[i]; i++) {
                const coll_algo_t *al = coll_algo_table[i];
                if (!coll_algo_kind_reduces(al->kind))
                    continue;
                char spec[96];
                snprintf(spec, sizeof spec, "%s=%s", coll_kind_name(al->kind), al->name);
                if (coll_algo_force(spec) != COLL_SUCCESS) {
                    if (rank == 0 && di == 0 && si == 0)
                        printf("X kind=%s algo=%s excluded: %s\n", coll_kind_name(al->kind), al->name,
                               coll_last_error());
                    continue;
                }
                for (int rep = 0; rep < reps; rep++) {
                    const char *used;
                    memset(rb, 0xff, n * es);
                    if (call(al->kind, sb, rb, n, dt, p, rank, rep, counts, comm, &used)) {
                        fails++;
                        continue;
                    }
                    printf("R p=%d dt=%s n=%zu kind=%s algo=%s rank=%d rep=%d hash=%016llx ordered=%d\n", p,
                           dt == COLL_FP32 ? "fp32" : "bf16", n, coll_kind_name(al->kind), used, rank, rep,
                           (unsigned long long)fnv(rb, n * es), !memcmp(rb, ref, n * es));
                }
                fflush(stdout);
            }
            coll_algo_force(NULL);
            if (zero_copy) {
                coll_mem_free(comm, rb);
                coll_mem_free(comm, sb);
            } else {
                free(sb), free(rb);
            }
            free(ref), free(x);
        }
    free(counts);
    if (coll_barrier(comm) != COLL_SUCCESS)
        fails++;
    coll_comm_destroy(comm);
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    int opt;
    const char *hosts = NULL;
    while ((opt = getopt(argc, argv, "n:H:Ir:z")) != -1) {
        switch (opt) {
        case 'n': nranks = atoi(optarg); break;
        case 'H': hosts = optarg; break;
        case 'I': interleave = 1; break;
        case 'r': reps = atoi(optarg); break;
        case 'z': zero_copy = 1; break;
        default: fprintf(stderr, "usage: determ -n RANKS | -H R0,R1,... [-I] [-r REPEATS] [-z]\n"); return 2;
        }
    }
    if (hosts && cb_sim_hosts_parse(hosts, interleave, &sim)) {
        fprintf(stderr, "determ: invalid -H '%s'\n", hosts);
        return 2;
    }
    if (hosts)
        nranks = sim.nranks;
    if (nranks < 2 || nranks > 64 || reps < 1) {
        fprintf(stderr, "determ: need 2..64 ranks and -r >= 1\n");
        return 2;
    }
    if (coll_unique_id_listen("127.0.0.1", 0, NULL, &the_id) != COLL_SUCCESS) {
        fprintf(stderr, "determ: %s\n", coll_last_error());
        return 3;
    }
    int worst = cb_ranks_run(nranks, rank_main, NULL, "determ");
    coll_unique_id_release(&the_id);
    return worst ? 1 : 0;
}
