/*
 * coll_bench.c - times libcoll collectives with the same loop as mpi_bench
 * (bench_common.h), forking P local ranks itself.
 *   coll_bench -p P -c allreduce -s 8K,1M,64M [-n iters] [-w warmup] [-r reps] [-z] [-H hosts] [-l label]
 * -z: buffers from coll_mem_alloc (zero-copy). -H N: N simulated hosts (as the
 * matrix's -H: COLL_HOST_ID=simhost<h>, ranks dealt in blocks, shm within a
 * host, TCP on 127.0.0.1 between hosts). Prints RESULT lines like mpi_bench
 * plus the algorithm chosen and cpu=US (the ranks' CPU time per call, summed).
 */
#include <getopt.h>
#include <stdint.h>
#include <unistd.h>

#include "bench_common.h"
#include "../tools/common/huge_buf.h"
#ifndef CB_NO_BUF_HUGE /* a build of this file against a library from before COLL_BUF_HUGE (2d0744b) */
#include "../tools/common/huge_hint.h"
#endif
#include "coll.h"
#include "core/config.h"
#include "../tests/lib/fork_ranks.h"
#include "../tests/lib/sim_hosts.h"

static coll_status_t run_one(int c, void *s, void *r, size_t bytes, int p, coll_comm_t comm)
{
    size_t cnt = bytes / 4;
    switch (c) {
    case B_ALLREDUCE: return coll_all_reduce(s, r, cnt, COLL_FP32, COLL_SUM, comm);
    case B_ALLGATHER: return coll_all_gather(s, r, cnt / (size_t)p, COLL_FP32, comm);
    case B_REDUCE_SCATTER: return coll_reduce_scatter(s, r, cnt / (size_t)p, COLL_FP32, COLL_SUM, comm);
    case B_BCAST: return coll_broadcast(s, cnt, COLL_FP32, 0, comm);
    case B_REDUCE: return coll_reduce(s, r, cnt, COLL_FP32, COLL_SUM, 0, comm);
    case B_ALLTOALL: return coll_all_to_all(s, r, cnt / (size_t)p, COLL_FP32, comm);
    case B_SCATTER: return coll_scatter(s, r, cnt / (size_t)p, COLL_FP32, 0, comm);
    case B_GATHER: return coll_gather(s, r, cnt / (size_t)p, COLL_FP32, 0, comm);
    }
    return COLL_ERR_INVALID_ARG;
}

static const char *colls = "allreduce", *sizes_s = "8K,1M,64M", *label = "collbench";
static int iters, warm, reps = 3, zc, nranks = 2, nhosts;

#define CK(x) \
    do { \
        coll_status_t st_ = (x); \
        if (st_) { \
            fprintf(stderr, "rank %d: %s: %s\n", rank, #x, coll_last_error()); \
            return 1; \
        } \
    } while (0)

static int rank_main(int rank, void *arg)
{
    coll_unique_id_t id = *(const coll_unique_id_t *)arg;
    coll_comm_t comm;
    if (nhosts > 0)
        cb_sim_host_claim(rank * nhosts / nranks); /* hosts in blocks */
#ifndef CB_NO_BUF_HUGE
    cb_buf_huge_hint(!zc && cb_buf_huge_env()); /* as the test executables: the COLL_RULE_HUGE rules */
#endif
    CK(coll_comm_init_rank(&comm, nranks, id, rank));
    int p = nranks;
    size_t sizes[32];
    int ns = bench_parse_sizes(sizes_s, sizes, 32);
    size_t maxb = 0;
    for (int i = 0; i < ns; i++)
        maxb = sizes[i] > maxb ? sizes[i] : maxb;
    void *s, *r;
    if (zc) {
        CK(coll_mem_alloc(comm, maxb + 4096, &s));
        CK(coll_mem_alloc(comm, maxb + 4096, &r));
    } else {
        s = cb_buf_alloc(maxb + 4096, cb_buf_huge_env()); /* huge pages first, as mpi_bench's */
        r = cb_buf_alloc(maxb + 4096, cb_buf_huge_env());
        if (!s || !r) {
            fprintf(stderr, "rank %d: %zu-byte buffers: out of memory\n", rank, maxb + 4096);
            cb_buf_free(s, maxb + 4096, cb_buf_huge_env());
            cb_buf_free(r, maxb + 4096, cb_buf_huge_env());
            return 1;
        }
    }
    memset(s, 1, maxb + 4096);
    memset(r, 0, maxb + 4096);
    double zero = 0, tmax;
    char cbuf[256];
    snprintf(cbuf, sizeof cbuf, "%s", colls);
    for (char *save = NULL, *cn = strtok_r(cbuf, ",", &save); cn; cn = strtok_r(NULL, ",", &save)) {
        int c = bench_coll_from_name(cn);
        if (c < 0)
            return 2;
        for (int i = 0; i < ns; i++) {
            size_t b = sizes[i] / (4 * (size_t)p) * 4 * (size_t)p;
            int n = iters ? iters : (b <= 65536 ? 2000 : b <= 2 << 20 ? 200 : 10);
            int w = warm ? warm : n / 5 + 2;
            double best = 1e30, best_cpu = 0;
            for (int rep = 0; rep < reps; rep++) {
                for (int k = 0; k < w; k++)
                    CK(run_one(c, s, r, b, p, comm));
                CK(coll_barrier(comm));
                double t0 = bench_now_us(), c0 = bench_cpu_us();
                for (int k = 0; k < n; k++)
                    CK(run_one(c, s, r, b, p, comm));
                double t = (bench_now_us() - t0) / n, cpu = (bench_cpu_us() - c0) / n, cpu_sum;
                (void)zero;
                CK(coll_all_reduce(&t, &tmax, 1, COLL_FP64, COLL_MAX, comm));
                CK(coll_all_reduce(&cpu, &cpu_sum, 1, COLL_FP64, COLL_SUM, comm));
                if (tmax < best)
                    best = tmax, best_cpu = cpu_sum;
            }
            CK(run_one(c, s, r, b, p, comm));
            if (rank == 0)
                printf("RESULT %s %s %d %zu %.3f %.4f %.4f %s cpu=%.3f\n", label, cn, p, b, best,
                       (double)b / best / 1e3, (double)b / best / 1e3 * bench_busbw_factor(c, p),
                       coll_comm_last_algo(comm), best_cpu);
            fflush(stdout);
        }
    }
    if (zc) {
        CK(coll_mem_free(comm, s));
        CK(coll_mem_free(comm, r));
    } else {
        cb_buf_free(s, maxb + 4096, cb_buf_huge_env());
        cb_buf_free(r, maxb + 4096, cb_buf_huge_env());
    }
    coll_comm_destroy(comm);
    return 0;
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "p:c:s:n:w:r:l:zH:")) != -1) {
        switch (opt) {
        case 'p': nranks = atoi(optarg); break;
        case 'c': colls = optarg; break;
        case 's': sizes_s = optarg; break;
        case 'n': iters = atoi(optarg); break;
        case 'w': warm = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'l': label = optarg; break;
        case 'z': zc = 1; break;
        case 'H': nhosts = atoi(optarg); break;
        default: return 2;
        }
    }
    if (nhosts < 0 || nhosts > nranks) {
        fprintf(stderr, "coll_bench: invalid -H %d: allowed 1..%d (the ranks)\n", nhosts, nranks);
        return 2;
    }
    coll_unique_id_t id;
    if (coll_unique_id_listen("127.0.0.1", 0, NULL, &id)) {
        fprintf(stderr, "coll_get_unique_id: %s\n", coll_last_error());
        return 3;
    }
    int rc = cb_ranks_run(nranks, rank_main, &id, "coll_bench");
    coll_unique_id_release(&id);
    return rc ? 1 : 0;
}
