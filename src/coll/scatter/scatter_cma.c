/*
 * scatter_cma.c - Scatter for the ranks of one host, one copy: every member
 * reads its block straight from the root's send buffer into its receive
 * buffer (process_vm_readv; a memcpy where the root's buffer is
 * coll_mem_alloc memory mapped here) while the root copies its own block; no
 * staging, all members at once.
 *
 * Opening (cma.h): the root's send buffer address published in the shared
 * control area (the members publish theirs, unused), a barrier; a closing
 * barrier after the reads keeps the root's send buffer unchanged until every
 * member has read its block.
 *
 * Per member: one read of n/p bytes (N = p * count bytes in all, O(1) system
 * calls and published words); the root copies only its own block.
 * Cost: 2 barriers + 1 syscall + N/p (pin + beta_cma), the members in parallel.
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them read each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include "coll/algo.h"
#include "coll/cma.h"
#include "coll/coll_util.h"
#include "coll/scatter/scatter.h"
#include "coll/tuning.h"
#include "transport/direct.h"

enum { PUB_SEND = 0 }; /* cma and zero-copy slot */

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int p = g->size, me = g->me, ri;
    size_t blk = a->count * a->esize, all = (size_t)p * blk;
    const char *sb = a->sendbuf;
    COLL_CHECK(coll_root_index(g, "scatter", a->root, &ri));
    if (blk == 0 || (p == 1 && coll_alone(p, sb, a->recvbuf, blk))) /* p = 1: I am the root */
        return COLL_SUCCESS;
    int root = me == ri;
    const void *pub = root ? sb : a->recvbuf;
    size_t len = root ? all : blk;
    COLL_CHECK(coll_cma_open(comm, 1, &pub, &len, PUB_SEND, PUB_SEND));
    if (!root)
        COLL_CHECK(coll_cma_get(comm, g, ri, PUB_SEND, (size_t)me * blk, a->recvbuf, blk));
    else if (!a->inplace)
        coll_direct_copy(comm, a->recvbuf, sb + (size_t)me * blk, blk);
    return coll_direct_barrier(comm); /* every member has read its block */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double p = g->size, n = (double)a->bytes;
    return coll_cma_cost(comm, g, 1, n / p);
}

const coll_algo_t coll_algo_scatter_cma = COLL_ALGO(
    COLL_SCATTER, "cma", .flags = COLL_ALGO_F_SINGLE_HOST,
    .desc = "one host: every member reads its block straight from the root's send buffer (process_vm_readv), "
            "one copy, all at once; 2 barriers",
    .usable = coll_cma_usable);
