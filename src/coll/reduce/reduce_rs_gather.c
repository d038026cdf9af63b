/*
 * reduce_rs_gather.c - Rabenseifner Reduce for large messages: a ring
 * reduce-scatter (as in allreduce_ring, p-1 steps of whole segments) leaves
 * member i with the full reduction of segment (i+1) mod p of the
 * p nearly equal segments; then every member sends its segment to the root,
 * which receives them all at once straight into recvbuf.
 *
 * The reduce-scatter accumulates in recvbuf at the root (in place when
 * sendbuf == recvbuf: each segment is read as input before it is overwritten)
 * and in two segment buffers (2n/p bytes of working memory) elsewhere.
 *
 * Cost (p ranks, n bytes):
 *   reduce-scatter (p-1) alpha + (p-1)/p n (beta + gamma)
 *   gather         alpha + (p-1)/p n beta      (the root's link)
 *   total p alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
 * The reduction work is spread over all members, unlike pipeline/binomial
 * where every member reduces the whole message. Any p, any root, any
 * transport; n < p leaves some segments empty.
 *
 * Example, p = 3, root = 2, segments A B C: after the reduce-scatter member 0
 * holds B, member 1 holds C, member 2 holds A (it is already in place in
 * recvbuf); member 0 sends B and member 1 sends C to member 2.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/reduce/reduce.h"
#include "coll/selection/tuning.h"

#define GATHER_BATCH 64 /* receives posted per step at the root */

/* Ring reduce-scatter: in step s member me sends its partial segment me-s (its
 * own input at s = 0) to the right and reduces segment me-s-1 arriving from the
 * left with its own input; it ends owning segment (me+1) mod p, returned in
 * *own. The root accumulates in rb (its recvbuf, where the segments belong);
 * the others alternate two segment buffers of tmp (the one received in step s
 * is sent in step s+1). Whole segments per step: the transports stream and
 * reduce a message piece by piece, so cutting segments into chunks would only
 * add alpha per chunk (the steps of a ring cannot overlap). */
static coll_status_t reduce_scatter(coll_comm *comm, const coll_group_t *g, const char *sb, char *rb, char *tmp,
                                    size_t n, coll_dtype_t dt, coll_op_t op, const char **own)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt), segmax = coll_block_count(n, p, 0) * es;
    int right = g->ranks[coll_ring_next(me, p)], left = g->ranks[coll_ring_prev(me, p)];
    const char *src = NULL;
    for (int s = 0; s < p - 1; s++) {
        int ss = coll_mod(me - s, p), rs = coll_mod(me - s - 1, p);
        size_t so = coll_block_offset(n, p, ss) * es, ro = coll_block_offset(n, p, rs) * es;
        if (s == 0)
            src = sb + so;
        char *dst = rb ? rb + ro : tmp + (size_t)(s % 2) * segmax;
        COLL_CHECK(coll_prim_send_recv_reduce(comm, src, coll_block_count(n, p, ss) * es, right, dst, sb + ro,
                                              coll_block_count(n, p, rs) * es, left, dt, op));
        src = dst;
    }
    *own = src;
    return COLL_SUCCESS;
}

/* The root receives every other member's segment straight into recvbuf. */
static coll_status_t gather_at_root(coll_comm *comm, const coll_group_t *g, char *rb, size_t n, size_t es)
{
    int p = g->size;
    coll_prim_t ops[GATHER_BATCH];
    int nops = 0;
    for (int j = 0; j < p; j++) {
        int seg = coll_ring_next(j, p);
        size_t cnt = coll_block_count(n, p, seg);
        if (j != g->me && cnt)
            ops[nops++] = coll_prim_recv(g->ranks[j], rb + coll_block_offset(n, p, seg) * es, cnt * es);
        if (nops == GATHER_BATCH || (j == p - 1 && nops)) {
            COLL_CHECK(coll_prim_run(comm, ops, nops, COLL_UINT8, COLL_SUM));
            nops = 0;
        }
    }
    return COLL_SUCCESS;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v);
    const char *own;
    if (v.me == v.ri) {
        COLL_CHECK(reduce_scatter(comm, g, v.sb, v.rb, NULL, v.n, a->dt, a->op, &own));
        return gather_at_root(comm, g, v.rb, v.n, v.es);
    }
    void *tmp;
    COLL_CHECK(coll_tmp_get(comm, g, 2 * coll_block_count(v.n, v.p, 0) * v.es, &tmp));
    coll_status_t st;
    COLL_CHECK_GOTO(reduce_scatter(comm, g, v.sb, NULL, tmp, v.n, a->dt, a->op, &own), st, out);
    size_t own_bytes = coll_block_count(v.n, v.p, coll_ring_next(v.me, v.p)) * v.es;
    COLL_CHECK_GOTO(coll_prim_sendrecv(comm, own, own_bytes, a->root, NULL, 0, -1), st, out);
out:
    coll_tmp_put(comm, g, tmp);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double p = g->size, n = (double)a->bytes;
    coll_cost_step_t s = coll_cost_tree_step(comm, g);
    return p * s.alpha + 2 * (p - 1) / p * n * s.beta + (p - 1) / p * n * s.gamma;
}

const coll_algo_t coll_algo_reduce_rs_gather
    = COLL_ALGO(COLL_REDUCE, "rs_gather",
                .desc = "Rabenseifner: ring reduce-scatter + gather of the p segments at the root; 2(p-1)/p n beta, "
                        "large messages");
