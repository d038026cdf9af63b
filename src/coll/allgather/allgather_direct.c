/*
 * allgather_direct.c - shared-memory AllGather for the ranks of one host.
 *
 * Each rank copies its block into its staging buffer, a barrier, then every
 * rank copies every peer's block straight out of the peers' stages into its
 * receive buffer (streaming when the result is large: coll_direct_copy_out). Blocks larger than half a stage go in chunks that alternate
 * between the two halves of the stage, so one barrier per chunk suffices: a
 * rank reaches the barrier after chunk k+1 only once it has read chunk k, so
 * after that barrier chunk k's half is free for chunk k+2. Example, 3 chunks:
 * stage c0 in half 0, barrier B0, read c0; stage c1 in half 1, B1, read c1;
 * stage c2 in half 0 (everybody read c0 before B1), B2, read c2; final B3.
 * With zero-copy buffers
 * (coll_mem_alloc on every rank) there is no staging: after one barrier every
 * rank copies the blocks from the peers' send buffers.
 *
 * Blocks up to coll_direct_small_max bytes take the small-exchange path instead:
 * every rank posts its block to its double-buffered small slot, waits until
 * all have posted and copies the blocks out: one synchronisation in all.
 *
 * Stage protocol (shared with allreduce_direct and the other direct
 * algorithms): before its first barrier a call writes only the first half of
 * its own stage (a peer may still be reading the second half from the previous
 * call); it returns after a final barrier, so no peer touches this rank's stage
 * or buffers once it has returned.
 *
 * Cost (p ranks, n = total bytes, c = ceil(n/p / (COLL_BUFFSIZE/2)) chunks):
 *   (c + 1) barriers + n/p beta (copy in) + (p-1)/p n beta (copy out)
 * small blocks: 1 synchronisation + the same copies; zero-copy: 2 barriers +
 * (p-1)/p n beta.
 * Constraint: the group is exactly the ranks of this host.
 */
#include <math.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/allgather/allgather.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0 };

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v); /* p = 1 done too: comm->direct may be NULL then */
    size_t blk = v.n * v.es;
    if (v.sb != v.rb + (size_t)v.me * blk)
        coll_direct_copy_out(comm, v.rb + (size_t)v.me * blk, v.sb, blk, (size_t)v.p * blk);
    if (blk <= coll_direct_small_max(comm)) /* one synchronisation: post my block, copy the others out */
        return coll_direct_small_collect(comm, g, v.sb, blk, 0, v.rb, blk);
    size_t half = coll_direct_stage_bytes(comm) / 2, chunk = half / v.es;
    size_t rot = coll_stage_rot(comm, blk, half); /* a small call's window: one chunk */
    int reg = coll_direct_is_registered(comm, v.sb, blk);
    coll_direct_publish(comm, PUB_SEND, reg ? v.sb : NULL);
    char *mine = (char *)coll_direct_stage(comm, coll_group_lr(comm, g, v.me)) + rot;
    const char *zc[COLL_MAX_LOCAL];
    for (size_t k = 0, off = 0; off < v.n; k++, off += chunk) {
        size_t cnt = coll_min_sz(chunk, v.n - off), h = (k % 2) * half;
        if (!reg)
            coll_direct_copy(comm, mine + h, v.sb + off * v.es, cnt * v.es);
        COLL_CHECK(coll_direct_barrier(comm));
        if (k == 0 && coll_group_peer_ptrs(comm, g, PUB_SEND, blk, NULL, zc)) {
            for (int j = 0; j < v.p; j++)
                if (j != v.me)
                    coll_direct_copy(comm, v.rb + (size_t)j * blk, zc[j], blk);
            break;
        }
        for (int j = 0; j < v.p; j++) {
            if (j == v.me)
                continue;
            const char *src = zc[j] ? zc[j] + off * v.es
                                    : (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + rot + h;
            coll_direct_copy_out(comm, v.rb + ((size_t)j * v.n + off) * v.es, src, cnt * v.es, (size_t)v.p * blk);
        }
    }
    return coll_direct_barrier(comm); /* peers are done reading my stage and buffers */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes;
    double syncs = n / p <= (double)coll_direct_small_max(comm) ? 1.0 : coll_cost_direct_rounds(comm, n / p) + 1;
    return syncs * l->bar_us * coll_tuning_oversub(comm) + n * l->beta_us_per_b;
}

const coll_algo_t coll_algo_allgather_direct
    = COLL_ALGO(COLL_ALLGATHER, "direct", .flags = COLL_ALGO_F_SINGLE_HOST,
                .desc = "shared memory, one host: blocks staged (or zero-copy), everybody copies every block out; 1 "
                        "barrier per chunk + 1",
                .usable = coll_direct_usable_any);
