/*
 * gather_linear.c - linear Gather: every member sends its block to the root;
 * the root posts all receives at once (in batches of 64), straight into
 * recvbuf, and copies its own block (nothing when in place).
 *
 * Cost (p ranks, N = p * count bytes in all): (p-1) alpha + (p-1)/p N beta.
 * Simple and bandwidth-optimal at the root; the binomial tree has less latency
 * for many ranks. Any p, any root, any transport. The run and the cost are
 * coll_rooted_linear's, shared with the mirror image (execution/rooted.c).
 */
#include "coll/algo.h"
#include "coll/execution/rooted.h"

const coll_algo_t coll_algo_gather_linear = COLL_ALGO_OF(
    COLL_GATHER, "linear", coll_rooted_linear, coll_rooted_linear_cost, .flags = COLL_ALGO_F_ALL_PEERS,
    .desc = "every member sends its block to the root, received all at once; (p-1) alpha + (p-1)/p n beta");
