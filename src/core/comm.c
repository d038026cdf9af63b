/*
 * comm.c - communicator creation and teardown: rendezvous, topology
 * (which ranks share a host), transports per peer.
 */
#include "core/comm.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll/tuning.h"
#include "core/config.h"
#include "core/log.h"
#include "transport/shm.h"
#include "transport/transport.h"

double coll_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t coll_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *coll_peer_desc(const coll_comm *comm, int rank, char *buf, size_t len)
{
    if (comm->peers && rank >= 0 && rank < comm->nranks)
        snprintf(buf, len, "rank %d (host %s, pid %d)", rank, comm->peers[rank].hostname,
                 (int)comm->peers[rank].pid);
    else
        snprintf(buf, len, "rank %d", rank);
    return buf;
}

int coll_group_index(const coll_group_t *g, int global_rank)
{
    for (int i = 0; i < g->size; i++)
        if (g->ranks[i] == global_rank)
            return i;
    return -1;
}

coll_status_t coll_comm_scratch(coll_comm *comm, size_t bytes, void **out)
{
    if (bytes <= comm->scratch_bytes) {
        *out = comm->scratch;
        return COLL_SUCCESS;
    }
    size_t sz = (bytes + 4095) & ~(size_t)4095;
    void *p = aligned_alloc(64, sz);
    if (!p)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "cannot allocate %zu bytes of scratch", sz);
    free(comm->scratch);
    comm->scratch = p;
    comm->scratch_bytes = sz;
    *out = p;
    return COLL_SUCCESS;
}

void coll_comm_set_aborted(coll_comm *comm, coll_status_t why, const char *fmt, ...)
{
    if (atomic_exchange(&comm->aborted, 1))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    COLL_INFO(COLL_SUB_INIT, "aborting communicator (%s): %s", coll_strerror(why), msg);
    if (comm->shm)
        coll_shm_abort(comm, msg);
    /* every rank, whatever transport reaches it; best effort: a notice that
     * fails must not replace the error the caller is about to return */
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", coll_last_error());
    coll_bootstrap_abort(&comm->bs, msg);
    if (!*saved)
        coll_error_clear();
    else if (strcmp(saved, coll_last_error()) != 0)
        coll_error(why, COLL_SUB_INIT, "%s", saved);
    if (comm->tcp)
        coll_tcp_abort(comm);   /* after the notice: peers blocked on our sockets see EOF */
}

int coll_comm_tcp_spin_us(const coll_peer_info_t *peers, int nranks, const coll_peer_info_t *me,
                          int local_size, long long cfg_us, int *machine_ranks)
{
    int same = 0;
    for (int r = 0; r < nranks; r++)
        same += *me->boot_id && !strcmp(peers[r].boot_id, me->boot_id);
    if (same < local_size)
        same = local_size;
    *machine_ranks = same;
    if (cfg_us >= 0)
        return cfg_us > INT_MAX ? INT_MAX : (int)cfg_us;
    return me->ncpus > 0 && same <= me->ncpus ? COLL_TCP_SPIN_AUTO_US : 0;
}

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
    for (int h = 1; h < comm->nhosts; h++)
        if (comm->host_nranks[h] != comm->host_nranks[0])
            comm->uniform_hosts = 0;
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
    coll_shm_mem_release_all(comm);
    coll_shm_teardown(comm);
    if (comm->tcp)
        coll_tcp_teardown(comm);
    if (comm->bs.prefix[0])
        coll_bootstrap_close(&comm->bs);
    if (comm->held_store)
        coll_id_server_drop(&comm->id);
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
    coll_comm *comm = calloc(1, sizeof *comm);
    if (!comm)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory");
    coll_status_t st;
    comm->rank = rank;
    comm->nranks = nranks;
    comm->connect_timeout_s = coll_cfg_double(COLL_CFG_CONNECT_TIMEOUT);
    comm->exec_timeout_s = coll_cfg_double(COLL_CFG_EXEC_TIMEOUT);
    comm->spin = (int)coll_cfg_int(COLL_CFG_SPIN);
    coll_log_set_rank(rank);
    COLL_CHECK_GOTO(coll_id_decode(&id, &comm->id), st, fail);
    comm->held_store = coll_id_server_hold(&comm->id);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "c%016llx", (unsigned long long)comm->id.nonce);
    coll_bootstrap_prepare(&comm->bs, &comm->id, prefix);   /* a failure from here on is told to the others */

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
     * (a failure matters only if this rank has tcp peers: coll_tcp_setup) */
    if (coll_tcp_listen(comm, &me) != COLL_SUCCESS) {
        COLL_INFO(COLL_SUB_INIT, "no tcp listener: %s", coll_last_error());
        coll_error_clear();
    }
    COLL_CHECK_GOTO(coll_bootstrap_init(&comm->bs, &comm->id, prefix, rank, nranks, comm->connect_timeout_s,
                                        &comm->aborted, &me, sizeof me, comm->peers),
                    st, fail);
    for (int r = 0; r < nranks; r++)
        if (comm->peers[r].rank != r) {
            st = coll_error(COLL_ERR_INTERNAL, COLL_SUB_INIT, "bootstrap join mixed up ranks");
            goto fail;
        }
    COLL_CHECK_GOTO(build_topology(comm), st, fail);
    COLL_CHECK_GOTO(coll_tcp_check_listener(comm), st, fail);
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

    COLL_CHECK_GOTO(coll_shm_setup(comm), st, fail);
    /* peers not served by shm (other hosts, or COLL_SHM_DISABLE) use tcp, connected on first use */
    COLL_CHECK_GOTO(coll_tcp_setup(comm), st, fail);
    COLL_CHECK_GOTO(coll_bootstrap_barrier(&comm->bs), st, fail);
    log_topology(comm);
    COLL_CHECK_GOTO(coll_net_probe(comm), st, fail);   /* tcp latency/bandwidth for selection (tuning.h) */
    *out = comm;
    return COLL_SUCCESS;
fail:
    COLL_INFO(COLL_SUB_INIT, "communicator init failed: %s", coll_last_error());
    if (comm->bs.prefix[0] && st != COLL_ERR_ABORTED) {
        /* tell the ranks waiting for us in the store, so they stop now rather
         * than at COLL_CONNECT_TIMEOUT (best effort: our own error stays) */
        char saved[1024], why[1200], host[64] = "?";
        snprintf(saved, sizeof saved, "%s", coll_last_error());
        gethostname(host, sizeof host - 1);
        host[sizeof host - 1] = '\0';
        snprintf(why, sizeof why, "rank %d (host %s, pid %d) failed during communicator setup: %s", rank, host,
                 (int)getpid(), saved);
        if (coll_bootstrap_fail(&comm->bs, why) != COLL_SUCCESS)
            COLL_DEBUG(COLL_SUB_INIT, "could not mark the job failed in the store: %s", coll_last_error());
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
