/*
 * reduce_scatter_ring.c - ring ReduceScatter: p-1 steps; in step s rank r
 * sends its partial sum of block (r - 1 - s) mod p to its right neighbour and
 * receives the partial sum of block (r - 2 - s) mod p from its left one,
 * reducing it with its own input on arrival (recv-reduce). The last block to
 * arrive is block r, completed straight into recvbuf. Blocks are cut into
 * chunks of COLL_CHUNK bytes and the ring runs once per chunk; partial sums
 * travel through two private chunk buffers (received in one while the other
 * is sent).
 *
 * Cost (p ranks, n = total input bytes, c = 1 + n/p/COLL_CHUNK chunks):
 *   (p-1) c alpha + (p-1)/p n beta + (p-1)/p n gamma   (beta twice on shm)
 * Bandwidth-optimal; latency linear in p. Any p, any transport.
 * Block b is reduced in ring order b+1, b+2, ..., b (fixed: run to run identical).
 * alpha (and gamma) are scaled by ranks per core when the host is oversubscribed,
 * as the barriers of the direct algorithms are: every step then waits for a
 * context switch.
 *
 * Example, p = 3, rank 0, blocks A B C: step 0 sends its own C (block 2) to
 * rank 1 and receives rank 2's B, adding its own B; step 1 sends that B+B and
 * receives A+A from rank 2 (rank 1's A plus rank 2's), adding its own A into
 * recvbuf: rank 0 holds the full A.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/reduce_scatter/reduce_scatter.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v);
    int right = g->ranks[coll_ring_next(v.me, v.p)], left = g->ranks[coll_ring_prev(v.me, v.p)];
    size_t chunk = coll_chunk_elems(coll_cfg_size(COLL_CFG_CHUNK), v.es);
    chunk = coll_min_sz(chunk, v.n);
    /* private, not comm->scratch: the executor reads and writes it during the
     * steps, and neither a transport nor a caller may share it */
    char *tmp = v.p > 2 ? coll_work_alloc(comm, 2 * chunk * v.es) : NULL; /* p = 2 receives straight into recvbuf */
    if (v.p > 2 && !tmp)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "reduce_scatter ring: cannot allocate %zu bytes",
                          2 * chunk * v.es);
    coll_status_t st = COLL_SUCCESS;
    for (size_t off = 0; off < v.n; off += chunk) {
        size_t bytes = coll_min_sz(chunk, v.n - off) * v.es;
        for (int s = 0; s < v.p - 1; s++) {
            size_t sblk = (size_t)coll_mod(v.me - 1 - s, v.p), rblk = (size_t)coll_mod(v.me - 2 - s, v.p);
            const char *src = s == 0 ? v.sb + (sblk * v.n + off) * v.es : tmp + (size_t)((s - 1) % 2) * chunk * v.es;
            char *dst = s == v.p - 2 ? v.rb + off * v.es : tmp + (size_t)(s % 2) * chunk * v.es;
            COLL_CHECK_GOTO(coll_prim_send_recv_reduce(comm, src, bytes, right, dst, v.sb + (rblk * v.n + off) * v.es,
                                                       bytes, left, a->dt, a->op),
                            st, out);
        }
    }
out:
    coll_work_free(comm, tmp);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes, gamma = l->gamma_us_per_b * coll_tuning_oversub(comm);
    return (p - 1) * coll_cost_chunks(n / p) * coll_cost_alpha(comm, l)
        + (p - 1) / p * n * (coll_cost_beta(comm, g, l) + gamma);
}

const coll_algo_t coll_algo_reduce_scatter_ring
    = COLL_ALGO(COLL_REDUCE_SCATTER, "ring",
                .desc = "ring with recv-reduce, chunked: p-1 steps, (p-1)/p n bytes sent and reduced per rank");
