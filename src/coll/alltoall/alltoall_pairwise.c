/*
 * alltoall_pairwise.c - pairwise-exchange AllToAll: rank me copies its own
 * block, then in step s = 1..p-1 sends block me+s to rank me+s while receiving
 * block me-s from rank me-s (mod p). Every rank talks to one peer in each
 * direction per step, so links are never oversubscribed and any p works.
 *
 * Cost (p ranks, n = bytes sent by each rank in all, c = 1 + n/p/COLL_CHUNK):
 *   (p-1) c alpha + (p-1)/p n beta   (beta twice on shm: copy in + out)
 * A block moves as one message, but the transports hand it over in slots /
 * socket writes; the model charges one alpha per COLL_CHUNK like the chunked
 * ring models do, so that large blocks compare fairly with them. Any transport.
 * alpha is scaled by ranks per core when the host is oversubscribed, as the
 * barriers of the direct algorithms are: every step then waits for a context
 * switch.
 *
 * COLL_ALLTOALL_WINDOW steps can be in flight at once (coll_prim_pairwise),
 * default 1: between namespace hosts at 5 Gbit/s, windows of 2-8 were no
 * faster in interleaved rounds (4 hosts x 1 rank 64M: 1.08x [0.84-1.19]) and
 * slower with 2 ranks per host at 1M (0.63x [0.45-0.88]):
 * bench/results/alltoall-window-20261204.md.
 *
 * Example, p = 3, rank 0: step 1 sends block 1 to rank 1 and receives rank 2's
 * block 0; step 2 sends block 2 to rank 2 and receives rank 1's block 0.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/alltoall/alltoall.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

typedef struct {
    const char *sb;
    char *rb;
    size_t blk;
} a2a_ctx_t;

static coll_pair_blk_t a2a_blk(const void *ctx, int j)
{
    const a2a_ctx_t *c = ctx;
    return (coll_pair_blk_t){c->sb + (size_t)j * c->blk, c->blk, c->rb + (size_t)j * c->blk, c->blk};
}

coll_status_t coll_alltoall_pairwise_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                         size_t n, coll_dtype_t dt)
{
    a2a_ctx_t c = {sendbuf, recvbuf, n * coll_dtype_size(dt)};
    if (n == 0)
        return COLL_SUCCESS;
    memcpy(c.rb + (size_t)g->me * c.blk, c.sb + (size_t)g->me * c.blk, c.blk);
    return coll_prim_pairwise(comm, g, a2a_blk, &c);
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_alltoall_pairwise_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    /* one alpha per COLL_CHUNK of a block, as the chunked ring models count it */
    return coll_cost_ring_pass(comm, g, (double)a->bytes);
}

const coll_algo_t coll_algo_alltoall_pairwise
    = COLL_ALGO(COLL_ALLTOALL, "pairwise", .flags = COLL_ALGO_F_ALL_PEERS,
                .desc = "pairwise exchange: p-1 steps, step s sends to me+s and receives from me-s");
