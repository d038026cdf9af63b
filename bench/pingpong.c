/*
 * pingpong.c - measures the alpha (one-way latency) and beta (per-byte time)
 * of the two transports the cost model uses (src/coll/selection/tuning.c): 3 ranks
 * forked here, ranks 0,1 on simulated host "simhost0" (shm between them),
 * rank 2 on "simhost1" (TCP over 127.0.0.1 only). Rank 0 ping-pongs with 1
 * (shm) and with 2 (tcp) at 8 B and 16 MiB with coll_sendrecv.
 *   alpha = min RTT(8 B) / 2;  beta = (RTT(16 MiB) / 2 - alpha) / 16 MiB
 *
 *   make bench && build/bench/pingpong [-i ITERS]
 * Prints one line per link and a COLL_TUNING_FILE-style line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "core/comm.h"
#include "core/config.h"
#include "../tests/lib/fork_ranks.h"

#define BIG ((size_t)16 << 20)

/* Fastest one-way time (us) over iters round trips of bytes between 0 and
 * peer: the minimum, not the median, because the development VM is shared and
 * a loaded run inflates every percentile but the best. */
static double pingpong(coll_comm_t comm, int rank, int peer, char *buf, size_t bytes, int iters)
{
    double best[64];
    int reps = iters < 64 ? iters : 64;
    for (int k = 0; k < reps + 2; k++) { /* 2 warm-up round trips */
        double t0 = coll_now();
        if (rank == 0) {
            coll_send(buf, bytes, COLL_UINT8, peer, comm);
            coll_recv(buf, bytes, COLL_UINT8, peer, comm);
        } else if (rank == peer) {
            coll_recv(buf, bytes, COLL_UINT8, 0, comm);
            coll_send(buf, bytes, COLL_UINT8, 0, comm);
        }
        if (k >= 2)
            best[k - 2] = (coll_now() - t0) * 1e6 / 2;
    }
    for (int i = 1; i < reps; i++) /* insertion sort, median */
        for (int j = i; j > 0 && best[j] < best[j - 1]; j--) {
            double t = best[j];
            best[j] = best[j - 1];
            best[j - 1] = t;
        }
    return best[0];
}

static int g_iters = 200;

static int run_rank(int rank, void *arg)
{
    coll_unique_id_t id = *(const coll_unique_id_t *)arg;
    int iters = g_iters;
    coll_cfg_set(COLL_CFG_HOST_ID, rank < 2 ? "simhost0" : "simhost1");
    coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
    coll_comm_t comm;
    if (coll_comm_init_rank(&comm, 3, id, rank) != COLL_SUCCESS) {
        fprintf(stderr, "rank %d: init: %s\n", rank, coll_last_error());
        return 1;
    }
    char *buf = calloc(1, BIG);
    const char *name[3] = {"", "shm", "tcp"};
    for (int peer = 1; peer <= 2; peer++) {
        double a = pingpong(comm, rank, peer, buf, 8, iters);
        double t = pingpong(comm, rank, peer, buf, BIG, iters < 20 ? iters : 20);
        double beta = (t - a) / (double)BIG;
        if (rank == 0)
            printf("%s: alpha %.2f us (8 B one way), 16 MiB one way %.0f us -> %.2f GB/s\n", name[peer], a, t,
                   1e-3 / beta);
        if (rank == 0)
            printf("TUNING %s alpha_us %.2f beta_GBps %.2f\n", name[peer], a, 1e-3 / beta);
        fflush(stdout);
        coll_barrier(comm);
    }
    free(buf);
    coll_comm_destroy(comm);
    return 0;
}

int main(int argc, char **argv)
{
    int iters = 200;
    if (argc == 3 && !strcmp(argv[1], "-i"))
        iters = atoi(argv[2]);
    coll_unique_id_t id;
    if (coll_unique_id_listen("127.0.0.1", 0, NULL, &id) != COLL_SUCCESS) {
        fprintf(stderr, "pingpong: %s\n", coll_last_error());
        return 1;
    }
    g_iters = iters;
    int rc = cb_ranks_run(3, run_rank, &id, "pingpong");
    coll_unique_id_release(&id);
    return rc ? 1 : 0;
}
