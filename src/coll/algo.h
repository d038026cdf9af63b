/*
 * algo.h - the algorithm registry. One file per algorithm in
 * src/coll/<collective>/<collective>_<algo>.c defines one coll_algo_t; the
 * table in registry.c lists them all. The names are what users pass in
 * COLL_ALGO / --algo and what the test matrix iterates over.
 *
 * Selection order (coll_algo_select in registry.c; logged under
 * COLL_DEBUG=INFO, subsystem TUNING):
 *   1. forced (COLL_ALGO or coll_algo_force) if usable for this call (else a
 *      warning, once, and the automatic choice);
 *   2. the first measured rule (tuning_rules.c) whose collective, group size,
 *      byte range and scope (host-local, crowded) match and whose algorithm is
 *      usable; COLL_TUNING_RULES_OFF=1 skips this step;
 *   3. the cheapest usable algorithm by its alpha-beta cost model (tuning.h),
 *      or the first usable one when none has a cost.
 * COLL_ALGO_F_ORDERED_ONLY algorithms are chosen automatically (2, 3) only
 * under COLL_DETERMINISTIC=1.
 * With COLL_DETERMINISTIC=1 the reducing collectives (allreduce, reduce,
 * reduce_scatter(v)) only use COLL_ALGO_F_DETERMINISTIC algorithms: the others
 * are not usable, and forcing one is an error naming the allowed ones.
 * Steps 2 and 3 skip COLL_ALGO_F_ALL_PEERS algorithms on groups that span hosts
 * and have more than COLL_PEERS_MAX members, unless nothing else can run.
 */
#ifndef COLL_ALGO_H
#define COLL_ALGO_H

#include <stdio.h>
#include "coll.h"
#include "core/comm.h"
#include "core/log.h"

/* One collective call, normalised. Counts are in elements.
 *   ALLREDUCE, REDUCE, BROADCAST: count = elements of the buffer
 *   ALLGATHER, GATHER: count = elements each rank contributes
 *   REDUCE_SCATTER, SCATTER: count = elements each rank receives
 *   ALLTOALL: count = elements exchanged with each peer
 *   ALLGATHERV: counts/displs = recvcounts/displs (count = my sendcount)
 *   REDUCE_SCATTERV: counts = recvcounts, displs computed (prefix sums)
 *   ALLTOALLV: scounts/sdispls/rcounts/rdispls
 */
typedef struct {
    coll_kind_t kind;
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    const size_t *counts, *displs;
    const size_t *scounts, *sdispls, *rcounts, *rdispls;
    coll_dtype_t dt;
    coll_op_t op;
    int root; /* global rank */
    size_t esize;
    size_t bytes; /* "message size" for selection: nccl-tests size convention */
    int inplace;
} coll_args_t;

/* The one place a call's arguments are built (the public entry points in
 * api.c, the hierarchical algorithms' sub-group calls in hier.c); the fields
 * not named are 0 until coll_args_finish. root: a global rank (0 where the
 * kind has none). */
static inline coll_args_t coll_args_make(coll_kind_t kind, const void *sendbuf, void *recvbuf, size_t count,
                                         coll_dtype_t dt, coll_op_t op, int root)
{
    return (coll_args_t){
        .kind = kind, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .dt = dt, .op = op, .root = root};
}
/* A v-collective's (ALLGATHERV, REDUCE_SCATTERV): every member's counts and
 * displs, count = this member's own. */
static inline coll_args_t coll_args_make_v(coll_kind_t kind, const void *sendbuf, void *recvbuf, size_t count,
                                           const size_t *counts, const size_t *displs, coll_dtype_t dt, coll_op_t op)
{
    coll_args_t a = coll_args_make(kind, sendbuf, recvbuf, count, dt, op, 0);
    a.counts = counts;
    a.displs = displs;
    return a;
}
/* ALLTOALLV's: the send and the receive counts and displacements. */
static inline coll_args_t coll_args_make_alltoallv(const void *sendbuf, const size_t *scounts, const size_t *sdispls,
                                                   void *recvbuf, const size_t *rcounts, const size_t *rdispls,
                                                   coll_dtype_t dt)
{
    coll_args_t a = coll_args_make(COLL_ALLTOALLV, sendbuf, recvbuf, 0, dt, COLL_SUM, 0);
    a.scounts = scounts;
    a.sdispls = sdispls;
    a.rcounts = rcounts;
    a.rdispls = rdispls;
    return a;
}

/* Fills a->esize, a->bytes and a->inplace from the fields the caller set
 * (kind, buffers, count or counts, dt, root) for a call on g (args.c): the
 * public entry points (the world group) and the hierarchical algorithms'
 * sub-group calls. O(p) for the v-collectives, O(1) otherwise. */
void coll_args_finish(const coll_comm *comm, const coll_group_t *g, coll_args_t *a);
/* INVALID_ARG naming fn when a's byte counts (count x element size x ranks,
 * counts and displacements x element size) overflow size_t. */
coll_status_t coll_args_check_size(const coll_group_t *g, const coll_args_t *a, const char *fn);

#define COLL_ALGO_F_SINGLE_HOST (1u << 0) /* needs every member of the group on one host (shm) */
#define COLL_ALGO_F_HIER (1u << 1)        /* hierarchical: needs >1 host and >1 rank on some host */
#define COLL_ALGO_F_POW2 (1u << 2)        /* group size must be a power of two */
#define COLL_ALGO_F_ALL_PEERS \
    (1u << 3) /* a rank talks to every member (O(p) connections): automatic
                                                selection avoids it across hosts past COLL_PEERS_MAX members */
#define COLL_ALGO_F_DETERMINISTIC \
    (1u << 4)                              /* reduces every element in rank order ((x0 OP x1) OP x2) ... with
                                                the pairwise kernels, like coll_reduce_multi over members 0..p-1:
                                                the only reducing algorithms COLL_DETERMINISTIC=1 allows */
#define COLL_ALGO_F_ORDERED_ONLY (1u << 5) /* exists for COLL_DETERMINISTIC: chosen automatically only then */

typedef struct coll_algo {
    coll_kind_t kind;
    const char *name;
    const char *desc; /* one line: what it does and its cost */
    unsigned flags;
    /* NULL = usable whenever the flags allow. */
    int (*usable)(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a);
    /* Estimated time in microseconds (alpha-beta), NULL = only when forced. */
    double (*cost_us)(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a);
    coll_status_t (*run)(coll_comm *comm, const coll_group_t *g, const coll_args_t *a);
} coll_algo_t;

/* The descriptor of the algorithm file it stands in, for
 *   const coll_algo_t coll_algo_<collective>_<name> = COLL_ALGO(kind, "<name>", ...);
 * Every algorithm file defines its own static cost() and run() (the two
 * fields every descriptor has, filled here once); the other fields (.flags,
 * .desc, .usable) follow as designated initializers. */
#define COLL_ALGO(kind_, name_, ...) COLL_ALGO_OF(kind_, name_, run, cost, __VA_ARGS__)
/* The same for a file whose run and cost are routines shared with another
 * collective (Gather's and Scatter's mirror images: execution/rooted.h). */
#define COLL_ALGO_OF(kind_, name_, run_, cost_, ...) \
    { \
        .kind = (kind_), .name = (name_), .cost_us = (cost_), .run = (run_), __VA_ARGS__ \
    }

/* The table (NULL-terminated). */
extern const coll_algo_t *const coll_algo_table[];

const coll_algo_t *coll_algo_find(coll_kind_t kind, const char *name);
int coll_algo_is_usable(const coll_algo_t *al, const coll_comm *comm, const coll_group_t *g, const coll_args_t *a);
/* Choose for this call on group g (forced -> cost model). */
coll_status_t coll_algo_select(coll_comm *comm, const coll_group_t *g, const coll_args_t *a, const coll_algo_t **out);
/* Force programmatically ("allreduce=ring;..." or a bare name); NULL clears.
 * Replaces the whole forced set: name every collective to force in one spec.
 * It is COLL_ALGO set in-process (coll_cfg_try_set: resolved there, once;
 * refused, the old set kept, when invalid or, under COLL_DETERMINISTIC=1, not
 * deterministic). */
coll_status_t coll_algo_force(const char *spec);
/* The one parser of a COLL_ALGO value (config.c calls it when the value is
 * set): forced[k] = the index in coll_algo_table of the algorithm forced for
 * collective k, -1 automatic. 0, or -1 with err naming the bad name and the
 * allowed ones. */
int coll_algo_resolve(const char *spec, int *forced, char *err, size_t errlen);
/* 0 when every reducing algorithm in forced[] honours COLL_DETERMINISTIC=1,
 * else -1 with err naming it and the allowed ones. */
int coll_algo_check_determ(const int *forced, char *err, size_t errlen);
void coll_algo_list(FILE *out);
/* Does COLL_DETERMINISTIC=1 restrict this collective (it reduces)? */
int coll_algo_kind_reduces(coll_kind_t kind);
/* Select and run on group g (used by the public API and by hierarchical algorithms). */
coll_status_t coll_algo_run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a);

#endif
