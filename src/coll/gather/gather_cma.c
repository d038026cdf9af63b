/*
 * gather_cma.c - Gather for the ranks of one host, one copy: every member
 * writes its block straight from its send buffer into the root's receive
 * buffer (process_vm_writev; a memcpy where the root's buffer is
 * coll_mem_alloc memory mapped here) while the root copies its own block; no
 * staging, all members at once (the root reading each block would copy
 * them one after another on one core).
 *
 * Opening (cma.h): the root's receive buffer address published in the shared
 * control area (the members publish their send buffers, unused), a barrier;
 * a closing barrier after the writes tells the root every block has landed.
 *
 * Per member: one write of n/p bytes (N = p * count bytes in all, O(1) system
 * calls and published words); the root copies only its own block.
 * Cost: 2 barriers + 1 syscall + N/p (pin + beta_cma), the members in parallel.
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them write each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include "coll/algo.h"
#include "coll/cma.h"
#include "coll/coll_util.h"
#include "coll/gather/gather.h"
#include "coll/tuning.h"
#include "transport/direct.h"

enum { PUB_RECV = 0 }; /* cma and zero-copy slot */

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int p = g->size, me = g->me, ri;
    size_t blk = a->count * a->esize, all = (size_t)p * blk;
    char *rb = a->recvbuf;
    COLL_CHECK(coll_root_index(g, "gather", a->root, &ri));
    if (blk == 0 || (p == 1 && coll_alone(p, a->sendbuf, rb, blk))) /* p = 1: I am the root */
        return COLL_SUCCESS;
    int root = me == ri;
    const void *pub = root ? (const void *)rb : a->sendbuf;
    size_t len = root ? all : blk;
    COLL_CHECK(coll_cma_open(comm, 1, &pub, &len, PUB_RECV, PUB_RECV));
    if (!root)
        COLL_CHECK(coll_cma_put(comm, g, ri, PUB_RECV, (size_t)me * blk, a->sendbuf, blk));
    else if (!a->inplace)
        coll_direct_copy(comm, rb + (size_t)me * blk, a->sendbuf, blk);
    return coll_direct_barrier(comm); /* every block has landed at the root */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double p = g->size, n = (double)a->bytes;
    return coll_cma_cost(comm, g, 1, n / p);
}

const coll_algo_t coll_algo_gather_cma = COLL_ALGO(
    COLL_GATHER, "cma", .flags = COLL_ALGO_F_SINGLE_HOST,
    .desc = "one host: every member writes its block straight into the root's receive buffer (process_vm_writev), "
            "one copy, all at once; 2 barriers",
    .usable = coll_cma_usable);
