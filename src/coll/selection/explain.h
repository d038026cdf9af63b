/*
 * explain.h - what libcoll decided, or would decide, on a communicator: the
 * transport towards each peer and the algorithm chosen for a collective of a
 * given size. For tools (collbench topo); nothing here sends a byte.
 */
#ifndef COLL_EXPLAIN_H
#define COLL_EXPLAIN_H

#include <stddef.h>
#include "coll.h"

/* "self", "shm", "tcp" (the transport's name), or "none" when unset. */
const char *coll_comm_transport_name(coll_comm_t comm, int peer);

/* Ranks per core on the busiest host (>= 1.0), as selection sees it; *crowded
 * is set when the crowded-host rules apply (more than COLL_RULE_CROWDED_RATIO). */
double coll_comm_ranks_per_core(coll_comm_t comm, int *crowded);

/* The network constants selection uses between hosts: latency (us, half an
 * idle round trip), per-step overhead (us), bandwidth (GB/s) and where they
 * come from: "built-in", "file" (COLL_TUNING_FILE) or "probe" (measured at
 * init between the leaders of hosts 0 and 1, COLL_NET_PROBE). */
typedef struct {
    double lat_us, step_us, gbps;
    const char *source;
} coll_net_cost_t;
void coll_comm_net_cost(coll_comm_t comm, coll_net_cost_t *out);

typedef struct {
    const char *algo; /* registry name */
    double cost_us;   /* the cost model's estimate; < 0 when the algorithm has none */
} coll_explain_t;

/* The algorithm coll_<kind> would run on the whole communicator for a call of
 * `bytes` (nccl-tests size convention: allreduce/reduce/broadcast the buffer;
 * allgather/reduce_scatter/scatter/gather/alltoall and the v-variants the
 * total over ranks, split evenly) of dtype dt, op sum, root 0, not in place.
 * COLL_ALGO forcing applies as it would for the call. kind COLL_SENDRECV is
 * not a selected collective: COLL_ERR_INVALID_ARG. */
coll_status_t coll_comm_explain(coll_comm_t comm, coll_kind_t kind, size_t bytes, coll_dtype_t dt, coll_explain_t *out);

#endif
