/*
 * reduce_scatterv_ring.c - ring ReduceScatterV: reduce_scatter_ring.c with
 * per-rank counts. In step s rank r sends its partial of block (r - 1 - s)
 * mod p right and receives the partial of block (r - 2 - s) mod p from the
 * left, reducing it with its own input; block r arrives last, into recvbuf.
 * Blocks are cut into chunks of COLL_CHUNK bytes and the ring runs once per
 * chunk index up to the largest block; a block with nothing left in a chunk
 * moves nothing (both ends see the same zero length from the shared counts).
 *
 * Cost (p ranks, m = largest block in bytes, c = 1 + m/COLL_CHUNK chunks):
 *   (p-1) c alpha + (p-1) m (beta + gamma)     (beta twice on shm)
 * Any p, any transport. Two private chunk buffers (malloc) carry the partials.
 * alpha (and gamma) are scaled by ranks per core when the host is oversubscribed,
 * as the barriers of the direct algorithms are: every step then waits for a
 * context switch.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/reduce_scatterv/reduce_scatterv.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

static size_t piece(size_t cnt, size_t off, size_t chunk) { return off < cnt ? coll_min_sz(chunk, cnt - off) : 0; }

coll_status_t coll_reduce_scatterv_ring_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                            const size_t *counts, const size_t *displs, coll_dtype_t dt, coll_op_t op)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt), maxc = 0;
    const char *sb = sendbuf;
    char *rb = recvbuf;
    if (coll_alone(p, sb + displs[0] * es, rb, counts[0] * es))
        return COLL_SUCCESS;
    for (int i = 0; i < p; i++)
        maxc = counts[i] > maxc ? counts[i] : maxc;
    if (maxc == 0)
        return COLL_SUCCESS;
    int right = g->ranks[coll_ring_next(me, p)], left = g->ranks[coll_ring_prev(me, p)];
    size_t chunk = coll_chunk_elems(coll_cfg_size(COLL_CFG_CHUNK), es);
    chunk = coll_min_sz(chunk, maxc);
    /* private, not comm->scratch: the executor reads and writes it during the
     * steps, and neither a transport nor a caller may share it */
    char *tmp = p > 2 ? coll_work_alloc(comm, 2 * chunk * es) : NULL; /* p = 2 receives straight into recvbuf */
    if (p > 2 && !tmp)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce_scatterv ring: cannot allocate %zu bytes",
                          2 * chunk * es);
    coll_status_t st = COLL_SUCCESS;
    for (size_t off = 0; off < maxc; off += chunk) {
        for (int s = 0; s < p - 1; s++) {
            int sblk = coll_mod(me - 1 - s, p), rblk = coll_mod(me - 2 - s, p);
            const char *src = s == 0 ? sb + (displs[sblk] + off) * es : tmp + (size_t)((s - 1) % 2) * chunk * es;
            char *dst = s == p - 2 ? rb + off * es : tmp + (size_t)(s % 2) * chunk * es;
            COLL_CHECK_GOTO(coll_prim_send_recv_reduce(comm, src, piece(counts[sblk], off, chunk) * es, right, dst,
                                                       sb + (displs[rblk] + off) * es,
                                                       piece(counts[rblk], off, chunk) * es, left, dt, op),
                            st, out);
        }
    }
out:
    coll_work_free(comm, tmp);
    return st;
}

/* a->counts / a->displs are indexed by member of g (global rank on the world). */
static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_reduce_scatterv_ring_run(comm, g, a->sendbuf, a->recvbuf, a->counts, a->displs, a->dt, a->op);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, m, gamma = l->gamma_us_per_b * coll_tuning_oversub(comm);
    coll_cost_v_bytes(g, a, &m, NULL);
    return (p - 1) * (coll_cost_chunks(m) * coll_cost_alpha(comm, l) + m * (coll_cost_beta(comm, g, l) + gamma));
}

const coll_algo_t coll_algo_reduce_scatterv_ring
    = COLL_ALGO(COLL_REDUCE_SCATTERV, "ring",
                .desc = "ring with recv-reduce and per-rank counts, chunked: p-1 steps of the largest block");
