/*
 * reduce_scatterv.h - ReduceScatterV algorithms callable on any group. Block i
 * of sendbuf (counts[i] elements at element offset displs[i]; blocks must not
 * overlap) is reduced over all members into recvbuf of member i. counts/displs
 * are indexed by member and identical on every member (the public API passes
 * prefix sums). In place: recvbuf == sendbuf + displs[g->me] * esize.
 */
#ifndef COLL_REDUCE_SCATTERV_H
#define COLL_REDUCE_SCATTERV_H

#include "coll.h"
#include "core/comm.h"

/* The signature of every reduce_scatterv algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_reduce_scatterv_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                                  void *recvbuf, const size_t *counts, const size_t *displs,
                                                  coll_dtype_t dt, coll_op_t op);

/* Ring with recv-reduce, chunked (two private chunk buffers). Any group. */
coll_reduce_scatterv_run_fn coll_reduce_scatterv_ring_run;
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host). */
coll_reduce_scatterv_run_fn coll_reduce_scatterv_direct_run;

/* Recursive halving (hd.h) over packed blocks: log2 p steps, T bytes private. Any group. */
coll_reduce_scatterv_run_fn coll_reduce_scatterv_halving_run;
/* Its steps, shared with reduce_scatter's halving: tmp holds every member's
 * block packed in member order, member i's at po[i] (po[p] = the total), or
 * at i * blk when po is NULL (equal blocks: nothing O(p)); reduced in place,
 * fold and unfold included. On return member me's block is complete in tmp at
 * its offset, or, when me folded out (*folded = 1), already in rb. */
coll_status_t coll_halving_rs_steps(coll_comm *comm, const coll_group_t *g, char *tmp, const size_t *po, size_t blk,
                                    void *rb, coll_dtype_t dt, coll_op_t op, int *folded);

#endif
