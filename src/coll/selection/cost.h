/*
 * cost.h - the terms the alpha-beta cost models of the algorithm files and of
 * hier.c share (the constants themselves are tuning.h's). Each file keeps its
 * own formula atop; these are the pieces that were written out again in each.
 *
 * Oversubscription: ov = coll_tuning_oversub(comm), ranks per core on the
 * busiest host (>= 1). What it scales, in every model:
 *   - alpha, on every transport: a step waits for a peer, and with more ranks
 *     than cores that peer may first have to be scheduled (a context switch),
 *     whether its bytes then come through shared memory or a socket;
 *   - gamma (reductions) and the shm barrier bar_us: ov ranks share a core;
 *   - beta only where the models say the copies themselves share a core (the
 *     tree algorithms' and the direct algorithms' shm copies).
 * (Decided for issue 14: the ring, Bruck and pairwise models scaled alpha on
 * both transports, the tree models on shm only, and allreduce ring / hd /
 * tree and the hierarchical levels not at all; they all follow the rule above
 * now. With one rank per core ov = 1 and nothing changes.)
 */
#ifndef COLL_COST_H
#define COLL_COST_H

#include <math.h>

#include "coll/algo.h"
#include "coll/execution/tree.h"
#include "coll/selection/tuning.h"
#include "core/config.h"
#include "transport/direct.h"

/* alpha of one step: the link's, times ov. */
static inline double coll_cost_alpha(const coll_comm *comm, const coll_link_cost_t *l)
{
    return l->alpha_us * coll_tuning_oversub(comm);
}

/* beta of a pairwise step inside g: twice on shm (copied into the slot and
 * out of it by the receiver). */
static inline double coll_cost_beta(const coll_comm *comm, const coll_group_t *g, const coll_link_cost_t *l)
{
    return l->beta_us_per_b * (coll_group_is_local(comm, g) ? 2.0 : 1.0);
}

/* Messages of `bytes` in COLL_CHUNK pieces: one alpha a piece (1 + bytes/chunk). */
static inline double coll_cost_chunks(double bytes) { return 1.0 + bytes / (double)coll_cfg_size(COLL_CFG_CHUNK); }

/* p - 1 steps inside g, each moving a block of n/p bytes in COLL_CHUNK pieces:
 * the alpha and beta terms of one pass around a ring or of a pairwise
 * exchange, (p-1) (1 + n/p/chunk) alpha + (p-1)/p n beta. */
static inline double coll_cost_ring_pass(const coll_comm *comm, const coll_group_t *g, double n)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size;
    return (p - 1) * coll_cost_chunks(n / p) * coll_cost_alpha(comm, l) + (p - 1) / p * n * coll_cost_beta(comm, g, l);
}
/* Rounds of a direct algorithm moving `bytes` through half of the stage (the
 * other half fills meanwhile): 1 + floor(bytes / half); 1 without a stage. */
static inline double coll_cost_direct_rounds(const coll_comm *comm, double bytes)
{
    double half = (double)coll_direct_stage_bytes(comm) / 2.0;
    return half > 0 ? 1.0 + floor(bytes / half) : 1.0;
}

/* Tree and chain algorithms (broadcast, reduce, gather, scatter): one step's
 * alpha, beta and gamma inside g. On shm every byte is copied in and out by
 * ranks that all copy at once, ov of them to a core: beta 2 ov there. */
typedef struct {
    double alpha, beta, gamma;
} coll_cost_step_t;

static inline coll_cost_step_t coll_cost_tree_step(const coll_comm *comm, const coll_group_t *g)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double ov = coll_tuning_oversub(comm);
    int shm = coll_group_is_local(comm, g);
    coll_cost_step_t s = {.alpha = l->alpha_us * ov,
                          .beta = l->beta_us_per_b * (shm ? 2.0 * ov : 1.0),
                          .gamma = l->gamma_us_per_b * ov};
    return s;
}

/* A chain pipelined in COLL_CHUNK pieces (broadcast and reduce pipeline):
 * c = 1 + floor(n / chunk) pieces flow through p - 1 links in p - 2 + c steps
 * of one piece each (alpha + n/c beta, + n/c gamma where each hop reduces). */
static inline double coll_cost_chain(const coll_comm *comm, const coll_group_t *g, double n, int reduces)
{
    double p = g->size;
    double c = 1.0 + (double)(size_t)(n / (double)coll_cfg_size(COLL_CFG_CHUNK));
    coll_cost_step_t s = coll_cost_tree_step(comm, g);
    if (p < 2)
        return 0;
    return (p - 2 + c) * (s.alpha + n / c * (reduces ? s.beta + s.gamma : s.beta));
}
/* v-collectives: the total and the largest block in bytes of a->counts over
 * g's members (O(p)); min, when not NULL, gets the smallest. */
static inline double coll_cost_v_bytes(const coll_group_t *g, const coll_args_t *a, double *max, double *min)
{
    double es = (double)coll_dtype_size(a->dt), t = 0, hi = 0, lo = 0;
    for (int i = 0; i < g->size; i++) {
        double b = (double)a->counts[i] * es;
        t += b;
        hi = b > hi ? b : hi;
        lo = i == 0 || b < lo ? b : lo;
    }
    *max = hi;
    if (min)
        *min = lo;
    return t;
}

#endif
