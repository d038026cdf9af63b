/*
 * broadcast.h - Broadcast algorithms callable on any group (the hierarchical
 * algorithms compose them through coll_algo_run). Always in place: buf holds
 * count elements, the root's are copied to every member. root is a GLOBAL rank
 * that must be a member of g. Every member passes the same count, dtype and
 * root.
 */
#ifndef COLL_BROADCAST_H
#define COLL_BROADCAST_H

#include "coll.h"
#include "core/comm.h"

/* The signature of every broadcast algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_broadcast_run_fn(coll_comm *comm, const coll_group_t *g, void *buf, size_t count,
                                            coll_dtype_t dt, int root);

/* Binomial tree, ceil(log2 p) rounds of the whole message. Any group. */
coll_broadcast_run_fn coll_broadcast_binomial_run;
/* Chain root -> root+1 -> ..., pipelined in COLL_CHUNK pieces. Any group. */
coll_broadcast_run_fn coll_broadcast_pipeline_run;
/* Van de Geijn: binomial scatter of p blocks, then ring allgather. Any group. */
coll_broadcast_run_fn coll_broadcast_scatter_allgather_run;
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host). */
coll_broadcast_run_fn coll_broadcast_direct_run;

#endif
