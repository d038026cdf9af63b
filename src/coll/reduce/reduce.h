/*
 * reduce.h - Reduce algorithms callable on any group (the hierarchical
 * algorithms compose them through coll_algo_run). Every member contributes
 * count elements at sendbuf; the root (a GLOBAL rank, member of g) receives
 * their reduction in recvbuf. In place at the root when sendbuf == recvbuf;
 * recvbuf is ignored (may be NULL) on other members, and sendbuf is never
 * written.  Working memory: on the world group (the outermost algorithm of a
 * call) the communicator scratch, on any other group a private allocation, so
 * these can be composed by algorithms that hold the scratch (comm.h).
 */
#ifndef COLL_COLL_REDUCE_REDUCE_H
#define COLL_COLL_REDUCE_REDUCE_H

#include "coll.h"
#include "core/comm.h"

/* The signature of every reduce algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_reduce_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                         size_t count, coll_dtype_t dt, coll_op_t op, int root);

/* Binomial tree with receive-reduce, ceil(log2 p) rounds. Any group. */
coll_reduce_run_fn coll_reduce_binomial_run;

#endif
