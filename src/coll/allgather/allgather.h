/*
 * allgather.h - AllGather algorithms callable on any group (the hierarchical
 * algorithms compose them through coll_algo_run). Member i of g contributes
 * count elements at sendbuf; recvbuf receives block i at offset i * count
 * elements. In place: sendbuf == recvbuf + g->me * count * esize.
 */
#ifndef COLL_ALLGATHER_H
#define COLL_ALLGATHER_H

#include "coll.h"
#include "core/comm.h"

/* The signature of every allgather algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_allgather_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                            size_t count, coll_dtype_t dt);

/* Ring, chunk-pipelined: p-1 steps per chunk. Any group, any transport. */
coll_allgather_run_fn coll_allgather_ring_run;

#endif
