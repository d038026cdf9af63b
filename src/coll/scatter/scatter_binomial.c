/*
 * scatter_binomial.c - binomial-tree Scatter. The subtree of relative rank v
 * is the contiguous range of relative ranks [v, v + size) (tree.h), so a
 * member receives the blocks of its whole subtree from its parent as one
 * message, keeps the first one (its own) and passes each child the child's
 * range, deepest child first. Inner members hold their subtree's blocks in
 * working memory (see tmp_get); leaves receive straight into recvbuf.
 *
 * At the root the blocks are in member order, not relative order: a child's
 * range [a, a + size) of members wraps past p for at most one child, whose
 * blocks the root first copies into working memory to send them as one message.
 *
 * Cost (p ranks, N = p * count bytes in all, L = ceil(log2 p)):
 *   L alpha + (p-1)/p N beta (the root's link; inner members forward less).
 * Fewer rounds than linear for many ranks. Any p, any root, any transport.
 *
 * Example, p = 6, root = 2: relative ranks 0..5 are members 2 3 4 5 0 1. The
 * root sends members {0, 1} (relative [4, 6), blocks 0-1 of sendbuf) to member
 * 0, then {4, 5} to member 4, then {3} to member 3; member 0 keeps block 0 and
 * forwards block 1 to member 1, member 4 forwards block 5 to member 5.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/execution/prim.h"
#include "coll/execution/rooted.h"
#include "coll/execution/tree.h"

static coll_status_t send_to(coll_comm *comm, int peer, const void *buf, size_t bytes)
{
    return coll_prim_sendrecv(comm, buf, bytes, peer, NULL, 0, -1);
}

/* Root: send child c the blocks of its subtree (rooted.h). */
static coll_status_t root_send(coll_comm *comm, const coll_group_t *g, const char *sb, size_t blk, int ri, int c)
{
    coll_subtree_blocks_t b = coll_subtree_blocks(c, ri, g->size, 0, blk);
    if (b.first == b.len)
        return send_to(comm, g->ranks[c], sb + (size_t)c * blk, b.len);
    void *tmp; /* wraps: both pieces into working memory, sent as one message */
    COLL_CHECK(coll_tmp_get(comm, g, b.len, &tmp));
    memcpy(tmp, sb + (size_t)c * blk, b.first);
    memcpy((char *)tmp + b.first, sb, b.len - b.first);
    coll_status_t st;
    COLL_CHECK_GOTO(send_to(comm, g->ranks[c], tmp, b.len), st, out);
out:
    coll_tmp_put(comm, g, tmp);
    return st;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_rooted_call_t c;
    COLL_OPEN(coll_rooted_open, g, a, c);
    int kids[COLL_TREE_MAX_CHILDREN];
    int nk = coll_tree_binomial_children(c.me, c.ri, c.p, kids);
    if (c.me == c.ri) {
        if (c.own != c.blocks + (size_t)c.me * c.blk)
            memcpy(c.own, c.blocks + (size_t)c.me * c.blk, c.blk);
        for (int k = 0; k < nk; k++)
            COLL_CHECK(root_send(comm, g, c.blocks, c.blk, c.ri, kids[k]));
        return COLL_SUCCESS;
    }
    int parent = g->ranks[coll_tree_binomial_parent(c.me, c.ri, c.p)];
    if (nk == 0)
        return coll_prim_sendrecv(comm, NULL, 0, -1, c.own, c.blk, parent);
    int v = coll_tree_rel(c.me, c.ri, c.p), sz = coll_tree_binomial_subtree(c.me, c.ri, c.p);
    void *tmp;
    COLL_CHECK(coll_tmp_get(comm, g, (size_t)sz * c.blk, &tmp));
    coll_status_t st;
    COLL_CHECK_GOTO(coll_prim_sendrecv(comm, NULL, 0, -1, tmp, (size_t)sz * c.blk, parent), st, out);
    memcpy(c.own, tmp, c.blk);
    for (int k = 0; k < nk; k++) {
        coll_subtree_blocks_t b = coll_subtree_blocks(kids[k], c.ri, c.p, v, c.blk);
        COLL_CHECK_GOTO(send_to(comm, g->ranks[kids[k]], (char *)tmp + b.off, b.len), st, out);
    }
out:
    coll_tmp_put(comm, g, tmp);
    return st;
}

const coll_algo_t coll_algo_scatter_binomial
    = COLL_ALGO_OF(COLL_SCATTER, "binomial", run, coll_rooted_binomial_cost,
                   .desc = "binomial tree, each child gets its subtree's blocks in one message; ceil(log2 p) alpha + "
                           "(p-1)/p n beta");
