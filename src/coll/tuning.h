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

/* Constants for traffic inside group g: shm if all members share my host, tcp otherwise. */
const coll_link_cost_t *coll_tuning_link(const coll_comm *comm, const coll_group_t *g);
/* Are all members of g on my host (and shm available)? */
int coll_group_is_local(const coll_comm *comm, const coll_group_t *g);
/* Ranks per core on this host (> 1 = oversubscribed): scales compute terms. */
double coll_tuning_oversub(const coll_comm *comm);

#endif
