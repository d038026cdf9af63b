/*
 * scatter_cma.c - Scatter for the ranks of one host, one copy, every rank
 * copying: member j reads the first (p-1)/p of its block straight from the
 * root's send buffer into its receive buffer (process_vm_readv) while the
 * root writes the last 1/p of every member's block into the member's receive
 * buffer (process_vm_writev) and copies its own block (coll_cma_root_part:
 * with 2 ranks both cores copy half of the member's block). A memcpy
 * replaces either where the other side's buffer is coll_mem_alloc memory
 * mapped here. No staging.
 *
 * Opening (cma.h): the root's send buffer and every member's receive buffer
 * published in the shared control area, a barrier; a closing barrier after
 * the copies keeps the buffers unchanged until every copy is done.
 *
 * Per member (blk = N/p bytes, N in all): one read of (p-1)/p blk; the root
 * p - 1 writes of blk/p and its own block copied: O(p) system calls at the
 * root, O(1) at a member, O(1) published words per rank.
 * Cost: 2 barriers + (p - 1) syscalls + (p-1)/p blk (pin + beta_cma) + blk beta_cma.
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them read each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include "coll/algo.h"
#include "coll/cma.h"
#include "coll/coll_util.h"
#include "coll/scatter/scatter.h"
#include "coll/tuning.h"
#include "transport/direct.h"

enum { PUB_BUF = 0 }; /* cma and zero-copy slot: the root's send, a member's receive buffer */

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
    size_t len = root ? all : blk, off, part = coll_cma_root_part(blk, p, &off);
    COLL_CHECK(coll_cma_open(comm, 1, &pub, &len, PUB_BUF, PUB_BUF));
    if (!root && off)
        COLL_CHECK(coll_cma_get(comm, g, ri, PUB_BUF, (size_t)me * blk, a->recvbuf, off));
    for (int s = 1; root && s < p; s++) {
        int j = (me + s) % p;
        COLL_CHECK(coll_cma_put(comm, g, j, PUB_BUF, off, sb + (size_t)j * blk + off, part));
    }
    if (root && !a->inplace)
        coll_direct_copy(comm, a->recvbuf, sb + (size_t)me * blk, blk);
    return coll_direct_barrier(comm); /* every part has landed */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double p = g->size, n = (double)a->bytes;
    return coll_cma_cost(comm, g, p - 1, (p - 1) / p * n / p) + n / p * coll_tuning_link(comm, g)->beta_us_per_b * 0.5;
}

const coll_algo_t coll_algo_scatter_cma
    = COLL_ALGO(COLL_SCATTER, "cma", .flags = COLL_ALGO_F_SINGLE_HOST,
                .desc = "one host: members read (p-1)/p of their block straight from the root's send buffer "
                        "(process_vm_readv) while the root writes the rest (process_vm_writev), one copy; 2 barriers",
                .usable = coll_cma_usable);
