/*
 * alltoall_cma.c - AllToAll for the ranks of one host, large blocks, one
 * copy: every rank reads its block from each peer's send buffer straight into
 * its receive buffer (process_vm_readv; a memcpy where the peer's buffer is
 * coll_mem_alloc memory mapped here); all ranks copy at once, no staging.
 *
 * Opening (cma.h): the send buffer's address published in the shared control
 * area, a barrier; a closing barrier after the reads keeps every send buffer
 * unchanged until the last peer has read it. Send and receive buffers must
 * not overlap (a peer may still read my send buffer while I write).
 *
 * Per rank (n = bytes each rank sends in all): p - 1 reads of n/p bytes
 * (O(p) system calls, O(1) published words), the own block copied locally;
 * memory traffic n read + n written (staging: twice the copies).
 * Cost: 2 barriers + (p - 1) syscalls + (p-1)/p n (pin + beta_cma) + n/p beta_cma.
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them read each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include "coll/algo.h"
#include "coll/alltoall/alltoall.h"
#include "coll/execution/cma.h"
#include "coll/util/coll_util.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0 }; /* cma and zero-copy slot */

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int p = g->size, me = g->me;
    size_t blk = a->count * a->esize, all = (size_t)p * blk;
    const char *sb = a->sendbuf;
    char *rb = a->recvbuf;
    if (blk == 0 || coll_alone(p, sb, rb, blk))
        return COLL_SUCCESS;
    COLL_CHECK(coll_cma_open(comm, 1, &a->sendbuf, &all, PUB_SEND, PUB_SEND));
    coll_direct_copy(comm, rb + (size_t)me * blk, sb + (size_t)me * blk, blk);
    for (int s = 1; s < p; s++) { /* me + 1 first: no peer is read by all at once */
        int j = (me + s) % p;
        COLL_CHECK(coll_cma_get(comm, g, j, PUB_SEND, (size_t)me * blk, rb + (size_t)j * blk, blk));
    }
    return coll_direct_barrier(comm); /* peers are done reading my send buffer */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double p = g->size, n = (double)a->bytes;
    return coll_cma_cost(comm, g, p - 1, (p - 1) / p * n) + n / p * coll_tuning_link(comm, g)->beta_us_per_b * 0.5;
}

const coll_algo_t coll_algo_alltoall_cma
    = COLL_ALGO(COLL_ALLTOALL, "cma", .flags = COLL_ALGO_F_SINGLE_HOST,
                .desc = "one host, large blocks: every rank reads its block from each peer's send buffer "
                        "(process_vm_readv), one copy, all ranks at once; 2 barriers",
                .usable = coll_cma_usable);
