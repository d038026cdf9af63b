/*
 * reduce_pipeline.c - chain Reduce: the chain root -> root+1 -> ... -> root+p-1
 * (tree.h) run backwards, the message cut into c chunks of COLL_CHUNK bytes.
 * The tail sends its input; every other member receives the partial result of
 * chunk s from its successor and reduces it with its own input on arrival
 * (acc = mine OP incoming) while it forwards chunk s-1 to its predecessor; the
 * root reduces into recvbuf (in place when sendbuf == recvbuf). Inner members
 * alternate two chunk buffers of working memory (2 COLL_CHUNK bytes).
 *
 * Cost (p ranks, n bytes, c chunks): (p - 2 + c) (alpha + n/c (beta + gamma))
 *   -> n (beta + gamma) for large n, but p alpha of latency.
 * Result at the root: x_r OP (x_r+1 OP (... OP x_r+p-1)), the same order on
 * every call (bitwise reproducible). Any p, any root, any transport.
 *
 * Example, p = 3, root = 0, c = 2: step 0: 2 -> 1 chunk 0; step 1: 2 -> 1
 * chunk 1 while 1 -> 0 chunk 0 (= x1 OP x2); step 2: 1 -> 0 chunk 1.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/reduce/reduce.h"
#include "coll/execution/tree.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v);
    /* data flows against the chain: from my chain successor to my predecessor */
    int nx = coll_tree_chain_next(v.me, v.ri, v.p), pv = coll_tree_chain_prev(v.me, v.ri, v.p);
    int from = nx >= 0 ? g->ranks[nx] : -1, to = pv >= 0 ? g->ranks[pv] : -1;
    size_t chunk = coll_chunk_elems(coll_cfg_size(COLL_CFG_CHUNK), v.es), nc = (v.n + chunk - 1) / chunk;
    char *acc[2] = {v.rb, v.rb}; /* the root accumulates in place in recvbuf */
    void *tmp = NULL;
    int inner = to >= 0 && from >= 0;
    if (inner) {
        COLL_CHECK(coll_tmp_get(comm, g, 2 * chunk * v.es, &tmp));
        acc[0] = tmp;
        acc[1] = (char *)tmp + chunk * v.es;
    }
    coll_status_t st = COLL_SUCCESS;
    /* step s: receive-reduce chunk s (s < nc), forward chunk s-1 (s >= 1); the
     * tail has nothing to receive, so it runs one step ahead: step s sends chunk s */
    for (size_t s = from < 0 ? 1 : 0; s <= nc; s++) {
        size_t rcnt = s < nc ? coll_min_sz(chunk, v.n - s * chunk) : 0;
        size_t scnt = s >= 1 ? coll_min_sz(chunk, v.n - (s - 1) * chunk) : 0;
        const char *sptr = NULL; /* the root (to < 0) never sends */
        if (s >= 1 && to >= 0)
            sptr = from < 0 ? v.sb + (s - 1) * chunk * v.es : acc[(s - 1) % 2];
        char *rdst = NULL;
        if (s < nc)
            rdst = to < 0 ? acc[0] + s * chunk * v.es : acc[s % 2];
        COLL_CHECK_GOTO(coll_prim_send_recv_reduce(comm, sptr, scnt * v.es, to, rdst,
                                                   s < nc ? v.sb + s * chunk * v.es : NULL, rcnt * v.es, from, a->dt,
                                                   a->op),
                        st, out);
    }
out:
    if (inner)
        coll_tmp_put(comm, g, tmp);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_cost_chain(comm, g, (double)a->bytes, 1);
}

const coll_algo_t coll_algo_reduce_pipeline = COLL_ALGO(
    COLL_REDUCE, "pipeline",
    .desc = "chain to the root, receive-reduce in COLL_CHUNK pieces; (p-2+c)(alpha + n/c (beta+gamma)), large");
