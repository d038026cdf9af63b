/*
 * alltoallv.h - AllToAllV algorithms callable on any group. Member me sends
 * scounts[j] elements at element offset sdispls[j] of sendbuf to member j and
 * receives rcounts[j] elements from member j at offset rdispls[j] of recvbuf.
 * The arrays are indexed by member and are this member's own (they differ
 * between members); scounts[j] on member i must equal rcounts[i] on member j.
 * Not in place.
 */
#ifndef COLL_ALLTOALLV_H
#define COLL_ALLTOALLV_H

#include "coll.h"
#include "core/comm.h"

coll_status_t coll_alltoallv_pairwise_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                          const size_t *scounts, const size_t *sdispls, void *recvbuf,
                                          const size_t *rcounts, const size_t *rdispls, coll_dtype_t dt);
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host).
 * Packs its opening small exchange in comm->scratch: callers must not pass that scratch. */
coll_status_t coll_alltoallv_direct_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                        const size_t *scounts, const size_t *sdispls, void *recvbuf,
                                        const size_t *rcounts, const size_t *rdispls, coll_dtype_t dt);

#endif
