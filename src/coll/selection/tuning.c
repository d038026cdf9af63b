/*
 * tuning.c - measured cost constants.
 *
 * alpha / beta of shm and tcp: bench/pingpong.c (3 ranks, two simulated hosts
 *      "simhost0" {0,1} and "simhost1" {2}; coll_send/coll_recv ping-pong,
 *      fastest of 400 round trips at 8 B and of 20 at 16 MiB, 8 runs):
 *        cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -o /tmp/pingpong \
 *           bench/pingpong.c lib/libcoll.a -pthread -lm -ldl -lcrypto
 *        for i in 1 2 3 4 5 6 7 8; do /tmp/pingpong -i 400; done
 *      on the development VM (2 vCPU Intel Xeon, KVM, Debian 12, shared with
 *      other jobs, load ~4): the medians of the 8 runs are
 *        shm  alpha 0.5 us   11.2 GB/s   (min 0.14 us, max 12.9 GB/s)
 *        tcp  alpha 3.3 us    5.1 GB/s   over 127.0.0.1 (min 3.0 us, max 6.0 GB/s)
 *      Loopback TCP is the best case of a network: a real NIC (or the veth
 *      pair between network namespaces of bench/multihost: ~25 us, ~2 GB/s)
 *      is slower; set COLL_TUNING_FILE on a real cluster.
 * gamma and barrier: bench/run-bench.sh on the same VM: barrier ~1.5 us
 *      between 2 ranks, reduce ~12 GB/s fp32 in cache.
 * per-step overhead (step_us, added to the latency in every model's alpha):
 *      what a step of a collective costs beyond an idle ping-pong's half round
 *      trip: posting, polling each peer's socket, waking a sleeping rank, a
 *      peer that is not yet waiting. Ring AllReduce 8 KiB at N = 1,024 over
 *      tcp took 12-51 ms for 2,046 steps, 6-25 us a step, where the loopback
 *      latency alone modelled 3.3 (docs: scale-review, "Algorithms at
 *      scale"); tcp gets 3 us, the low end of that gap. shm: 0 (its alpha is
 *      already measured through the executor, and shm steps never poll).
 * Network probe: with more than one host, coll_net_probe (net_probe.c)
 *      replaces the tcp latency and bandwidth at init by a measurement between
 *      the leaders of hosts 0 and 1 (COLL_NET_PROBE=0: off).
 * Override with COLL_TUNING_FILE: lines "shm|tcp alpha_us beta_GBps gamma_GBps bar_us [step_us]"
 *      (alpha_us there is the latency; the probe is skipped when the file is set).
 */
#include "coll/selection/tuning.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/selection/tuning_rules.h"

#include "core/config.h"
#include "core/log.h"

static coll_link_cost_t shm_cost = {0.5, 1.0 / 11200.0, 1.0 / 12000.0, 1.5, 0.5, 0.0};
static coll_link_cost_t tcp_cost = {3.3 + 3.0, 1.0 / 5100.0, 1.0 / 12000.0, 0.0, 3.3, 3.0};
static const char *tcp_source = "built-in";
/* Communicators of several threads select at once while another one's net
 * probe may set the tcp constants: load once, and tcp_cost only under tcp_lock
 * (readers get a copy of their own). */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tcp_lock = PTHREAD_MUTEX_INITIALIZER;

static void load_file(void)
{
    const char *path = coll_cfg_str(COLL_CFG_TUNING_FILE);
    if (!*path)
        return;
    FILE *f = fopen(path, "r");
    if (!f) {
        COLL_WARN(COLL_SUB_TUNING, "cannot open COLL_TUNING_FILE %s; using built-in constants", path);
        return;
    }
    char line[256], kind[16];
    double a, b, g, bar, step;
    while (fgets(line, sizeof line, f)) {
        int nf = line[0] == '#' ? 0 : sscanf(line, "%15s %lf %lf %lf %lf %lf", kind, &a, &b, &g, &bar, &step);
        if (nf < 5 || b <= 0 || g <= 0)
            continue;
        coll_link_cost_t *dst = !strcmp(kind, "shm") ? &shm_cost : !strcmp(kind, "tcp") ? &tcp_cost : NULL;
        if (!dst)
            continue;
        if (nf < 6)
            step = dst->step_us; /* the built-in per-step overhead */
        coll_link_cost_t c = {a + step, 1.0 / (b * 1000.0), 1.0 / (g * 1000.0), bar, a, step};
        *dst = c;
        if (dst == &tcp_cost)
            tcp_source = "file";
        COLL_INFO(COLL_SUB_TUNING,
                  "tuning file: %s latency %.2f us + %.2f us a step, %.2f GB/s, reduce %.2f GB/s, barrier %.2f us",
                  kind, a, step, b, g, bar);
    }
    fclose(f);
}

const char *coll_tuning_tcp_source(void)
{
    pthread_once(&load_once, load_file);
    pthread_mutex_lock(&tcp_lock);
    const char *src = tcp_source;
    pthread_mutex_unlock(&tcp_lock);
    return src;
}

void coll_tuning_set_tcp(double lat_us, double gbps)
{
    pthread_once(&load_once, load_file);
    pthread_mutex_lock(&tcp_lock);
    tcp_cost.lat_us = lat_us;
    tcp_cost.alpha_us = lat_us + tcp_cost.step_us;
    tcp_cost.beta_us_per_b = 1.0 / (gbps * 1000.0);
    tcp_source = "probe";
    pthread_mutex_unlock(&tcp_lock);
}

int coll_tuning_too_many_peers(const coll_comm *comm, const coll_group_t *g)
{
    return comm->nhosts > 1 && g->size > (int)coll_cfg_int(COLL_CFG_PEERS_MAX) && !coll_group_is_local(comm, g);
}

const coll_link_cost_t *coll_tuning_shm(void)
{
    pthread_once(&load_once, load_file);
    return &shm_cost;
}

const coll_link_cost_t *coll_tuning_tcp(void)
{
    pthread_once(&load_once, load_file);
    static __thread coll_link_cost_t copy;
    pthread_mutex_lock(&tcp_lock);
    copy = tcp_cost;
    pthread_mutex_unlock(&tcp_lock);
    return &copy;
}

const coll_link_cost_t *coll_tuning_tcp_shared(int flows)
{
    static __thread coll_link_cost_t shared;
    pthread_once(&load_once, load_file);
    pthread_mutex_lock(&tcp_lock);
    shared = tcp_cost;
    pthread_mutex_unlock(&tcp_lock);
    if (flows > 1)
        shared.beta_us_per_b *= flows;
    return &shared;
}

const coll_link_cost_t *coll_tuning_link(const coll_comm *comm, const coll_group_t *g)
{
    pthread_once(&load_once, load_file);
    if (coll_group_is_local(comm, g))
        return &shm_cost;
    return coll_tuning_tcp_shared(coll_group_busiest_host(comm, g));
}

double coll_tuning_oversub(const coll_comm *comm)
{
    /* computed once at init from every host's CPU count, so that every rank
     * gets the same answer (and no sysfs read on the hot path) */
    return comm->oversub >= 1.0 ? comm->oversub : 1.0;
}

int coll_tuning_crowded(const coll_comm *comm) { return coll_tuning_oversub(comm) > COLL_RULE_CROWDED_RATIO; }
