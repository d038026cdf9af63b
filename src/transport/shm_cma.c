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
#include <stddef.h>
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

/* Every local rank's pid, read once (each wrote its own before the barrier
 * just passed): CMA and liveness use these, never the segment's. */
static coll_status_t cma_pids(coll_comm *comm)
{
    struct coll_shm *s = comm->shm;
    for (int i = 0; i < s->nlocal; i++) {
        int32_t pid = s->ranks[i].pid;
        if (pid <= 0 || (i == s->me && pid != (int32_t)getpid()))
            return shm_corrupt(comm, i, "pid", (uint64_t)(uint32_t)pid, 0x7fffffff);
        s->pids[i] = pid;
    }
    return COLL_SUCCESS;
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
    COLL_CHECK(cma_pids(comm));
    int ok = coll_cfg_bool(COLL_CFG_CMA);
    for (int i = 0; ok && i < s->nlocal; i++) {
        if (i == s->me)
            continue;
        uint64_t w = 0, at = s->ranks[i].probe_addr, sink = s->ranks[i].probe_sink;
        /* the sink is the word after the probe word in the peer's struct coll_shm:
         * a write lands there or nowhere */
        if (sink != at + offsetof(struct coll_shm, probe_sink) - offsetof(struct coll_shm, probe_word))
            return shm_corrupt(comm, i, "probe_sink", sink, at);
        ssize_t n = cma_read(s->pids[i], &w, (const void *)(uintptr_t)at, sizeof w);
        if (n == (ssize_t)sizeof w && w == 0x636f6c6c636d6131ull)
            n = cma_write(s->pids[i], (void *)(uintptr_t)sink, &w, sizeof w);
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
    struct coll_shm *s = comm->shm;
    s->ranks[s->me].pub_addr[slot] = (uint64_t)(uintptr_t)ptr;
    s->ranks[s->me].pub_addr_tag[slot] = shm_tag(s, (uint64_t)(uintptr_t)ptr, (uint64_t)slot, 0);
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
    pid_t pid = comm->shm->pids[lr];
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

/* Local rank lr's published address under slot, when its tag matches: it
 * steers our process_vm_readv/writev into lr's memory. */
static coll_status_t pub_addr(coll_comm *comm, int lr, int slot, uint64_t *addr)
{
    const shm_rank_t *r = &comm->shm->ranks[lr];
    *addr = r->pub_addr[slot];
    if (r->pub_addr_tag[slot] != shm_tag(comm->shm, *addr, (uint64_t)slot, 0))
        return shm_corrupt(comm, lr, "pub_addr (its tag)", *addr, ~0ull);
    return COLL_SUCCESS;
}

coll_status_t coll_shm_cma_read(coll_comm *comm, int lr, int slot, size_t off, void *dst, size_t len)
{
    uint64_t a;
    COLL_CHECK(pub_addr(comm, lr, slot, &a));
    return coll_shm_cma_copy(comm, lr, (const char *)(uintptr_t)a + off, dst, len);
}

coll_status_t coll_shm_cma_write(coll_comm *comm, int lr, int slot, size_t off, const void *src, size_t len)
{
    uint64_t a;
    COLL_CHECK(pub_addr(comm, lr, slot, &a));
    return coll_shm_cma_put(comm, lr, (char *)(uintptr_t)a + off, src, len);
}
