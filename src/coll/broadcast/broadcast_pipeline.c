/*
 * broadcast_pipeline.c - chain Broadcast: root -> root+1 -> ... -> root+p-1,
 * the message cut into c chunks of COLL_CHUNK bytes. In step s a member
 * receives chunk s from its predecessor while it forwards chunk s-1 to its
 * successor, so once the pipeline is full every link carries a chunk.
 *
 * Cost (p ranks, n bytes, c chunks): (p - 2 + c) (alpha + n/c beta)
 *   -> n beta for large n (bandwidth-optimal), but p alpha of latency.
 * Any p, any root, any transport.
 *
 * Example, p = 3, root = 1, c = 2: step 0: 1 -> 2 chunk 0; step 1: 1 -> 2
 * chunk 1 while 2 -> 0 chunk 0; step 2: 2 -> 0 chunk 1.
 */
#include "coll/algo.h"
#include "coll/broadcast/broadcast.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/execution/tree.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

coll_status_t coll_broadcast_pipeline_run(coll_comm *comm, const coll_group_t *g, void *buf, size_t n, coll_dtype_t dt,
                                          int root)
{
    int p = g->size, me = g->me, ri;
    size_t es = coll_dtype_size(dt);
    COLL_CHECK(coll_root_index(g, "broadcast", root, &ri));
    if (p == 1 || n == 0)
        return COLL_SUCCESS;
    int prev = coll_tree_chain_prev(me, ri, p), next = coll_tree_chain_next(me, ri, p);
    int from = prev >= 0 ? g->ranks[prev] : -1, to = next >= 0 ? g->ranks[next] : -1;
    size_t chunk = coll_chunk_elems(coll_cfg_size(COLL_CFG_CHUNK), es), nc = (n + chunk - 1) / chunk;
    char *b = buf;
    /* step s: receive chunk s (s < nc), forward chunk s-1 (s >= 1); the root
     * has nothing to receive, so it runs one step ahead: step s sends chunk s. */
    size_t first = from < 0 ? 1 : 0;
    for (size_t s = first; s <= nc; s++) {
        size_t rcnt = s < nc ? coll_min_sz(chunk, n - s * chunk) : 0;
        size_t scnt = s >= 1 ? coll_min_sz(chunk, n - (s - 1) * chunk) : 0;
        COLL_CHECK(coll_prim_sendrecv(comm, s >= 1 ? b + (s - 1) * chunk * es : NULL, scnt * es, to,
                                      s < nc ? b + s * chunk * es : NULL, rcnt * es, from));
    }
    return COLL_SUCCESS;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_broadcast_pipeline_run(comm, g, a->recvbuf, a->count, a->dt, a->root);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_cost_chain(comm, g, (double)a->bytes, 0);
}

const coll_algo_t coll_algo_broadcast_pipeline
    = COLL_ALGO(COLL_BROADCAST, "pipeline",
                .desc = "chain root -> root+1 -> ... in COLL_CHUNK pieces; (p-2+c)(alpha + n/c beta), large messages");
