/*
 * tree.h - peer arithmetic of rooted algorithms (broadcast, reduce, scatter,
 * gather): binomial trees and chains over the members 0..p-1 of a group,
 * relative to any root. Pure functions of (i, root, p), unit-tested for every
 * p in 1..64 and every root (tests/unit/test_tree.c).
 *
 * Relative rank: v = (i - root) mod p, so the root is v = 0.
 *
 * Binomial tree: the parent of v != 0 is v with its lowest set bit cleared;
 * the children of v are v + 2^k for every 2^k below the lowest set bit of v
 * (every 2^k < p for the root) with v + 2^k < p. The subtree of v is the
 * contiguous range of relative ranks [v, v + size), size = min(lowbit(v), p - v),
 * which is what lets scatter/gather move a subtree's blocks as one message.
 * Depth: ceil(log2 p).
 *
 * Example, p = 6, root = 2 (relative ranks in brackets):
 *   2[0] -> 6 mod 6 = 0[4], 4[2], 3[1]      (children, deepest subtree first)
 *   4[2] -> 5[3]          0[4] -> 1[5]       subtree(4) = {4,5} = relative [2,4)
 *
 * Chain: root, root+1, ..., root+p-1 (mod p); next of the tail is -1, prev of
 * the root is -1.
 *
 * Double binary tree (NCCL's, for the tree AllReduce): two binary trees t = 0, 1
 * over members 0..p-1. Tree 0 is an in-order binary tree rooted at 0: member
 * r != 0 with lowest set bit b has children r - b/2 and r + l (l the largest
 * power of two <= b/2 with r + l < p; none for odd r) and parent (r - b) | 2b,
 * or r - b when that is >= p; the root 0 has the one child 2^(ceil(log2 p) - 1).
 * Odd members are leaves, even ones interior. Tree 1 is tree 0 mirrored
 * (r -> p-1-r) when p is even, shifted by one (r -> r-1 mod p) when p is odd,
 * so a member interior (parent and children) in one tree is a leaf or the root
 * in the other, and no member has more than two children over both trees.
 * Height (hops from the root to the deepest leaf): ceil(log2 p) for both trees.
 *
 * Example, p = 6:
 *   tree 0:  0 -> 4;  4 -> 2, 5;  2 -> 1, 3           (leaves 1 3 5)
 *   tree 1:  5 -> 1;  1 -> 3, 0;  3 -> 4, 2           (leaves 0 2 4)
 */
#ifndef COLL_TREE_H
#define COLL_TREE_H

#include <stddef.h>

/* Most children a binomial node can have (p <= 2^31). */
#define COLL_TREE_MAX_CHILDREN 32

static inline int coll_tree_rel(int i, int root, int p) { return ((i - root) % p + p) % p; }
static inline int coll_tree_abs(int v, int root, int p) { return (v + root) % p; }

/* ceil(log2 p): rounds of a binomial algorithm (0 for p = 1). */
int coll_tree_binomial_depth(int p);
/* Parent of member i, or -1 for the root. */
int coll_tree_binomial_parent(int i, int root, int p);
/* Children of member i into out[COLL_TREE_MAX_CHILDREN], deepest subtree first
 * (largest 2^k first: the order of a broadcast's sends); returns how many. */
int coll_tree_binomial_children(int i, int root, int p, int *out);
/* Number of members in the subtree of i (itself included): relative ranks
 * [rel(i), rel(i) + size). */
int coll_tree_binomial_subtree(int i, int root, int p);

/* Chain root -> root+1 -> ... : the member after / before i, or -1. */
int coll_tree_chain_next(int i, int root, int p);
int coll_tree_chain_prev(int i, int root, int p);

/* Double binary tree t (0 or 1): the root, the parent of i (-1 for the root),
 * the children of i into out[2] (deepest subtree first; returns 0..2), the
 * height of i's subtree (0 for a leaf) and the depth of i (0 for the root). */
int coll_dbtree_root(int t, int p);
int coll_dbtree_parent(int t, int i, int p);
int coll_dbtree_children(int t, int i, int p, int *out);
int coll_dbtree_height(int t, int i, int p);
int coll_dbtree_depth(int t, int i, int p);
/* Pipelining chunk (bytes) for half_bytes on a tree of the given height: about
 * 4 chunks per level so the pipeline fills (up H levels and down H), no smaller
 * than 32 KiB (per-step latency) and no larger than chunk_max (COLL_CHUNK);
 * a multiple of esize, at least esize. */
size_t coll_dbtree_chunk(size_t half_bytes, int height, size_t chunk_max, size_t esize);

#endif
