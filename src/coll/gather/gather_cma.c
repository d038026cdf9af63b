/*
 * gather_cma.c - Gather for the ranks of one host, one copy: member j writes
 * its block straight from its send buffer into the root's receive buffer
 * (process_vm_writev; a memcpy where the root's buffer is coll_mem_alloc
 * memory mapped here) while the root copies its own block. No staging.
 *
 * Synchronisation (cma.h, coll_cma_rooted): the root publishes its receive
 * buffer's address and sends each member a 1-byte go; each member sends a
 * 1-byte done after its write, so the root returns with every block landed.
 *
 * Per member (blk = N/p bytes, N in all): one write of blk; the root p - 1
 * tokens each way and its own block copied: O(p) messages at the root, O(1)
 * at a member, O(1) published words.
 * Cost: 2 rounds + one call of blk (pin + beta_cma) + blk beta_cma at the root.
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them write each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include "coll/algo.h"
#include "coll/execution/cma.h"

const coll_algo_t coll_algo_gather_cma
    = COLL_ALGO_OF(COLL_GATHER, "cma", coll_cma_rooted, coll_cma_rooted_cost, .flags = COLL_ALGO_F_SINGLE_HOST,
                   .desc = "one host: each member writes its block straight into the root's receive buffer "
                           "(process_vm_writev), one copy; a go from the root and a done back, no barrier",
                   .usable = coll_cma_usable);
