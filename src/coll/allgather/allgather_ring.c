/*
 * allgather_ring.c - ring AllGather: in p-1 steps every rank passes the block
 * it received last to its right neighbour and receives the next one from its
 * left neighbour; blocks are cut into chunks of COLL_CHUNK bytes, the ring
 * runs once per chunk (bounded message size, same total traffic).
 *
 * Cost (p ranks, n = total bytes gathered, c = 1 + n/p/COLL_CHUNK chunks):
 *   (p-1) c alpha + (p-1)/p n beta      (beta counted twice on shm: copy in + out)
 * Bandwidth-optimal; latency linear in p. Any p, any transport.
 * alpha is scaled by ranks per core when the host is oversubscribed, as the
 * barriers of the direct algorithms are: every step then waits for a context
 * switch.
 *
 * Example, p = 3, blocks A B C (rank 0 owns A): step 0 rank 0 sends A to
 * rank 1 and receives C from rank 2; step 1 it forwards C and receives B.
 * Rank r sends block (r - s) mod p and receives block (r - s - 1) mod p.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/allgather/allgather.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

coll_status_t coll_allgather_ring_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                      size_t n, coll_dtype_t dt)
{
    int p = g->size, me = g->me;
    size_t es = coll_dtype_size(dt);
    char *rb = recvbuf;
    if (n == 0)
        return COLL_SUCCESS;
    if ((const char *)sendbuf != rb + (size_t)me * n * es)
        memcpy(rb + (size_t)me * n * es, sendbuf, n * es);
    if (p == 1)
        return COLL_SUCCESS;
    int right = g->ranks[coll_ring_next(me, p)], left = g->ranks[coll_ring_prev(me, p)];
    size_t chunk = coll_chunk_elems(coll_cfg_size(COLL_CFG_CHUNK), es);
    for (size_t off = 0; off < n; off += chunk) {
        size_t cnt = coll_min_sz(chunk, n - off);
        for (int s = 0; s < p - 1; s++) {
            size_t sblk = (size_t)coll_mod(me - s, p), rblk = (size_t)coll_mod(me - s - 1, p);
            COLL_CHECK(coll_prim_sendrecv(comm, rb + (sblk * n + off) * es, cnt * es, right, rb + (rblk * n + off) * es,
                                          cnt * es, left));
        }
    }
    return COLL_SUCCESS;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_allgather_ring_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_cost_ring_pass(comm, g, (double)a->bytes);
}

const coll_algo_t coll_algo_allgather_ring
    = COLL_ALGO(COLL_ALLGATHER, "ring", .desc = "ring, chunk-pipelined: p-1 steps, (p-1)/p n bytes per rank");
