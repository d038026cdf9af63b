/*
 * shm_cma.c - cross-memory attach for large messages between ranks of a host:
 * process_vm_readv copies straight from a peer's private buffer into ours, one
 * copy instead of the two (in and out of shared memory) of staging.
 *
 * It needs ptrace permission over the peer (same user, and Yama's
 * ptrace_scope <= 1 with this process allowed, or root). Every local rank
 * probes every other at init; the outcome is agreed through the bootstrap
 * store so that all ranks choose the same algorithms.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/config.h"
#include "core/copy.h"
#include "core/log.h"
#include "core/reduce.h"
#include "transport/shm_seg.h"
#include "transport/transport.h"

static ssize_t cma_read(pid_t pid, void *dst, const void *remote, size_t len)
{
    struct iovec l = {dst, len}, r = {(void *)remote, len};
    return process_vm_readv(pid, &l, 1, &r, 1, 0);
}

static ssize_t cma_write(pid_t pid, void *remote, const void *src, size_t len)
{
    struct iovec l = {(void *)src, len}, r = {remote, len};
    return process_vm_writev(pid, &l, 1, &r, 1, 0);
}

coll_status_t coll_shm_cma_probe(coll_comm *comm)
{
    struct coll_shm *s = comm->shm;
    if (!s) { /* no local peers: only take part in the agreement */
        COLL_CHECK(coll_bootstrap_barrier(comm->bs));
        int64_t *none = calloc((size_t)comm->nhosts, sizeof *none);
        if (!none)
            return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
        coll_status_t st = coll_bootstrap_allreduce_max(comm->bs, none, comm->nhosts);
        free(none);
        return st;
    }
    s->probe_word = 0x636f6c6c636d6131ull; /* "collcma1" */
    s->ranks[s->me].probe_addr = (uint64_t)(uintptr_t)&s->probe_word;
    s->ranks[s->me].probe_sink = (uint64_t)(uintptr_t)&s->probe_sink;
    COLL_CHECK(coll_bootstrap_barrier(comm->bs));
    int ok = coll_cfg_bool(COLL_CFG_CMA);
    for (int i = 0; ok && i < s->nlocal; i++) {
        if (i == s->me)
            continue;
        uint64_t w = 0;
        ssize_t n = cma_read(s->ranks[i].pid, &w, (const void *)(uintptr_t)s->ranks[i].probe_addr, sizeof w);
        if (n == (ssize_t)sizeof w && w == 0x636f6c6c636d6131ull)
            n = cma_write(s->ranks[i].pid, (void *)(uintptr_t)s->ranks[i].probe_sink, &w, sizeof w);
        else if (n >= 0)
            n = -2;
        if (n != (ssize_t)sizeof w) {
            COLL_INFO(COLL_SUB_SHM, "cross-memory attach to local rank %d unavailable (%s): staging copies instead", i,
                      n == -1 ? strerror(errno) : "short or wrong read");
            ok = 0;
        }
    }
    int64_t *bad = calloc((size_t)comm->nhosts, sizeof *bad); /* per host: some rank cannot */
    if (!bad)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
    bad[comm->host] = !ok;
    coll_status_t st = coll_bootstrap_allreduce_max(comm->bs, bad, comm->nhosts);
    s->cma_ok = bad[comm->host] == 0;
    free(bad);
    COLL_CHECK(st);
    s->cma_min = coll_cfg_size(COLL_CFG_CMA_MIN);
    s->zc_min = coll_cfg_size(COLL_CFG_SHM_ZC_MIN);
    s->cma_coop = coll_cfg_bool(COLL_CFG_CMA_COOP);
    s->cma_piece = coll_cfg_size(COLL_CFG_CMA_PIECE);
    if (s->cma_piece < 4096)
        s->cma_piece = 4096;
    s->copy_nt_min = coll_cfg_size(COLL_CFG_COPY_NT_MIN);
    s->cma_posted = calloc((size_t)s->nlocal, sizeof(uint64_t));
    s->cma_tmp = aligned_alloc(64, SHM_CMA_TMP);
    if (!s->cma_posted || !s->cma_tmp)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
    if (comm->local_rank == 0)
        COLL_INFO(COLL_SUB_SHM, "cross-memory attach between local ranks: %s", s->cma_ok ? "on" : "off");
    return COLL_SUCCESS;
}

int coll_shm_cma_ok(const coll_comm *comm) { return comm->shm && comm->shm->cma_ok; }

void coll_shm_publish_addr(coll_comm *comm, int slot, const void *ptr)
{
    comm->shm->ranks[comm->shm->me].pub_addr[slot] = (uint64_t)(uintptr_t)ptr;
}

/* A failed process_vm_readv: the peer died (ESRCH) or aborted and went away
 * (its memory with it) is a peer failure, not a system error. */
coll_status_t coll_shm_cma_error(coll_comm *comm, int lr, size_t len, int writing)
{
    int err = errno;
    char d[128];
    int peer = comm->local_ranks[lr];
    int by = coll_shm_aborted_by(comm);
    if (by >= 0) {
        const char *why = coll_shm_abort_reason(comm);
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_SHM, "%s aborted during %s of %zu bytes%s%s",
                          coll_peer_desc(comm, by, d, sizeof d), coll_kind_name(comm->cur_kind), comm->cur_bytes,
                          *why ? ": " : "", why);
    }
    if (err == ESRCH) {
        coll_comm_set_aborted(comm, COLL_ERR_ABORTED, "%s died", coll_peer_desc(comm, peer, d, sizeof d));
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_SHM, "%s died during %s of %zu bytes",
                          coll_peer_desc(comm, peer, d, sizeof d), coll_kind_name(comm->cur_kind), comm->cur_bytes);
    }
    errno = err;
    return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_SHM, "process_vm_%s %s %s (%zu bytes)",
                            writing ? "writev" : "readv", writing ? "to" : "from",
                            coll_peer_desc(comm, peer, d, sizeof d), len);
}

/* len bytes between local and local rank lr's remote, whole (partial
 * transfers and EINTR resumed): writing = local -> remote. */
static coll_status_t cma_xfer(coll_comm *comm, int lr, char *remote, char *local, size_t len, int writing)
{
    pid_t pid = comm->shm->ranks[lr].pid;
    size_t done = 0;
    while (done < len) {
        ssize_t n = writing ? cma_write(pid, remote + done, local + done, len - done)
                            : cma_read(pid, local + done, remote + done, len - done);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return coll_shm_cma_error(comm, lr, len - done, writing);
        }
        done += (size_t)n;
    }
    return COLL_SUCCESS;
}

/* Does a copy belonging to bytes in all stream (COLL_COPY_NT_MIN; 0 = never)? */
static int streams(const coll_comm *comm, size_t bytes)
{
    size_t nt = comm->shm->copy_nt_min;
    return nt && bytes >= nt;
}

void coll_shm_copy(coll_comm *comm, void *dst, const void *src, size_t len)
{
    coll_shm_copy_out(comm, dst, src, len, len);
}

void coll_shm_copy_out(coll_comm *comm, void *dst, const void *src, size_t len, size_t total)
{
    if (streams(comm, total))
        coll_copy_nt(dst, src, len);
    else
        memcpy(dst, src, len);
}

void coll_shm_reduce_out(coll_comm *comm, void *out, const void *const *in, int k, size_t n, coll_dtype_t dt,
                         coll_op_t op, size_t total)
{
    if (streams(comm, total))
        coll_reduce_multi_nt(out, in, k, n, dt, op);
    else
        coll_reduce_multi(out, in, k, n, dt, op);
}

void coll_shm_reduce_out_dup(coll_comm *comm, void *out, void *dup, const void *const *in, int k, size_t n,
                             coll_dtype_t dt, coll_op_t op, size_t total)
{
    coll_reduce_multi_dup(out, dup, in, k, n, dt, op, streams(comm, total));
}

coll_status_t coll_shm_cma_copy(coll_comm *comm, int lr, const void *remote, void *dst, size_t len)
{
    return cma_xfer(comm, lr, (char *)(uintptr_t)remote, dst, len, 0);
}

coll_status_t coll_shm_cma_put(coll_comm *comm, int lr, void *remote, const void *src, size_t len)
{
    return cma_xfer(comm, lr, remote, (char *)(uintptr_t)src, len, 1);
}

coll_status_t coll_shm_cma_read(coll_comm *comm, int lr, int slot, size_t off, void *dst, size_t len)
{
    const char *remote = (const char *)(uintptr_t)comm->shm->ranks[lr].pub_addr[slot] + off;
    return coll_shm_cma_copy(comm, lr, remote, dst, len);
}

coll_status_t coll_shm_cma_write(coll_comm *comm, int lr, int slot, size_t off, const void *src, size_t len)
{
    char *remote = (char *)(uintptr_t)comm->shm->ranks[lr].pub_addr[slot] + off;
    return coll_shm_cma_put(comm, lr, remote, src, len);
}
