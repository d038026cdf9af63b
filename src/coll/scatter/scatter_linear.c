/*
 * scatter_linear.c - linear Scatter: the root posts one send per member (in
 * batches of 64, all progressing concurrently) and copies its own block;
 * every other member receives its block.
 *
 * Cost (p ranks, N = p * count bytes in all): (p-1) alpha + (p-1)/p N beta.
 * Simple and bandwidth-optimal at the root; the binomial tree has less latency
 * for many ranks. Any p, any root, any transport.
 */
#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/execution/rooted.h"
#include "coll/scatter/scatter.h"

coll_status_t coll_scatter_linear_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                      size_t n, coll_dtype_t dt, int root)
{
    int ri;
    COLL_CHECK(coll_root_index(g, "scatter", root, &ri));
    /* blocks are only read in this direction (rooted.h) */
    return coll_rooted_linear(comm, g, ri, COLL_FROM_ROOT, (char *)sendbuf, recvbuf, n * coll_dtype_size(dt));
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_scatter_linear_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt, a->root);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_rooted_cost(comm, g, a, g->size - 1);
}

const coll_algo_t coll_algo_scatter_linear
    = COLL_ALGO(COLL_SCATTER, "linear", .flags = COLL_ALGO_F_ALL_PEERS,
                .desc = "the root sends every block directly, all at once; (p-1) alpha + (p-1)/p n beta");
