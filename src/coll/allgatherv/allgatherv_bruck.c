/*
 * allgatherv_bruck.c - Bruck AllGatherV: allgather_bruck.c with per-rank
 * counts. ceil(log2 p) steps for any p, each to one peer (me - d) and from one
 * (me + d): 2 log2 p peers in all, where the ring needs p - 1 steps.
 *
 * Member me keeps the blocks it has in a private buffer in rotated order
 * (slot i = block (me + i) mod p, packed: slot i starts after the counts of
 * blocks me .. me+i-1). In the step of distance d it sends its first
 * min(d, p - d) slots to me - d and appends the same number of slots from
 * me + d; both ends compute the byte counts from the shared counts, so a zero
 * count moves nothing. A final pass copies slot i to displs[(me + i) mod p]
 * (gaps between blocks are never written).
 *
 * Cost (p ranks, S = ceil(log2 p), T = sum of the counts in bytes, t = my own):
 *   S alpha + (T - t) beta + T beta_mem (the unrotating copy)   (beta twice on shm)
 * Uneven counts cost what they carry (the ring pays p-1 times the largest).
 * Memory: T bytes private. Any p, any transport. Its own copies go through
 * coll_local_copy: charged in a simulation, and skipped in a sizes-only one
 * (at 4,096 host leaders they were most of the simulator's time).
 *
 * Example, p = 3, counts {2, 0, 1}, member 1: slots [b1 b2 b0] with offsets
 * 0, 0, 1. d = 1: sends slot 0 (0 elements) to 0, receives b2 (1 element) from
 * 2 into slot 1; d = 2: sends min(2, 1) = 1 slot (b1, empty) to 2, receives b0
 * (2 elements) from 0 into slot 2.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/allgatherv/allgatherv.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"

coll_status_t coll_allgatherv_bruck_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                        const size_t *counts, const size_t *displs, coll_dtype_t dt)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt), total = 0;
    char *rb = recvbuf;
    if (p == 1) {
        if (counts[0] && (const char *)sendbuf != rb + displs[0] * es)
            memcpy(rb + displs[0] * es, sendbuf, counts[0] * es);
        return COLL_SUCCESS;
    }
    size_t *off = malloc(sizeof *off * ((size_t)p + 1)); /* off[i] = start of slot i, off[p] = total */
    if (!off)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "allgatherv bruck: out of memory (%d ranks)", p);
    for (int i = 0; i < p; i++) {
        off[i] = total;
        total += counts[(me + i) % p] * es;
    }
    off[p] = total;
    char *tmp = total ? coll_work_alloc(comm, total) : NULL;
    coll_status_t st = COLL_SUCCESS;
    if (total && !tmp) {
        free(off);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "allgatherv bruck: cannot allocate %zu bytes", total);
    }
    if (counts[me])
        coll_local_copy(comm, tmp, sendbuf, counts[me] * es);
    for (int d = 1; d < p; d *= 2) {
        int cnt = d < p - d ? d : p - d;
        int to = g->ranks[coll_mod(me - d, p)], from = g->ranks[(me + d) % p];
        char *in = tmp ? tmp + off[d] : NULL; /* all counts 0: no buffer, and NULL + 0 is undefined */
        COLL_CHECK_GOTO(coll_prim_sendrecv(comm, tmp, off[cnt], to, in, off[d + cnt] - off[d], from), st, out);
    }
    for (int i = 0; i < p; i++) {
        int b = (me + i) % p;
        if (counts[b] && !(i == 0 && (const char *)sendbuf == rb + displs[me] * es))
            coll_local_copy(comm, rb + displs[b] * es, tmp + off[i], counts[b] * es);
    }
out:
    coll_work_free(comm, tmp);
    free(off);
    return st;
}

/* a->counts / a->displs are indexed by member of g (global rank on the world). */
static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_allgatherv_bruck_run(comm, g, a->sendbuf, a->recvbuf, a->counts, a->displs, a->dt);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double mem = coll_tuning_shm()->beta_us_per_b, m, mn;
    double T = coll_cost_v_bytes(g, a, &m, &mn);
    /* the member that owns the smallest block receives the most: T - min >= T - m */
    return coll_tree_binomial_depth(g->size) * coll_cost_alpha(comm, l) + (T - mn) * coll_cost_beta(comm, g, l)
        + T * mem;
}

const coll_algo_t coll_algo_allgatherv_bruck = COLL_ALGO(
    COLL_ALLGATHERV, "bruck",
    .desc = "Bruck with per-rank counts: ceil(log2 p) steps to 2 log2 p peers through a rotated packed buffer; any p");
