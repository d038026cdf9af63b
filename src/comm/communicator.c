/*
 * communicator.c - communicator creation and teardown, one step per layer
 * below: bootstrap (rendezvous, every rank's record), topology (topo/: which
 * ranks share a host), spin policy, transports per peer (through their
 * tables), then the network probe. The top of the library: it may use every
 * layer below.
 */
#include "core/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "coll/selection/tuning.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/warm.h"
#include "core/log.h"
#include "topo/topo.h"
#include "transport/transport.h"

/* The communicator and the bootstrap state it points to, in one allocation
 * (free(comm) releases all: comm is the first member). */
typedef struct {
    coll_comm comm;
    coll_bootstrap_t bs;
    coll_id_info_t id;
} comm_block_t;

static void log_transports(const coll_comm *comm)
{
    if (comm->rank != 0)
        return;
    COLL_INFO(COLL_SUB_INIT, "transports: shm within a host (%s), tcp across hosts (%s)",
              comm->shm ? "on" : (comm->local_size > 1 ? "disabled" : "unused"), comm->tcp ? "on" : "unused");
}

static void comm_free(coll_comm *comm)
{
    if (!comm)
        return;
    coll_transports_teardown(comm);
    if (comm->bs->prefix[0])
        coll_bootstrap_close(comm->bs);
    if (comm->held_store)
        coll_id_server_drop(comm->id);
    free(comm->peers);
    coll_topo_free(comm);
    free(comm->tp);
    free(comm->scratch);
    coll_comm_work_drop(comm);
    free(comm);
}

static coll_status_t check_args(coll_comm_t *out, int nranks, int rank)
{
    if (!out)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT, "coll_comm_init_rank: comm is NULL");
    if (coll_cfg_check() != COLL_SUCCESS)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_ENV, "%s", coll_cfg_check_message());
    coll_cfg_report(rank);
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT,
                          "invalid rank %d / nranks %d (need 0 <= rank < nranks, nranks >= 1)", rank, nranks);
    return COLL_SUCCESS;
}

static coll_comm *comm_alloc(int nranks, int rank)
{
    comm_block_t *blk = calloc(1, sizeof *blk);
    if (!blk)
        return NULL;
    coll_comm *comm = &blk->comm;
    comm->bs = &blk->bs;
    comm->id = &blk->id;
    comm->rank = rank;
    comm->nranks = nranks;
    comm->connect_timeout_s = coll_cfg_double(COLL_CFG_CONNECT_TIMEOUT);
    comm->exec_timeout_s = coll_cfg_double(COLL_CFG_EXEC_TIMEOUT);
    comm->stage_ring = coll_cfg_size(COLL_CFG_STAGE_RING);
    comm->stage_hw = SIZE_MAX; /* no stage (no shm segment): no stage first use to count */
    return comm;
}

/* Step 1, bootstrap: join the id's store and exchange every rank's record
 * (me: host identity and tcp listener, so every rank listens before the
 * exchange: tcp peers connect lazily to it; a listener failure matters only
 * if this rank has tcp peers, which the tcp .agree tells). O(N) bytes a rank. */
static coll_status_t init_bootstrap(coll_comm *comm, const coll_unique_id_t *id, coll_peer_info_t *me)
{
    COLL_CHECK(coll_id_decode(id, comm->id));
    comm->held_store = coll_id_server_hold(comm->id);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "c%016llx", (unsigned long long)comm->id->nonce);
    coll_bootstrap_prepare(comm->bs, comm->id, prefix); /* a failure from here on is told to the others */
    coll_topo_identify(me, comm->rank);
    comm->peers = calloc((size_t)comm->nranks, sizeof *comm->peers);
    if (!comm->peers)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory");
    coll_transports_prepare(comm, me);
    COLL_CHECK(coll_bootstrap_init(comm->bs, comm->id, prefix, comm->rank, comm->nranks, comm->connect_timeout_s,
                                   &comm->aborted, me, sizeof *me, comm->peers));
    COLL_CHECK(coll_peers_check(comm->peers, comm->nranks));
    return COLL_SUCCESS;
}

/* Step 3, spin policy: how long a waiter spins and yields before it sleeps,
 * from the configuration and whether this machine's ranks fit its cores.
 * "Hosts" that are namespaces or containers of one kernel share its cores:
 * machine_ranks counts them together (4 ranks as 2 namespace hosts x 2 on 2
 * cores are oversubscribed, as 4 local ranks are). Other processes' load is
 * looked at during the waits (core/busy.h). */
static void init_spin_policy(coll_comm *comm, const coll_peer_info_t *me)
{
    int machine_ranks;
    long long tcp_cfg = coll_cfg_int(COLL_CFG_TCP_SPIN_US);
    int spin_us = coll_comm_tcp_spin_us(comm->peers, comm->nranks, me, comm->local_size, tcp_cfg, &machine_ranks);
    comm->tcp_spin_s = spin_us * 1e-6;
    comm->tcp_spin_auto = tcp_cfg < 0;
    comm->machine_ranks = machine_ranks;
    comm->machine_fits = coll_comm_fits_machine(me, machine_ranks);
    comm->spin = (int)coll_cfg_int(COLL_CFG_SPIN);
    comm->yields = (int)coll_cfg_int(COLL_CFG_YIELD);
    if (!comm->machine_fits) { /* or the cores are unknown */
        if (comm->spin > 50)
            comm->spin = 50; /* oversubscribed: a spinning waiter steals the core of a working rank */
        if (comm->yields < 0)
            comm->yields = 64; /* ... but yielding hands it straight to one */
    } else if (comm->yields < 0) {
        comm->yields = 4;
    }
    comm->spin_now = comm->spin;
    COLL_INFO(COLL_SUB_INIT,
              "waits spin up to %d rounds, on sockets alone %d us, before sleeping (COLL_SPIN, COLL_TCP_SPIN_US; "
              "%d rank(s) on this machine, %d core(s)%s)",
              comm->spin, spin_us, machine_ranks, me->ncpus,
              comm->tcp_spin_auto ? "; neither while the machine has more runnable tasks than cores" : "");
}

/* Step 4, transports: each agrees on what .prepare left (every rank at the
 * same point), then shm claims this host's peers, tcp the others (other
 * hosts, or COLL_SHM_DISABLE), connected on first use. */
static coll_status_t init_transports(coll_comm *comm)
{
    comm->tp = calloc((size_t)comm->nranks, sizeof(*comm->tp));
    if (!comm->tp)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory");
    COLL_CHECK(coll_transports_agree(comm));
    COLL_CHECK(coll_transports_setup(comm));
    return COLL_SUCCESS;
}

/* A failed init: tell the ranks waiting for us in the store, so they stop now
 * rather than at COLL_CONNECT_TIMEOUT (best effort: our own error stays). */
static void tell_failure(coll_comm *comm, coll_status_t st)
{
    if (!comm->bs->prefix[0] || st == COLL_ERR_ABORTED)
        return;
    char saved[1024], why[1200], host[64] = "?";
    snprintf(saved, sizeof saved, "%s", coll_last_error());
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(why, sizeof why, "rank %d (host %s, pid %d) failed during communicator setup: %s", comm->rank, host,
             (int)getpid(), saved);
    if (coll_bootstrap_fail(comm->bs, why) != COLL_SUCCESS)
        COLL_DEBUG(COLL_SUB_INIT, "could not mark the job failed in the store: %s", coll_last_error());
    else if (comm->held_store && !comm->bs->ready && comm->nranks > 1) {
        /* ranks waiting for the tree learn of failures by asking this
         * process's store now and then: keep it up until they have */
        double linger = coll_bootstrap_probe_interval(comm->nranks) + 0.3;
        struct timespec ts = {(time_t)linger, (long)((linger - (double)(time_t)linger) * 1e9)};
        nanosleep(&ts, NULL);
    }
    coll_error(st, COLL_SUB_INIT, "%s", saved);
}

/* Wall ms of side's handshakes of role since a0. */
static double auth_ms(const coll_auth_stats_t *a, const coll_auth_stats_t *a0, int side, int role)
{
    return (double)(a->role_ns[side][role] - a0->role_ns[side][role]) * 1e-6;
}

/* Init's wall time and the authentication handshakes made during it (both
 * sides: counted and timed in core/auth.c; the connector's also by role), one
 * INFO line: the handshakes' wall time bounds what authentication adds to init
 * (bench/scale-bench.sh). */
static void log_auth_share(const coll_auth_stats_t *a0, uint64_t t0)
{
    coll_auth_stats_t a;
    coll_auth_stats_get(&a);
    double init_ms = (double)(coll_auth_now_ns() - t0) * 1e-6;
    uint64_t nc = a.n[0] - a0->n[0], na = a.n[1] - a0->n[1];
    double wc = (double)(a.wall_ns[0] - a0->wall_ns[0]) * 1e-6, wa = (double)(a.wall_ns[1] - a0->wall_ns[1]) * 1e-6;
    unsigned long long rn[COLL_AUTH_ROLES];
    for (int r = 0; r < COLL_AUTH_ROLES; r++)
        rn[r] = (unsigned long long)(a.role_n[0][r] - a0->role_n[0][r]);
    COLL_INFO(COLL_SUB_INIT,
              "init %.3f ms; auth handshakes %llu (connector %llu, acceptor %llu), wall %.3f ms (connector %.3f, "
              "acceptor %.3f), hmac cpu %.3f ms (%llu HMACs); connector by role: store %.3f ms (%llu), tree %.3f "
              "ms (%llu), data %.3f ms (%llu)",
              init_ms, (unsigned long long)(nc + na), (unsigned long long)nc, (unsigned long long)na, wc + wa, wc, wa,
              (double)(a.hmac_cpu_ns - a0->hmac_cpu_ns) * 1e-6, (unsigned long long)(a.hmacs - a0->hmacs),
              auth_ms(&a, a0, 0, COLL_AUTH_STORE), rn[COLL_AUTH_STORE], auth_ms(&a, a0, 0, COLL_AUTH_TREE),
              rn[COLL_AUTH_TREE], auth_ms(&a, a0, 0, COLL_AUTH_DATA), rn[COLL_AUTH_DATA]);
}

/* One step per layer: bootstrap (who is where), topology (which ranks share
 * a host), spin policy, transports; then a barrier and the network probe. */
coll_status_t coll_comm_init_rank(coll_comm_t *out, int nranks, coll_unique_id_t id, int rank)
{
    coll_log_init();
    coll_error_clear();
    uint64_t t0 = coll_auth_now_ns();
    coll_auth_stats_t a0;
    coll_auth_stats_get(&a0);
    COLL_CHECK(check_args(out, nranks, rank));
    coll_comm *comm = comm_alloc(nranks, rank);
    if (!comm)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory");
    coll_log_set_rank(rank);
    coll_peer_info_t me;
    memset(&me, 0, sizeof me);
    coll_status_t st;
    COLL_CHECK_GOTO(init_bootstrap(comm, &id, &me), st, fail);
    COLL_CHECK_GOTO(coll_topo_build(comm), st, fail);
    init_spin_policy(comm, &me);
    COLL_CHECK_GOTO(init_transports(comm), st, fail);
    COLL_CHECK_GOTO(coll_bootstrap_barrier(comm->bs), st, fail);
    coll_topo_log(comm);
    log_transports(comm);
    COLL_CHECK_GOTO(coll_net_probe(comm), st, fail); /* tcp latency/bandwidth for selection (tuning.h) */
    coll_warm_process();
    log_auth_share(&a0, t0);
    *out = comm;
    return COLL_SUCCESS;
fail:
    COLL_INFO(COLL_SUB_INIT, "communicator init failed: %s", coll_last_error());
    tell_failure(comm, st);
    comm_free(comm);
    return st;
}

coll_status_t coll_comm_destroy(coll_comm_t comm)
{
    if (!comm)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT, "coll_comm_destroy: comm is NULL");
    comm_free(comm);
    return COLL_SUCCESS;
}

coll_status_t coll_comm_abort(coll_comm_t comm)
{
    if (!comm)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT, "coll_comm_abort: comm is NULL");
    coll_comm_set_aborted(comm, COLL_ERR_ABORTED, "coll_comm_abort called by rank %d", comm->rank);
    return COLL_SUCCESS;
}

#define GETTER_CHECK(ptr) \
    if (!comm || !(ptr)) \
    return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT, "%s: NULL argument", __func__)

coll_status_t coll_comm_rank(coll_comm_t comm, int *rank)
{
    GETTER_CHECK(rank);
    *rank = comm->rank;
    return COLL_SUCCESS;
}

coll_status_t coll_comm_size(coll_comm_t comm, int *size)
{
    GETTER_CHECK(size);
    *size = comm->nranks;
    return COLL_SUCCESS;
}

coll_status_t coll_comm_nhosts(coll_comm_t comm, int *nhosts)
{
    GETTER_CHECK(nhosts);
    *nhosts = comm->nhosts;
    return COLL_SUCCESS;
}

coll_status_t coll_comm_local(coll_comm_t comm, int *local_rank, int *local_size)
{
    GETTER_CHECK(local_rank && local_size);
    *local_rank = comm->local_rank;
    *local_size = comm->local_size;
    return COLL_SUCCESS;
}

const char *coll_comm_last_algo(coll_comm_t comm) { return comm && comm->last_algo ? comm->last_algo : ""; }
