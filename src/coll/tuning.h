/*
 * tuning.h - alpha-beta-gamma constants for the cost models that drive
 * automatic algorithm selection. The numbers are data: each comes with the
 * benchmark and machine that produced it (tuning.c). COLL_TUNING_FILE overrides.
 */
#ifndef COLL_TUNING_H
#define COLL_TUNING_H

#include "coll/algo.h"

typedef struct {
    double alpha_us;        /* latency of one message / synchronisation step */
    double beta_us_per_b;   /* transfer time per byte */
    double gamma_us_per_b;  /* reduction time per byte */
    double bar_us;          /* one shared-memory barrier (shm only) */
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
/* Are all members of g on my host (and shm available)? */
int coll_group_is_local(const coll_comm *comm, const coll_group_t *g);
/* Ranks per core (> 1 = oversubscribed): scales compute terms. Uses the
 * largest host's rank count, so every rank computes the same costs (and so
 * selects the same algorithm) even when hosts hold different numbers of ranks. */
double coll_tuning_oversub(const coll_comm *comm);
/* Is some host crowded: more than COLL_RULE_CROWDED_RATIO ranks per core, where
 * the COLL_RULE_CROWDED selection rules apply (tuning_rules.h)? */
int coll_tuning_crowded(const coll_comm *comm);

#endif
