/*
 * cma.h - what the single-copy algorithms of one host share (allreduce_cma
 * and the other <collective>_cma.c files): the opening that exchanges this
 * call's buffer addresses, one copy to or from a peer's published buffer, and
 * the cost of those copies.
 *
 * The addresses are exchanged per call (users pass different buffers each
 * call) through the shared control area: each rank writes 2 k words into its
 * own row (coll_direct_publish_addr, and the zero-copy pointer of each buffer:
 * coll_direct_publish), then the host barrier. A peer reads only the words of
 * the ranks it copies from or to: O(k) per rank to publish, O(1) per peer
 * touched, no message; what grows with N ranks is the barrier (O(N) on the
 * host) and, in each algorithm, the number of peers a rank touches.
 * The closing barrier of each algorithm (coll_direct_barrier) keeps every
 * published buffer alive and unchanged until every peer is done with it.
 */
#ifndef COLL_CMA_H
#define COLL_CMA_H

#include "coll/algo.h"
#include "coll/coll_util.h"

/* The usable() of every cma algorithm (algo.h; a unused): g is exactly this
 * host's ranks and, past one member, every local rank may read and write the
 * others' memory (probed at init; COLL_CMA=0 turns it off). Same answer on
 * every rank. */
int coll_cma_usable(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a);

/* The opening: bufs[i] (lens[i] bytes) published as raw address under cma
 * slot cma_slot0 + i and, when it lies whole in a coll_mem_alloc region, as
 * zero-copy pointer under slot zc_slot0 + i (else NULL there), i < k; then
 * the host barrier, after which every member's addresses are valid until its
 * closing barrier. */
coll_status_t coll_cma_open(coll_comm *comm, int k, const void *const *bufs, const size_t *lens, int cma_slot0,
                            int zc_slot0);

/* len bytes at byte off of the buffer member j of g published under slot
 * (cma and zero-copy slot alike) into dst (get) or from src into it (put):
 * a memcpy when that buffer is mapped here (coll_mem_alloc memory on both
 * sides: zero-copy), else process_vm_readv / process_vm_writev. */
coll_status_t coll_cma_get(coll_comm *comm, const coll_group_t *g, int j, int slot, size_t off, void *dst, size_t len);
coll_status_t coll_cma_put(coll_comm *comm, const coll_group_t *g, int j, int slot, size_t off, const void *src,
                           size_t len);

/* The rooted cma algorithms (scatter, gather) share each member's block of
 * blk bytes between the member and the root, so that every rank copies about
 * (p-1)/p blk (with 2 ranks both cores copy half): the member copies
 * [0, *off), the root the rest, the last of p nearly equal parts (returned). */
static inline size_t coll_cma_root_part(size_t blk, int p, size_t *off)
{
    *off = coll_block_offset(blk, p, p - 1);
    return blk - *off;
}

/* The body of scatter_cma (to_root 0) and gather_cma (to_root 1) after their
 * checks: blocks of blk bytes between the root's whole buffer `all` (p blk,
 * block j for member j) and each rank's own block `mine`. Opens (slot 0),
 * lets each member copy its [0, off) and the root the last part of every
 * member's block (coll_cma_root_part), the root its own block unless
 * in place, then the closing barrier. O(p) system calls at the root, O(1)
 * at a member. The two directions differ only in which side reads. */
coll_status_t coll_cma_rooted(coll_comm *comm, const coll_group_t *g, int ri, size_t blk, char *all, char *mine,
                              int inplace, int to_root);
/* Its cost: 2 barriers + (p - 1) calls moving (p-1)/p blk + the root's own block copied. */
double coll_cma_rooted_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a);

/* Cost (us) of `calls` process_vm calls moving `bytes` in all on one core
 * shared by ov ranks: a system call each (2 us), each 4 KiB page pinned
 * and mapped (0.3 us) and copied (one memcpy: beta / 2, the link's beta
 * counting a shm message's two copies). process_vm_readv from a forked peer
 * on the EPYC VM (loaded): 512K 75 us vs memcpy 11 us, 4M 435 vs 95 us, i.e.
 * 0.3-0.5 us a page more than a memcpy, which rules out mid sizes there. */
double coll_cma_cost_copy(const coll_comm *comm, const coll_group_t *g, double calls, double bytes);
/* The same plus the opening's and the closing barrier: a whole call whose
 * busiest rank makes `calls` copies of `bytes` in all. */
double coll_cma_cost(const coll_comm *comm, const coll_group_t *g, double calls, double bytes);

#endif
