/*
 * gather_cma.c - Gather for the ranks of one host, one copy, every rank
 * copying: member j writes the first (p-1)/p of its block straight from its
 * send buffer into the root's receive buffer (process_vm_writev) while the
 * root reads the last 1/p of every member's block from the member's send
 * buffer (process_vm_readv) and copies its own block (coll_cma_root_part:
 * with 2 ranks both cores copy half of the member's block). A memcpy
 * replaces either where the other side's buffer is coll_mem_alloc memory
 * mapped here. No staging.
 *
 * Opening (cma.h): the root's receive buffer and every member's send buffer
 * published in the shared control area, a barrier; a closing barrier after
 * the copies tells the root every block has landed and keeps the members'
 * send buffers unchanged until the root has read its parts.
 *
 * Per member (blk = N/p bytes, N in all): one write of (p-1)/p blk; the root
 * p - 1 reads of blk/p and its own block copied: O(p) system calls at the
 * root, O(1) at a member, O(1) published words per rank.
 * Cost: 2 barriers + (p - 1) syscalls + (p-1)/p blk (pin + beta_cma) + blk beta_cma.
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them write each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include "coll/algo.h"
#include "coll/cma.h"
#include "coll/coll_util.h"
#include "coll/gather/gather.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int p = g->size, ri;
    size_t blk = a->count * a->esize;
    char *rb = a->recvbuf;
    COLL_CHECK(coll_root_index(g, "gather", a->root, &ri));
    if (blk == 0 || (p == 1 && coll_alone(p, a->sendbuf, rb, blk))) /* p = 1: I am the root */
        return COLL_SUCCESS;
    return coll_cma_rooted(comm, g, ri, blk, rb, (char *)a->sendbuf, a->inplace, 1);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_cma_rooted_cost(comm, g, a);
}

const coll_algo_t coll_algo_gather_cma
    = COLL_ALGO(COLL_GATHER, "cma", .flags = COLL_ALGO_F_SINGLE_HOST,
                .desc = "one host: members write (p-1)/p of their block straight into the root's receive buffer "
                        "(process_vm_writev) while the root reads the rest (process_vm_readv), one copy; 2 barriers",
                .usable = coll_cma_usable);
