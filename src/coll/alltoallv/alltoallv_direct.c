/*
 * alltoallv_direct.c - shared-memory AllToAllV for the ranks of one host:
 * alltoall_direct.c with per-peer counts and displacements.
 *
 * Counts are private to each rank, yet every rank must take the same path and
 * run the same number of barriers. So every call starts with one small
 * exchange (the double-buffered small slots of shm.h) in which each rank
 * posts a header: its largest count, whether its send buffer is zero-copy,
 * its send displacements, and - when all its outgoing data fit in the slot
 * too - that data, packed, with the offset of each peer's block. After that
 * one synchronisation everybody knows the same things and picks the same path:
 *   - everybody's data fitted: each rank copies its blocks out of the peers'
 *     slots and is done (one synchronisation in all);
 *   - every send buffer is zero-copy: each rank copies its blocks straight
 *     from the peers' send buffers at the displacements from their headers,
 *     then a barrier;
 *   - otherwise the staged path: slot j of each rank's stage holds its data
 *     for rank j, c = (COLL_BUFFSIZE/2)/p bytes per slot and chunk, and every
 *     rank copies its slot out of every peer's stage after a barrier. The
 *     chunk count K = ceil(max count / c) comes from the headers, so it is the
 *     same everywhere; chunks alternate between the stage halves (one barrier
 *     per chunk) as in allgather_direct.c, whose stage protocol this follows
 *     (first half only before the first barrier, a final barrier).
 *
 * Cost (p ranks, n = max(bytes sent, received) by a rank, K chunks):
 *   small: 1 sync + 2 n beta;  staged: 1 sync + (K + 1) barriers + 2 n beta
 *   zero-copy: 1 sync + 1 barrier + n beta.
 * Constraint: the group is exactly the ranks of this host.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/alltoallv/alltoallv.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0 };

/* What each rank posts in the small exchange that opens every call. */
typedef struct {
    uint64_t maxcnt; /* largest count this rank sends to or receives from another rank */
    uint64_t zc_ok;  /* send buffer published for zero-copy, or nothing to send */
    uint64_t fits;   /* all outgoing data follow the header, packed */
    uint64_t pad;
    uint64_t words[]; /* [p] send displacements, then [p] offsets of the packed blocks */
} hdr_t;

static size_t hdr_bytes(int p) { return (sizeof(hdr_t) + 2 * (size_t)p * sizeof(uint64_t) + 63) & ~(size_t)63; }

static size_t piece(size_t cnt, size_t off, size_t chunk) { return off < cnt ? coll_min_sz(chunk, cnt - off) : 0; }
/* The bytes read from a member's published buffer: my block at zoff (read
 * from its header: unchecked) of cnt elements; an overflow asks for all. */
static size_t zc_span(size_t zoff, size_t cnt, size_t es)
{
    size_t end, bytes;
    if (!cnt)
        return 0;
    if (__builtin_add_overflow(zoff, cnt, &end) || __builtin_mul_overflow(end, es, &bytes))
        return SIZE_MAX;
    return bytes;
}

/* Copy this rank's data for chunk k into stage half `half` (slot i = for rank i). */
static void stage_chunk(coll_comm *comm, char *half, int p, int me, const char *sb, const size_t *scounts,
                        const size_t *sdispls, size_t k, size_t c, size_t es)
{
    for (int i = 0; i < p; i++) {
        size_t cnt = piece(scounts[i], k * c, c);
        if (i != me && cnt)
            coll_direct_copy(comm, half + (size_t)i * c * es, sb + (sdispls[i] + k * c) * es, cnt * es);
    }
}

/* The opening small exchange: my header (+ my packed data when it fits in the
 * small slot) posted for every member; my send buffer published for zero-copy
 * when registered (*reg). */
static coll_status_t post_header(coll_comm *comm, const coll_group_t *g, const char *sb, const size_t *scounts,
                                 const size_t *sdispls, const size_t *rcounts, size_t es, int *reg, uint64_t *seq)
{
    int p = g->size, me = g->me;
    size_t hb = hdr_bytes(p), mymax = 0, extent = 0, packed = 0;
    for (int i = 0; i < p; i++) {
        if (i == me)
            continue;
        mymax = scounts[i] > mymax ? scounts[i] : mymax;
        mymax = rcounts[i] > mymax ? rcounts[i] : mymax;
        if (scounts[i] && sdispls[i] + scounts[i] > extent)
            extent = sdispls[i] + scounts[i];
        packed += scounts[i];
    }
    *reg = extent && coll_direct_is_registered(comm, sb, extent * es);
    coll_direct_publish(comm, PUB_SEND, *reg ? sb : NULL);
    int fits = hb + packed * es <= coll_direct_small_max(comm);
    char *post;
    COLL_CHECK(coll_comm_scratch(comm, fits ? hb + packed * es : hb, (void **)&post));
    hdr_t *h = (hdr_t *)post;
    h->maxcnt = mymax;
    h->zc_ok = *reg || extent == 0;
    h->fits = (uint64_t)fits;
    for (size_t i = 0, o = 0; i < (size_t)p; i++) {
        h->words[i] = sdispls[i];
        h->words[(size_t)p + i] = o;
        if (fits && i != (size_t)me && scounts[i]) {
            coll_direct_copy(comm, post + hb + o * es, sb + sdispls[i] * es, scounts[i] * es);
            o += scounts[i];
        }
    }
    COLL_CHECK(coll_direct_small_post(comm, post, fits ? hb + packed * es : hb, seq));
    return coll_direct_small_wait_all(comm, *seq);
}

/* Every member's packed data fitted: my blocks straight from their slots. */
static void copy_packed(coll_comm *comm, const coll_group_t *g, uint64_t seq, char *rb, const size_t *rcounts,
                        const size_t *rdispls, size_t es)
{
    int p = g->size, me = g->me;
    size_t hb = hdr_bytes(p);
    for (int j = 0; j < p; j++) {
        const char *slot = coll_direct_small_peer(comm, coll_group_lr(comm, g, j), seq);
        if (j != me && rcounts[j])
            coll_direct_copy(comm, rb + rdispls[j] * es,
                             slot + hb + ((const hdr_t *)slot)->words[(size_t)p + (size_t)me] * es, rcounts[j] * es);
    }
}

/* The general case: chunks of c elements per member through the two stage
 * halves (staged by members not published for zero-copy), gmax elements at
 * most per peer; zc[j] / zoff[j]: member j's published buffer and my block in it. */
static coll_status_t staged_rounds(coll_comm *comm, const coll_group_t *g, const char *sb, const size_t *scounts,
                                   const size_t *sdispls, char *rb, const size_t *rcounts, const size_t *rdispls,
                                   size_t es, int reg, size_t gmax, const char *const *zc, const size_t *zoff)
{
    int p = g->size, me = g->me;
    size_t half = coll_direct_stage_bytes(comm) / 2, c = half / es / (size_t)p;
    char *mine = coll_direct_stage(comm, coll_group_lr(comm, g, me));
    size_t nk = (gmax + c - 1) / c;
    for (size_t k = 0; k < nk; k++) {
        size_t hoff = (k % 2) * half;
        if (!reg)
            stage_chunk(comm, mine + hoff, p, me, sb, scounts, sdispls, k, c, es);
        COLL_CHECK(coll_direct_barrier(comm));
        for (int j = 0; j < p; j++) {
            size_t cnt = piece(rcounts[j], k * c, c);
            if (j == me || !cnt)
                continue;
            const char *src = zc[j]
                ? zc[j] + (zoff[j] + k * c) * es
                : (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + hoff + (size_t)me * c * es;
            coll_direct_copy(comm, rb + (rdispls[j] + k * c) * es, src, cnt * es);
        }
    }
    return coll_direct_barrier(comm); /* peers are done reading my stage and buffers */
}

coll_status_t coll_alltoallv_direct_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                        const size_t *scounts, const size_t *sdispls, void *recvbuf,
                                        const size_t *rcounts, const size_t *rdispls, coll_dtype_t dt)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt);
    const char *sb = sendbuf;
    char *rb = recvbuf;
    COLL_CHECK(coll_alltoallv_self(g, sb, scounts, sdispls, rb, rcounts, rdispls, es));
    if (p == 1)
        return COLL_SUCCESS;
    if (hdr_bytes(p) > coll_direct_small_max(comm) || coll_direct_stage_bytes(comm) / 2 / es / (size_t)p == 0)
        return coll_error(COLL_ERR_UNSUPPORTED, COLL_SUB_COLL,
                          "alltoallv direct: shared buffers too small for %d ranks", p);
    int reg;
    uint64_t seq;
    COLL_CHECK(post_header(comm, g, sb, scounts, sdispls, rcounts, es, &reg, &seq));
    const char *zc[COLL_MAX_LOCAL];
    size_t zoff[COLL_MAX_LOCAL], gmax = 0;
    int all_fit = 1, all_zc = 1;
    for (int j = 0; j < p; j++) {
        const hdr_t *hj = coll_direct_small_peer(comm, coll_group_lr(comm, g, j), seq);
        gmax = hj->maxcnt > gmax ? (size_t)hj->maxcnt : gmax;
        all_fit &= hj->fits != 0;
        all_zc &= hj->zc_ok != 0;
        zoff[j] = (size_t)hj->words[me];
        zc[j] = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, j), PUB_SEND, zc_span(zoff[j], rcounts[j], es));
    }
    if (all_fit)
        copy_packed(comm, g, seq, rb, rcounts, rdispls, es);
    coll_direct_small_done(comm, seq);
    if (all_fit)
        return COLL_SUCCESS;
    if (all_zc) {
        for (int j = 0; j < p; j++)
            if (j != me && rcounts[j])
                coll_direct_copy(comm, rb + rdispls[j] * es, zc[j] + zoff[j] * es, rcounts[j] * es);
        return coll_direct_barrier(comm); /* peers are done reading my send buffer */
    }
    return staged_rounds(comm, g, sb, scounts, sdispls, rb, rcounts, rdispls, es, reg, gmax, zc, zoff);
}

static int usable(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_direct_usable(comm, g, (size_t)g->size * coll_dtype_size(a->dt)) /* an element per member */
        && (g->size == 1 || hdr_bytes(g->size) <= coll_direct_small_max(comm));
}

/* a->scounts etc. are indexed by member of g (global rank on the world). */
static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_alltoallv_direct_run(comm, g, a->sendbuf, a->scounts, a->sdispls, a->recvbuf, a->rcounts, a->rdispls,
                                     a->dt);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double n = (double)a->bytes, ov = coll_tuning_oversub(comm);
    /* the path depends on every rank's counts; estimate it from mine */
    if (n + (double)hdr_bytes(g->size) <= (double)coll_direct_small_max(comm))
        return l->bar_us * ov + 2 * n * l->beta_us_per_b;
    return (coll_cost_direct_rounds(comm, n) + 2) * l->bar_us * ov + 2 * n * l->beta_us_per_b;
}

const coll_algo_t coll_algo_alltoallv_direct
    = COLL_ALGO(COLL_ALLTOALLV, "direct", .flags = COLL_ALGO_F_SINGLE_HOST,
                .desc = "shared memory, one host: one small exchange of headers (and small data), then per-peer slots "
                        "staged or zero-copy",
                .usable = usable);
