/*
 * topo.c - topology detection: this process's host identity, and from every
 * rank's record (exchanged by the bootstrap join) the hosts, local ranks,
 * leaders and groups of the communicator. See topo.h.
 */
#include "topo/topo.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/copy.h"
#include "core/log.h"

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void coll_topo_identify(coll_peer_info_t *me, int rank)
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
    me->pid = (int32_t)getpid();
    me->rank = rank;
    me->ncpus = online_cpus();
}

static uint32_t host_id_hash(const char *id)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 16777619u;
    return h;
}

/* Hosts in order of their first rank; each rank's host and local rank.
 * O(N): host ids go into an open-addressing table of at least 2N slots
 * (host indices, -1 = empty), so a rank's id is compared with its own host's
 * id and the few it collides with. (Comparing each rank with the ranks
 * before it was O(N x H): 2.3 s on every rank at 32,768 ranks on 4,096
 * hosts.) */
static coll_status_t group_hosts(coll_comm *comm)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)comm->nranks)
        cap *= 2;
    int *slot = malloc(cap * sizeof *slot);
    if (!slot)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory for the host table of %d ranks",
                          comm->nranks);
    memset(slot, 0xff, cap * sizeof *slot);
    comm->nhosts = 0;
    for (int r = 0; r < comm->nranks; r++) {
        const char *id = comm->peers[r].host_id;
        size_t i = host_id_hash(id) & (cap - 1);
        while (slot[i] >= 0 && strcmp(comm->peers[comm->leader_ranks[slot[i]]].host_id, id))
            i = (i + 1) & (cap - 1);
        if (slot[i] < 0) {
            slot[i] = comm->nhosts++;
            comm->leader_ranks[slot[i]] = r;
        }
        int h = slot[i];
        comm->world_ranks[r] = r;
        comm->rank_host[r] = h;
        comm->rank_local[r] = comm->host_nranks[h]++;
    }
    free(slot);
    return COLL_SUCCESS;
}

/* The first host over COLL_MAX_LOCAL ranks, named (the same on every rank). */
static coll_status_t check_local_limit(const coll_comm *comm)
{
    for (int h = 0; h < comm->nhosts; h++)
        if (comm->host_nranks[h] > COLL_MAX_LOCAL)
            return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT,
                              "host %d (%s) holds %d ranks of this communicator: at most %d ranks per host "
                              "(COLL_MAX_LOCAL, fixed when libcoll is built); run fewer ranks per host",
                              h, comm->peers[comm->leader_ranks[h]].hostname, comm->host_nranks[h], COLL_MAX_LOCAL);
    return COLL_SUCCESS;
}

void coll_topo_set_groups(coll_comm *comm)
{
    comm->world = (coll_group_t){comm->nranks, comm->rank, comm->world_ranks};
    comm->local = (coll_group_t){comm->local_size, comm->local_rank, comm->local_ranks};
    comm->leaders = (coll_group_t){comm->nhosts, comm->local_rank == 0 ? comm->host : -1, comm->leader_ranks};
}

/* uniform_hosts, min_local, max_local: O(H) once at init, so the selection's
 * per-call questions (coll_hier_min/max_local, busiest host) are O(1). */
/* Is rank order host-major (rank r = local rank r - displ(h) of host h,
 * hosts in order)? O(N), once. */
static int host_major(const coll_comm *comm)
{
    int r = 0;
    for (int h = 0; h < comm->nhosts; h++)
        for (int lr = 0; lr < comm->host_nranks[h]; lr++, r++)
            if (r >= comm->nranks || comm->rank_host[r] != h || comm->rank_local[r] != lr)
                return 0;
    return r == comm->nranks;
}

/* min/max ranks on a host, uniformity, and host_displ (O(H), once: the
 * hierarchical algorithms look up a host's first position per rank and per
 * host in every call, which summed host_nranks was O(H) each, O(N H) a call). */
static void count_host_sizes(coll_comm *comm)
{
    comm->host_displ[0] = 0;
    for (int h = 1; h < comm->nhosts; h++)
        comm->host_displ[h] = comm->host_displ[h - 1] + comm->host_nranks[h - 1];
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
}

/* Ranks per online CPU on the most crowded host (>= 1), from each host
 * leader's CPU count: the same on every rank. */
static double most_ranks_per_cpu(const coll_comm *comm)
{
    double most = 1.0;
    for (int h = 0; h < comm->nhosts; h++) {
        int c = comm->peers[comm->leader_ranks[h]].ncpus;
        double r = c > 0 ? (double)comm->host_nranks[h] / c : 1.0;
        if (r > most)
            most = r;
    }
    return most;
}

coll_status_t coll_topo_build(coll_comm *comm)
{
    size_t n = (size_t)comm->nranks;
    comm->rank_host = calloc(n, sizeof(int));
    comm->rank_local = calloc(n, sizeof(int));
    comm->host_nranks = calloc(n, sizeof(int));
    comm->host_displ = calloc(n, sizeof(int));
    comm->world_ranks = calloc(n, sizeof(int));
    comm->leader_ranks = calloc(n, sizeof(int));
    comm->local_ranks = calloc(n, sizeof(int));
    if (!comm->rank_host || !comm->rank_local || !comm->host_nranks || !comm->host_displ || !comm->world_ranks
        || !comm->leader_ranks || !comm->local_ranks)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory for the topology of %zu ranks", n);
    COLL_CHECK(group_hosts(comm));
    COLL_CHECK(check_local_limit(comm));
    comm->host = comm->rank_host[comm->rank];
    comm->local_rank = comm->rank_local[comm->rank];
    comm->local_size = 0;
    for (int r = 0; r < comm->nranks; r++)
        if (comm->rank_host[r] == comm->host)
            comm->local_ranks[comm->local_size++] = r;
    coll_topo_set_groups(comm);
    count_host_sizes(comm);
    comm->host_major = host_major(comm);
    comm->oversub = most_ranks_per_cpu(comm);
    /* COLL_BUF_HUGE, read once per communicator: the same on every rank of a
     * host (the same setting, the same sysfs), which is all the single-host
     * rules it gates need to agree. Scale: O(1) per rank (under auto one small
     * sysfs read), no message, whatever N and H. */
    comm->buf_huge = coll_buf_huge_cfg();
    return COLL_SUCCESS;
}

void coll_topo_free(coll_comm *comm)
{
    free(comm->rank_host);
    free(comm->rank_local);
    free(comm->host_nranks);
    free(comm->host_displ);
    comm->host_displ = NULL;
    free(comm->world_ranks);
    free(comm->leader_ranks);
    free(comm->local_ranks);
    comm->rank_host = comm->rank_local = comm->host_nranks = NULL;
    comm->world_ranks = comm->leader_ranks = comm->local_ranks = NULL;
}

void coll_topo_log(const coll_comm *comm)
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
        COLL_INFO(COLL_SUB_INIT, "  host %d %s: %d rank(s) [%s]", h, comm->peers[comm->leader_ranks[h]].hostname,
                  comm->host_nranks[h], list);
    }
}
