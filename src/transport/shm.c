/*
 * shm.c - shared-memory transport for ranks of one host.
 *
 * One segment per communicator and host, created by local rank 0 with mode 0600,
 * sized with posix_fallocate (a too-small /dev/shm fails here with a clear
 * error, not later with SIGBUS), mapped by every local rank with MAP_POPULATE
 * (pages are faulted once, at init, never per call) and unlinked as soon as all
 * local ranks have mapped it, so a crash leaves nothing in /dev/shm.
 *
 * Point to point: one FIFO of nslots slots per directed pair. The producer
 * copies into a free slot and publishes it (release store of tail); the
 * consumer hands the slot to the sink (copy or reduce straight out of shared
 * memory) and frees it. Both ring the other's doorbell; a rank that has nothing
 * to do spins briefly, then sleeps on its own doorbell futex.
 */
#include "transport/shm_seg.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "coll/prim.h"
#include "transport/transport.h"

void shm_futex_wait(atomic_uint *addr, uint32_t val, int timeout_ms)
{
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, timeout_ms >= 0 ? &ts : NULL, NULL, 0);
}

void shm_futex_wake(atomic_uint *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
}

static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

/* Segment name: identical on every local rank, unique per id and host. */
static void shm_name(const coll_comm *comm, char *buf, size_t len)
{
    snprintf(buf, len, "/%scollbench-%016llx-h%d", coll_cfg_str(COLL_CFG_SHM_PREFIX),
             (unsigned long long)comm->id.nonce, comm->host);
}

static void layout(shm_hdr_t *h, int nlocal)
{
    size_t nslots = (size_t)coll_cfg_int(COLL_CFG_SHM_NSLOTS);
    if (nslots < 2)
        nslots = 2;
    if (nslots > 64)
        nslots = 64;
    size_t slot = align_up(coll_cfg_size(COLL_CFG_SHM_SLOT), 4096);
    if (slot < 4096)
        slot = 4096;
    /* keep all FIFOs together under 256 MiB however many local ranks */
    size_t pairs = (size_t)nlocal * (size_t)nlocal;
    while (slot > 4096 && pairs * nslots * slot > (256u << 20))
        slot /= 2;
    size_t stage = align_up(coll_cfg_size(COLL_CFG_BUFFSIZE), 4096);
    if (stage < 64 * 1024)
        stage = 64 * 1024;
    h->magic = SHM_MAGIC;
    h->nlocal = (uint32_t)nlocal;
    h->nslots = (uint32_t)nslots;
    h->slot_bytes = slot;
    h->stage_bytes = stage;
    h->off_ranks = align_up(sizeof(shm_hdr_t), 4096);
    h->off_fifos = align_up(h->off_ranks + (size_t)nlocal * sizeof(shm_rank_t), 4096);
    h->off_slots = align_up(h->off_fifos + pairs * sizeof(shm_fifo_t), 4096);
    h->off_stages = align_up(h->off_slots + pairs * nslots * slot, 4096);
    h->small_bytes = COLL_SHM_SMALL_MAX;
    h->off_small = h->off_stages + (size_t)nlocal * stage;
    h->total = h->off_small + (size_t)nlocal * 2 * h->small_bytes;
}

static void attach(struct coll_shm *s, void *map)
{
    s->hdr = map;
    s->ranks = (shm_rank_t *)((char *)map + s->hdr->off_ranks);
    s->fifos = (shm_fifo_t *)((char *)map + s->hdr->off_fifos);
    s->slots = (char *)map + s->hdr->off_slots;
    s->stages = (char *)map + s->hdr->off_stages;
    s->small = (char *)map + s->hdr->off_small;
    s->map_bytes = s->hdr->total;
}

static coll_status_t create_segment(coll_comm *comm, struct coll_shm *s)
{
    shm_hdr_t tmp;
    memset(&tmp, 0, sizeof tmp);
    layout(&tmp, comm->local_size);
    int fd = shm_open(s->name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_SHM, "shm_open(%s) failed", s->name);
    int err = posix_fallocate(fd, 0, (off_t)tmp.total);
    if (err) {
        shm_unlink(s->name);
        close(fd);
        errno = err;
        return coll_error_errno(err == ENOSPC ? COLL_ERR_NO_MEMORY : COLL_ERR_SYSTEM, COLL_SUB_SHM,
                                "cannot allocate %.1f MiB of shared memory for %d local ranks in "
                                "/dev/shm (segment %s; enlarge /dev/shm or lower COLL_BUFFSIZE=%zu)",
                                (double)tmp.total / 1048576.0, comm->local_size, s->name,
                                coll_cfg_size(COLL_CFG_BUFFSIZE));
    }
    void *map = mmap(NULL, tmp.total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        shm_unlink(s->name);
        return coll_error_errno(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "mmap of %s (%zu bytes) failed",
                                s->name, (size_t)tmp.total);
    }
    memcpy(map, &tmp, sizeof tmp);
    attach(s, map);
    for (int i = 0; i < comm->local_size; i++)
        for (int k = 0; k < COLL_SHM_PUB_SLOTS; k++)
            s->ranks[i].pub_region[k] = -1;
    COLL_INFO(COLL_SUB_SHM, "segment %s: %d local ranks, %u x %zu KiB slots per pair, %zu KiB "
              "stage per rank, %.1f MiB in all", s->name, comm->local_size, tmp.nslots,
              (size_t)tmp.slot_bytes >> 10, (size_t)tmp.stage_bytes >> 10, (double)tmp.total / 1048576.0);
    return COLL_SUCCESS;
}

static coll_status_t open_segment(struct coll_shm *s)
{
    int fd = shm_open(s->name, O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_SHM, "shm_open(%s) of local rank 0 failed", s->name);
    struct stat stt;
    if (fstat(fd, &stt) < 0 || (size_t)stt.st_size < sizeof(shm_hdr_t)) {
        close(fd);
        return coll_error(COLL_ERR_SYSTEM, COLL_SUB_SHM, "shared segment %s is truncated", s->name);
    }
    void *map = mmap(NULL, (size_t)stt.st_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return coll_error_errno(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "mmap of %s failed", s->name);
    if (((shm_hdr_t *)map)->magic != SHM_MAGIC || ((shm_hdr_t *)map)->total != (uint64_t)stt.st_size) {
        munmap(map, (size_t)stt.st_size);
        return coll_error(COLL_ERR_SYSTEM, COLL_SUB_SHM, "shared segment %s has a bad header", s->name);
    }
    attach(s, map);
    return COLL_SUCCESS;
}

coll_status_t coll_shm_setup(coll_comm *comm)
{
    if (comm->local_size <= 1 || coll_cfg_bool(COLL_CFG_SHM_DISABLE)) {
        /* keep the barrier count identical on every rank (hosts with one rank
         * and hosts with several go through the same bootstrap barriers) */
        int64_t *none = calloc((size_t)comm->nhosts, sizeof *none);
        if (!none)
            return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
        coll_status_t st = coll_bootstrap_allreduce_max(&comm->bs, none, comm->nhosts);
        if (st == COLL_SUCCESS)
            st = coll_bootstrap_allreduce_max(&comm->bs, none, comm->nhosts);
        free(none);
        COLL_CHECK(st);
        return coll_shm_cma_probe(comm);
    }
    struct coll_shm *s = calloc(1, sizeof *s);
    if (!s)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
    s->nlocal = comm->local_size;
    s->me = comm->local_rank;
    shm_name(comm, s->name, sizeof s->name);
    /* Phase 1: local rank 0 creates; phase 2: the others map; phase 3: unlink.
     * Failures are agreed on through the bootstrap (fail[host] = failing rank
     * + 1; nhosts values per round) so that every rank of a host stops together. */
    coll_status_t st = COLL_SUCCESS, st2;
    int64_t *fail = calloc((size_t)comm->nhosts, sizeof *fail);
    if (!fail) {
        free(s);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
    }
    if (s->me == 0)
        st = create_segment(comm, s);
    if (st != COLL_SUCCESS)
        fail[comm->host] = comm->rank + 1;
    st2 = coll_bootstrap_allreduce_max(&comm->bs, fail, comm->nhosts);
    if (st2 != COLL_SUCCESS) {
        if (s->me == 0 && s->hdr)
            shm_unlink(s->name);
        st = st2;
        goto fail;
    }
    if (st == COLL_SUCCESS && fail[comm->host] > 0)
        st = coll_error(COLL_ERR_SYSTEM, COLL_SUB_SHM, "local rank 0 (rank %d) could not create the "
                        "shared-memory segment (see its error)", comm->local_ranks[0]);
    else if (st == COLL_SUCCESS && s->me != 0) {
        st = open_segment(s);
        if (st != COLL_SUCCESS)
            fail[comm->host] = comm->rank + 1;
    }
    int64_t failed_before = fail[comm->host];
    st2 = coll_bootstrap_allreduce_max(&comm->bs, fail, comm->nhosts);
    if (s->me == 0 && s->hdr)
        shm_unlink(s->name);
    if (st == COLL_SUCCESS && st2 != COLL_SUCCESS)
        st = st2;
    if (st == COLL_SUCCESS && failed_before == 0 && fail[comm->host] > 0)
        st = coll_error(COLL_ERR_SYSTEM, COLL_SUB_SHM,
                        "local rank(s) could not map the shared-memory segment %s (rank %lld among them)",
                        s->name, (long long)fail[comm->host] - 1);
    if (st != COLL_SUCCESS)
        goto fail;
    free(fail);
    fail = NULL;
    s->ranks[s->me].pid = (int32_t)getpid();
    comm->shm = s;
    st = coll_shm_cma_probe(comm);
    if (st != COLL_SUCCESS) {
        comm->shm = NULL;
        goto fail;
    }
    for (int i = 0; i < comm->local_size; i++)
        if (comm->local_ranks[i] != comm->rank)
            comm->tp[comm->local_ranks[i]] = &coll_shm_ops;
    return COLL_SUCCESS;
fail:
    if (s->hdr)
        munmap(s->hdr, s->map_bytes);
    free(s);
    free(fail);
    return st;
}

void coll_shm_teardown(coll_comm *comm)
{
    struct coll_shm *s = comm->shm;
    if (!s)
        return;
    munmap(s->hdr, s->map_bytes);
    free(s->cma_posted);
    free(s->cma_tmp);
    free(s);
    comm->shm = NULL;
}

/* ---------------------------------------------------------------- doorbells */

uint32_t coll_shm_doorbell_read(coll_comm *comm)
{
    return comm->shm ? atomic_load(&comm->shm->ranks[comm->shm->me].doorbell) : 0;
}

void coll_shm_ring(coll_comm *comm, int lr)
{
    shm_rank_t *r = &comm->shm->ranks[lr];
    atomic_fetch_add(&r->doorbell, 1);
    if (atomic_load(&r->sleeping))
        shm_futex_wake(&r->doorbell);
}

void coll_shm_doorbell_wait(coll_comm *comm, uint32_t seen, int timeout_ms)
{
    shm_rank_t *r = &comm->shm->ranks[comm->shm->me];
    atomic_store(&r->sleeping, 1);
    if (atomic_load(&r->doorbell) == seen && !atomic_load(&comm->shm->hdr->abort_flag))
        shm_futex_wait(&r->doorbell, seen, timeout_ms);
    atomic_store(&r->sleeping, 0);
}

/* ---------------------------------------------------------------- services */

void *coll_shm_stage(coll_comm *comm, int lr)
{
    return comm->shm->stages + (size_t)lr * comm->shm->hdr->stage_bytes;
}

size_t coll_shm_stage_bytes(const coll_comm *comm)
{
    return comm->shm ? comm->shm->hdr->stage_bytes : 0;
}

/* Each rank publishes how many barriers it has entered; a barrier is complete
 * when every local rank's count reaches mine. The rank that completes it rings
 * the others. Knowing who has not arrived lets a timeout name the culprits. */
static int barrier_missing(struct coll_shm *s, uint32_t target, int *missing)
{
    int n = 0;
    for (int i = 0; i < s->nlocal; i++)
        if ((int32_t)(atomic_load(&s->ranks[i].bar_epoch) - target) < 0)
            missing[n++] = i;
    return n;
}

coll_status_t coll_shm_barrier(coll_comm *comm)
{
    struct coll_shm *s = comm->shm;
    if (!s || s->nlocal <= 1)
        return COLL_SUCCESS;
    uint32_t target = ++s->bar_epoch;
    atomic_store(&s->ranks[s->me].bar_epoch, target);
    int missing[1024], who[1024];
    if (barrier_missing(s, target, missing) == 0) {
        for (int i = 0; i < s->nlocal; i++)
            if (i != s->me)
                coll_shm_ring(comm, i);
        return COLL_SUCCESS;
    }
    coll_waiter_t w;
    coll_waiter_init(&w, comm);
    for (;;) {
        uint32_t seen = coll_shm_doorbell_read(comm);
        int n = barrier_missing(s, target, missing);
        if (n == 0)
            return COLL_SUCCESS;
        for (int i = 0; i < n; i++)
            who[i] = comm->local_ranks[missing[i]];
        coll_status_t st = coll_waiter_idle(&w, comm, seen, who, n, NULL, 0);
        if (st != COLL_SUCCESS)
            return st;
    }
}

/* ------------------------------------------------------ small exchanges */

static char *small_slot(struct coll_shm *s, int lr, uint64_t seq)
{
    return s->small + ((size_t)lr * 2 + (size_t)(seq & 1)) * s->hdr->small_bytes;
}

static int small_all_at_least(struct coll_shm *s, size_t field_off, uint64_t v, int *missing)
{
    int n = 0;
    for (int i = 0; i < s->nlocal; i++) {
        atomic_ulong *f = (atomic_ulong *)((char *)&s->ranks[i] + field_off);
        if (atomic_load_explicit(f, memory_order_acquire) < v)
            missing[n++] = i;
    }
    return n;
}

static coll_status_t small_wait(coll_comm *comm, size_t field_off, uint64_t v)
{
    struct coll_shm *s = comm->shm;
    int missing[1024], who[1024];
    if (small_all_at_least(s, field_off, v, missing) == 0)
        return COLL_SUCCESS;
    coll_waiter_t w;
    coll_waiter_init(&w, comm);
    for (;;) {
        uint32_t seen = coll_shm_doorbell_read(comm);
        int n = small_all_at_least(s, field_off, v, missing);
        if (n == 0)
            return COLL_SUCCESS;
        for (int i = 0; i < n; i++)
            who[i] = comm->local_ranks[missing[i]];
        COLL_CHECK(coll_waiter_idle(&w, comm, seen, who, n, NULL, 0));
    }
}

coll_status_t coll_shm_small_post(coll_comm *comm, const void *src, size_t len, uint64_t *seq)
{
    struct coll_shm *s = comm->shm;
    if (len > s->hdr->small_bytes)
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_SHM, "small exchange of %zu bytes (max %zu)", len,
                          (size_t)s->hdr->small_bytes);
    uint64_t q = ++s->small_seq;
    /* the slot was last used by exchange q-2: every rank must be done reading it */
    if (q > 2)
        COLL_CHECK(small_wait(comm, offsetof(shm_rank_t, small_done), q - 2));
    if (len)
        memcpy(small_slot(s, s->me, q), src, len);
    atomic_store_explicit(&s->ranks[s->me].small_arrive, q, memory_order_release);
    int missing[1024];
    if (small_all_at_least(s, offsetof(shm_rank_t, small_arrive), q, missing) == 0)
        for (int i = 0; i < s->nlocal; i++)
            if (i != s->me)
                coll_shm_ring(comm, i);
    *seq = q;
    return COLL_SUCCESS;
}

coll_status_t coll_shm_small_wait_all(coll_comm *comm, uint64_t seq)
{
    return small_wait(comm, offsetof(shm_rank_t, small_arrive), seq);
}

const void *coll_shm_small_peer(coll_comm *comm, int lr, uint64_t seq)
{
    return small_slot(comm->shm, lr, seq);
}

void coll_shm_small_done(coll_comm *comm, uint64_t seq)
{
    struct coll_shm *s = comm->shm;
    atomic_store_explicit(&s->ranks[s->me].small_done, seq, memory_order_release);
    for (int i = 0; i < s->nlocal; i++)
        if (i != s->me)   /* unconditional: a peer may be about to sleep waiting for this */
            coll_shm_ring(comm, i);
}

size_t coll_shm_small_max(const coll_comm *comm)
{
    return comm->shm ? comm->shm->hdr->small_bytes : 0;
}

void coll_shm_publish(coll_comm *comm, int slot, const void *ptr)
{
    shm_rank_t *r = &comm->shm->ranks[comm->shm->me];
    r->pub_region[slot] = -1;
    for (coll_mem_region_t *m = comm->regions; m; m = m->next)
        if ((const char *)ptr >= (char *)m->base && (const char *)ptr < (char *)m->base + m->bytes) {
            r->pub_region[slot] = m->index;
            r->pub_off[slot] = (uint64_t)((const char *)ptr - (char *)m->base);
            return;
        }
}

void *coll_shm_peer_ptr(coll_comm *comm, int lr, int slot)
{
    shm_rank_t *r = &comm->shm->ranks[lr];
    int k = r->pub_region[slot];
    if (k < 0)
        return NULL;
    for (coll_mem_region_t *m = comm->regions; m; m = m->next)
        if (m->index == k && m->peer_base[lr])
            return (char *)m->peer_base[lr] + r->pub_off[slot];
    return NULL;
}

int coll_shm_is_registered(coll_comm *comm, const void *ptr, size_t len)
{
    for (coll_mem_region_t *m = comm->regions; m; m = m->next)
        if ((const char *)ptr >= (char *)m->base && (const char *)ptr + len <= (char *)m->base + m->bytes)
            return 1;
    return 0;
}

static int pid_dead(pid_t pid)
{
    if (pid <= 0)
        return 0;
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return 1;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

int coll_shm_dead_peer(coll_comm *comm, const int *ranks, int n)
{
    struct coll_shm *s = comm->shm;
    if (!s)
        return -1;
    for (int k = 0; k < n; k++) {
        int r = ranks[k];
        if (r < 0 || r >= comm->nranks || r == comm->rank || comm->rank_host[r] != comm->host)
            continue;
        if (pid_dead(s->ranks[comm->rank_local[r]].pid))
            return r;
    }
    return -1;
}

void coll_shm_abort(coll_comm *comm, const char *why)
{
    struct coll_shm *s = comm->shm;
    if (!s)
        return;
    unsigned expect = 0;
    /* claim with a placeholder, write the reason, then publish our rank */
    if (atomic_compare_exchange_strong(&s->hdr->abort_flag, &expect, 0x80000000u)) {
        snprintf(s->hdr->abort_msg, sizeof s->hdr->abort_msg, "%s", why ? why : "");
        atomic_store(&s->hdr->abort_flag, (unsigned)s->me + 1);
    }
    for (int i = 0; i < s->nlocal; i++)
        if (i != s->me)
            coll_shm_ring(comm, i);
}

int coll_shm_aborted_by(coll_comm *comm)
{
    struct coll_shm *s = comm->shm;
    if (!s)
        return -1;
    unsigned a = atomic_load(&s->hdr->abort_flag);
    return a && a != 0x80000000u ? comm->local_ranks[a - 1] : -1;
}

const char *coll_shm_abort_reason(coll_comm *comm)
{
    return comm->shm && coll_shm_aborted_by(comm) >= 0 ? comm->shm->hdr->abort_msg : "";
}

/* ---------------------------------------------------------------- p2p FIFOs */

/* Claim pieces of a shared CMA message until none is left: the receiver reads
 * them out of the sender, the sender (writer) writes them into the receiver.
 * A writer that lands the last byte wakes the receiver, which frees the slot. */
static coll_status_t shm_cma_claim(coll_comm *comm, int lr, shm_cma_desc_t *d, int writer)
{
    const uint64_t len = d->len, piece = d->piece;
    char *src = (char *)(uintptr_t)d->addr, *dst = (char *)(uintptr_t)d->dst;
    for (;;) {
        uint64_t off = atomic_fetch_add(&d->next, piece);
        if (off >= len)
            return COLL_SUCCESS;
        size_t k = (size_t)(len - off < piece ? len - off : piece);
        if (writer)
            COLL_CHECK(coll_shm_cma_put(comm, lr, dst + off, src + off, k));
        else
            COLL_CHECK(coll_shm_cma_copy(comm, lr, src + off, dst + off, k));
        if (atomic_fetch_add(&d->copied, k) + k == len && writer)
            coll_shm_ring(comm, lr);
    }
}

/* Large message by CMA: post one descriptor slot; the send completes when the
 * receiver frees it (all bytes copied straight out of buf, partly by us when
 * the receiver shares the copy). */
static coll_status_t shm_send_cma(coll_comm *comm, int to, const void *buf, size_t len, size_t *done)
{
    struct coll_shm *s = comm->shm;
    shm_fifo_t *f = shm_fifo(s, s->me, to);
    uint64_t posted = s->cma_posted[to];
    if (!posted) {
        uint64_t tail = atomic_load_explicit(&f->tail, memory_order_relaxed);
        uint64_t head = atomic_load_explicit(&f->head, memory_order_acquire);
        if (tail - head >= s->hdr->nslots)
            return COLL_SUCCESS;                       /* FIFO full: try later */
        shm_cma_desc_t *d = (shm_cma_desc_t *)shm_slot(s, s->me, to, tail);
        d->addr = (uint64_t)(uintptr_t)buf;
        d->len = len;
        d->piece = s->cma_piece;
        d->dst = 0;
        atomic_store_explicit(&d->state, SHM_CMA_POSTED, memory_order_relaxed);
        atomic_store_explicit(&d->next, 0, memory_order_relaxed);
        atomic_store_explicit(&d->copied, 0, memory_order_relaxed);
        f->sizes[tail % s->hdr->nslots] = SHM_SLOT_CMA;
        atomic_store_explicit(&f->tail, tail + 1, memory_order_release);
        s->cma_posted[to] = tail + 1;
        coll_shm_ring(comm, to);
        return COLL_SUCCESS;
    }
    if (atomic_load_explicit(&f->head, memory_order_acquire) < posted) {
        shm_cma_desc_t *d = (shm_cma_desc_t *)shm_slot(s, s->me, to, posted - 1);
        /* help only when this rank has no receive of its own to work on: with
         * both directions busy, each side copying its own message is faster */
        if (comm->recvs_pending || atomic_load_explicit(&d->state, memory_order_acquire) != SHM_CMA_SHARED)
            return COLL_SUCCESS;
        COLL_CHECK(shm_cma_claim(comm, to, d, 1));
        if (atomic_load_explicit(&f->head, memory_order_acquire) < posted)
            return COLL_SUCCESS;
    }
    s->cma_posted[to] = 0;
    *done = len;
    return COLL_SUCCESS;
}

static coll_status_t shm_send(coll_comm *comm, int peer, const void *buf, size_t len, size_t *done)
{
    struct coll_shm *s = comm->shm;
    int to = comm->rank_local[peer];
    if (s->cma_ok && (*done == 0 || s->cma_posted[to]) && len >= s->cma_min)
        return shm_send_cma(comm, to, buf, len, done);
    shm_fifo_t *f = shm_fifo(s, s->me, to);
    uint64_t tail = atomic_load_explicit(&f->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&f->head, memory_order_acquire);
    uint32_t nslots = s->hdr->nslots;
    size_t slot = s->hdr->slot_bytes;
    int moved = 0;
    while (*done < len && tail - head < nslots) {
        size_t n = len - *done < slot ? len - *done : slot;
        memcpy(shm_slot(s, s->me, to, tail), (const char *)buf + *done, n);
        f->sizes[tail % nslots] = (uint32_t)n;
        tail++;
        atomic_store_explicit(&f->tail, tail, memory_order_release);
        *done += n;
        moved = 1;
        if (*done < len && tail - head >= nslots)
            head = atomic_load_explicit(&f->head, memory_order_acquire);
    }
    if (moved)
        coll_shm_ring(comm, to);
    return COLL_SUCCESS;
}

/* Copy a CMA-posted message out of the sender alone: straight into the
 * destination for a copying sink, through a cache-sized scratch piece for a
 * reducing one (comm->scratch belongs to algorithms). */
static coll_status_t shm_cma_consume(coll_comm *comm, int from, const shm_cma_desc_t *d, const coll_sink_t *sink)
{
    const char *remote = (const char *)(uintptr_t)d->addr;
    size_t len = (size_t)d->len;
    if (!sink->fn)
        return coll_shm_cma_copy(comm, from, remote, sink->dst, len);
    size_t piece = SHM_CMA_TMP / sink->esize * sink->esize;
    for (size_t off = 0; off < len; off += piece) {
        size_t k = len - off < piece ? len - off : piece;
        COLL_CHECK(coll_shm_cma_copy(comm, from, remote + off, comm->shm->cma_tmp, k));
        coll_sink_apply(sink, off, comm->shm->cma_tmp, k);
    }
    return COLL_SUCCESS;
}

/* Receive the CMA message at the head of the FIFO from local rank `from`.
 * Returns 1 when all of it has landed, 0 while the sender's pieces are in
 * flight (it wakes us when they land). */
static int shm_cma_recv(coll_comm *comm, int from, shm_cma_desc_t *d, const coll_sink_t *sink, coll_status_t *st)
{
    struct coll_shm *s = comm->shm;
    unsigned state = atomic_load_explicit(&d->state, memory_order_relaxed);
    if (state == SHM_CMA_POSTED) {
        if (sink->fn || !s->cma_coop || d->len < 2 * d->piece) {   /* alone, at once: the sender never helps */
            *st = shm_cma_consume(comm, from, d, sink);
            return *st == COLL_SUCCESS;
        }
        d->dst = (uint64_t)(uintptr_t)sink->dst;
        atomic_store_explicit(&d->state, SHM_CMA_SHARED, memory_order_release);
        coll_shm_ring(comm, from);
    }
    *st = shm_cma_claim(comm, from, d, 0);
    return *st == COLL_SUCCESS && atomic_load_explicit(&d->copied, memory_order_acquire) >= d->len;
}

static coll_status_t shm_recv(coll_comm *comm, int peer, const coll_sink_t *sink, size_t len,
                              size_t *done)
{
    struct coll_shm *s = comm->shm;
    int from = comm->rank_local[peer];
    shm_fifo_t *f = shm_fifo(s, from, s->me);
    uint64_t head = atomic_load_explicit(&f->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&f->tail, memory_order_acquire);
    uint32_t nslots = s->hdr->nslots;
    int moved = 0;
    while (*done < len && head != tail) {
        size_t n = f->sizes[head % nslots];
        if (n == SHM_SLOT_CMA) {
            shm_cma_desc_t *d = (shm_cma_desc_t *)shm_slot(s, from, s->me, head);
            if (*done != 0 || d->len != len - *done)
                return coll_error(COLL_ERR_INTERNAL, COLL_SUB_SHM,
                                  "message from rank %d has %llu bytes, %zu expected: ranks called different "
                                  "collectives or counts", peer, (unsigned long long)d->len, len - *done);
            coll_status_t st;
            if (!shm_cma_recv(comm, from, d, sink, &st)) {
                if (st != COLL_SUCCESS)
                    return st;
                break;                 /* the sender's pieces are still landing */
            }
            n = (size_t)d->len;
        } else if (n > len - *done) {
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_SHM,
                              "message from rank %d longer than expected (%zu > %zu bytes left): "
                              "ranks called different collectives or counts", peer, n, len - *done);
        } else {
            coll_sink_apply(sink, *done, shm_slot(s, from, s->me, head), n);
        }
        head++;
        atomic_store_explicit(&f->head, head, memory_order_release);
        *done += n;
        moved = 1;
        if (*done < len && head == tail)
            tail = atomic_load_explicit(&f->tail, memory_order_acquire);
    }
    if (moved)
        coll_shm_ring(comm, from);
    return COLL_SUCCESS;
}

static int shm_pollfds(coll_comm *comm, int peer, int for_send, struct pollfd *fds, int max)
{
    return 0;
}

const coll_transport_ops_t coll_shm_ops = {
    .name = "shm",
    .send = shm_send,
    .recv = shm_recv,
    .pollfds = shm_pollfds,
};
