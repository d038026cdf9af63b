/*
 * shm.c - shared-memory transport for ranks of one host.
 *
 * One segment per communicator and host (layout: shm_seg.h), O(L) in the L
 * local ranks, created by local rank 0 with mode 0600. Before creating it,
 * local rank 0 compares its size with the free space of /dev/shm (statvfs,
 * 1/8 kept free) and shrinks staging, then slots, with one warning when the
 * configured sizes do not fit (shm_size.c); when not even the minimum fits it
 * fails at once naming the sizes and the fix, leaving nothing in /dev/shm.
 * It maps it 2 MiB-aligned with MADV_HUGEPAGE and faults in every page
 * (shm_huge.c: 2 MiB pages where /dev/shm allows them; every page allocated,
 * no SIGBUS later). Every local rank maps it the same way. A segment up to
 * SHM_POPULATE_ALL (8 ranks at the defaults: 84 MiB) is then prepared for
 * the calls: each rank faults in and touches, through its own mapping, the
 * pages that calls walk over many calls (control, the rotating stage windows
 * and small rings of every rank, its own outboxes: prefault_used), so that
 * call 1 costs what call 1,000 does; a larger one only where this rank works
 * (control, its outboxes, stage and small slots), peers' pages fault in once,
 * on first use, so page tables do not grow as L^2 per host. The segment is
 * unlinked as soon as all local ranks have mapped it, so a crash leaves
 * nothing in /dev/shm.
 *
 * Point to point: outboxes lent on first use (shm_fifo.c). A rank that has
 * nothing to do spins briefly, then sleeps on its own doorbell futex.
 */
#include "transport/shm_seg.h"
#include "transport/shm_huge.h"
#include "topo/topo.h"

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
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/copy.h"
#include "core/log.h"
#include "transport/shm_size.h"
#include "transport/shm.h"
#include "transport/transport.h"
#include "transport/wait.h"

void shm_futex_wait(atomic_uint *addr, uint32_t val, int timeout_ms)
{
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, timeout_ms >= 0 ? &ts : NULL, NULL, 0);
}

void shm_futex_wake(atomic_uint *addr) { syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, 1 << 30, NULL, NULL, 0); }

/* Segment name: identical on every local rank, unique per id and host. */
static void shm_name(const coll_comm *comm, char *buf, size_t len)
{
    snprintf(buf, len, "/%scollbench-%016llx-h%d", coll_cfg_str(COLL_CFG_SHM_PREFIX),
             (unsigned long long)comm->id->nonce, comm->host);
}

/* Point the private view at a mapped segment, whose header h (a private
 * snapshot) passed shm_hdr_check, and allocate the private, O(L) per rank,
 * arrays of the outboxes, waits and checks. */
static coll_status_t attach(struct coll_shm *s, void *map, const shm_hdr_t *h)
{
    s->hdr = map;
    shm_geom_load(s, h);
    s->ranks = (shm_rank_t *)((char *)map + h->off_ranks);
    s->fifos = (shm_fifo_t *)((char *)map + h->off_fifos);
    s->slots = (char *)map + h->off_slots;
    s->stages = (char *)map + h->off_stages;
    s->small = (char *)map + h->off_small;
    s->map_bytes = h->total;
    size_t n = (size_t)s->nlocal;
    s->out_of = malloc(n * sizeof *s->out_of);
    s->in_hint = calloc(n, sizeof *s->in_hint);
    s->out_used = calloc(h->nout, sizeof *s->out_used);
    s->out_own = calloc(h->nout, sizeof *s->out_own);
    s->pids = calloc(n, sizeof *s->pids);
    s->small_at = calloc(n, sizeof *s->small_at);
    s->missing = malloc(n * sizeof *s->missing);
    s->who = malloc(n * sizeof *s->who);
    if (!s->out_of || !s->in_hint || !s->out_used || !s->out_own || !s->pids || !s->small_at || !s->missing || !s->who)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory (%d local ranks)", s->nlocal);
    for (size_t i = 0; i < n; i++)
        s->out_of[i] = -1;
    return COLL_SUCCESS;
}

static void free_private(struct coll_shm *s)
{
    free(s->out_of);
    free(s->in_hint);
    free(s->out_used);
    free(s->missing);
    free(s->who);
    free(s->out_own);
    free(s->pids);
    free(s->small_at);
    free(s->cma_posted);
    free(s->cma_tmp);
}

/* Fault in [off, off + len) of the mapping: every page mapped in this process. */
static void populate(struct coll_shm *s, size_t off, size_t len)
{
    char *p = (char *)s->hdr + off;
#ifdef MADV_POPULATE_WRITE
    if (len && madvise(p, len, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    coll_touch_pages(p, len); /* older kernels: one read per page faults them in */
}

/* Fault in [off, off + len) (a large segment: only what this rank uses), then
 * touch every page so that its first use by a call costs nothing more
 * (coll_touch_pages: a shadow-paging hypervisor traps once per page and
 * process even after the fault). */
static void prefault(struct coll_shm *s, size_t off, size_t len)
{
    populate(s, off, len);
    coll_touch_pages((char *)s->hdr + off, len);
}

static void prefault_mine(struct coll_shm *s, const shm_hdr_t *h)
{
    size_t box = (size_t)h->nout * h->nslots * h->slot_bytes;
    prefault(s, 0, h->off_slots); /* header, rank and outbox control */
    prefault(s, h->off_slots + (size_t)s->me * box, box);
    prefault(s, h->off_stages + (size_t)s->me * h->stage_bytes, h->stage_bytes);
    prefault(s, h->off_small + (size_t)s->me * h->small_ring, h->small_ring);
}

/* A segment up to SHM_POPULATE_ALL: faulted in whole (every page mapped in
 * this process, as since the first version: ~0.4 us a page), and touched
 * where calls walk over many calls, in every rank's part (the direct
 * algorithms read the peers' stages and small rings, p2p their outboxes): the
 * control area, the head (SLOT_HEAD bytes) of every slot of every outbox, the first span bytes of each half of every stage (the
 * rotating windows, coll_stage_rot) and every small ring. Touched here, call
 * 1 of a small size costs what call 1,000 does instead of each call walking
 * to fresh pages for hundreds of calls. The rest (the stages past the windows,
 * the slots past their heads) is used whole by the first call that needs it;
 * with COLL_SHM_PREFAULT_ALL=1 it is touched here too. Cost of the touch,
 * ~5 us a page on a shadow-paging VM (~0.05 us elsewhere): about L x (2 span +
 * small ring) per rank, 8 x 1.5 MiB at 8 ranks (docs/performance.md, "First use"). */
#define SLOT_HEAD (8 * 1024)
static void prefault_used(struct coll_shm *s, const shm_hdr_t *h)
{
    char *base = (char *)s->hdr;
    size_t half = h->stage_use / 2, span = s->touch_span < half ? s->touch_span : half, bytes = 0;
    size_t box = (size_t)h->nout * h->nslots * h->slot_bytes;
    size_t head = h->slot_bytes < SLOT_HEAD ? h->slot_bytes : SLOT_HEAD;
    int all = coll_cfg_bool(COLL_CFG_SHM_PREFAULT_ALL);
    double t0 = coll_now();
    populate(s, 0, s->map_bytes);
    coll_touch_pages(base, h->off_slots); /* header, rank and outbox control */
    for (int i = 0; i < s->nlocal; i++) {
        size_t st = h->off_stages + (size_t)i * h->stage_bytes, ob = h->off_slots + (size_t)i * box;
        if (all)
            coll_touch_pages(base + ob, box);
        else
            for (size_t k = 0; k < (size_t)h->nout * h->nslots; k++)
                coll_touch_pages(base + ob + k * h->slot_bytes, head);
        coll_touch_pages(base + st, all ? h->stage_use : span);
        if (!all)
            coll_touch_pages(base + st + half, span);
        coll_touch_pages(base + h->off_small + (size_t)i * h->small_ring, h->small_ring);
        bytes += (all ? box : (size_t)h->nout * h->nslots * head) + (all ? h->stage_use : 2 * span) + h->small_ring;
    }
    COLL_INFO(COLL_SUB_SHM, "init touched %.1f MiB of the segment in %.1f ms (%s)",
              (double)(bytes + h->off_slots) / 1048576.0, (coll_now() - t0) * 1e3,
              all ? "all that calls use: COLL_SHM_PREFAULT_ALL" : "rotating windows, small rings, slot heads");
}

/* Bytes free in /dev/shm for us, or 0 when unknown. */
static uint64_t devshm_free(void)
{
    struct statvfs v;
    if (statvfs("/dev/shm", &v) != 0)
        return 0;
    return (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
}

/* The sizes to create: the configured ones, shrunk (one warning) when they do
 * not fit the free space of /dev/shm; an error when not even the minimum does. */
static coll_status_t choose_sizes(coll_comm *comm, shm_sizes_t *z)
{
    int L = comm->local_size; /* <= COLL_MAX_LOCAL: checked at init (topo.h) */
    *z = shm_sizes_config(L, coll_cfg_size(COLL_CFG_BUFFSIZE), coll_cfg_size(COLL_CFG_SHM_SLOT),
                          coll_cfg_int(COLL_CFG_SHM_NSLOTS), coll_cfg_size(COLL_CFG_STAGE_RING));
    uint64_t avail = devshm_free();
    if (avail == 0)
        return COLL_SUCCESS; /* unknown: posix_fallocate will tell */
    const double MiB = 1048576.0;
    uint64_t want = shm_layout_total(L, z);
    shm_fit_t fit = shm_fit(L, avail, z);
    uint64_t got = shm_layout_total(L, z);
    if (fit == SHM_FIT_SHRUNK)
        COLL_WARN(COLL_SUB_SHM,
                  "shm: /dev/shm has %.0f MiB free, the segment for %d local ranks needs %.1f MiB "
                  "at the configured sizes: shrinking to %.1f MiB (staging %llu KiB per rank, slots %llu KiB; "
                  "set COLL_BUFFSIZE / COLL_SHM_SLOT or enlarge /dev/shm)",
                  (double)avail / MiB, L, (double)want / MiB, (double)got / MiB, (unsigned long long)z->stage >> 10,
                  (unsigned long long)z->slot >> 10);
    if (fit == SHM_FIT_NONE) {
        uint64_t need = want + want / 7 > want + (1u << 20) ? want + want / 7 : want + (1u << 20);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM,
                          "cannot allocate %.1f MiB of shared memory for %d local ranks in /dev/shm (the "
                          "minimum: staging %llu KiB per rank, %u x %llu KiB slots in %u outboxes per rank; "
                          "%.1f MiB at the configured sizes): %.1f MiB free, of which %.1f MiB stay free for "
                          "others; enlarge /dev/shm (docker run --shm-size=%lluM, or mount -o remount,size=%lluM "
                          "/dev/shm) or run fewer ranks per host",
                          (double)got / MiB, L, (unsigned long long)z->stage >> 10, z->nslots,
                          (unsigned long long)z->slot >> 10, z->nout, (double)want / MiB, (double)avail / MiB,
                          (double)shm_headroom(avail) / MiB, (unsigned long long)(need >> 20) + 1,
                          (unsigned long long)(need >> 20) + 1);
    }
    return COLL_SUCCESS;
}

static coll_status_t create_segment(coll_comm *comm, struct coll_shm *s)
{
    shm_sizes_t z;
    COLL_CHECK(choose_sizes(comm, &z));
    static _Thread_local shm_hdr_t tmp; /* not on the stack: see shm_layout_total */
    memset(&tmp, 0, sizeof tmp);
    shm_layout(&tmp, comm->local_size, &z);
    /* decided once, here, so every local rank chunks alike; a COLL_BUFFSIZE that is set is used whole */
    tmp.stage_use = coll_cfg_is_set(COLL_CFG_BUFFSIZE)
        ? tmp.stage_bytes
        : shm_stage_use(tmp.stage_bytes, comm->local_size, coll_llc_bytes());
    int fd = shm_open(s->name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_SHM, "shm_open(%s) failed", s->name);
    void *map = shm_huge_create(fd, tmp.total); /* every page allocated here: no SIGBUS later */
    int err = errno;
    close(fd);
    if (map == MAP_FAILED) {
        shm_unlink(s->name);
        errno = err;
        int full = err == ENOSPC || err == ENOMEM || err == EFAULT;
        return coll_error_errno(full ? COLL_ERR_NO_MEMORY : COLL_ERR_SYSTEM, COLL_SUB_SHM,
                                "cannot allocate %.1f MiB of shared memory for %d local ranks in "
                                "/dev/shm (segment %s; enlarge /dev/shm or lower COLL_BUFFSIZE=%zu)",
                                (double)tmp.total / 1048576.0, comm->local_size, s->name,
                                coll_cfg_size(COLL_CFG_BUFFSIZE));
    }
    int whole = tmp.total <= SHM_POPULATE_ALL;
    memcpy(map, &tmp, sizeof tmp);
    coll_status_t st = attach(s, map, &tmp);
    if (st != COLL_SUCCESS) {
        shm_unlink(s->name);
        return st;
    }
    for (int i = 0; i < comm->local_size; i++)
        for (int k = 0; k < COLL_SHM_PUB_SLOTS; k++)
            s->ranks[i].pub_region[k] = -1;
    if (whole) /* populated by shm_huge_create; now touched through this mapping */
        prefault_used(s, &tmp);
    else
        prefault_mine(s, &tmp);
    COLL_INFO(COLL_SUB_SHM,
              "segment %s: %d local ranks, %u outboxes per rank of %u x %zu KiB slots, %zu KiB "
              "stage per rank (%zu KiB of it used), %.1f MiB in all (%s)",
              s->name, comm->local_size, tmp.nout, tmp.nslots, (size_t)tmp.slot_bytes >> 10,
              (size_t)tmp.stage_bytes >> 10, (size_t)tmp.stage_use >> 10, (double)tmp.total / 1048576.0,
              whole ? "prefaulted by every rank" : "each rank prefaults its own part");
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
    int whole = (uint64_t)stt.st_size <= SHM_POPULATE_ALL;
    void *map = shm_huge_map(fd, (size_t)stt.st_size);
    close(fd);
    if (map == MAP_FAILED)
        return coll_error_errno(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "mmap of %s failed", s->name);
    static _Thread_local shm_hdr_t h; /* a snapshot, checked, then used: not on the stack (see create_segment) */
    memcpy(&h, map, sizeof h);
    const char *bad = shm_hdr_check(&h, (uint32_t)s->nlocal, (uint64_t)stt.st_size);
    if (bad) {
        munmap(map, (size_t)stt.st_size);
        return coll_error(COLL_ERR_SYSTEM, COLL_SUB_SHM,
                          "shared segment %s has a bad header: %s does not match the layout for %d local ranks "
                          "and %llu bytes (another version of collbench, or memory overwritten)",
                          s->name, bad, s->nlocal, (unsigned long long)stt.st_size);
    }
    s->map_bytes = (size_t)stt.st_size;
    COLL_CHECK(attach(s, map, &h));
    if (whole)
        prefault_used(s, &h);
    else
        prefault_mine(s, &h);
    return COLL_SUCCESS;
}

/* No segment (one local rank, or COLL_SHM_DISABLE): keep the barrier count
 * identical on every rank (hosts with one rank and hosts with several go
 * through the same bootstrap rounds as map_segment). */
static coll_status_t setup_without_segment(coll_comm *comm)
{
    int64_t *none = calloc((size_t)comm->nhosts, sizeof *none);
    if (!none)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
    coll_status_t st = coll_bootstrap_allreduce_max(comm->bs, none, comm->nhosts);
    if (st == COLL_SUCCESS)
        st = coll_bootstrap_allreduce_max(comm->bs, none, comm->nhosts);
    free(none);
    COLL_CHECK(st);
    return coll_shm_cma_probe(comm);
}

/* Phase 1: local rank 0 creates; phase 2: the others map; phase 3: unlink.
 * Failures are agreed on through the bootstrap (fail[host] = failing rank
 * + 1; nhosts values per round) so that every rank of a host stops together. */
static coll_status_t map_segment(coll_comm *comm, struct coll_shm *s, int64_t *fail)
{
    coll_status_t st = COLL_SUCCESS, st2;
    if (s->me == 0)
        st = create_segment(comm, s);
    if (st != COLL_SUCCESS)
        fail[comm->host] = comm->rank + 1;
    st2 = coll_bootstrap_allreduce_max(comm->bs, fail, comm->nhosts);
    if (st2 != COLL_SUCCESS) {
        if (s->me == 0 && s->hdr)
            shm_unlink(s->name);
        return st2;
    }
    if (st == COLL_SUCCESS && fail[comm->host] > 0)
        st = coll_error(COLL_ERR_SYSTEM, COLL_SUB_SHM,
                        "local rank 0 (rank %d) could not create the "
                        "shared-memory segment (see its error)",
                        comm->local_ranks[0]);
    else if (st == COLL_SUCCESS && s->me != 0) {
        st = open_segment(s);
        if (st != COLL_SUCCESS)
            fail[comm->host] = comm->rank + 1;
    }
    int64_t failed_before = fail[comm->host];
    st2 = coll_bootstrap_allreduce_max(comm->bs, fail, comm->nhosts);
    if (s->me == 0 && s->hdr)
        shm_unlink(s->name);
    if (st == COLL_SUCCESS && st2 != COLL_SUCCESS)
        st = st2;
    if (st == COLL_SUCCESS && failed_before == 0 && fail[comm->host] > 0)
        st = coll_error(COLL_ERR_SYSTEM, COLL_SUB_SHM,
                        "local rank(s) could not map the shared-memory segment %s (rank %lld among them)", s->name,
                        (long long)fail[comm->host] - 1);
    return st;
}

coll_status_t coll_shm_setup(coll_comm *comm)
{
    if (comm->local_size <= 1 || coll_cfg_bool(COLL_CFG_SHM_DISABLE))
        return setup_without_segment(comm);
    struct coll_shm *s = calloc(1, sizeof *s);
    int64_t *fail = calloc((size_t)comm->nhosts, sizeof *fail);
    if (!s || !fail) {
        free(s);
        free(fail);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_SHM, "out of memory");
    }
    s->nlocal = comm->local_size;
    s->me = comm->local_rank;
    s->touch_span = coll_ring_span(comm->stage_ring, comm->local_size, COLL_RING_SPAN_MIN);
    s->tag_key = shm_mix(comm->id->nonce ^ 0x73686d2d74616773ull); /* not stored in the segment */
    shm_name(comm, s->name, sizeof s->name);
    coll_status_t st = map_segment(comm, s, fail);
    free(fail);
    if (st == COLL_SUCCESS) {
        s->ranks[s->me].pid = (int32_t)getpid();
        comm->shm = s;
        comm->stage_hw = s->map_bytes > SHM_POPULATE_ALL ? 0 /* peers' stages untouched */
            : coll_cfg_bool(COLL_CFG_SHM_PREFAULT_ALL)   ? s->stage_use / 2
            : s->touch_span < s->stage_use / 2           ? s->touch_span
                                                         : s->stage_use / 2;
        st = coll_shm_cma_probe(comm);
        if (st == COLL_SUCCESS)
            st = shm_fault_setup(comm);
        if (st != COLL_SUCCESS)
            comm->shm = NULL;
    }
    if (st != COLL_SUCCESS) {
        if (s->hdr)
            munmap(s->hdr, s->map_bytes);
        free_private(s);
        free(s);
        return st;
    }
    for (int i = 0; i < comm->local_size; i++)
        if (comm->local_ranks[i] != comm->rank)
            comm->tp[comm->local_ranks[i]] = &coll_shm_ops;
    return COLL_SUCCESS;
}

void coll_shm_teardown(coll_comm *comm)
{
    struct coll_shm *s = comm->shm;
    if (!s)
        return;
    munmap(s->hdr, s->map_bytes);
    free_private(s);
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

void *coll_shm_stage(coll_comm *comm, int lr) { return comm->shm->stages + (size_t)lr * comm->shm->stage_bytes; }

size_t coll_shm_stage_bytes(const coll_comm *comm) { return comm->shm ? comm->shm->stage_use : 0; }

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
    int *missing = s->missing, *who = s->who; /* [nlocal] */
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

/* Where local rank lr posted small exchange seq: its ring plus the offset it
 * published for seq (read after small_arrive >= seq was acquired), checked
 * (shm_small_off_ok: small_bytes can be read there); ~0 when it is not. */
static uint64_t small_off_read(struct coll_shm *s, int lr, uint64_t seq)
{
    uint64_t off = atomic_load_explicit(&s->ranks[lr].small_off[seq & 3], memory_order_relaxed);
    return shm_small_off_ok(s, off) ? off : ~0ull;
}

/* Check and keep every local rank's window of exchange seq (its peers are read
 * through these copies, never through the segment again). */
static coll_status_t small_check(coll_comm *comm, uint64_t seq)
{
    struct coll_shm *s = comm->shm;
    for (int i = 0; i < s->nlocal; i++) {
        uint64_t off = small_off_read(s, i, seq);
        if (off == ~0ull)
            return shm_corrupt(comm, i, "small_off",
                               atomic_load_explicit(&s->ranks[i].small_off[seq & 3], memory_order_relaxed),
                               s->small_ring - s->small_bytes);
        s->small_at[i] = off;
    }
    s->small_at_seq = seq;
    return COLL_SUCCESS;
}

/* The window of my next exchange (len bytes). Up to SHM_SMALL_FIXED bytes:
 * one of two fixed slots at the ring's start, by the exchange's parity (the
 * slot two exchanges back, which everyone has read). Larger: the next cache
 * lines of the rest of the ring, from its start again when they would run
 * past its end; successive windows never overlap (the rest holds 3 of the
 * largest), and a line is rewritten only after about a ring of other
 * exchanges, by when the peers that read it have let it go: rewriting lines a
 * peer still holds costs a cross-core invalidation each (as the stages'
 * windows, coll_stage_rot). 2 ranks, against the fixed two slots: AllReduce
 * 64K 9.5 -> 3.8 us (staged), AllGather 32K 3.0 -> 1.6, AllToAll 8K 0.68 ->
 * 0.51; but posts of 4 KiB and less were slower from lines out of every
 * cache (AllGather 8K 0.57 -> 0.85 us): hence the fixed slots. O(1). */
#define SHM_SMALL_FIXED 4096
static uint64_t small_window(struct coll_shm *s, uint64_t q, size_t len)
{
    if (len <= SHM_SMALL_FIXED)
        return (q & 1) * SHM_SMALL_FIXED;
    uint64_t step = ((uint64_t)len + SHM_LINE - 1) / SHM_LINE * SHM_LINE;
    if (2 * SHM_SMALL_FIXED + s->small_pos + s->small_bytes > s->small_ring) /* shm_small_off_ok */
        s->small_pos = 0;
    uint64_t off = 2 * SHM_SMALL_FIXED + s->small_pos;
    s->small_pos += step;
    return off;
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
    int *missing = s->missing, *who = s->who; /* [nlocal] */
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
    if (len > s->small_bytes)
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_SHM, "small exchange of %zu bytes (max %zu)", len,
                          (size_t)s->small_bytes);
    uint64_t q = ++s->small_seq;
    /* the slot was last used by exchange q-2: every rank must be done reading it */
    if (q > 2)
        COLL_CHECK(small_wait(comm, offsetof(shm_rank_t, small_done), q - 2));
    uint64_t off = small_window(s, q, len);
    if (len)
        memcpy(s->small + (size_t)s->me * s->small_ring + off, src, len);
    if (s->fault_left)
        off = shm_fault_small_off(comm, off);
    atomic_store_explicit(&s->ranks[s->me].small_off[q & 3], off, memory_order_relaxed);
    atomic_store_explicit(&s->ranks[s->me].small_arrive, q, memory_order_release);
    if (small_all_at_least(s, offsetof(shm_rank_t, small_arrive), q, s->missing) == 0)
        for (int i = 0; i < s->nlocal; i++)
            if (i != s->me)
                coll_shm_ring(comm, i);
    *seq = q;
    return COLL_SUCCESS;
}

coll_status_t coll_shm_small_wait_all(coll_comm *comm, uint64_t seq)
{
    COLL_CHECK(small_wait(comm, offsetof(shm_rank_t, small_arrive), seq));
    /* garbage in the abort word (one load of a read-mostly line): waits see it
     * only when they go idle, which small exchanges seldom do */
    unsigned a = atomic_load_explicit(&comm->shm->hdr->abort_flag, memory_order_relaxed);
    if (a > (unsigned)comm->shm->nlocal && a != 0x80000000u)
        return shm_corrupt(comm, -1, "the segment's abort_flag", a, (uint64_t)comm->shm->nlocal);
    return small_check(comm, seq);
}

/* After coll_shm_small_wait_all(seq): the checked copy. Another seq (no caller
 * asks one): checked here; a bad one aborts (shm_corrupt) and gives my own
 * window, which can be read. */
const void *coll_shm_small_peer(coll_comm *comm, int lr, uint64_t seq)
{
    struct coll_shm *s = comm->shm;
    uint64_t off = seq == s->small_at_seq ? s->small_at[lr] : small_off_read(s, lr, seq);
    if (off == ~0ull) {
        shm_corrupt(comm, lr, "small_off", atomic_load(&s->ranks[lr].small_off[seq & 3]),
                    s->small_ring - s->small_bytes);
        return s->small + (size_t)s->me * s->small_ring;
    }
    return s->small + (size_t)lr * s->small_ring + off;
}

void coll_shm_small_done(coll_comm *comm, uint64_t seq)
{
    struct coll_shm *s = comm->shm;
    atomic_store_explicit(&s->ranks[s->me].small_done, seq, memory_order_release);
    for (int i = 0; i < s->nlocal; i++)
        if (i != s->me) /* unconditional: a peer may be about to sleep waiting for this */
            coll_shm_ring(comm, i);
}

size_t coll_shm_small_max(const coll_comm *comm) { return comm->shm ? comm->shm->small_bytes : 0; }

void coll_shm_publish(coll_comm *comm, int slot, const void *ptr)
{
    shm_rank_t *r = &comm->shm->ranks[comm->shm->me];
    int32_t k = -1;
    uint64_t off = 0;
    for (coll_mem_region_t *m = comm->regions; m; m = m->next)
        if ((const char *)ptr >= (char *)m->base && (const char *)ptr < (char *)m->base + m->bytes) {
            k = m->index;
            off = (uint64_t)((const char *)ptr - (char *)m->base);
            break;
        }
    r->pub_region[slot] = k;
    r->pub_off[slot] = off;
    r->pub_tag[slot] = shm_tag(comm->shm, (uint64_t)(uint32_t)k, off, (uint64_t)slot);
}

/* Report a published span that does not fit in the peer's mapped region:
 * pub_off of slot with len bytes, allowed at most size - len. */
static void *peer_span_bad(coll_comm *comm, int lr, int slot, uint64_t off, size_t len, size_t size)
{
    char field[96];
    snprintf(field, sizeof field, "pub_off of slot %d (for %zu bytes in a region of %zu)", slot, len, size);
    shm_corrupt(comm, lr, field, off, len <= size ? size - len : ~1ull);
    return NULL;
}

void *coll_shm_peer_ptr(coll_comm *comm, int lr, int slot, size_t len)
{
    shm_rank_t *r = &comm->shm->ranks[lr];
    int32_t k = r->pub_region[slot];
    uint64_t off = r->pub_off[slot];
    if (r->pub_tag[slot] != shm_tag(comm->shm, (uint64_t)(uint32_t)k, off, (uint64_t)slot)) {
        shm_corrupt(comm, lr, "pub_region/pub_off (its tag)", (uint64_t)(uint32_t)k, 0);
        return NULL;
    }
    if (k < 0)
        return NULL;
    for (coll_mem_region_t *m = comm->regions; m; m = m->next)
        if (m->index == k && m->peer_base[lr]) {
            size_t size = m->peer_bytes[lr]; /* [off, off + len) inside it, no overflow */
            if (off > size || len > size - off)
                return peer_span_bad(comm, lr, slot, off, len, size);
            return (char *)m->peer_base[lr] + off;
        }
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
        if (r < 0 || r >= comm->nranks || r == comm->rank || !coll_topo_is_mine(comm, r))
            continue;
        if (pid_dead(s->pids[comm->rank_local[r]]))
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
    if (a == 0 || a == 0x80000000u)
        return -1;
    if (a > (unsigned)s->nlocal) { /* garbage: reported as this rank's own abort, naming the field */
        snprintf(s->abort_why, sizeof s->abort_why,
                 "shared memory corrupt: the segment's abort_flag is %u (allowed 0..%d): a local rank wrote "
                 "into the control area",
                 a, s->nlocal);
        return comm->rank;
    }
    /* bounded copy: the message may be garbage too */
    size_t n = strnlen(s->hdr->abort_msg, sizeof s->hdr->abort_msg - 1);
    memcpy(s->abort_why, s->hdr->abort_msg, n);
    s->abort_why[n] = '\0';
    return comm->local_ranks[a - 1];
}

const char *coll_shm_abort_reason(coll_comm *comm)
{
    return comm->shm && coll_shm_aborted_by(comm) >= 0 ? comm->shm->abort_why : "";
}
