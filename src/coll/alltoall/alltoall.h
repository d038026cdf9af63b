/*
 * alltoall.h - AllToAll algorithms callable on any group. Block j of sendbuf
 * (count elements at offset j * count) goes to member j, which stores it as
 * block g->me of its recvbuf. Not in place (sendbuf and recvbuf disjoint).
 */
#ifndef COLL_ALLTOALL_H
#define COLL_ALLTOALL_H

#include "coll.h"
#include "core/comm.h"

/* The signature of every alltoall algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_alltoall_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                           size_t count, coll_dtype_t dt);

/* p-1 steps: at step s send to me+s, receive from me-s. Any group. */
coll_alltoall_run_fn coll_alltoall_pairwise_run;

/* Bruck: ceil(log2 p) steps to 2 log2 p peers. Any group. */
coll_alltoall_run_fn coll_alltoall_bruck_run;

#endif
