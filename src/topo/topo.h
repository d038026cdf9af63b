/*
 * topo.h - the topology layer: which ranks share a host, and the questions the
 * layers above ask about it (transports: is this peer on my host; algorithms:
 * is this group my host, how many of its members share a network link).
 *
 * Layers: core <- bootstrap <- topo <- transport <- coll <- comm. The facts
 * come from the peer records the bootstrap join exchanged (comm->peers); the
 * arrays live in the communicator (core/comm.h) so that every layer above
 * reads them without a call. N ranks, H hosts, L ranks on my host.
 */
#ifndef COLL_TOPO_H
#define COLL_TOPO_H

#include "core/comm.h"

/* The most ranks one host may hold in one communicator: the direct
 * (shared-memory, zero-copy) algorithms keep one pointer per local rank on the
 * stack, and shm's owner words are 32 bits. Checked at init (coll_topo_build). */
#define COLL_MAX_LOCAL 1024

/* This process's host identity into me: hostname, kernel boot id, host id
 * (hostname/boot id, or COLL_HOST_ID), online CPUs, pid and rank. */
void coll_topo_identify(coll_peer_info_t *me, int rank);

/* From comm->peers (rank, nranks set): hosts in order of their first rank,
 * each rank's host and local rank, my host's ranks, the host leaders, the
 * world / local / leaders groups, uniform_hosts and oversub (max over hosts of
 * ranks / online CPUs). O(N * H) time, O(N) memory. Fails with
 * COLL_ERR_INVALID_ARG when a host holds more than COLL_MAX_LOCAL ranks
 * (every rank sees the same hosts, so all fail alike). Free with coll_topo_free. */
coll_status_t coll_topo_build(coll_comm *comm);
void coll_topo_free(coll_comm *comm);
/* world, local and leaders from the arrays (coll_topo_build does it; the
 * simulated communicators, which share one set of arrays, call it alone and
 * set uniform_hosts, min_local and max_local themselves, counted once). */
void coll_topo_set_groups(coll_comm *comm);
/* Rank 0, log level INFO: one line per host with its ranks. */
void coll_topo_log(const coll_comm *comm);

/* Is rank r on my host? */
static inline int coll_topo_is_mine(const coll_comm *comm, int r) { return comm->rank_host[r] == comm->host; }
/* Are all members of g on my host (and shm available: comm->direct, set by the
 * transports)? Else only a group of one is. O(|g|). */
int coll_group_is_local(const coll_comm *comm, const coll_group_t *g);
/* Is g exactly the ranks of my host, served by shm? (direct algorithms) */
int coll_group_is_host(const coll_comm *comm, const coll_group_t *g);
/* Members of g on its busiest host: the flows that share that host's network
 * link when every member sends at once (same value on every member). O(|g|)
 * time, O(H) memory (on the stack up to 512 hosts). */
int coll_group_busiest_host(const coll_comm *comm, const coll_group_t *g);

#endif
