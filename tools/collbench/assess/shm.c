/*
 * shm.c - node-shm, the third figure of `collbench assess --tests node`:
 * shared-memory p2p between the ranks of each host.
 *
 * On every host with two or more ranks its speaker (local rank 0) and its
 * second rank (the lowest other rank of the host) measure over the job
 * communicator; ranks of one host talk over libcoll's shared-memory path
 * without being asked. Latency: 8-byte ping-pongs for 0.1 s after one
 * untimed, the mean half round trip; bandwidth: sends of -s bytes, each
 * closed by a 1-byte ack, for 0.3 s after one untimed: bytes / elapsed.
 * Throughput over a fixed time, as d2d and flops: a rank given a small CPU
 * share runs in bursts, and the smallest ping-pong or the median of a few
 * sends (what pairs takes between hosts) would catch one burst and look
 * healthy (measured: a rank at nice 19 sharing a core with a busy loop had
 * the best latency of the job, 0.7 us, by the smallest-of-50 rule).
 * All hosts measure at once (intra-host traffic does not cross the network,
 * and hosts are independent); then rank 0 gathers one record per rank.
 * The first pass is CBT_AS_SHM_FIRST such rounds, each host keeping its
 * better figures: where fake hosts share a machine (the suite: 7 ranks of 4
 * hosts on 2 cores), one round's scheduling can leave a healthy host as slow
 * as a sick one (0.19 GB/s against 14 for another healthy host, a run here),
 * and with three hosts that victim is the median the sick host is held to;
 * it is rarely the victim twice. On real hosts the second round only costs
 * its time, and a transient burst on one host is caught the same way.
 * Cost: CBT_AS_SHM_FIRST rounds of about 0.4 s (+ one execution of each),
 * constant in H; the other ranks of a host (L - 2 of L) only wait.
 * Confirmation as for the other node figures: a host past the threshold
 * (GB/s below th x the median of hosts with several ranks, latency above
 * the median / lat-threshold) is measured again alone, up to CBT_AS_CONFIRM
 * times, keeping its better figures; named only if still past it.
 * Hosts with one rank have no figure (-1: "-" in the table, null in JSON)
 * and are not in the median.
 */
#include <stdio.h>
#include <stdlib.h>

#include "assess.h"
#include "../cb.h"

static const char *TOOL = "assess";

typedef struct {
    int32_t host; /* -1: no figure in this record */
    int32_t pad;
    double gbs, lat_us;
} shm_rec_t;

#define TRY(call) CBT_TRY(TOOL, c->rank, "node-shm: ", c->comm, call)

/* The speaker (low end) and its host's second rank: latency, then bandwidth,
 * each over a fixed time (the speaker's clock); the speaker's figures in r.
 * Every message the speaker sends carries a flag (the ping's value, the
 * block's first byte): 1 go on, 0 this is the last, so both ends stop together. */
static int shm_measure(cbt_as_ctx_t *c, shm_rec_t *r)
{
    int peer = c->shm_peer, low = c->speaker;
    uint64_t ping = 1;
    unsigned char ack = 1;
    size_t n = (size_t)c->o->size;
    long long k = 0;
    double t0 = cbt_now(), t1 = t0;
    for (long long i = 0; ping; i++) { /* i = 0 untimed */
        if (low) {
            if (i == 1)
                t0 = cbt_now();
            ping = i > 0 && cbt_now() - t0 >= CBT_AS_SHM_LAT_S ? 0 : 1;
            TRY(coll_send(&ping, 8, COLL_UINT8, peer, c->comm));
            TRY(coll_recv(&ping, 8, COLL_UINT8, peer, c->comm));
            t1 = cbt_now(), k = i;
        } else {
            TRY(coll_recv(&ping, 8, COLL_UINT8, peer, c->comm));
            TRY(coll_send(&ping, 8, COLL_UINT8, peer, c->comm));
        }
    }
    r->lat_us = k > 0 ? (t1 - t0) * 1e6 / 2 / (double)k : -1;
    unsigned char *buf = low ? c->src : c->dst;
    buf[0] = 1;
    for (long long i = 0; buf[0]; i++) {
        if (low) {
            if (i == 1)
                t0 = cbt_now();
            buf[0] = i > 0 && cbt_now() - t0 >= CBT_AS_SHM_BW_S ? 0 : 1;
            TRY(coll_send(buf, n, COLL_UINT8, peer, c->comm));
            TRY(coll_recv(&ack, 1, COLL_UINT8, peer, c->comm));
            t1 = cbt_now(), k = i;
        } else {
            TRY(coll_recv(buf, n, COLL_UINT8, peer, c->comm));
            TRY(coll_send(&ack, 1, COLL_UINT8, peer, c->comm));
        }
    }
    r->gbs = k > 0 ? (double)n * (double)k / (t1 - t0) / 1e9 : -1;
    if (low)
        r->host = c->me_host;
    else
        r->lat_us = r->gbs = -1;
    return CBT_EXIT_OK;
}

/* One round: host only (-1: every host with several ranks) measures, then
 * rank 0 files the speakers' records. confirm 0: the first figures; 1: a
 * confirmation (the again figures, the better kept); 2: the first pass's
 * second round (the better kept, not marked as measured again). */
static int shm_round(cbt_as_ctx_t *c, int only, int confirm, shm_rec_t *all)
{
    shm_rec_t me = {.host = -1, .gbs = -1, .lat_us = -1};
    TRY(coll_barrier(c->comm));
    if (c->shm_peer >= 0 && (only < 0 || only == c->me_host)) {
        int rc = shm_measure(c, &me);
        if (rc)
            return rc;
    }
    TRY(coll_gather(&me, all, sizeof me, COLL_UINT8, 0, c->comm));
    if (c->rank != 0)
        return CBT_EXIT_OK;
    cbt_as_result_t *res = c->res;
    for (int k = 0; k < c->nranks; k++) {
        int h = all[k].host;
        if (h < 0 || h >= res->n)
            continue;
        if (!confirm) {
            res->shm_gbs[h] = all[k].gbs, res->shm_lat[h] = all[k].lat_us;
            continue;
        }
        if (confirm == 1)
            res->again_shm_gbs[h] = all[k].gbs, res->again_shm_lat[h] = all[k].lat_us;
        res->shm_gbs[h] = cbt_as_better(0, res->shm_gbs[h], all[k].gbs);
        res->shm_lat[h] = cbt_as_better(1, res->shm_lat[h], all[k].lat_us);
    }
    return CBT_EXIT_OK;
}

/* --lat-threshold, or --threshold when not given */
static void shm_find(cbt_as_ctx_t *c, int pass, int *sus, void *arg)
{
    double th = c->o->threshold, lth = c->o->lat_threshold > 0 ? c->o->lat_threshold : th;
    sus[0] = cbt_as_shm_suspects(c->res, th, lth, sus + 1);
}

static int shm_again(cbt_as_ctx_t *c, const int *sus, int k, void *arg) { return shm_round(c, sus[1 + k], 1, arg); }

int cbt_as_node_shm(cbt_as_ctx_t *c)
{
    int n = c->nhosts, rc, *sus;
    shm_rec_t *all = cbt_as_round_bufs(c, sizeof *all, (size_t)n + 1, &sus, &rc);
    if (rc)
        return rc;
    double t_start = cbt_now();
    for (int k = 0; k < CBT_AS_SHM_FIRST && !rc; k++) {
        rc = shm_round(c, -1, k ? 2 : 0, all);
        if (!rc && c->rank == 0 && !c->o->quiet)
            cbt_as_progress("node-shm (all hosts at once)", k + 1, CBT_AS_SHM_FIRST, t_start);
    }
    if (!rc) {
        cbt_as_confirm_t cf = {"node-shm confirmation", NULL,     CBT_AS_CONFIRM, 1,
                               (size_t)n + 1,           shm_find, shm_again,      all};
        rc = cbt_as_confirm(c, &cf, sus);
    }
    free(all), free(sus);
    return rc;
}
