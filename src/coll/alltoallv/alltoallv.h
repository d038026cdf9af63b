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

/* The signature of every alltoallv algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_alltoallv_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                            const size_t *scounts, const size_t *sdispls, void *recvbuf,
                                            const size_t *rcounts, const size_t *rdispls, coll_dtype_t dt);

/* My own block (alltoallv_pairwise.c): an invalid-argument error unless
 * scounts[me] == rcounts[me], else copied from sb to rb. es = element size. */
coll_status_t coll_alltoallv_self(const coll_group_t *g, const char *sb, const size_t *scounts, const size_t *sdispls,
                                  char *rb, const size_t *rcounts, const size_t *rdispls, size_t es);
coll_alltoallv_run_fn coll_alltoallv_pairwise_run;
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host).
 * Packs its opening small exchange in comm->scratch: callers must not pass that scratch. */
coll_alltoallv_run_fn coll_alltoallv_direct_run;

/* Bruck engine (alltoallv_bruck.c): ceil(log2 p) steps to 2 log2 p peers, any
 * group. es = element size. uniform = every block has the same size on every
 * member (AllToAll): no size headers. */
coll_status_t coll_bruck_a2a(coll_comm *comm, const coll_group_t *g, const char *sb, const size_t *scounts,
                             const size_t *sdispls, char *rb, const size_t *rcounts, const size_t *rdispls, size_t es,
                             int uniform);
/* Bytes a Bruck AllToAll moves per rank, relative to n (~ log2(p)/2), and its steps. */
double coll_bruck_a2a_factor(int p, int *steps);
/* Slots i < p with bit k set: the blocks a Bruck step k moves. O(1). */
long long coll_bruck_step_slots(int p, long long k);

#endif
