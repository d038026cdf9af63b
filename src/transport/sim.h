/*
 * sim.h - the simulated transport: N ranks of one communicator inside one
 * process, with virtual time, so that the real algorithms (src/coll, chosen by
 * the real selection in registry.c) run at thousands of ranks on one core.
 *
 * Ranks are coroutines (ucontext), not threads: exactly one runs at a time,
 * so results are deterministic whatever the OS does, a waiting rank costs
 * nothing (it is a saved context, not a spinning or sleeping thread), and
 * 32,768 of them need 32,768 stacks of address space, not 32,768 kernel
 * threads. The scheduler always resumes the runnable rank with the smallest
 * virtual clock (ties by rank), and a rank about to send yields first if
 * another runnable rank is earlier, so sends enter the link model in
 * virtual-time order.
 *
 * Link model (coll_sim_params_t), per message of B bytes sent at clock t:
 *   same host:  the sender's copy port is busy B / shm_bw (one copy at a
 *               time per rank); arrival = start + B / shm_bw + shm_lat,
 *               start = max(t + shm_ovh, port free)
 *   other host: the sending host's NIC transmits one message at a time:
 *               start = max(t + net_ovh, tx free of the host), busy B / net_bw;
 *               the receiving host's NIC likewise: rx = max(start + net_lat,
 *               rx free of the host), arrival = rx + B / net_bw.
 * The sender's clock advances by the per-message overhead (sends are eager);
 * a receive completes at max(receiver clock, arrival), a receive-reduce adds
 * B / reduce_bw. Local copies and reductions an algorithm does outside the
 * primitives cost no virtual time.
 *
 * Memory: the N communicators share the peer records, the topology arrays
 * and the transport table (comm->tp); nothing is N x N. Each comm has
 * comm->shm == NULL: shared-memory-only algorithms (direct, cma, barrier_shm)
 * are not usable in a simulation, and the cost model sees every group as
 * spanning hosts (coll_group_is_local).
 *
 * Without move_data no byte is copied or reduced: messages carry sizes only,
 * except those sent from outside the blank regions (the shared working block
 * and what coll_sim_blank names: the caller's dummy buffers): an algorithm's
 * own control data (alltoallv Bruck's size headers) still arrives.
 */
#ifndef COLL_SIM_H
#define COLL_SIM_H

#include <stddef.h>
#include "coll.h"
#include "core/comm.h"
#include "transport/transport.h"

typedef struct {
    double net_gbps, net_us, net_ovh_us;   /* NIC: Gbit/s, latency us, per-message us */
    double shm_gbps, shm_us, shm_ovh_us;   /* within a host */
    double reduce_gbps;                    /* reduction, Gbit/s of input */
    int move_data;                         /* 0: sizes and virtual time only */
    size_t shared_scratch;                 /* !move_data: one scratch block of this size for every rank */
} coll_sim_params_t;

typedef struct coll_sim coll_sim_t;

extern const coll_transport_ops_t coll_sim_ops;

/* Communicators for host_nranks[0..nhosts) ranks per host (ranks numbered
 * host by host). */
coll_status_t coll_sim_create(int nhosts, const int *host_nranks, const coll_sim_params_t *p, coll_sim_t **out);
void coll_sim_destroy(coll_sim_t *s);
int coll_sim_nranks(const coll_sim_t *s);
coll_comm *coll_sim_comm(coll_sim_t *s, int rank);

/* Run fn on every rank (coroutines, virtual clocks from 0). *t_us = the
 * largest final clock. Returns the first failing rank's status (a deadlock is
 * COLL_ERR_INTERNAL naming a blocked rank). */
typedef coll_status_t (*coll_sim_fn)(coll_comm *comm, void *arg);
coll_status_t coll_sim_run(coll_sim_t *s, coll_sim_fn fn, void *arg, double *t_us);

/* Without move_data: [p, p + len) holds no data (every rank's dummy buffer);
 * messages sent from it carry no bytes. At most SIM_BLANKS regions. */
#define SIM_BLANKS 4
coll_status_t coll_sim_blank(coll_sim_t *s, const void *p, size_t len);

/* Working memory of an algorithm on a simulated comm (coll_work_alloc):
 * without move_data no byte is ever looked at, so every rank of every
 * algorithm gets the one shared block (shared_scratch bytes), which N ranks
 * holding their blocks at once would otherwise multiply by N. NULL when data
 * moves or the block is too small: allocate privately. */
void *coll_sim_work(const coll_comm *comm, size_t bytes);
int coll_sim_is_work(const coll_comm *comm, const void *p);
/* Does data move on this simulated comm (--verify)? */
int coll_sim_moves_data(const coll_comm *comm);

/* Messages sent and rank -> scheduler switches of the last run. */
void coll_sim_counts(const coll_sim_t *s, unsigned long long *msgs, unsigned long long *switches);

/* The executor's wait (prim.c, coll_waiter_idle) on a simulated comm: give
 * the core to the scheduler until a message from one of waiting_for arrives. */
coll_status_t coll_sim_wait(coll_comm *comm, const int *waiting_for, int n);

#endif
