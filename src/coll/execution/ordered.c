/*
 * ordered.c - ReduceScatterV whose every element is reduced in member order
 * (see ordered.h): the building block of the *_ordered algorithms.
 *
 * Example, p = 3, member 1, one chunk: one step posts send(block 0 -> 0),
 * send(block 2 -> 2), recv(0's block 1 -> slot 0), recv(2's block 1 -> slot 2);
 * then out = (slot0 OP mine) OP slot2, the same kernel calls as
 * coll_reduce_multi over {x0, x1, x2} on one host.
 */
#include "coll/execution/ordered.h"

#include <stdlib.h>
#include <string.h>

#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

coll_status_t coll_ordered_reduce_scatterv(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *out,
                                           const size_t *counts, const size_t *displs, coll_dtype_t dt, coll_op_t op)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt), maxc = 0;
    const char *sb = sendbuf;
    for (int i = 0; i < p; i++)
        maxc = counts[i] > maxc ? counts[i] : maxc;
    if (maxc == 0)
        return COLL_SUCCESS;
    if (p == 1) {
        if ((const char *)out != sb + displs[0] * es)
            memmove(out, sb + displs[0] * es, counts[0] * es);
        return COLL_SUCCESS;
    }
    size_t chunk = coll_chunk_elems(coll_cfg_size(COLL_CFG_CHUNK), es);
    chunk = coll_min_sz(chunk, maxc);
    size_t mine = counts[me], slot = coll_min_sz(chunk, mine);
    /* private: the executor writes it during the steps (see reduce_scatter_ring.c) */
    char *tmp = slot ? coll_work_alloc(comm, (size_t)p * slot * es) : NULL;
    coll_prim_t *ops = malloc(sizeof(coll_prim_t) * 2 * (size_t)p);
    const void **in = malloc(sizeof(void *) * (size_t)p);
    coll_status_t st = COLL_SUCCESS;
    if ((slot && !tmp) || !ops || !in) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "ordered reduce: cannot allocate %zu bytes",
                        (size_t)p * slot * es);
        goto out;
    }
    for (size_t off = 0; off < maxc; off += chunk) {
        int n = 0;
        size_t len = off < mine ? coll_min_sz(chunk, mine - off) : 0;
        for (int s = 1; s < p; s++) {
            int to = (me + s) % p, from = (me - s + p) % p;
            size_t sl = off < counts[to] ? coll_min_sz(chunk, counts[to] - off) : 0;
            if (sl)
                ops[n++] = coll_prim_send(g->ranks[to], sb + (displs[to] + off) * es, sl * es);
            if (len)
                ops[n++] = coll_prim_recv(g->ranks[from], tmp + (size_t)from * slot * es, len * es);
        }
        if (n)
            COLL_CHECK_GOTO(coll_prim_run(comm, ops, n, dt, op), st, out);
        if (!len)
            continue;
        for (int i = 0; i < p; i++)
            in[i] = i == me ? (const void *)(sb + (displs[me] + off) * es)
                            : (const void *)(tmp + (size_t)i * slot * es);
        coll_reduce_multi((char *)out + off * es, in, p, len, dt, op);
    }
out:
    free(in);
    free(ops);
    coll_work_free(comm, tmp);
    return st;
}

double coll_ordered_rsv_cost(const coll_comm *comm, const coll_group_t *g, size_t max_block_bytes)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double ov = coll_tuning_oversub(comm);
    double p = g->size, m = (double)max_block_bytes;
    return coll_cost_chunks(m) * (p - 1) * coll_cost_alpha(comm, l)
        + (p - 1) * m * (l->beta_us_per_b + l->gamma_us_per_b * ov);
}

double coll_ordered_reduce_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a, double steps)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes;
    size_t blk = coll_block_count(a->count, g->size, 0) * a->esize;
    return coll_ordered_rsv_cost(comm, g, blk) + steps * coll_cost_alpha(comm, l) + (p - 1) / p * n * l->beta_us_per_b;
}
