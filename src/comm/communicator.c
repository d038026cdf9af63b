/*
 * communicator.c - communicator creation and teardown: rendezvous, topology
 * (which ranks share a host), transports per peer (through their tables),
 * the network probe. The top of the library: it may use every layer below.
 */
#include "core/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "coll/tuning.h"
#include "core/config.h"
#include "core/log.h"
#include "transport/transport.h"

/* The communicator and the bootstrap state it points to, in one allocation
 * (free(comm) releases all: comm is the first member). */
typedef struct {
    coll_comm comm;
    coll_bootstrap_t bs;
    coll_id_info_t id;
} comm_block_t;

static void read_host_identity(coll_peer_info_t *me)
{
    gethostname(me->hostname, sizeof me->hostname - 1);
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = '\0';
        fclose(f);
        boot[strcspn(boot, "\n")] = '\0';
    }
    snprintf(me->boot_id, sizeof me->boot_id, "%s", boot);
    const char *over = coll_cfg_str(COLL_CFG_HOST_ID);
    if (*over)
        snprintf(me->host_id, sizeof me->host_id, "%s", over);
    else
        snprintf(me->host_id, sizeof me->host_id, "%s/%s", me->hostname, boot);
}

static coll_status_t build_topology(coll_comm *comm)
{
    int n = comm->nranks;
    comm->rank_host = calloc((size_t)n, sizeof(int));
    comm->rank_local = calloc((size_t)n, sizeof(int));
    comm->host_nranks = calloc((size_t)n, sizeof(int));
    comm->world_ranks = calloc((size_t)n, sizeof(int));
    comm->leader_ranks = calloc((size_t)n, sizeof(int));
    comm->local_ranks = calloc((size_t)n, sizeof(int));
    comm->tp = calloc((size_t)n, sizeof(*comm->tp));
    if (!comm->rank_host || !comm->rank_local || !comm->host_nranks || !comm->world_ranks ||
        !comm->leader_ranks || !comm->local_ranks || !comm->tp)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory");
    comm->nhosts = 0;
    for (int r = 0; r < n; r++) {
        comm->world_ranks[r] = r;
        int h = -1;
        for (int q = 0; q < r; q++)
            if (!strcmp(comm->peers[q].host_id, comm->peers[r].host_id)) {
                h = comm->rank_host[q];
                break;
            }
        if (h < 0) {
            h = comm->nhosts++;
            comm->leader_ranks[h] = r;
        }
        comm->rank_host[r] = h;
        comm->rank_local[r] = comm->host_nranks[h]++;
    }
    comm->host = comm->rank_host[comm->rank];
    comm->local_rank = comm->rank_local[comm->rank];
    comm->local_size = 0;
    for (int r = 0; r < n; r++)
        if (comm->rank_host[r] == comm->host)
            comm->local_ranks[comm->local_size++] = r;
    comm->uniform_hosts = 1;
    comm->min_local = comm->max_local = comm->host_nranks[0];
    for (int h = 1; h < comm->nhosts; h++) {
        if (comm->host_nranks[h] != comm->host_nranks[0])
            comm->uniform_hosts = 0;
        if (comm->host_nranks[h] < comm->min_local)
            comm->min_local = comm->host_nranks[h];
        if (comm->host_nranks[h] > comm->max_local)
            comm->max_local = comm->host_nranks[h];
    }
    comm->world = (coll_group_t){n, comm->rank, comm->world_ranks};
    comm->local = (coll_group_t){comm->local_size, comm->local_rank, comm->local_ranks};
    comm->leaders = (coll_group_t){comm->nhosts, comm->local_rank == 0 ? comm->host : -1, comm->leader_ranks};
    return COLL_SUCCESS;
}

static void log_topology(coll_comm *comm)
{
    if (comm->rank != 0 || !coll_log_enabled(COLL_LOG_INFO, COLL_SUB_INIT))
        return;
    COLL_INFO(COLL_SUB_INIT, "topology: %d ranks on %d host(s)%s", comm->nranks, comm->nhosts,
              comm->uniform_hosts ? "" : " (uneven ranks per host)");
    for (int h = 0; h < comm->nhosts; h++) {
        char list[256];
        size_t o = 0;
        list[0] = '\0';
        for (int r = 0; r < comm->nranks && o + 16 < sizeof list; r++)
            if (comm->rank_host[r] == h)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s%d", o ? "," : "", r);
        COLL_INFO(COLL_SUB_INIT, "  host %d %s: %d rank(s) [%s]", h,
                  comm->peers[comm->leader_ranks[h]].hostname, comm->host_nranks[h], list);
    }
    COLL_INFO(COLL_SUB_INIT, "transports: shm within a host (%s), tcp across hosts (%s)",
              comm->shm ? "on" : (comm->local_size > 1 ? "disabled" : "unused"),
              comm->tcp ? "on" : "unused");
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
    free(comm->rank_host);
    free(comm->rank_local);
    free(comm->host_nranks);
    free(comm->world_ranks);
    free(comm->leader_ranks);
    free(comm->local_ranks);
    free(comm->tp);
    free(comm->scratch);
    free(comm);
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

coll_status_t coll_comm_init_rank(coll_comm_t *out, int nranks, coll_unique_id_t id, int rank)
{
    coll_log_init();
    coll_error_clear();
    if (!out)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT, "coll_comm_init_rank: comm is NULL");
    if (coll_cfg_check() != COLL_SUCCESS)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_ENV, "%s", coll_cfg_check_message());
    coll_cfg_report(rank);
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT,
                          "invalid rank %d / nranks %d (need 0 <= rank < nranks, nranks >= 1)", rank, nranks);
    comm_block_t *blk = calloc(1, sizeof *blk);
    coll_comm *comm = blk ? &blk->comm : NULL;
    if (!comm)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory");
    coll_status_t st;
    comm->bs = &blk->bs;
    comm->id = &blk->id;
    comm->rank = rank;
    comm->nranks = nranks;
    comm->connect_timeout_s = coll_cfg_double(COLL_CFG_CONNECT_TIMEOUT);
    comm->exec_timeout_s = coll_cfg_double(COLL_CFG_EXEC_TIMEOUT);
    comm->spin = (int)coll_cfg_int(COLL_CFG_SPIN);
    coll_log_set_rank(rank);
    COLL_CHECK_GOTO(coll_id_decode(&id, comm->id), st, fail);
    comm->held_store = coll_id_server_hold(comm->id);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "c%016llx", (unsigned long long)comm->id->nonce);
    coll_bootstrap_prepare(comm->bs, comm->id, prefix);   /* a failure from here on is told to the others */

    /* who is where: one exchange (the bootstrap join) carries every rank's
     * record, its tcp listener included, so the listener exists first */
    coll_peer_info_t me;
    memset(&me, 0, sizeof me);
    read_host_identity(&me);
    me.pid = (int32_t)getpid();
    me.rank = rank;
    me.ncpus = online_cpus();
    comm->peers = calloc((size_t)nranks, sizeof *comm->peers);
    if (!comm->peers) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory");
        goto fail;
    }
    /* every rank listens before the exchange: tcp peers connect lazily to it
     * (a failure matters only if this rank has tcp peers: the tcp .agree) */
    coll_transports_prepare(comm, &me);
    COLL_CHECK_GOTO(coll_bootstrap_init(comm->bs, comm->id, prefix, rank, nranks, comm->connect_timeout_s,
                                        &comm->aborted, &me, sizeof me, comm->peers),
                    st, fail);
    for (int r = 0; r < nranks; r++)
        if (comm->peers[r].rank != r) {
            st = coll_error(COLL_ERR_INTERNAL, COLL_SUB_INIT, "bootstrap join mixed up ranks");
            goto fail;
        }
    COLL_CHECK_GOTO(build_topology(comm), st, fail);
    COLL_CHECK_GOTO(coll_transports_agree(comm), st, fail);
    comm->oversub = 1.0;
    for (int h = 0; h < comm->nhosts; h++) {
        int c = comm->peers[comm->leader_ranks[h]].ncpus;
        double r = c > 0 ? (double)comm->host_nranks[h] / c : 1.0;
        if (r > comm->oversub)
            comm->oversub = r;
    }
    comm->yields = (int)coll_cfg_int(COLL_CFG_YIELD);
    if (comm->local_size > me.ncpus) {
        if (comm->spin > 50)
            comm->spin = 50;   /* oversubscribed: a spinning waiter steals the core of a working rank */
        if (comm->yields < 0)
            comm->yields = 64;  /* ... but yielding hands it straight to one */
    } else if (comm->yields < 0) {
        comm->yields = 4;
    }
    int machine_ranks;
    int spin_us = coll_comm_tcp_spin_us(comm->peers, nranks, &me, comm->local_size,
                                        coll_cfg_int(COLL_CFG_TCP_SPIN_US), &machine_ranks);
    comm->tcp_spin_s = spin_us * 1e-6;
    COLL_INFO(COLL_SUB_INIT, "waits on sockets alone spin %d us before sleeping (COLL_TCP_SPIN_US; %d rank(s) "
              "on this machine, %d core(s))", spin_us, machine_ranks, me.ncpus);

    /* shm claims this host's peers, tcp the others (other hosts, or
     * COLL_SHM_DISABLE), connected on first use */
    COLL_CHECK_GOTO(coll_transports_setup(comm), st, fail);
    COLL_CHECK_GOTO(coll_bootstrap_barrier(comm->bs), st, fail);
    log_topology(comm);
    COLL_CHECK_GOTO(coll_net_probe(comm), st, fail);   /* tcp latency/bandwidth for selection (tuning.h) */
    *out = comm;
    return COLL_SUCCESS;
fail:
    COLL_INFO(COLL_SUB_INIT, "communicator init failed: %s", coll_last_error());
    if (comm->bs->prefix[0] && st != COLL_ERR_ABORTED) {
        /* tell the ranks waiting for us in the store, so they stop now rather
         * than at COLL_CONNECT_TIMEOUT (best effort: our own error stays) */
        char saved[1024], why[1200], host[64] = "?";
        snprintf(saved, sizeof saved, "%s", coll_last_error());
        gethostname(host, sizeof host - 1);
        host[sizeof host - 1] = '\0';
        snprintf(why, sizeof why, "rank %d (host %s, pid %d) failed during communicator setup: %s", rank, host,
                 (int)getpid(), saved);
        if (coll_bootstrap_fail(comm->bs, why) != COLL_SUCCESS)
            COLL_DEBUG(COLL_SUB_INIT, "could not mark the job failed in the store: %s", coll_last_error());
        else if (comm->held_store && !comm->bs->ready && nranks > 1) {
            /* ranks waiting for the tree learn of failures by asking this
             * process's store now and then: keep it up until they have */
            double linger = coll_bootstrap_probe_interval(nranks) + 0.3;
            struct timespec ts = {(time_t)linger, (long)((linger - (double)(time_t)linger) * 1e9)};
            nanosleep(&ts, NULL);
        }
        coll_error(st, COLL_SUB_INIT, "%s", saved);
    }
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

#define GETTER_CHECK(ptr)                                                                     \
    if (!comm || !(ptr))                                                                      \
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

const char *coll_comm_last_algo(coll_comm_t comm)
{
    return comm && comm->last_algo ? comm->last_algo : "";
}
