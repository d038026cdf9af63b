/*
 * rooted.h - what Gather and Scatter share: they are mirror images (all to
 * one, one to all) with the same blocks, the same trees and the same costs.
 *
 * Blocks at the root: member i's block of blk bytes at blocks + i * blk.
 * Gather writes them (blocks = recvbuf, own = sendbuf); Scatter reads them
 * (blocks = sendbuf, own = recvbuf) and never writes through the pointer it
 * is given, which is why a const buffer may be passed in cast.
 */
#ifndef COLL_ROOTED_H
#define COLL_ROOTED_H

#include "coll/algo.h"
#include "coll/execution/tree.h"

typedef enum { COLL_TO_ROOT, COLL_FROM_ROOT } coll_rooted_dir_t;

/* Linear: every member exchanges its block directly with the root; the root
 * posts all its operations at once (in batches) and copies its own block
 * (nothing when in place). ri: the root's index in g. */
coll_status_t coll_rooted_linear(coll_comm *comm, const coll_group_t *g, int ri, coll_rooted_dir_t dir, char *blocks,
                                 char *own, size_t blk);

/* Binomial Gather and Scatter: where the blocks of child c's subtree (members
 * c, c+1, ... mod p: tree.h) are, len bytes in all. At the root, in member
 * order: at c * blk, and when the range wraps past p, `first` bytes there and
 * the rest at 0 (first == len when it does not wrap). At an inner member of
 * relative rank v, in relative order: at `off` of its working memory. */
typedef struct {
    size_t len, first, off;
} coll_subtree_blocks_t;

static inline coll_subtree_blocks_t coll_subtree_blocks(int c, int ri, int p, int v, size_t blk)
{
    int sc = coll_tree_binomial_subtree(c, ri, p);
    coll_subtree_blocks_t b = {.len = (size_t)sc * blk};
    b.first = c + sc > p ? (size_t)(p - c) * blk : b.len;
    b.off = (size_t)(coll_tree_rel(c, ri, p) - v) * blk;
    return b;
}

/* Cost of moving (p-1)/p of n bytes through the root in `rounds` latencies:
 * on shm every block is copied in and out, by every rank at once. */
double coll_rooted_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a, double rounds);

#endif
