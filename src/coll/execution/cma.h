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
#include "coll/util/coll_util.h"

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

/* The run of scatter_cma and gather_cma (a Gather or a Scatter call,
 * execution/rooted.h): blocks of blk bytes between the root's whole buffer
 * (p blk, block j for member j) and each rank's own block. Nothing to do for
 * empty blocks; a group of one copies its block. The root publishes its
 * buffer (slot 0) and sends every member a 1-byte go; each member copies its
 * whole block (one process_vm_readv / writev, or a memcpy from or into
 * coll_mem_alloc memory) and sends the root a 1-byte done; the root copies
 * its own block meanwhile (unless in place) and returns once every done is in,
 * so its buffer stays put while members copy, and a member returns as soon as
 * its own copy is over. Messages through the executor (shared-memory FIFO),
 * not barriers: with 4 ranks on 2 cores a barrier needs every rank scheduled
 * twice, a member here needs only the root (scatter 4 ranks 1M 28.5 vs 36.2 us
 * with the two barriers and the root writing 1/p of every block, 5 rounds,
 * bench/results/huge-rules-20261204.md section 8). O(p) messages at the
 * root, O(1) at a member, no system call at the root. */
coll_status_t coll_cma_rooted(coll_comm *comm, const coll_group_t *g, const coll_args_t *a);
/* Its cost: the opening and closing (as 2 barriers) + a member's one call of blk + the root's own block. */
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
