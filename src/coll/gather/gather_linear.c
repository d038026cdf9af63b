/*
 * gather_linear.c - linear Gather: every member sends its block to the root;
 * the root posts all receives at once (in batches of 64), straight into
 * recvbuf, and copies its own block (nothing when in place).
 *
 * Cost (p ranks, N = p * count bytes in all): (p-1) alpha + (p-1)/p N beta.
 * Simple and bandwidth-optimal at the root; the binomial tree has less latency
 * for many ranks. Any p, any root, any transport.
 */
#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/gather/gather.h"
#include "coll/execution/rooted.h"

coll_status_t coll_gather_linear_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                     size_t n, coll_dtype_t dt, int root)
{
    int ri;
    COLL_CHECK(coll_root_index(g, "gather", root, &ri));
    /* own is only read in this direction (rooted.h) */
    return coll_rooted_linear(comm, g, ri, COLL_TO_ROOT, recvbuf, (char *)sendbuf, n * coll_dtype_size(dt));
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_gather_linear_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt, a->root);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_rooted_cost(comm, g, a, g->size - 1);
}

const coll_algo_t coll_algo_gather_linear
    = COLL_ALGO(COLL_GATHER, "linear", .flags = COLL_ALGO_F_ALL_PEERS,
                .desc = "every member sends its block to the root, received all at once; (p-1) alpha + (p-1)/p n beta");
