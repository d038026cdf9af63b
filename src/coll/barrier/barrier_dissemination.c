/*
 * barrier_dissemination.c - dissemination barrier (Hensgen, Finkel, Manber):
 * in round k rank i signals i + 2^k and waits for i - 2^k (mod p).
 * Cost: ceil(log2 p) alpha. Any p, any transport.
 */
#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int p = g->size, me = g->me;
    unsigned char out = 1, in = 0;
    for (int d = 1; d < p; d *= 2) {
        int to = g->ranks[(me + d) % p], from = g->ranks[coll_mod(me - d, p)];
        COLL_CHECK(coll_prim_sendrecv(comm, &out, 1, to, &in, 1, from));
    }
    return COLL_SUCCESS;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_tree_binomial_depth(g->size) * coll_cost_alpha(comm, coll_tuning_link(comm, g));
}

const coll_algo_t coll_algo_barrier_dissemination
    = COLL_ALGO(COLL_BARRIER, "dissemination", .desc = "log2(p) rounds of 1-byte messages to rank + 2^k");
