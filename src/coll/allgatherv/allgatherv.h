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

/* The signature of every allgatherv algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_allgatherv_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                             const size_t *counts, const size_t *displs, coll_dtype_t dt);

coll_allgatherv_run_fn coll_allgatherv_ring_run;
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host). */
coll_allgatherv_run_fn coll_allgatherv_direct_run;

/* Bruck: ceil(log2 p) steps to 2 log2 p peers, T bytes private. Any group. */
coll_allgatherv_run_fn coll_allgatherv_bruck_run;

#endif
