/*
 * sim_direct.c - the direct-memory services (transport.h: coll_direct_ops_t)
 * for simulated hosts with more than one rank, so that the direct, cma and
 * shm algorithms run in a simulation as they do on a real host. Every
 * simulated rank lives in this process: peers' memory is really readable.
 *
 *   stage       per-rank staging buffers of the size shm would give
 *               (COLL_BUFFSIZE); sizes only: one block shared by every rank,
 *               its pages aliases of 512 KiB (coll_sim_alias_map) so that the
 *               algorithms' own copies stay in cache
 *   barrier     per-host counters; a rank that must wait blocks its coroutine
 *               (coll_sim_block: no spin) and is woken by the last arrival
 *   small_*     the shm protocol (double-buffered slots, post / wait_all /
 *               done); sizes only: one shared pair of slots, nothing copied
 *   cma_*       cma_ok is COLL_CMA (default on: a simulated host permits
 *               cross-memory reads); cma_read copies from the published
 *               address, cma_write to it (sizes only: copies nothing)
 *   copy,       the algorithms' copies and reductions of staged, peer and user
 *   reduce      data (direct.h): charged; sizes only: nothing copied or reduced
 *   publish     zero-copy needs coll_mem_alloc regions, which simulated ranks
 *               do not have: peer_ptr is NULL, is_registered 0 (the staging
 *               paths run, as on a real host with malloc'd buffers)
 * Virtual time (sim.h), cp_bw = 2 x shm_bw (one memcpy; shm_bw is a
 * message's rate, copied in and out), every CPU term times the host's CPU
 * factor (coll_sim_cpu_factor: busy ranks per core, memory bandwidth): a
 * barrier ends at the last arrival + one shm round (shm_ovh + shm_lat); a
 * small post costs shm_ovh + B / cp_bw, wait_all ends one shm latency after
 * the last post plus the peers' posted bytes / cp_bw (the reads); a cma_read
 * or cma_write of B bytes costs shm_ovh + B / cp_bw; a copy of B bytes B / cp_bw; a
 * reduction of k inputs of B bytes (k - 1) B / reduce_bw.
 *
 * Memory: O(N) counters; with move_data N x (stage + 2 x 64 KiB) bytes of
 * address space (MAP_NORESERVE: pages touched only); sizes only one stage
 * and one pair of small slots. A state change wakes the host's waiting ranks
 * (O(L)), so a barrier costs O(L^2) steps per host: L is a host's ranks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/reduce.h"
#include "transport/shm_size.h"
#include "transport/sim.h"

#define SD_PUB_SLOTS 8
#define SD_SMALL_MAX (64 * 1024) /* as shm (COLL_SHM_SMALL_MAX) */

typedef struct {
    uint64_t bar; /* barriers entered */
    uint64_t small_seq, small_arrive, small_done;
    double arrive_t[2], done_t[2]; /* clock of the post / done of seq, by seq & 1 */
    size_t small_len[2];
    const void *pub_addr[SD_PUB_SLOTS];
    int waiting; /* blocked in one of the waits below */
} sd_rank_t;

typedef struct {
    int cnt[2]; /* arrivals at barrier k, by k & 1 */
    double tmax[2], release[2];
    uint64_t done; /* barriers completed */
} sd_host_t;

struct coll_sim_direct {
    coll_sim_t *s;
    int n, nhosts, move;
    size_t stage_bytes;
    char *stages, *small; /* move: [n], else one shared */
    size_t stages_map, small_map;
    sd_rank_t *r; /* [n] */
    sd_host_t *h; /* [nhosts] */
    int cma;
    double ovh_us, lat_us, shm_b, red_b; /* us, us per byte (shm_b: one memcpy, 2 x shm_gbps) */
};

static struct coll_sim_direct *sd_of(const coll_comm *comm) { return *coll_sim_direct_of(comm->sim); }

static int global_of(const coll_comm *comm, int lr) { return comm->local_ranks[lr]; }

/* Wake the ranks of my host blocked in a direct wait (they re-check). */
static void wake_host(coll_comm *comm)
{
    struct coll_sim_direct *d = sd_of(comm);
    for (int lr = 0; lr < comm->local_size; lr++) {
        int g = global_of(comm, lr);
        if (d->r[g].waiting)
            coll_sim_wake(comm->sim, g);
    }
}

static coll_status_t block(coll_comm *comm, const char *what)
{
    sd_rank_t *me = &sd_of(comm)->r[comm->rank];
    me->waiting = 1;
    coll_status_t st = coll_sim_block(comm, what);
    me->waiting = 0;
    return st;
}

static void advance(coll_comm *comm, double t)
{
    double *c = coll_sim_clock(comm);
    if (*c < t)
        *c = t;
}

static void *sd_stage(coll_comm *comm, int lr)
{
    struct coll_sim_direct *d = sd_of(comm);
    return d->move ? d->stages + (size_t)global_of(comm, lr) * d->stage_bytes : d->stages;
}

static size_t sd_stage_bytes(const coll_comm *comm) { return sd_of(comm)->stage_bytes; }

static coll_status_t sd_barrier(coll_comm *comm)
{
    struct coll_sim_direct *d = sd_of(comm);
    sd_host_t *h = &d->h[comm->host];
    uint64_t k = ++d->r[comm->rank].bar;
    int b = (int)(k & 1);
    double now = *coll_sim_clock(comm);
    if (h->cnt[b] == 0 || h->tmax[b] < now)
        h->tmax[b] = now;
    if (++h->cnt[b] == comm->local_size) {
        h->release[b] = h->tmax[b] + d->ovh_us * coll_sim_cpu_factor(comm, 0) + d->lat_us;
        h->cnt[b] = 0;
        h->done = k;
        wake_host(comm);
    }
    while (h->done < k)
        COLL_CHECK(block(comm, "a direct barrier"));
    advance(comm, h->release[b]);
    return COLL_SUCCESS;
}

static void sd_publish(coll_comm *comm, int slot, const void *ptr) {}

static void *sd_peer_ptr(coll_comm *comm, int lr, int slot, size_t len) { return NULL; }

static int sd_is_registered(coll_comm *comm, const void *ptr, size_t len) { return 0; }

static char *small_slot(struct coll_sim_direct *d, int g, uint64_t seq)
{
    return d->small + ((d->move ? (size_t)g * 2 : 0) + (size_t)(seq & 1)) * SD_SMALL_MAX;
}

static coll_status_t sd_small_post(coll_comm *comm, const void *src, size_t len, uint64_t *seq)
{
    struct coll_sim_direct *d = sd_of(comm);
    sd_rank_t *me = &d->r[comm->rank];
    if (len > SD_SMALL_MAX)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_COLL, "sim: small exchange of %zu bytes (at most %d)", len,
                          SD_SMALL_MAX);
    uint64_t q = ++me->small_seq;
    int b = (int)(q & 1);
    if (q > 2) { /* my slot is reused: every peer has read it (done q - 2) */
        for (;;) {
            int all = 1;
            for (int lr = 0; lr < comm->local_size && all; lr++)
                all = d->r[global_of(comm, lr)].small_done >= q - 2;
            if (all)
                break;
            COLL_CHECK(block(comm, "a direct small exchange (slot reuse)"));
        }
        for (int lr = 0; lr < comm->local_size; lr++)
            advance(comm, d->r[global_of(comm, lr)].done_t[b]);
    }
    if (d->move && len)
        memcpy(small_slot(d, comm->rank, q), src, len);
    double *c = coll_sim_clock(comm);
    *c += d->ovh_us * coll_sim_cpu_factor(comm, 0) + (double)len * d->shm_b * coll_sim_cpu_factor(comm, 1);
    me->arrive_t[b] = *c;
    me->small_len[b] = len;
    me->small_arrive = q;
    wake_host(comm);
    *seq = q;
    return COLL_SUCCESS;
}

static coll_status_t sd_small_wait_all(coll_comm *comm, uint64_t seq)
{
    struct coll_sim_direct *d = sd_of(comm);
    for (;;) {
        int all = 1;
        for (int lr = 0; lr < comm->local_size && all; lr++)
            all = d->r[global_of(comm, lr)].small_arrive >= seq;
        if (all)
            break;
        COLL_CHECK(block(comm, "a direct small exchange"));
    }
    int b = (int)(seq & 1);
    double last = 0, bytes = 0;
    for (int lr = 0; lr < comm->local_size; lr++) {
        const sd_rank_t *x = &d->r[global_of(comm, lr)];
        if (x->arrive_t[b] > last)
            last = x->arrive_t[b];
        if (global_of(comm, lr) != comm->rank)
            bytes += (double)x->small_len[b];
    }
    advance(comm, last + d->lat_us);
    *coll_sim_clock(comm) += bytes * d->shm_b * coll_sim_cpu_factor(comm, 1);
    return COLL_SUCCESS;
}

static const void *sd_small_peer(coll_comm *comm, int lr, uint64_t seq)
{
    return small_slot(sd_of(comm), global_of(comm, lr), seq);
}

static void sd_small_done(coll_comm *comm, uint64_t seq)
{
    sd_rank_t *me = &sd_of(comm)->r[comm->rank];
    me->done_t[seq & 1] = *coll_sim_clock(comm);
    me->small_done = seq;
    wake_host(comm);
}

static size_t sd_small_max(const coll_comm *comm) { return SD_SMALL_MAX; }

static int sd_cma_ok(const coll_comm *comm) { return sd_of(comm)->cma; }

static void sd_publish_addr(coll_comm *comm, int slot, const void *ptr)
{
    sd_of(comm)->r[comm->rank].pub_addr[slot] = ptr;
}

/* len bytes between local and the slot of local rank lr, at off (writing =
 * local -> published address), as shm_cma.c's cma_xfer: charged to the
 * caller's clock, copied only when data moves. */
static coll_status_t sd_cma_xfer(coll_comm *comm, int lr, int slot, size_t off, char *local, size_t len, int writing)
{
    struct coll_sim_direct *d = sd_of(comm);
    char *remote = (char *)(uintptr_t)d->r[global_of(comm, lr)].pub_addr[slot];
    if (!remote && len)
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL, "sim: rank %d %s slot %d of local rank %d, never published",
                          comm->rank, writing ? "writes" : "reads", slot, lr);
    if (d->move && len)
        memcpy(writing ? remote + off : local, writing ? local : remote + off, len);
    *coll_sim_clock(comm) += d->ovh_us * coll_sim_cpu_factor(comm, 0)
        + (double)len * d->shm_b * coll_sim_cpu_factor(comm, 1);
    return COLL_SUCCESS;
}

static coll_status_t sd_cma_read(coll_comm *comm, int lr, int slot, size_t off, void *dst, size_t len)
{
    return sd_cma_xfer(comm, lr, slot, off, dst, len, 0);
}

static coll_status_t sd_cma_write(coll_comm *comm, int lr, int slot, size_t off, const void *src, size_t len)
{
    return sd_cma_xfer(comm, lr, slot, off, (char *)(uintptr_t)src, len, 1);
}

/* The copies and reductions of direct.h, on behalf of the calling rank:
 * charged to its clock, done only when data moves. A copy streams B bytes at
 * shm_bw; a k-input reduction of B bytes each is k - 1 pairwise passes at
 * reduce_bw (as a receive-reduce: B / reduce_bw each), k == 1 a copy. */
static void sd_copy(coll_comm *comm, void *dst, const void *src, size_t len)
{
    struct coll_sim_direct *d = sd_of(comm);
    if (d->move && len)
        memcpy(dst, src, len);
    *coll_sim_clock(comm) += (double)len * d->shm_b * coll_sim_cpu_factor(comm, 1);
}

static void sd_reduce(coll_comm *comm, void *out, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op)
{
    struct coll_sim_direct *d = sd_of(comm);
    double bytes = (double)n * (double)coll_dtype_size(dt);
    if (d->move && n)
        coll_reduce_multi(out, in, k, n, dt, op);
    *coll_sim_clock(comm) += (k > 1 ? (double)(k - 1) * bytes * d->red_b : bytes * d->shm_b)
        * coll_sim_cpu_factor(comm, 1);
}

static const coll_direct_ops_t sim_direct_ops = {
    .stage = sd_stage,
    .stage_bytes = sd_stage_bytes,
    .barrier = sd_barrier,
    .publish = sd_publish,
    .peer_ptr = sd_peer_ptr,
    .is_registered = sd_is_registered,
    .small_post = sd_small_post,
    .small_wait_all = sd_small_wait_all,
    .small_peer = sd_small_peer,
    .small_done = sd_small_done,
    .small_max = sd_small_max,
    .cma_ok = sd_cma_ok,
    .publish_addr = sd_publish_addr,
    .cma_read = sd_cma_read,
    .cma_write = sd_cma_write,
    .copy = sd_copy,
    .reduce = sd_reduce,
};

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

#define SIM_ALIAS_BYTES ((size_t)512 << 10)

static size_t alias_size(size_t bytes) { return (bytes + SIM_ALIAS_BYTES - 1) / SIM_ALIAS_BYTES * SIM_ALIAS_BYTES; }

void *coll_sim_alias_map(size_t bytes)
{
    size_t len = alias_size(bytes ? bytes : 1);
    int fd = memfd_create("coll-sim-alias", 0);
    if (fd < 0)
        return NULL;
    char *base = NULL;
    if (ftruncate(fd, (off_t)SIM_ALIAS_BYTES) == 0) {
        base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED)
            base = NULL;
        for (size_t off = 0; base && off < len; off += SIM_ALIAS_BYTES)
            if (mmap(base + off, SIM_ALIAS_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0)
                == MAP_FAILED) {
                munmap(base, len);
                base = NULL;
            }
    }
    close(fd);
    return base;
}

void coll_sim_alias_unmap(void *p, size_t bytes)
{
    if (p)
        munmap(p, alias_size(bytes ? bytes : 1));
}

void coll_sim_direct_detach(coll_sim_t *s)
{
    struct coll_sim_direct *d = *coll_sim_direct_of(s);
    if (!d)
        return;
    for (int r = 0; r < d->n; r++)
        coll_sim_comm(s, r)->direct = NULL;
    if (d->stages && d->move)
        munmap(d->stages, d->stages_map);
    else if (d->stages)
        coll_sim_alias_unmap(d->stages, d->stages_map);
    if (d->small)
        munmap(d->small, d->small_map);
    free(d->r);
    free(d->h);
    free(d);
    *coll_sim_direct_of(s) = NULL;
}

coll_status_t coll_sim_direct_attach(coll_sim_t *s)
{
    int n = coll_sim_nranks(s), nhosts = 0, multi = 0;
    for (int r = 0; r < n; r++) {
        const coll_comm *c = coll_sim_comm(s, r);
        nhosts = c->nhosts;
        multi |= c->local_size > 1;
    }
    if (!multi)
        return COLL_SUCCESS; /* one rank per host: no direct peers, as without shm */
    const coll_sim_params_t *p = coll_sim_params(s);
    struct coll_sim_direct *d = calloc(1, sizeof *d);
    if (!d)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "sim: out of memory");
    *coll_sim_direct_of(s) = d;
    d->s = s;
    d->n = n;
    d->nhosts = nhosts;
    d->move = p->move_data;
    d->cma = coll_cfg_bool(COLL_CFG_CMA);
    d->stage_bytes = (size_t)shm_sizes_config(2, coll_cfg_size(COLL_CFG_BUFFSIZE), 4096, 2, 0).stage;
    d->shm_b = 8.0 / (2 * p->shm_gbps * 1e3); /* one memcpy: Gbit/s -> us per byte */
    d->red_b = 8.0 / (p->reduce_gbps * 1e3);
    d->ovh_us = p->shm_ovh_us;
    d->lat_us = p->shm_us;
    d->stages_map = (d->move ? (size_t)n : 1) * d->stage_bytes;
    d->small_map = (d->move ? (size_t)n : 1) * 2 * SD_SMALL_MAX;
    d->stages = d->move ? map(d->stages_map) : coll_sim_alias_map(d->stages_map);
    d->small = map(d->small_map);
    d->r = calloc((size_t)n, sizeof *d->r);
    d->h = calloc((size_t)nhosts, sizeof *d->h);
    if (!d->stages || !d->small || !d->r || !d->h) {
        coll_sim_direct_detach(s);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT,
                          "sim: out of memory for the direct-memory services of %d ranks", n);
    }
    for (int r = 0; r < n; r++) {
        coll_comm *c = coll_sim_comm(s, r);
        if (c->local_size > 1)
            c->direct = &sim_direct_ops;
    }
    return COLL_SUCCESS;
}

void coll_sim_direct_reset(coll_sim_t *s)
{
    struct coll_sim_direct *d = *coll_sim_direct_of(s);
    if (!d)
        return;
    memset(d->r, 0, (size_t)d->n * sizeof *d->r);
    memset(d->h, 0, (size_t)d->nhosts * sizeof *d->h);
}
