/*
 * barrier_shm.c - barrier of the ranks of one host: one atomic counter in the
 * shared segment, the last arrival rings everyone's doorbell.
 * Cost: one atomic add + one wake-up (~1-2 us on an idle host).
 */
#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

static int usable(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_group_is_host(comm, g);
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_direct_barrier(comm);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_tuning_link(comm, g)->bar_us * coll_tuning_oversub(comm);
}

const coll_algo_t coll_algo_barrier_shm = COLL_ALGO(COLL_BARRIER, "shm", .flags = COLL_ALGO_F_SINGLE_HOST,
                                                    .desc = "shared-memory counter + futex wake-up, one host",
                                                    .usable = usable);
