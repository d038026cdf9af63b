/*
 * ordered.h - the rank-order reduction COLL_DETERMINISTIC=1 relies on across
 * hosts (the *_ordered algorithms are built on it).
 */
#ifndef COLL_ORDERED_H
#define COLL_ORDERED_H

#include <stddef.h>
#include "coll.h"
#include "coll/algo.h"
#include "core/comm.h"

/* ReduceScatterV in member order: member i receives block i (counts[i]
 * elements at displs[i] of every member's sendbuf) from every member and
 * reduces the contributions as coll_reduce_multi does, in the order 0..p-1
 * (((x0 OP x1) OP x2) ...), into out (counts[g->me] elements; out may be my own
 * block of sendbuf). The blocks go in chunks of COLL_CHUNK bytes: one step per
 * chunk, in which a member sends its chunk of every other block to the block's
 * owner and receives the p-1 chunks of its own.
 *
 * Cost (p members, m = largest block in bytes, c = ceil(m / COLL_CHUNK)):
 *   c (p-1) alpha + (p-1) m beta + (p-1) m gamma      (= (p-1)/p n for even blocks)
 * Memory: (p-1) chunks private. A member talks to every other (O(p) peers). */
coll_status_t coll_ordered_reduce_scatterv(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *out,
                                           const size_t *counts, const size_t *displs, coll_dtype_t dt, coll_op_t op);

/* Latency and per-byte time of coll_ordered_reduce_scatterv (cost model). */
double coll_ordered_rsv_cost(const coll_comm *comm, const coll_group_t *g, size_t max_block_bytes);
/* AllReduce / Reduce in rank order: that reduce-scatter over even blocks of
 * a->count, then (p-1)/p n bytes gathered in `steps` steps (p-1 for the ring
 * AllGather, 1 for the Reduce's gather to the root). */
double coll_ordered_reduce_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a, double steps);

#endif
