/*
 * scatter_linear.c - linear Scatter: the root posts one send per member (in
 * batches of 64, all progressing concurrently) and copies its own block;
 * every other member receives its block.
 *
 * Cost (p ranks, N = p * count bytes in all): (p-1) alpha + (p-1)/p N beta.
 * Simple and bandwidth-optimal at the root; the binomial tree has less latency
 * for many ranks. Any p, any root, any transport. The run and the cost are
 * coll_rooted_linear's, shared with the mirror image (execution/rooted.c).
 */
#include "coll/algo.h"
#include "coll/execution/rooted.h"

const coll_algo_t coll_algo_scatter_linear
    = COLL_ALGO_OF(COLL_SCATTER, "linear", coll_rooted_linear, coll_rooted_linear_cost, .flags = COLL_ALGO_F_ALL_PEERS,
                   .desc = "the root sends every block directly, all at once; (p-1) alpha + (p-1)/p n beta");
