/*
 * broadcast_direct.c - shared-memory Broadcast for the ranks of one host.
 *
 * The root copies chunk k of its buffer into half k%2 of its staging buffer; a
 * barrier; every other rank copies the chunk out while the root stages chunk
 * k+1 into the other half; a barrier; ... The barrier after chunk k+1 also
 * proves that everybody finished reading chunk k, the previous user of the
 * half that chunk k+2 overwrites: one barrier per chunk. Zero-copy: when the
 * root's buffer comes from coll_mem_alloc it is published, and after one
 * barrier every rank copies the whole message straight from it; the root
 * writes the last 1/p of it into each member whose buffer is coll_mem_alloc
 * memory too (published), so that its core copies as well.
 *
 * Stage protocol (shared with the other direct algorithms, see
 * allgather_direct.c): before its first barrier a call writes only the first
 * half of its own stage; it returns after a final barrier, so no peer touches
 * this rank's stage or buffer once it has returned.
 *
 * Cost (p ranks, n bytes, c = ceil(n / (COLL_BUFFSIZE/2)) chunks):
 *   (c + 1) barriers + n beta (root copies in) + n beta (every rank copies
 *   out, in parallel) ; zero-copy: 2 barriers + n beta.
 * Constraint: the group is exactly the ranks of this host.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/broadcast/broadcast.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_BUF = 0, PUB_DST = 1 };

/* The root's buffer is mapped here (zc): every member copies it; the last
 * t = bytes/p (whole elements) of each member that published its own buffer
 * (PUB_DST, reg on that member) the root writes in, so the root's core copies
 * too: (p-1) t at the root, bytes - t at such a member (2 ranks: half each). */
static coll_status_t zc_copies(coll_comm *comm, const coll_group_t *g, const char *zc, char *b, size_t bytes, size_t es,
                               int ri, int reg)
{
    int p = g->size, me = g->me;
    size_t t = bytes / (size_t)p / es * es;
    if (me != ri) {
        coll_direct_copy_out(comm, b, zc, reg ? bytes - t : bytes, bytes);
    } else {
        for (int j = 0; j < p && t; j++) {
            char *d = j == me ? NULL : coll_direct_peer_ptr(comm, coll_group_lr(comm, g, j), PUB_DST, bytes);
            if (d)
                coll_direct_copy_out(comm, d + bytes - t, b + bytes - t, t, bytes);
        }
    }
    return coll_direct_barrier(comm); /* the root's buffer is read, and the members' written, until here */
}

coll_status_t coll_broadcast_direct_run(coll_comm *comm, const coll_group_t *g, void *buf, size_t n, coll_dtype_t dt,
                                        int root)
{
    int p = g->size, me = g->me, ri;
    size_t es = coll_dtype_size(dt), bytes = n * es;
    char *b = buf;
    COLL_CHECK(coll_root_index(g, "broadcast", root, &ri));
    if (p == 1 || n == 0)
        return COLL_SUCCESS;
    int is_root = me == ri;
    size_t half = coll_direct_stage_bytes(comm) / 2, chunk = half / es;
    size_t rot = coll_stage_rot(comm, bytes, half); /* a small call's window: one chunk */
    char *stage = (char *)coll_direct_stage(comm, coll_group_lr(comm, g, ri)) + rot;
    int reg = coll_direct_is_registered(comm, b, bytes);
    coll_direct_publish(comm, PUB_BUF, is_root && reg ? b : NULL);
    coll_direct_publish(comm, PUB_DST, !is_root && reg ? b : NULL);
    if (is_root && !reg)
        coll_direct_copy(comm, stage, b, coll_min_sz(chunk, n) * es);
    COLL_CHECK(coll_direct_barrier(comm));
    const char *zc = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, ri), PUB_BUF, bytes);
    if (zc)
        return zc_copies(comm, g, zc, b, n * es, es, ri, reg);
    for (size_t k = 0, off = 0; off < n; k++, off += chunk) {
        if (is_root) {
            size_t noff = off + chunk; /* stage the next chunk into the other half */
            if (noff < n)
                coll_direct_copy(comm, stage + ((k + 1) % 2) * half, b + noff * es, coll_min_sz(chunk, n - noff) * es);
        } else {
            coll_direct_copy_out(comm, b + off * es, stage + (k % 2) * half, coll_min_sz(chunk, n - off) * es, bytes);
        }
        COLL_CHECK(coll_direct_barrier(comm));
    }
    return COLL_SUCCESS;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_broadcast_direct_run(comm, g, a->recvbuf, a->count, a->dt, a->root);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    if (g->size == 1)
        return 0; /* nothing to move (and no stage to divide by) */
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double n = (double)a->bytes, ov = coll_tuning_oversub(comm);
    return (coll_cost_direct_rounds(comm, n) + 1) * l->bar_us * ov + n * l->beta_us_per_b + n * l->beta_us_per_b * ov;
}

const coll_algo_t coll_algo_broadcast_direct = COLL_ALGO(
    COLL_BROADCAST, "direct", .flags = COLL_ALGO_F_SINGLE_HOST,
    .desc = "shm, one host: root stages chunks (or publishes its buffer), all copy out; 1 barrier per chunk + 1",
    .usable = coll_direct_usable_64);
