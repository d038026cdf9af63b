/*
 * reduce_scatter_direct.c - shared-memory ReduceScatter for the ranks of one
 * host. Each rank stages its input blocks for the others, a barrier, then rank
 * i reduces block i straight out of every peer's stage (its own contribution
 * out of its send buffer) into its own receive buffer, in the fixed order
 * 0..p-1 (run to run identical, whichever rank is slow). No output stage and
 * no second copy: the result lands in recvbuf directly (streamed when the
 * call's result is large: coll_direct_reduce_out).
 *
 * The stage half holds one chunk of every block, c = (COLL_BUFFSIZE/2)/p
 * bytes each (slot j = chunk of block j); chunks alternate between the two
 * halves of the stage, so one barrier per chunk suffices (a rank reaches the
 * barrier after chunk k+1 only once it has read chunk k: see the example in
 * allgather_direct.c). With zero-copy send buffers on every rank nothing is staged:
 * one barrier, then each rank reduces its block from the peers' send buffers.
 * Stage protocol as in allgather_direct.c: only the first half of the stage is
 * written before the first barrier, and a final barrier ends the call.
 * When the whole input fits a small slot (coll_direct_small_max) it goes through
 * the double-buffered small exchange instead: one synchronisation in all.
 *
 * In place (recvbuf == sendbuf + me*count) the result overwrites my own
 * input block, which only I read; coll_reduce_multi accumulates through a
 * private block buffer when out is one of its inputs, so the fixed order
 * 0..p-1 is kept.
 *
 * Cost (p ranks, n = total input bytes, c = ceil(n / (COLL_BUFFSIZE/2)) chunks):
 *   (c + 1) barriers + (p-1)/p n beta (copy in) + (p-1)/p n gamma
 * small input: 1 sync + n beta + (p-1)/p n gamma; zero-copy: 2 barriers + (p-1)/p n gamma.
 * Constraint: the group is exactly the ranks of this host.
 */
#include <math.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/reduce_scatter/reduce_scatter.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0 };

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v);
    /* small, one synchronisation: every rank posts its whole input and reduces its block */
    if ((size_t)v.p * v.n * v.es <= coll_direct_small_max(comm))
        return coll_direct_small_reduce(comm, g, v.sb, (size_t)v.p * v.n * v.es, (size_t)v.me * v.n * v.es, v.rb, v.n,
                                        a->dt, a->op);
    size_t half = coll_direct_stage_bytes(comm) / 2, c = half / v.es / (size_t)v.p;
    if (c == 0)
        return coll_error(COLL_ERR_UNSUPPORTED, COLL_SUB_COLL,
                          "reduce_scatter direct: stage of %zu bytes too small for %d ranks", half * 2, v.p);
    c = coll_min_sz(c, v.n); /* one chunk: blocks packed, p n es bytes */
    size_t rot = coll_stage_rot(comm, (size_t)v.p * v.n * v.es, half);
    int reg = coll_direct_is_registered(comm, v.sb, (size_t)v.p * v.n * v.es);
    coll_direct_publish(comm, PUB_SEND, reg ? v.sb : NULL);
    char *mine = (char *)coll_direct_stage(comm, coll_group_lr(comm, g, v.me)) + rot;
    const char *zc[COLL_MAX_LOCAL], *src[COLL_MAX_LOCAL];
    for (size_t k = 0, off = 0; off < v.n; k++, off += c) {
        size_t cnt = coll_min_sz(c, v.n - off), h = (k % 2) * half;
        if (!reg)
            for (int i = 0; i < v.p; i++)
                if (i != v.me) /* my own block is read from sendbuf */
                    coll_direct_copy(comm, mine + h + (size_t)i * c * v.es, v.sb + ((size_t)i * v.n + off) * v.es,
                                     cnt * v.es);
        COLL_CHECK(coll_direct_barrier(comm));
        if (k == 0 && coll_group_peer_ptrs(comm, g, PUB_SEND, (size_t)v.p * v.n * v.es, NULL, zc)) {
            for (int j = 0; j < v.p; j++)
                src[j] = zc[j] + (size_t)v.me * v.n * v.es;
            coll_direct_reduce_out(comm, v.rb, (const void *const *)src, v.p, v.n, a->dt, a->op, v.n * v.es);
            break;
        }
        for (int j = 0; j < v.p; j++)
            src[j] = zc[j] ? zc[j] + ((size_t)v.me * v.n + off) * v.es
                : j == v.me
                ? v.sb + ((size_t)v.me * v.n + off) * v.es
                : (const char *)coll_direct_stage(comm, coll_group_lr(comm, g, j)) + rot + h + (size_t)v.me * c * v.es;
        coll_direct_reduce_out(comm, v.rb + off * v.es, (const void *const *)src, v.p, cnt, a->dt, a->op, v.n * v.es);
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
    double p = g->size, n = (double)a->bytes, ov = coll_tuning_oversub(comm);
    if (n <= (double)coll_direct_small_max(comm)) /* small exchange: everything copied in, 1 sync */
        return l->bar_us * ov + n * l->beta_us_per_b + (p - 1) / p * n * l->gamma_us_per_b * ov;
    return (coll_cost_direct_rounds(comm, n) + 1) * l->bar_us * ov
        + (p - 1) / p * n * (l->beta_us_per_b + l->gamma_us_per_b * ov);
}

const coll_algo_t coll_algo_reduce_scatter_direct
    = COLL_ALGO(COLL_REDUCE_SCATTER, "direct", .flags = COLL_ALGO_F_SINGLE_HOST | COLL_ALGO_F_DETERMINISTIC,
                .desc = "shared memory, one host: inputs staged (or zero-copy), rank i reduces block i from every peer "
                        "in order 0..p-1",
                .usable = usable);
