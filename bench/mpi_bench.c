/*
 * mpi_bench.c - times the installed MPI's own collectives with the same loop
 * as coll_bench (bench_common.h). Built by bench/run-bench.sh with each mpicc.
 *   mpirun -n P ./mpi_bench -c allreduce -s 8K,1M,64M [-n iters] [-w warmup] [-r reps] [-l label]
 * Prints: RESULT <label> <coll> <ranks> <bytes> <time_us> <algbw GB/s> <busbw GB/s> - cpu=<us>
 * ("-": no algorithm name, as coll_bench prints there; cpu: the ranks' CPU time per call, summed)
 */
#include <mpi.h>
#include <getopt.h>
#include <stdint.h>

#include "bench_common.h"
#include "../tools/common/huge_buf.h"

static void run_one(int c, void *s, void *r, size_t bytes, int p)
{
    int cnt = (int)(bytes / 4);
    switch (c) {
    case B_ALLREDUCE: MPI_Allreduce(s, r, cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case B_ALLGATHER: MPI_Allgather(s, cnt / p, MPI_FLOAT, r, cnt / p, MPI_FLOAT, MPI_COMM_WORLD); break;
    case B_REDUCE_SCATTER: MPI_Reduce_scatter_block(s, r, cnt / p, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case B_BCAST: MPI_Bcast(s, cnt, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case B_REDUCE: MPI_Reduce(s, r, cnt, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case B_ALLTOALL: MPI_Alltoall(s, cnt / p, MPI_FLOAT, r, cnt / p, MPI_FLOAT, MPI_COMM_WORLD); break;
    case B_SCATTER: MPI_Scatter(s, cnt / p, MPI_FLOAT, r, cnt / p, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case B_GATHER: MPI_Gather(s, cnt / p, MPI_FLOAT, r, cnt / p, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *colls = "allreduce", *sizes_s = "8K,1M,64M", *label = "mpi";
    int iters = 0, warm = 0, reps = 3, opt;
    while ((opt = getopt(argc, argv, "c:s:n:w:r:l:")) != -1) {
        switch (opt) {
        case 'c': colls = optarg; break;
        case 's': sizes_s = optarg; break;
        case 'n': iters = atoi(optarg); break;
        case 'w': warm = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'l': label = optarg; break;
        default: MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    size_t sizes[32];
    int ns = bench_parse_sizes(sizes_s, sizes, 32);
    size_t maxb = 0;
    for (int i = 0; i < ns; i++)
        maxb = sizes[i] > maxb ? sizes[i] : maxb;
    /* the same memory as coll_bench's: huge pages first (huge_buf.h) */
    char *s = cb_buf_alloc(maxb + 4096, cb_buf_huge_env()), *r = cb_buf_alloc(maxb + 4096, cb_buf_huge_env());
    if (!s || !r)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(s, 1, maxb + 4096);
    memset(r, 0, maxb + 4096);
    char cbuf[256];
    snprintf(cbuf, sizeof cbuf, "%s", colls);
    for (char *save = NULL, *cn = strtok_r(cbuf, ",", &save); cn; cn = strtok_r(NULL, ",", &save)) {
        int c = bench_coll_from_name(cn);
        if (c < 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (int i = 0; i < ns; i++) {
            size_t b = sizes[i] / (4 * (size_t)p) * 4 * (size_t)p;
            int n = iters ? iters : (b <= 65536 ? 2000 : b <= 2 << 20 ? 200 : 10);
            int w = warm ? warm : n / 5 + 2;
            double best = 1e30, best_cpu = 0;
            for (int rep = 0; rep < reps; rep++) {
                for (int k = 0; k < w; k++)
                    run_one(c, s, r, b, p);
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = bench_now_us(), c0 = bench_cpu_us();
                for (int k = 0; k < n; k++)
                    run_one(c, s, r, b, p);
                double t = (bench_now_us() - t0) / n, cpu = (bench_cpu_us() - c0) / n, tmax, cpu_sum;
                MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                MPI_Allreduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                if (tmax < best)
                    best = tmax, best_cpu = cpu_sum;
            }
            if (rank == 0)
                printf("RESULT %s %s %d %zu %.3f %.4f %.4f - cpu=%.3f\n", label, cn, p, b, best, (double)b / best / 1e3,
                       (double)b / best / 1e3 * bench_busbw_factor(c, p), best_cpu);
            fflush(stdout);
        }
    }
    cb_buf_free(s, maxb + 4096, cb_buf_huge_env());
    cb_buf_free(r, maxb + 4096, cb_buf_huge_env());
    MPI_Finalize();
    return 0;
}
