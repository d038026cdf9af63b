/*
 * gather_direct.c - shared-memory Gather for the ranks of one host.
 *
 * Round k: every member has staged piece k of its block (cs elements, half a
 * stage) in half k%2 of its own staging buffer; after a barrier the root
 * copies every member's piece into recvbuf while the members stage round k+1
 * into their other half; then the next barrier. As in allgather_direct, the
 * barrier after round k+1 proves that round k's half is free again: one
 * barrier per round. Zero-copy: when the root's recvbuf comes from
 * coll_mem_alloc, the root publishes it and, after one barrier, every member
 * copies its block straight into it while the root copies its own: one copy,
 * all p cores. Otherwise a member whose sendbuf comes from coll_mem_alloc
 * publishes it instead of staging, and the root copies from it directly; when
 * every member published, the root copies whole blocks after one barrier.
 *
 * Stage protocol (shared with the other direct algorithms, see
 * allgather_direct.c): before its first barrier a call writes only the first
 * half of its own stage; it returns after a final barrier, so no peer touches
 * this rank's stage or buffers once it has returned.
 *
 * Cost (p ranks, N = p * count bytes in all, c = ceil(N/p / (COLL_BUFFSIZE/2))
 * rounds): (c + 1) barriers + N/p beta (members stage, in parallel) +
 * (p-1)/p N beta (the root copies out); zero-copy: 2 barriers + (p-1)/p N beta,
 * or 2 barriers + N/p beta when the root's recvbuf is mapped (every rank
 * copies its own block: member j writes at zr + j * blk, zr being the root's
 * recvbuf as mapped in member j).
 * Constraint: the group is exactly the ranks of this host.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/execution/rooted.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0, PUB_RECV = 1 };

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_rooted_call_t c;
    COLL_OPEN(coll_rooted_open, g, a, c); /* p = 1 done too: comm->direct may be NULL then */
    int is_root = c.me == c.ri;
    int own = is_root && c.own != c.blocks + (size_t)c.me * c.blk; /* the root copies its own block */
    int reg_recv = is_root && coll_direct_is_registered(comm, c.blocks, (size_t)c.p * c.blk);
    if (own && !reg_recv) /* while the members stage */
        coll_direct_copy_out(comm, c.blocks + (size_t)c.me * c.blk, c.own, c.blk, (size_t)c.p * c.blk);
    size_t half = coll_direct_stage_bytes(comm) / 2, cs = half / c.es;
    size_t rot = coll_stage_rot(comm, c.blk, half); /* a small call's window: one round */
    char *mine = (char *)coll_direct_stage(comm, coll_group_lr(comm, g, c.me)) + rot;
    int reg = !is_root && coll_direct_is_registered(comm, c.own, c.blk);
    coll_direct_publish(comm, PUB_SEND, reg ? c.own : NULL);
    coll_direct_publish(comm, PUB_RECV, reg_recv ? c.blocks : NULL);
    int stage = !is_root && !reg;
    if (stage) /* wasted when the root's recvbuf turns out to be mapped (members' buffers of both kinds) */
        coll_direct_copy(comm, mine, c.own, coll_min_sz(cs, c.n) * c.es);
    COLL_CHECK(coll_direct_barrier(comm));
    char *zr = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, c.ri), PUB_RECV,
                                    (size_t)c.p * c.blk); /* the same answer everywhere */
    if (zr) { /* every member writes its block straight into the root's recvbuf, the root its own: p cores */
        if (!is_root || own)
            coll_direct_copy_out(comm, zr + (size_t)c.me * c.blk, c.own, c.blk, (size_t)c.p * c.blk);
        return coll_direct_barrier(comm); /* the root's recvbuf is written until here */
    }
    const char *zc[COLL_MAX_LOCAL];
    int all = 1;
    for (int j = 0; j < c.p; j++) {
        zc[j] = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, j), PUB_SEND, c.blk); /* NULL for the root */
        all &= j == c.ri || zc[j] != NULL; /* the same answer on every rank */
    }
    if (all) { /* every member published: the root copies whole blocks */
        for (int j = 0; is_root && j < c.p; j++)
            if (j != c.me)
                coll_direct_copy(comm, c.blocks + (size_t)j * c.blk, zc[j], c.blk);
        return coll_direct_barrier(comm); /* the members' sendbufs are read until here */
    }
    for (size_t k = 0, off = 0; off < c.n; k++, off += cs) {
        if (stage && off + cs < c.n)
            coll_direct_copy(comm, mine + ((k + 1) % 2) * half, c.own + (off + cs) * c.es,
                             coll_min_sz(cs, c.n - off - cs) * c.es);
        for (int j = 0; is_root && j < c.p; j++) {
            if (j == c.me)
                continue;
            const char *src = zc[j]
                ? zc[j] + off * c.es
                : (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + rot + (k % 2) * half;
            coll_direct_copy_out(comm, c.blocks + ((size_t)j * c.n + off) * c.es, src,
                                 coll_min_sz(cs, c.n - off) * c.es, (size_t)c.p * c.blk);
        }
        COLL_CHECK(coll_direct_barrier(comm));
    }
    return COLL_SUCCESS;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    if (g->size == 1)
        return 0; /* nothing to move (and no stage to divide by) */
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes, ov = coll_tuning_oversub(comm);
    return (coll_cost_direct_rounds(comm, n / p) + 1) * l->bar_us * ov + n / p * l->beta_us_per_b * ov
        + (p - 1) / p * n * l->beta_us_per_b;
}

const coll_algo_t coll_algo_gather_direct = COLL_ALGO(
    COLL_GATHER, "direct", .flags = COLL_ALGO_F_SINGLE_HOST,
    .desc = "shm, one host: members stage blocks (or publish sendbuf), root copies out; 1 barrier per round + 1",
    .usable = coll_direct_usable_64);
