/*
 * shm_mem.c - zero-copy buffers (coll_mem_alloc): each rank's buffer lives in a
 * shared-memory object that every rank of its host maps, so algorithms read a
 * peer's send buffer and write results without staging copies. Allocation is
 * collective (same order on every rank); objects are unlinked once mapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "transport/shm_huge.h"
#include "transport/shm_seg.h"

static void region_name(const coll_comm *comm, int rank, int index, char *buf, size_t len)
{
    snprintf(buf, len, "/%scollbench-%016llx-r%d-m%d", coll_cfg_str(COLL_CFG_SHM_PREFIX),
             (unsigned long long)comm->id->nonce, rank, index);
}

static void region_free(coll_comm *comm, coll_mem_region_t *m)
{
    for (int i = 0; m->peer_base && i < comm->local_size; i++)
        if (m->peer_base[i] && m->peer_base[i] != m->base)
            munmap(m->peer_base[i], m->peer_bytes[i]);
    if (m->base) {
        if (comm->shm)
            munmap(m->base, m->bytes);
        else
            free(m->base);
    }
    free(m->peer_base);
    free(m->peer_bytes);
    free(m);
}

static void region_link(coll_comm *comm, coll_mem_region_t *m, void **ptr)
{
    m->next = comm->regions;
    comm->regions = m;
    *ptr = m->base;
}

/* No local peers: plain memory, still collective for symmetry. */
static coll_status_t alloc_private(coll_comm *comm, coll_mem_region_t *m, void **ptr)
{
    size_t sz = (m->bytes + 4095) & ~(size_t)4095; /* aligned_alloc wants a multiple of the alignment */
    m->base = aligned_alloc(4096, sz ? sz : 4096);
    if (!m->base) {
        free(m);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "cannot allocate %zu bytes", sz);
    }
    region_link(comm, m, ptr);
    return coll_bootstrap_barrier(comm->bs);
}

/* This rank's object `name`: created, mapped and every page allocated
 * (shm_huge_create: 2 MiB pages where /dev/shm gives them, no SIGBUS later);
 * *created says whether it must be unlinked. */
static coll_status_t map_mine(coll_mem_region_t *m, const char *name, int *created)
{
    size_t sz = m->bytes;
    coll_status_t st = COLL_SUCCESS;
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    int err = 0;
    *created = fd >= 0;
    if (fd < 0)
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_SHM, "shm_open(%s)", name);
    m->base = shm_huge_create(fd, sz); /* every page allocated: no SIGBUS later */
    if (m->base == MAP_FAILED) {
        err = errno;
        m->base = NULL;
    }
    close(fd);
    if (!m->base) {
        errno = err;
        st = coll_error_errno(COLL_ERR_NO_MEMORY, COLL_SUB_SHM,
                              "cannot allocate %zu bytes of zero-copy shared memory in /dev/shm", sz);
    }
    return st;
}

/* Map every local peer's object; all[r] is rank r's size (0 = it failed). O(L) maps. */
static coll_status_t map_peers(coll_comm *comm, coll_mem_region_t *m, const uint64_t *all)
{
    for (int i = 0; i < comm->local_size; i++) {
        int r = comm->local_ranks[i];
        if (r == comm->rank) {
            m->peer_base[i] = m->base;
            m->peer_bytes[i] = m->bytes;
            continue;
        }
        if (!all[r])
            return coll_error(COLL_ERR_SYSTEM, COLL_SUB_SHM, "rank %d failed to allocate zero-copy memory", r);
        char pname[128];
        region_name(comm, r, m->index, pname, sizeof pname);
        int pfd = shm_open(pname, O_RDWR | O_CLOEXEC, 0600);
        if (pfd < 0)
            return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_SHM, "shm_open(%s) of rank %d", pname, r);
        void *p = shm_huge_map(pfd, (size_t)all[r]);
        close(pfd);
        if (p == MAP_FAILED)
            return coll_error_errno(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "mmap of rank %d's buffer", r);
        if (shm_huge_populate(p, (size_t)all[r]) != 0 && errno != EINVAL) { /* EINVAL: faults on use */
            munmap(p, (size_t)all[r]);
            return coll_error_errno(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "faulting in rank %d's buffer", r);
        }
        m->peer_base[i] = p;
        m->peer_bytes[i] = (size_t)all[r];
    }
    return COLL_SUCCESS;
}

/* Exchange sizes (0 = failed here) over the bootstrap and map the peers'
 * objects; every rank takes part whatever st is. */
static coll_status_t exchange_and_map(coll_comm *comm, coll_mem_region_t *m, coll_status_t st)
{
    uint64_t mine = st == COLL_SUCCESS ? m->bytes : 0;
    uint64_t *all = calloc((size_t)comm->nranks, sizeof(uint64_t));
    if (!all) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
        mine = 0;
    }
    coll_status_t st2 = all ? coll_bootstrap_allgather(comm->bs, &mine, sizeof mine, all) : st;
    if (st == COLL_SUCCESS && st2 != COLL_SUCCESS)
        st = st2;
    if (st == COLL_SUCCESS)
        st = map_peers(comm, m, all);
    free(all);
    return st;
}

coll_status_t coll_mem_alloc(coll_comm_t comm, size_t bytes, void **ptr)
{
    if (!comm || !ptr)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_SHM, "coll_mem_alloc: NULL argument");
    coll_mem_region_t *m = calloc(1, sizeof *m);
    if (!m)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
    m->index = comm->shm ? comm->shm->nregions++ : 0;
    m->bytes = ((bytes ? bytes : 1) + 4095) & ~(size_t)4095;
    if (!comm->shm)
        return alloc_private(comm, m, ptr);
    m->peer_base = calloc((size_t)comm->local_size, sizeof(void *));
    m->peer_bytes = calloc((size_t)comm->local_size, sizeof(size_t));
    if (!m->peer_base || !m->peer_bytes) {
        region_free(comm, m);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
    }
    char name[128];
    int created = 0;
    region_name(comm, comm->rank, m->index, name, sizeof name);
    coll_status_t st = exchange_and_map(comm, m, map_mine(m, name, &created));
    /* everyone mapped (or failed): unlink, then agree on the outcome */
    coll_status_t st2 = coll_bootstrap_barrier(comm->bs);
    if (created)
        shm_unlink(name);
    if (st == COLL_SUCCESS && st2 != COLL_SUCCESS)
        st = st2;
    if (st != COLL_SUCCESS) {
        region_free(comm, m);
        return st;
    }
    region_link(comm, m, ptr);
    return COLL_SUCCESS;
}

coll_status_t coll_mem_free(coll_comm_t comm, void *ptr)
{
    if (!comm)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_SHM, "coll_mem_free: NULL communicator");
    if (!ptr)
        return COLL_SUCCESS;
    /* peers may still be reading: free only when everyone is done */
    COLL_CHECK(coll_bootstrap_barrier(comm->bs));
    for (coll_mem_region_t **pp = &comm->regions; *pp; pp = &(*pp)->next)
        if ((*pp)->base == ptr) {
            coll_mem_region_t *m = *pp;
            *pp = m->next;
            region_free(comm, m);
            return COLL_SUCCESS;
        }
    return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_SHM, "coll_mem_free: %p was not returned by coll_mem_alloc", ptr);
}

int coll_shm_region_of(coll_comm *comm, const void *ptr, size_t len, uint64_t *off)
{
    for (coll_mem_region_t *m = comm->regions; m; m = m->next)
        if (m->peer_base && (const char *)ptr >= (char *)m->base
            && (const char *)ptr + len <= (char *)m->base + m->bytes) {
            *off = (uint64_t)((const char *)ptr - (char *)m->base);
            return m->index;
        }
    return -1;
}

char *coll_shm_region_peer(coll_comm *comm, int lr, int k, uint64_t off, size_t len)
{
    for (coll_mem_region_t *m = comm->regions; m; m = m->next)
        if (m->index == k && m->peer_base && m->peer_base[lr] && off <= m->peer_bytes[lr]
            && len <= m->peer_bytes[lr] - off)
            return (char *)m->peer_base[lr] + off;
    return NULL;
}

void coll_shm_mem_release_all(coll_comm *comm)
{
    while (comm->regions) {
        coll_mem_region_t *m = comm->regions;
        comm->regions = m->next;
        region_free(comm, m);
    }
}
