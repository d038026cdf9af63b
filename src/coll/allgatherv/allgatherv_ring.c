/*
 * allgatherv_ring.c - ring AllGatherV: the ring AllGather (allgather_ring.c)
 * with per-rank counts and displacements. In step s rank r forwards block
 * (r - s) mod p to its right neighbour and receives block (r - s - 1) mod p
 * from its left one; every block is cut into chunks of COLL_CHUNK bytes and
 * the ring runs once per chunk index, up to the largest block. A block with no
 * data left in a chunk sends and receives nothing (both ends compute the same
 * zero length from the shared counts), so zero counts and gaps are free.
 *
 * Cost (p ranks, m = largest block in bytes, c = 1 + m/COLL_CHUNK chunks):
 *   (p-1) c alpha + (p-1) m beta     (beta twice on shm: copy in + out)
 * The slowest link carries the largest block at every step, so uneven counts
 * cost as if every block were the largest. Any p, any transport.
 * alpha is scaled by ranks per core when the host is oversubscribed, as the
 * barriers of the direct algorithms are: every step then waits for a context
 * switch.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/allgatherv/allgatherv.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

/* Elements of block cnt left at chunk offset off (0 once the block is done). */
static size_t piece(size_t cnt, size_t off, size_t chunk) { return off < cnt ? coll_min_sz(chunk, cnt - off) : 0; }

coll_status_t coll_allgatherv_ring_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                       const size_t *counts, const size_t *displs, coll_dtype_t dt)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt), maxc = 0;
    char *rb = recvbuf;
    if (counts[me] && (const char *)sendbuf != rb + displs[me] * es)
        memcpy(rb + displs[me] * es, sendbuf, counts[me] * es);
    if (p == 1)
        return COLL_SUCCESS;
    for (int i = 0; i < p; i++)
        maxc = counts[i] > maxc ? counts[i] : maxc;
    int right = g->ranks[coll_ring_next(me, p)], left = g->ranks[coll_ring_prev(me, p)];
    size_t chunk = coll_chunk_elems(coll_cfg_size(COLL_CFG_CHUNK), es);
    for (size_t off = 0; off < maxc; off += chunk) {
        for (int s = 0; s < p - 1; s++) {
            int sb = coll_mod(me - s, p), rbk = coll_mod(me - s - 1, p);
            COLL_CHECK(coll_prim_sendrecv(comm, rb + (displs[sb] + off) * es, piece(counts[sb], off, chunk) * es, right,
                                          rb + (displs[rbk] + off) * es, piece(counts[rbk], off, chunk) * es, left));
        }
    }
    return COLL_SUCCESS;
}

/* a->counts / a->displs are indexed by member of g (global rank on the world). */
static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_allgatherv_ring_run(comm, g, a->sendbuf, a->recvbuf, a->counts, a->displs, a->dt);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, m;
    coll_cost_v_bytes(g, a, &m, NULL);
    return (p - 1) * (coll_cost_chunks(m) * coll_cost_alpha(comm, l) + m * coll_cost_beta(comm, g, l));
}

const coll_algo_t coll_algo_allgatherv_ring
    = COLL_ALGO(COLL_ALLGATHERV, "ring",
                .desc = "ring with per-rank counts/displacements, chunk-pipelined: p-1 steps of the largest block");
