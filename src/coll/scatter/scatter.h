/*
 * scatter.h - Scatter algorithms callable on any group (hierarchical
 * algorithms compose them). The root (a GLOBAL rank, member of g) holds p
 * blocks of count elements in sendbuf, block i for member i of g; every member
 * receives its block in recvbuf. In place at the root when recvbuf == sendbuf +
 * i_root * count * esize; sendbuf is ignored (may be NULL) on other members.
 *
 * Working memory: on the world group (the outermost algorithm of a call) the
 * communicator scratch, on any other group a private allocation, so these can
 * be composed by algorithms that hold the scratch (comm.h).
 */
#ifndef COLL_SCATTER_H
#define COLL_SCATTER_H

#include "coll.h"
#include "core/comm.h"

/* The signature of every scatter algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_scatter_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                          size_t count, coll_dtype_t dt, int root);

/* The root sends each block directly (one step, all sends concurrent). Any group. */
coll_scatter_run_fn coll_scatter_linear_run;
/* Binomial tree, each child receiving its subtree's blocks in one message. Any group. */
coll_scatter_run_fn coll_scatter_binomial_run;
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host). */
coll_scatter_run_fn coll_scatter_direct_run;

#endif
