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

/* A Gather or Scatter call on g as its algorithms read it. */
typedef struct {
    coll_rooted_dir_t dir; /* Gather: COLL_TO_ROOT, Scatter: COLL_FROM_ROOT */
    int p, me, ri;         /* group size, my index, the root's index */
    size_t n, es, blk;     /* elements of one block, bytes per element, bytes of one block */
    char *blocks;          /* the root's p blocks (Gather's recvbuf, Scatter's sendbuf) */
    char *own;             /* this member's block (Gather's sendbuf, Scatter's recvbuf) */
    int done;              /* nothing is left to do: empty blocks, or a group of one (its block copied) */
} coll_rooted_call_t;

/* Fills *c from a's call (kind COLL_GATHER or COLL_SCATTER) on g (an internal
 * error when the root is not a member) and, on a group of one, copies its
 * block (coll_alone). For COLL_OPEN. O(1). */
coll_status_t coll_rooted_open(const coll_group_t *g, const coll_args_t *a, coll_rooted_call_t *c);

/* Linear, an algorithm's run for both kinds: every member exchanges its block
 * directly with the root; the root posts all its operations at once (in
 * batches) and copies its own block (nothing when in place). */
coll_status_t coll_rooted_linear(coll_comm *comm, const coll_group_t *g, const coll_args_t *a);
/* Its cost: p - 1 latencies at the root. */
double coll_rooted_linear_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a);
/* Binomial's cost, for both kinds: a latency per level of the tree. */
double coll_rooted_binomial_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a);

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
