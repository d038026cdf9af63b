/*
 * reduce_scatter.h - ReduceScatter algorithms callable on any group. sendbuf
 * holds p blocks of count elements; member i receives the reduction of block
 * i over all members in recvbuf (count elements).
 * In place: recvbuf == sendbuf + g->me * count * esize.
 */
#ifndef COLL_REDUCE_SCATTER_H
#define COLL_REDUCE_SCATTER_H

#include "coll.h"
#include "core/comm.h"

/* The signature of every reduce_scatter algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_reduce_scatter_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                                 void *recvbuf, size_t count, coll_dtype_t dt, coll_op_t op);

/* Recursive halving, log2 p steps (fold/unfold for non-powers of two). Any group. */
coll_reduce_scatter_run_fn coll_reduce_scatter_halving_run;

#endif
