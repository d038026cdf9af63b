/*
 * scatter_direct.c - shared-memory Scatter for the ranks of one host.
 *
 * Round k: the root has staged, in half k%2 of its staging buffer, piece k
 * (cs elements, cs = half a stage / p) of every member's block, member j's at
 * offset j*cs; after a barrier every member copies its piece out while the
 * root stages round k+1 into the other half; then the next barrier. As in
 * broadcast_direct, the barrier after round k+1 proves that round k's half is
 * free again: one barrier per round. Zero-copy: when the root's sendbuf comes
 * from coll_mem_alloc it is published and, after one barrier, every member
 * copies its whole block straight from it while the root copies its own.
 *
 * Stage protocol (shared with the other direct algorithms, see
 * allgather_direct.c): before its first barrier a call writes only the first
 * half of its own stage; it returns after a final barrier, so no peer touches
 * this rank's stage or buffers once it has returned.
 *
 * Cost (p ranks, N = p * count bytes in all, c = ceil(N / (COLL_BUFFSIZE/2))
 * rounds): (c + 1) barriers + (p-1)/p N beta (root stages) + N/p beta (each
 * member copies out, in parallel); zero-copy: 2 barriers + N/p beta.
 * Constraint: the group is exactly the ranks of this host.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/execution/rooted.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_BUF = 0 };

/* Root: stage piece [off, off+cnt) of every other member's block into half h. */
static void stage_round(coll_comm *comm, char *h, const char *sb, int p, int me, size_t n, size_t cs, size_t off,
                        size_t es)
{
    size_t cnt = coll_min_sz(cs, n - off);
    for (int j = 0; j < p; j++)
        if (j != me)
            coll_direct_copy(comm, h + (size_t)j * cs * es, sb + ((size_t)j * n + off) * es, cnt * es);
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_rooted_call_t c;
    COLL_OPEN(coll_rooted_open, g, a, c); /* p = 1 done too: comm->direct may be NULL then */
    int is_root = c.me == c.ri;
    int own = is_root && c.own != c.blocks + (size_t)c.me * c.blk; /* the root copies its own block */
    int reg = is_root && coll_direct_is_registered(comm, c.blocks, (size_t)c.p * c.blk);
    if (own && !reg) /* zero-copy: after the barrier, beside the members' copies */
        coll_direct_copy_out(comm, c.own, c.blocks + (size_t)c.me * c.blk, c.blk, c.blk);
    size_t half = coll_direct_stage_bytes(comm) / 2, cs = coll_min_sz(half / (size_t)c.p / c.es, c.n);
    size_t rot = coll_stage_rot(comm, (size_t)c.p * c.blk, half); /* a small call's window: one round, packed */
    char *stage = (char *)coll_direct_stage(comm, coll_group_lr(comm, g, c.ri)) + rot;
    coll_direct_publish(comm, PUB_BUF, reg ? c.blocks : NULL);
    if (is_root && !reg)
        stage_round(comm, stage, c.blocks, c.p, c.me, c.n, cs, 0, c.es);
    COLL_CHECK(coll_direct_barrier(comm));
    const char *zc = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, c.ri), PUB_BUF, (size_t)c.p * c.blk);
    if (zc) { /* every rank, the root too, copies its block: p cores */
        if (!is_root || own)
            coll_direct_copy_out(comm, c.own, zc + (size_t)c.me * c.blk, c.blk, (size_t)c.p * c.blk);
        return coll_direct_barrier(comm); /* the root's sendbuf is read until here */
    }
    for (size_t k = 0, off = 0; off < c.n; k++, off += cs) {
        if (is_root) {
            if (off + cs < c.n)
                stage_round(comm, stage + ((k + 1) % 2) * half, c.blocks, c.p, c.me, c.n, cs, off + cs, c.es);
        } else {
            coll_direct_copy_out(comm, c.own + off * c.es, stage + (k % 2) * half + (size_t)c.me * cs * c.es,
                                 coll_min_sz(cs, c.n - off) * c.es, c.blk);
        }
        COLL_CHECK(coll_direct_barrier(comm));
    }
    return COLL_SUCCESS;
}

static int usable(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_direct_usable(comm, g, 8 * (size_t)g->size); /* a round carries at least 8 bytes per member */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    if (g->size == 1)
        return 0; /* nothing to move (and no stage to divide by) */
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes, ov = coll_tuning_oversub(comm);
    return (coll_cost_direct_rounds(comm, n) + 1) * l->bar_us * ov + (p - 1) / p * n * l->beta_us_per_b
        + n / p * l->beta_us_per_b * ov;
}

const coll_algo_t coll_algo_scatter_direct = COLL_ALGO(
    COLL_SCATTER, "direct", .flags = COLL_ALGO_F_SINGLE_HOST,
    .desc = "shm, one host: root stages pieces of all blocks (or publishes sendbuf); 1 barrier per round + 1",
    .usable = usable);
