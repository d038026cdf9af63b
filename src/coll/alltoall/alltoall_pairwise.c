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
 * Example, p = 3, rank 0: step 1 sends block 1 to rank 1 and receives rank 2's
 * block 0; step 2 sends block 2 to rank 2 and receives rank 1's block 0.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/alltoall/alltoall.h"
#include "coll/coll_util.h"
#include "coll/cost.h"
#include "coll/prim.h"
#include "coll/tuning.h"
#include "core/config.h"

coll_status_t coll_alltoall_pairwise_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                         size_t n, coll_dtype_t dt)
{
    int p = g->size, me = g->me;
    size_t blk = n * coll_dtype_size(dt);
    const char *sb = sendbuf;
    char *rb = recvbuf;
    if (n == 0)
        return COLL_SUCCESS;
    memcpy(rb + (size_t)me * blk, sb + (size_t)me * blk, blk);
    for (int s = 1; s < p; s++) {
        int to = (me + s) % p, from = coll_mod(me - s, p);
        COLL_CHECK(coll_prim_sendrecv(comm, sb + (size_t)to * blk, blk, g->ranks[to], rb + (size_t)from * blk, blk,
                                      g->ranks[from]));
    }
    return COLL_SUCCESS;
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
