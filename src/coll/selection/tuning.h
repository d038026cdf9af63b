/*
 * tuning.h - alpha-beta-gamma constants for the cost models that drive
 * automatic algorithm selection. The numbers are data: each comes with the
 * benchmark and machine that produced it (tuning.c). COLL_TUNING_FILE overrides.
 */
#ifndef COLL_TUNING_H
#define COLL_TUNING_H

#include "coll/algo.h"
#include "topo/topo.h" /* coll_group_is_local, coll_group_busiest_host */

typedef struct {
    double alpha_us;       /* what one step costs before its bytes: lat_us + step_us (every model uses this) */
    double beta_us_per_b;  /* transfer time per byte */
    double gamma_us_per_b; /* reduction time per byte */
    double bar_us;         /* one shared-memory barrier (shm only) */
    double lat_us;         /* half the round trip of an idle 2-rank ping-pong (built-in, file or probe) */
    double step_us;        /* per-step overhead a collective step pays beyond lat_us */
} coll_link_cost_t;

/* Constants for traffic inside group g: shm if all members share my host, tcp
 * otherwise, with beta scaled by the number of g's members on the busiest
 * host (they share that host's network link when they all send at once; this
 * is what hierarchical algorithms save). Valid until the next call. */
const coll_link_cost_t *coll_tuning_link(const coll_comm *comm, const coll_group_t *g);
/* The two sets of constants, for cost models that span both levels
 * (hierarchical algorithms). */
const coll_link_cost_t *coll_tuning_shm(void);
const coll_link_cost_t *coll_tuning_tcp(void);
/* tcp constants with beta scaled for `flows` concurrent streams per host
 * network link (1 = tcp itself). Valid until the next call on this thread. */
const coll_link_cost_t *coll_tuning_tcp_shared(int flows);
/* Where the tcp constants come from: "built-in", "file" (COLL_TUNING_FILE) or
 * "probe" (coll_net_probe at init). */
const char *coll_tuning_tcp_source(void);
/* Set the tcp latency (us) and bandwidth (GB/s) measured by the probe; the
 * per-step overhead is kept. Every rank must set the same values. */
void coll_tuning_set_tcp(double lat_us, double gbps);
/* Network probe at init (net_probe.c): with more than one host, the leaders of
 * hosts 0 and 1 ping-pong 8 B and 1 MiB and every rank gets the result by a
 * broadcast; off with COLL_NET_PROBE=0 or when COLL_TUNING_FILE is set. */
coll_status_t coll_net_probe(coll_comm *comm);
/* Automatic selection skips algorithms in which one rank talks to every
 * member (COLL_ALGO_F_ALL_PEERS) on g when g spans hosts and has more than
 * COLL_PEERS_MAX members, and another algorithm is usable. */
int coll_tuning_too_many_peers(const coll_comm *comm, const coll_group_t *g);
/* Ranks per core (> 1 = oversubscribed): scales every step's alpha, the
 * compute terms and the shm barriers of the cost models (cost.h). Uses the
 * largest host's rank count, so every rank computes the same costs (and so
 * selects the same algorithm) even when hosts hold different numbers of ranks. */
double coll_tuning_oversub(const coll_comm *comm);
/* Is some host crowded: more than COLL_RULE_CROWDED_RATIO ranks per core, where
 * the COLL_RULE_CROWDED selection rules apply (tuning_rules.h)? */
int coll_tuning_crowded(const coll_comm *comm);

#endif
