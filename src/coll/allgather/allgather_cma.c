/*
 * allgather_cma.c - AllGather for the ranks of one host, large blocks, one
 * copy: every rank reads each peer's block straight from the peer's send
 * buffer into its receive buffer (process_vm_readv; a memcpy where the
 * peer's buffer is coll_mem_alloc memory mapped here), so all ranks copy at
 * once, each pulling its own missing blocks; no staging.
 *
 * Opening (cma.h): the send buffer's address published in the shared control
 * area, a barrier; after the reads a closing barrier keeps every send buffer
 * unchanged until the last peer has read it. In place (sendbuf = my block of
 * recvbuf) is safe: a peer reads my block j = me only, which I never write.
 *
 * Per rank: p - 1 reads of n/p bytes (O(p) system calls, O(1) published
 * words); memory traffic (p-1)/p n read + the same written (staging: n/p in
 * and (p-1)/p n out of the stage, and the stage written: about twice that).
 * Cost: 2 barriers + (p - 1) syscalls + (p-1)/p n (pin + beta_cma), with
 * beta_cma one memcpy.
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them read each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include "coll/algo.h"
#include "coll/allgather/allgather.h"
#include "coll/execution/cma.h"
#include "coll/util/coll_util.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0 }; /* cma and zero-copy slot */

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int p = g->size, me = g->me;
    size_t blk = a->count * a->esize;
    char *rb = a->recvbuf;
    if (blk == 0 || coll_alone(p, a->sendbuf, rb, blk))
        return COLL_SUCCESS;
    COLL_CHECK(coll_cma_open(comm, 1, &a->sendbuf, &blk, PUB_SEND, PUB_SEND));
    if (!a->inplace)
        coll_direct_copy(comm, rb + (size_t)me * blk, a->sendbuf, blk);
    for (int s = 1; s < p; s++) { /* me + 1 first: no peer is read by all at once */
        int j = (me + s) % p;
        COLL_CHECK(coll_cma_get(comm, g, j, PUB_SEND, 0, rb + (size_t)j * blk, blk));
    }
    return coll_direct_barrier(comm); /* peers are done reading my send buffer */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double p = g->size, n = (double)a->bytes;
    return coll_cma_cost(comm, g, p - 1, (p - 1) / p * n);
}

const coll_algo_t coll_algo_allgather_cma
    = COLL_ALGO(COLL_ALLGATHER, "cma", .flags = COLL_ALGO_F_SINGLE_HOST,
                .desc = "one host, large blocks: every rank reads each peer's block straight from its send buffer "
                        "(process_vm_readv), one copy, all ranks at once; 2 barriers",
                .usable = coll_cma_usable);
