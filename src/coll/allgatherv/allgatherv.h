/*
 * allgatherv.h - AllGatherV algorithms callable on any group. Member i of g
 * contributes counts[i] elements (sendcount == counts[g->me]); recvbuf receives
 * them at element offset displs[i] (blocks may leave gaps; gaps are not
 * written). counts/displs are indexed by member, identical on every member.
 * In place: sendbuf == recvbuf + displs[g->me] * esize.
 */
#ifndef COLL_ALLGATHERV_H
#define COLL_ALLGATHERV_H

#include "coll.h"
#include "core/comm.h"

coll_status_t coll_allgatherv_ring_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                       const size_t *counts, const size_t *displs, coll_dtype_t dt);
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host). */
coll_status_t coll_allgatherv_direct_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                         const size_t *counts, const size_t *displs, coll_dtype_t dt);

/* Bruck: ceil(log2 p) steps to 2 log2 p peers, T bytes private. Any group. */
coll_status_t coll_allgatherv_bruck_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                        const size_t *counts, const size_t *displs, coll_dtype_t dt);

#endif
