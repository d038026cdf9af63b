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
 *               start = max(t + net_ovh, tx free of the host), busy B / bw_s;
 *               the receiving host's NIC likewise: rx = max(start + net_lat
 *               + step, rx free of the host), busy B / bw_d, arrival =
 *               max(rx + B / bw_d, start + B / bw_s + net_lat + step), where
 *               step = net_step * min(1, B / net_step_bytes) and a host's
 *               bw = min(net_bw, net_cpu_bw * cores_per_host): its CPUs may
 *               not keep up with the NIC (sending and receiving both cost).
 *               With net_burst_bytes (a token-bucket link: tc tbf, a cloud
 *               NIC's burst credits) each host's sending and receiving side
 *               has a bucket of that many bytes, full when a run starts,
 *               refilled at net_bw: the bytes it covers go at the CPUs' rate
 *               (net_cpu_bw * cores_per_host; instantly without that limit),
 *               the rest at bw. A run of several calls back to back
 *               (collbench sim --iters) drains it as the real runs do.
 * The sender's clock advances by the per-message overhead (sends are eager);
 * a receive completes at max(receiver clock, arrival), a receive-reduce adds
 * B / reduce_bw. Local copies and reductions an algorithm does outside the
 * primitives and the direct services below (a tree's local reduce) cost no
 * virtual time, except copies made with coll_local_copy (the hierarchical
 * AlltoAll's pack and unpack: 2 x L x n bytes at its leader), charged at
 * one memcpy's rate (2 x shm_bw) times the CPU factor (below).
 *
 * The algorithms never name the simulator: every simulated comm's
 * comm->runner is coll_sim_ops, whose run_wait (the executor's wait: the
 * scheduler runs another rank until a message waited for arrives),
 * moves_data, charge_copy (coll_local_copy) and work (the shared working
 * block below) hooks they reach through the transport interface
 * (transport.h).
 *
 * Direct memory (sim_direct.c): ranks of a simulated host with more than one
 * rank get comm->direct (coll_direct_ops_t), as shm gives it on a real host,
 * so the direct, cma and shm algorithms run, coll_group_is_local sees such a
 * host as local, and the selection matches a real host's (comm->shm stays
 * NULL). Costs on the rank that acts, where cp_bw = 2 x shm_bw is one
 * memcpy's rate (shm_bw, a message's, holds its copy in and its copy out),
 * each CPU term times the CPU factor f (below):
 *   barrier:      ends at the host's last arrival + shm_ovh + shm_lat (a round)
 *   small post:   shm_ovh + B / cp_bw;  wait_all: the last post + shm_lat +
 *                 the peers' posted bytes / cp_bw (the reads)
 *   cma_read:     shm_ovh + B / cp_bw
 *   copy:         B / cp_bw   (coll_direct_copy: into / out of stages, from
 *                 peers' slots and buffers, within the user's buffers)
 *   reduce:       (k - 1) B / reduce_bw for k inputs of B bytes each
 *                 (coll_direct_reduce; k == 1 is a copy)
 * The copies and reductions are a service of the capability (direct.h), so
 * the algorithms pay for them as on a real host and, without move_data, the
 * simulator skips the work (a sizes-only run moves no byte). The copy port
 * of sends is not involved, and reads of a peer's memory see no contention
 * beyond the reader's own bandwidth. Waits block the coroutine (no spin) and
 * are deadlock-detected like message waits. Zero-copy (peer_ptr) is never
 * offered: simulated buffers are not coll_mem_alloc regions.
 *
 * CPU oversubscription: with cores_per_host C > 0, the CPU's part of a rank's
 * work (shm copies and overheads, reductions, net_ovh, the direct services)
 * takes f = max(1, busy / C) times as long, busy = the ranks of its host at
 * work when it starts (this rank and those whose clocks are past its own:
 * working or taking in a message until then; ranks waiting take no CPU, as
 * the real waits block); copies and reductions also share the memory
 * bandwidth: f = max(1, busy / C x mem_r), mem_r = one core's memcpy (2 x
 * shm_bw) / copy_core_gbps (what each core copies while all of them do;
 * 0: no limit), except in a call whose buffers on the host (send + receive
 * of its ranks, coll_sim_working_set) fit cache_bytes: those copies stay in
 * the last-level cache (0: never assumed). The wire (net_bw, net_lat, shm_lat) is not slowed.
 * What the parameters hold when they come from a calibration file
 * (docs/sim-calibration.md): net_bw is a TCP stream's achieved rate (not the
 * line rate); net_lat a small message's one-way time (what the init probe,
 * and so the selection, sees); net_step what one lockstep exchange of a
 * chunk (a ring step) costs beyond its transmission and net_lat: TCP's ACK
 * clocking behind the reverse data and waking the receiving rank, which on
 * a loaded host is milliseconds; net_cpu_bw the TCP rate per core when the
 * CPUs, not the link, are the limit (hosts sharing one machine's cores).
 *
 * Memory: the N communicators share the peer records, the topology arrays
 * and the transport table (comm->tp); nothing is N x N.
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
    double net_gbps, net_us, net_ovh_us; /* NIC: Gbit/s, latency us, per-message us */
    double shm_gbps, shm_us, shm_ovh_us; /* within a host */
    double reduce_gbps;                  /* reduction, Gbit/s of input */
    int move_data;                       /* 0: sizes and virtual time only */
    size_t shared_scratch;               /* !move_data: one scratch block of this size for every rank */
    double cores_per_host;               /* CPU cores a host's ranks share (0: one per rank) */
    double net_step_us, net_step_bytes;  /* NIC: extra per message, full from this size up */
    double net_cpu_gbps;                 /* TCP Gbit/s one core sends + receives (0: no limit) */
    double copy_core_gbps;               /* memcpy Gbit/s per core while every core copies (0: as one alone) */
    double cache_bytes;                  /* last-level cache a host's ranks share (0: not modelled) */
    double net_burst_bytes;              /* NIC: a token bucket of this size (tc tbf), refilled at net_gbps (0: none) */
    /* Not the transport's: what the selection is told of the network (the
     * init probe's latency and bandwidth, collbench sim sets the tuning's tcp
     * constants from them); 0: net_us + net_ovh_us and net_gbps. */
    double probe_us, probe_gbps;
    int buf_huge; /* the ranks' buffers are on 2 MiB pages: comm->buf_huge, the selection's HUGE rules */
} coll_sim_params_t;

/* The default link model (collbench sim's defaults, the unit tests' model):
 * NIC 100 Gbit/s, 2 us, 1 us a message; shm 200 Gbit/s, 0.3 us, 0.2 us a
 * message; reduction 80 Gbit/s; no step cost, CPU factor or NIC CPU cap;
 * sizes only (move_data 0). */
coll_sim_params_t coll_sim_defaults(void);

typedef struct coll_sim coll_sim_t;

/* Every rank's transport and every simulated comm's runner (transport.h). */
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

/* The bytes each rank's buffers span in the next calls (send + receive),
 * rank_bytes[0..n): with cache_bytes, a host whose ranks' sum fits it copies
 * without the memory-bandwidth share (copy_core_gbps). O(n). Default 0. */
void coll_sim_working_set(coll_sim_t *s, const size_t *rank_bytes);

/* Without move_data: [p, p + len) holds no data (every rank's dummy buffer);
 * messages sent from it carry no bytes. At most SIM_BLANKS regions. */
#define SIM_BLANKS 4
coll_status_t coll_sim_blank(coll_sim_t *s, const void *p, size_t len);

/* Messages sent and rank -> scheduler switches of the last run. */
void coll_sim_counts(const coll_sim_t *s, unsigned long long *msgs, unsigned long long *switches);

/* Sizes only: a buffer whose contents nobody reads, every 512 KiB of it the
 * same memory (one small memfd mapped over and over), so that the copies and
 * reductions algorithms make themselves (direct algorithms: staging copies)
 * run in cache instead of streaming N x bytes from memory. Zero-filled.
 * NULL on failure. Unmap with the same size. */
void *coll_sim_alias_map(size_t bytes);
void coll_sim_alias_unmap(void *p, size_t bytes);

/* --- between sim.c and sim_direct.c (no one else calls these) --- */
struct coll_sim_direct;
struct coll_sim_direct **coll_sim_direct_of(coll_sim_t *s);
const coll_sim_params_t *coll_sim_params(const coll_sim_t *s);
double *coll_sim_clock(coll_comm *comm);
/* How many times longer CPU work the running rank starts now takes on its
 * host (sim.c, cpu_factor): mem 0 for per-message overheads, 1 for copies
 * and reductions (memory bandwidth shared too). */
double coll_sim_cpu_factor(const coll_comm *comm, int mem);
/* Block the running rank until coll_sim_wake; a deadlock returns
 * COLL_ERR_INTERNAL naming the rank and `what` it waits in. */
coll_status_t coll_sim_block(coll_comm *comm, const char *what);
void coll_sim_wake(coll_sim_t *s, int rank); /* no-op unless blocked */
/* sim_direct.c: set comm->direct on ranks of hosts with local peers
 * (coll_sim_create), clear the counters (each run), release (destroy). */
coll_status_t coll_sim_direct_attach(coll_sim_t *s);
void coll_sim_direct_reset(coll_sim_t *s);
void coll_sim_direct_detach(coll_sim_t *s);

#endif
