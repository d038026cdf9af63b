/*
 * barrier_hier.c - hierarchical barrier: every host's ranks meet in shared
 * memory, the host leaders (local rank 0) run the inter-host barrier the cost
 * model picks (dissemination: log2 H rounds), then each host meets again so no
 * rank leaves before its leader knows every host arrived.
 *
 * Only leaders touch the network: a rank that is not a leader opens no socket
 * for a barrier, where a dissemination barrier over the world talks to
 * 2 log2 N peers (N = 1,024: 20 directions x COLL_NSOCKS sockets per rank).
 *
 * Cost (H hosts): 2 shm barriers + tcp barrier(H).
 * Constraint: the world group, more than one host (COLL_ALGO_F_HIER).
 */
#include "coll/algo.h"
#include "coll/selection/cost.h"
#include "coll/execution/hier.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    COLL_CHECK(coll_sub_barrier(comm, &comm->local));
    if (comm->leaders.me >= 0)
        COLL_CHECK(coll_sub_barrier(comm, &comm->leaders));
    return coll_sub_barrier(comm, &comm->local);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_group_t leaders = comm->leaders;
    double ov = coll_tuning_oversub(comm);
    return 2 * coll_tuning_link(comm, &comm->local)->bar_us * ov
        + coll_tree_binomial_depth(comm->nhosts) * coll_cost_alpha(comm, coll_tuning_link(comm, &leaders));
}

const coll_algo_t coll_algo_barrier_hier
    = COLL_ALGO(COLL_BARRIER, "hier", .flags = COLL_ALGO_F_HIER,
                .desc = "hierarchical: shm barrier, leaders' barrier across hosts, shm barrier");
