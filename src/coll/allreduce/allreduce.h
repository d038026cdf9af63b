/*
 * allreduce.h - AllReduce algorithms callable on any group (the hierarchical
 * algorithms compose them through coll_algo_run). Every member contributes n
 * elements at sendbuf and receives their reduction in recvbuf; in place when
 * sendbuf == recvbuf.
 */
#ifndef COLL_ALLREDUCE_H
#define COLL_ALLREDUCE_H

#include "coll.h"
#include "core/comm.h"
#include "coll/selection/tuning.h"

/* The signature of every allreduce algorithm callable on a group (the functions
 * below are declared with it). */
typedef coll_status_t coll_allreduce_run_fn(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                            size_t n, coll_dtype_t dt, coll_op_t op);

/* Zero-copy publication slots shared by direct and cma (after coll_direct_publish
 * of the send and receive buffers and a barrier): are every member's buffers
 * coll_mem_alloc memory (bytes of each, checked)? Then coll_allreduce_zero_copy
 * finishes the call. */
enum { COLL_AR_PUB_SEND = 0, COLL_AR_PUB_RECV = 1 };
int coll_allreduce_all_zero_copy(coll_comm *comm, const coll_group_t *g, size_t bytes);
coll_status_t coll_allreduce_zero_copy(coll_comm *comm, const coll_group_t *g, void *recvbuf, size_t n, coll_dtype_t dt,
                                       coll_op_t op);
/* Shared memory: g must be exactly the ranks of this host (coll_group_is_host). */
coll_allreduce_run_fn coll_allreduce_cma_run;
coll_allreduce_run_fn coll_allreduce_direct_run;

/* Cost models (us) for p members and n bytes over link l (beta = per-byte
 * transfer time as the caller counts it; ov = compute oversubscription). */
double coll_allreduce_hd_cost(const coll_link_cost_t *l, double beta, int p, double n, double ov);
double coll_allreduce_tree_cost(const coll_link_cost_t *l, double beta, int p, double n, double ov);

#endif
