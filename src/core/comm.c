/*
 * comm.c - communicator helpers every layer uses: clock, peer descriptions,
 * group lookup, scratch, the tcp spin policy. Creation and teardown live in
 * comm/communicator.c (the layer above the collectives).
 */
#include "core/comm.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"

double coll_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *coll_peer_desc(const coll_comm *comm, int rank, char *buf, size_t len)
{
    if (comm->peers && rank >= 0 && rank < comm->nranks)
        snprintf(buf, len, "rank %d (host %s, pid %d)", rank, comm->peers[rank].hostname, (int)comm->peers[rank].pid);
    else
        snprintf(buf, len, "rank %d", rank);
    return buf;
}

coll_status_t coll_peers_check(coll_peer_info_t *peers, int nranks)
{
    for (int r = 0; r < nranks; r++) {
        coll_peer_info_t *p = &peers[r];
        if (p->rank != r)
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_INIT,
                              "bootstrap join mixed up ranks: the record in slot %d says rank %d", r, (int)p->rank);
        /* L3: another rank's strings are used with strcmp / %s: terminate them */
        p->hostname[sizeof p->hostname - 1] = p->host_id[sizeof p->host_id - 1] = '\0';
        p->ifname[sizeof p->ifname - 1] = p->boot_id[sizeof p->boot_id - 1] = '\0';
    }
    return COLL_SUCCESS;
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

int coll_comm_tcp_spin_us(const coll_peer_info_t *peers, int nranks, const coll_peer_info_t *me, int local_size,
                          long long cfg_us, int *machine_ranks)
{
    int same = 0;
    for (int r = 0; r < nranks; r++)
        same += *me->boot_id && !strcmp(peers[r].boot_id, me->boot_id);
    if (same < local_size)
        same = local_size;
    *machine_ranks = same;
    if (cfg_us >= 0)
        return cfg_us > INT_MAX ? INT_MAX : (int)cfg_us;
    return coll_comm_fits_machine(me, same) ? COLL_TCP_SPIN_AUTO_US : 0;
}

/* A working block: a 64-byte header holding its capacity, then the bytes. */
#define WORK_HDR 64
static size_t work_cap(const void *p) { return *(const size_t *)((const char *)p - WORK_HDR); }

void *coll_comm_work_take(coll_comm *comm, size_t bytes)
{
    int best = -1;
    for (int i = 0; i < COLL_WORK_KEEP; i++) /* the smallest kept block that fits */
        if (comm->work_keep[i] && work_cap(comm->work_keep[i]) >= bytes
            && (best < 0 || work_cap(comm->work_keep[i]) < work_cap(comm->work_keep[best])))
            best = i;
    if (best >= 0) {
        void *p = comm->work_keep[best];
        comm->work_keep[best] = NULL;
        return p;
    }
    size_t cap = (bytes + 4095) & ~(size_t)4095;
    char *b = aligned_alloc(64, WORK_HDR + cap);
    if (!b)
        return NULL;
    *(size_t *)b = cap;
    comm->first_use++;
    return b + WORK_HDR;
}

void coll_comm_work_keep(coll_comm *comm, void *p)
{
    int slot = -1; /* an empty slot, else the smallest kept block if smaller than p */
    for (int i = 0; i < COLL_WORK_KEEP && slot < 0; i++)
        if (!comm->work_keep[i])
            slot = i;
    for (int i = 0; i < COLL_WORK_KEEP && slot < 0; i++)
        if (work_cap(comm->work_keep[i]) < work_cap(p)
            && (slot < 0 || work_cap(comm->work_keep[i]) < work_cap(comm->work_keep[slot])))
            slot = i;
    if (slot < 0) {
        free((char *)p - WORK_HDR);
        return;
    }
    if (comm->work_keep[slot])
        free((char *)comm->work_keep[slot] - WORK_HDR);
    comm->work_keep[slot] = p;
}

void coll_comm_work_drop(coll_comm *comm)
{
    for (int i = 0; i < COLL_WORK_KEEP; i++) {
        if (comm->work_keep[i])
            free((char *)comm->work_keep[i] - WORK_HDR);
        comm->work_keep[i] = NULL;
    }
}
