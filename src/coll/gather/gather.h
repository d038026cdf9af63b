/*
 * gather.h - Gather algorithms callable on any group (hierarchical algorithms
 * compose them). Every member contributes count elements at sendbuf; the root
 * (a GLOBAL rank, member of g) receives block i from member i at offset
 * i * count elements of recvbuf. In place at the root when sendbuf == recvbuf +
 * i_root * count * esize; recvbuf is ignored (may be NULL) on other members.
 *
 * Working memory: on the world group (the outermost algorithm of a call) the
 * communicator scratch, on any other group a private allocation, so these can
 * be composed by algorithms that hold the scratch (comm.h).
 */
#ifndef COLL_GATHER_H
#define COLL_GATHER_H

#include "coll.h"
#include "core/comm.h"

/* The signature of every gather algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_gather_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                         size_t count, coll_dtype_t dt, int root);

/* Every member sends its block to the root, which receives them all at once. Any group. */
coll_gather_run_fn coll_gather_linear_run;
/* Binomial tree, each member sending its subtree's blocks as one message. Any group. */
coll_gather_run_fn coll_gather_binomial_run;
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host). */
coll_gather_run_fn coll_gather_direct_run;

#endif
