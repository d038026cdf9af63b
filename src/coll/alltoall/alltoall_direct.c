/*
 * alltoall_direct.c - shared-memory AllToAll for the ranks of one host.
 *
 * Each rank stages its send buffer (slot j of its stage = its block for rank
 * j), a barrier, then every rank copies its own slot out of every peer's
 * stage. When the data exceed half a stage they go in chunks: a chunk holds
 * c = (COLL_BUFFSIZE/2)/p bytes of every block, and chunks alternate between
 * the two halves of the stage so one barrier per chunk suffices (a rank
 * reaches the barrier after chunk k+1 only once it has read chunk k: see the
 * example in allgather_direct.c). The own block is copied locally, never staged.
 * Zero-copy send buffers on every rank: one barrier, then every rank copies
 * its blocks straight from the peers' send buffers.
 * Stage protocol as in allgather_direct.c: only the first half of the stage is
 * written before the first barrier, and a final barrier ends the call.
 * A send buffer that fits a small slot (coll_direct_small_max) goes through the
 * double-buffered small exchange instead: one synchronisation in all.
 *
 * Cost (p ranks, n = bytes each rank sends in all, c = ceil(n / (COLL_BUFFSIZE/2)) chunks):
 *   (c + 1) barriers + 2 (p-1)/p n beta (copy in + copy out)
 * small: 1 sync + n beta + (p-1)/p n beta; zero-copy: 2 barriers + (p-1)/p n beta.
 * Constraint: the group is exactly the ranks of this host.
 */
#include <math.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/alltoall/alltoall.h"
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
    coll_direct_copy_out(comm, v.rb + (size_t)v.me * blk, v.sb + (size_t)v.me * blk, blk, (size_t)v.p * blk);
    if ((size_t)v.p * blk <= coll_direct_small_max(comm)) /* one synchronisation: post all, copy my block of each */
        return coll_direct_small_collect(comm, g, v.sb, (size_t)v.p * blk, (size_t)v.me * blk, v.rb, blk);
    size_t half = coll_direct_stage_bytes(comm) / 2, c = half / v.es / (size_t)v.p;
    if (c == 0)
        return coll_error(COLL_ERR_UNSUPPORTED, COLL_SUB_COLL,
                          "alltoall direct: stage of %zu bytes too small for %d ranks", half * 2, v.p);
    c = coll_min_sz(c, v.n); /* one chunk: blocks packed, p blk bytes */
    size_t rot = coll_stage_rot(comm, (size_t)v.p * blk, half);
    int reg = coll_direct_is_registered(comm, v.sb, (size_t)v.p * blk);
    coll_direct_publish(comm, PUB_SEND, reg ? v.sb : NULL);
    char *mine = (char *)coll_direct_stage(comm, coll_group_lr(comm, g, v.me)) + rot;
    const char *zc[COLL_MAX_LOCAL];
    for (size_t k = 0, off = 0; off < v.n; k++, off += c) {
        size_t cnt = coll_min_sz(c, v.n - off), h = (k % 2) * half;
        if (!reg)
            for (int i = 0; i < v.p; i++)
                if (i != v.me)
                    coll_direct_copy(comm, mine + h + (size_t)i * c * v.es, v.sb + ((size_t)i * v.n + off) * v.es,
                                     cnt * v.es);
        COLL_CHECK(coll_direct_barrier(comm));
        if (k == 0 && coll_group_peer_ptrs(comm, g, PUB_SEND, (size_t)v.p * blk, NULL, zc)) {
            for (int j = 0; j < v.p; j++)
                if (j != v.me)
                    coll_direct_copy(comm, v.rb + (size_t)j * blk, zc[j] + (size_t)v.me * blk, blk);
            break;
        }
        for (int j = 0; j < v.p; j++) {
            if (j == v.me)
                continue;
            const char *src = zc[j]
                ? zc[j] + ((size_t)v.me * v.n + off) * v.es
                : (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + rot + h + (size_t)v.me * c * v.es;
            coll_direct_copy_out(comm, v.rb + ((size_t)j * v.n + off) * v.es, src, cnt * v.es, (size_t)v.p * blk);
        }
    }
    return coll_direct_barrier(comm); /* peers are done reading my stage and buffers */
}

static int usable(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_direct_usable(comm, g, (size_t)g->size * coll_dtype_size(a->dt)); /* an element per member */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes;
    double syncs = n <= (double)coll_direct_small_max(comm) ? 1.0 : coll_cost_direct_rounds(comm, n) + 1;
    return syncs * l->bar_us * coll_tuning_oversub(comm) + 2 * (p - 1) / p * n * l->beta_us_per_b;
}

const coll_algo_t coll_algo_alltoall_direct = COLL_ALGO(
    COLL_ALLTOALL, "direct", .flags = COLL_ALGO_F_SINGLE_HOST,
    .desc = "shared memory, one host: send buffers staged (or zero-copy), every rank copies its blocks out; "
            "1 barrier per chunk + 1",
    .usable = usable);
