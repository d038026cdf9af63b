/*
 * allgatherv_direct.c - shared-memory AllGatherV for the ranks of one host:
 * allgather_direct.c with per-rank counts and displacements. Each rank stages
 * its block, a barrier, every rank copies every peer's block out of the
 * peers' stages to displs[j]. Blocks larger than half a stage go in chunks
 * alternating between the stage halves (one barrier per chunk); the number of
 * chunks follows the largest block, so every rank runs the same barriers.
 * Zero-copy buffers on every rank: one barrier, then copies straight from the
 * peers' send buffers. When every block fits a small slot (coll_direct_small_max)
 * the blocks go through the double-buffered small exchange instead: one
 * synchronisation in all. Stage protocol as in allgather_direct.c: only the
 * first half is written before the first barrier, and a final barrier ends
 * the call.
 *
 * Cost (p ranks, n = total bytes, m = largest block, c = ceil(m / (COLL_BUFFSIZE/2))):
 *   (c + 1) barriers + n beta (own block in, the others out); small blocks: 1 sync + n beta
 * Constraint: the group is exactly the ranks of this host.
 */
#include <math.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/allgatherv/allgatherv.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0 };

static size_t piece(size_t cnt, size_t off, size_t chunk) { return off < cnt ? coll_min_sz(chunk, cnt - off) : 0; }

/* Every block up to coll_direct_small_max: one synchronisation through the
 * double-buffered small slots. */
static coll_status_t small(coll_comm *comm, const coll_group_t *g, const char *sb, char *rb, const size_t *counts,
                           const size_t *displs, size_t es)
{
    uint64_t seq;
    COLL_CHECK(coll_direct_small_post(comm, sb, counts[g->me] * es, &seq));
    COLL_CHECK(coll_direct_small_wait_all(comm, seq));
    for (int j = 0; j < g->size; j++)
        if (j != g->me && counts[j])
            coll_direct_copy(comm, rb + displs[j] * es, coll_direct_small_peer(comm, coll_group_lr(comm, g, j), seq),
                             counts[j] * es);
    coll_direct_small_done(comm, seq);
    return COLL_SUCCESS;
}

coll_status_t coll_allgatherv_direct_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                         const size_t *counts, const size_t *displs, coll_dtype_t dt)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt), maxc = 0;
    char *rb = recvbuf;
    const char *sb = sendbuf;
    if (p == 1) { /* alone: comm->direct may be NULL */
        if (counts[me] && sb != rb + displs[me] * es)
            memcpy(rb + displs[me] * es, sb, counts[me] * es);
        return COLL_SUCCESS;
    }
    if (counts[me] && sb != rb + displs[me] * es)
        coll_direct_copy(comm, rb + displs[me] * es, sb, counts[me] * es);
    for (int i = 0; i < p; i++)
        maxc = counts[i] > maxc ? counts[i] : maxc;
    if (maxc == 0)
        return COLL_SUCCESS;
    if (maxc * es <= coll_direct_small_max(comm))
        return small(comm, g, sb, rb, counts, displs, es);
    size_t half = coll_direct_stage_bytes(comm) / 2, chunk = half / es;
    int reg = counts[me] && coll_direct_is_registered(comm, sb, counts[me] * es);
    coll_direct_publish(comm, PUB_SEND, reg ? sb : NULL);
    char *mine = coll_direct_stage(comm, coll_group_lr(comm, g, me));
    const char *zc[COLL_MAX_LOCAL];
    for (size_t k = 0, off = 0; off < maxc; k++, off += chunk) {
        size_t h = (k % 2) * half, cnt = piece(counts[me], off, chunk);
        if (!reg && cnt)
            coll_direct_copy(comm, mine + h, sb + off * es, cnt * es);
        COLL_CHECK(coll_direct_barrier(comm));
        if (k == 0 && coll_group_peer_ptrs(comm, g, PUB_SEND, es, counts, zc)) {
            for (int j = 0; j < p; j++)
                if (j != me && counts[j])
                    coll_direct_copy(comm, rb + displs[j] * es, zc[j], counts[j] * es);
            break;
        }
        for (int j = 0; j < p; j++) {
            size_t jc = piece(counts[j], off, chunk);
            if (j == me || !jc)
                continue;
            const char *src = zc[j] ? zc[j] + off * es
                                    : (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + h;
            coll_direct_copy(comm, rb + (displs[j] + off) * es, src, jc * es);
        }
    }
    return coll_direct_barrier(comm); /* peers are done reading my stage and buffers */
}

/* a->counts / a->displs are indexed by member of g (global rank on the world). */
static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_allgatherv_direct_run(comm, g, a->sendbuf, a->recvbuf, a->counts, a->displs, a->dt);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double m;
    coll_cost_v_bytes(g, a, &m, NULL);
    double syncs = m <= (double)coll_direct_small_max(comm) ? 1.0 : coll_cost_direct_rounds(comm, m) + 1;
    return syncs * l->bar_us * coll_tuning_oversub(comm) + (double)a->bytes * l->beta_us_per_b;
}

const coll_algo_t coll_algo_allgatherv_direct
    = COLL_ALGO(COLL_ALLGATHERV, "direct", .flags = COLL_ALGO_F_SINGLE_HOST,
                .desc = "shared memory, one host: blocks staged (or zero-copy), copied out to their displacements; 1 "
                        "barrier per chunk + 1",
                .usable = coll_direct_usable_any);
