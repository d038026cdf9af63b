/*
 * allgather.h - AllGather algorithms callable on any group (hierarchical
 * algorithms compose them). Member i of g contributes count elements at
 * sendbuf; recvbuf receives block i at offset i * count elements. In place:
 * sendbuf == recvbuf + g->me * count * esize.
 */
#ifndef COLL_ALLGATHER_H
#define COLL_ALLGATHER_H

#include "coll.h"
#include "core/comm.h"

/* Ring, chunk-pipelined: p-1 steps per chunk. Any group, any transport. */
coll_status_t coll_allgather_ring_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                      size_t count, coll_dtype_t dt);
/* Bruck: ceil(log2 p) steps through a private buffer of p*count elements. Any group. */
coll_status_t coll_allgather_bruck_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                       size_t count, coll_dtype_t dt);
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host). */
coll_status_t coll_allgather_direct_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                        size_t count, coll_dtype_t dt);

#endif
