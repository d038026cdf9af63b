/*
 * net_probe.c - the network measurement at init behind the tcp constants of
 * the cost model (tuning.h: coll_net_probe).
 *
 * With more than one host, the leaders of hosts 0 and 1 ping-pong through the
 * executor, over whatever transport joins them (tcp between hosts): 2 warm-up
 * and 20 timed round trips of 8 bytes, then 1 warm-up and 3 of 1 MiB. The
 * latency is half the fastest small round trip; the bandwidth is 1 MiB over
 * (half the fastest large round trip - latency). Leader 0 then broadcasts
 * {latency, bandwidth} to every rank through the bootstrap tree (bootstrap.h:
 * its existing connections, no new socket), so every rank selects with the
 * same constants.
 *
 * Cost: ~25 small and 4 large round trips on two ranks (a few ms on a
 * 10 Gb/s network) + one bootstrap broadcast of 24 bytes: 2 log_8 N hops. Memory:
 * 2 MiB on the two leaders only. The other N - 2 ranks only wait in the
 * broadcast; nothing grows with N but its depth. Two ranks' view of one link:
 * the hier models scale beta by the flows sharing a host's link (tuning.c).
 */
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "coll/algo.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"
#include "core/config.h"
#include "core/log.h"

#define PROBE_SMALL 8
#define PROBE_LARGE ((size_t)1 << 20)
#define PROBE_SMALL_ITERS 20
#define PROBE_LARGE_ITERS 3

/* Fastest round trip of `iters` (after `warm` untimed) between me and peer; the
 * initiator sends first. Seconds. */
static coll_status_t pingpong(coll_comm *comm, int peer, int initiator, char *buf, size_t bytes, int warm, int iters,
                              double *best)
{
    *best = 1e30;
    for (int i = 0; i < warm + iters; i++) {
        double t0 = coll_now();
        if (initiator) {
            COLL_CHECK(coll_prim_sendrecv(comm, buf, bytes, peer, NULL, 0, -1));
            COLL_CHECK(coll_prim_sendrecv(comm, NULL, 0, -1, buf, bytes, peer));
        } else {
            COLL_CHECK(coll_prim_sendrecv(comm, NULL, 0, -1, buf, bytes, peer));
            COLL_CHECK(coll_prim_sendrecv(comm, buf, bytes, peer, NULL, 0, -1));
        }
        double t = coll_now() - t0;
        if (i >= warm && t < *best)
            *best = t;
    }
    return COLL_SUCCESS;
}

coll_status_t coll_net_probe(coll_comm *comm)
{
    if (comm->nhosts < 2 || !coll_cfg_bool(COLL_CFG_NET_PROBE) || *coll_cfg_str(COLL_CFG_TUNING_FILE))
        return COLL_SUCCESS;
    /* The tcp constants are process-wide (tuning.c). A communicator made
     * later in the same process (coll_comm_split, or a second init) keeps the
     * first probe's: its own probe would measure its own hosts 0 and 1, so the
     * ranks of different sub-communicators would hold different constants and
     * then select different algorithms for the same collective of the parent
     * (a hang: collbench assess --tests coll, groups of hosts with one slow
     * link). Every rank of such a communicator was a rank of one that probed
     * and broadcast its result, so all of them skip alike. */
    if (!strcmp(coll_tuning_tcp_source(), "probe")) {
        COLL_DEBUG(COLL_SUB_TUNING, "network probe: keeping this process's earlier measurement");
        return COLL_SUCCESS;
    }
    int a = comm->leader_ranks[0], b = comm->leader_ranks[1];
    double res[3] = {0, 0, 0}; /* latency us, bandwidth GB/s, valid */
    double t0 = coll_now();
    if (comm->rank == a || comm->rank == b) {
        char *buf = calloc(1, PROBE_LARGE);
        if (!buf)
            return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TUNING, "network probe: out of memory (1 MiB)");
        int peer = comm->rank == a ? b : a;
        double small, large;
        coll_status_t st = pingpong(comm, peer, comm->rank == a, buf, PROBE_SMALL, 2, PROBE_SMALL_ITERS, &small);
        if (st == COLL_SUCCESS)
            st = pingpong(comm, peer, comm->rank == a, buf, PROBE_LARGE, 1, PROBE_LARGE_ITERS, &large);
        free(buf);
        COLL_CHECK(st);
        double lat = small / 2 * 1e6, half = large / 2 * 1e6;
        double xfer = half - lat > half / 10 ? half - lat : half; /* noise: never below a tenth of the time */
        res[0] = lat > 0.05 ? lat : 0.05;
        res[1] = (double)PROBE_LARGE / xfer / 1e3; /* bytes/us -> GB/s */
        res[2] = 1;
    }
    /* the result goes down the bootstrap tree: no data connection is opened
     * for it (a binomial broadcast over the world would connect every rank
     * to up to log2 N others across hosts) */
    COLL_CHECK(coll_bootstrap_bcast(comm->bs, res, sizeof res, a));
    if (res[2] == 1 && res[1] > 0) {
        coll_tuning_set_tcp(res[0], res[1]);
        if (comm->rank == 0)
            COLL_INFO(COLL_SUB_TUNING,
                      "network probe (rank %d <-> %d): latency %.1f us, %.2f GB/s (+ %.1f us a step); "
                      "%.1f ms",
                      a, b, res[0], res[1], coll_tuning_tcp()->step_us, (coll_now() - t0) * 1e3);
    }
    return COLL_SUCCESS;
}
