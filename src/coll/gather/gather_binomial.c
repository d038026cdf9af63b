/*
 * gather_binomial.c - binomial-tree Gather, the mirror of scatter_binomial.
 * The subtree of relative rank v is the contiguous range of relative ranks
 * [v, v + size) (tree.h): an inner member puts its own block first in the
 * working memory (see coll_tmp_get), receives every child's range right behind it (all
 * children at once), and sends the whole range to its parent as one message.
 * Leaves send their block straight from sendbuf.
 *
 * At the root the blocks go in member order, not relative order: a child's
 * range [a, a + size) of members wraps past p for at most one child, which the
 * root receives into working memory and copies out in two pieces; the others land
 * directly in recvbuf.
 *
 * Cost (p ranks, N = p * count bytes in all, L = ceil(log2 p)):
 *   L alpha + (p-1)/p N beta (the root's link; inner members forward less).
 * Fewer rounds than linear for many ranks. Any p, any root, any transport.
 *
 * Example, p = 6, root = 3: relative ranks 0..5 are members 3 4 5 0 1 2.
 * Member 5 (relative 2) receives member 0's block and sends {5, 0} to the
 * root: that range wraps, so the root receives it into working memory and copies
 * block 5 and block 0 out. Member 1 (relative 4) sends {1, 2}, member 4 {4}.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/execution/prim.h"
#include "coll/execution/rooted.h"
#include "coll/execution/tree.h"

static coll_status_t root_gather(coll_comm *comm, const coll_group_t *g, char *rb, size_t blk, int ri, const int *kids,
                                 int nk)
{
    coll_prim_t ops[COLL_TREE_MAX_CHILDREN];
    char *wrap_tmp = NULL;
    int wrap_c = 0;
    coll_subtree_blocks_t wrap = {0};
    for (int k = 0; k < nk; k++) {
        int c = kids[k];
        coll_subtree_blocks_t b = coll_subtree_blocks(c, ri, g->size, 0, blk);
        char *dst = rb + (size_t)c * blk;
        if (b.first < b.len) { /* wraps: received whole into working memory */
            void *tmp;
            COLL_CHECK(coll_tmp_get(comm, g, b.len, &tmp));
            dst = wrap_tmp = tmp;
            wrap_c = c;
            wrap = b;
        }
        ops[k] = coll_prim_recv(g->ranks[c], dst, b.len);
    }
    coll_status_t st;
    COLL_CHECK_GOTO(coll_prim_run(comm, ops, nk, COLL_UINT8, COLL_SUM), st, out);
    if (wrap_tmp) {
        memcpy(rb + (size_t)wrap_c * blk, wrap_tmp, wrap.first);
        memcpy(rb, wrap_tmp + wrap.first, wrap.len - wrap.first);
    }
out:
    if (wrap_tmp)
        coll_tmp_put(comm, g, wrap_tmp);
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
            memcpy(c.blocks + (size_t)c.me * c.blk, c.own, c.blk);
        return nk ? root_gather(comm, g, c.blocks, c.blk, c.ri, kids, nk) : COLL_SUCCESS;
    }
    int parent = g->ranks[coll_tree_binomial_parent(c.me, c.ri, c.p)];
    if (nk == 0)
        return coll_prim_sendrecv(comm, c.own, c.blk, parent, NULL, 0, -1);
    int v = coll_tree_rel(c.me, c.ri, c.p), sz = coll_tree_binomial_subtree(c.me, c.ri, c.p);
    void *tmp;
    COLL_CHECK(coll_tmp_get(comm, g, (size_t)sz * c.blk, &tmp));
    memcpy(tmp, c.own, c.blk);
    coll_prim_t ops[COLL_TREE_MAX_CHILDREN];
    for (int k = 0; k < nk; k++) {
        coll_subtree_blocks_t b = coll_subtree_blocks(kids[k], c.ri, c.p, v, c.blk);
        ops[k] = coll_prim_recv(g->ranks[kids[k]], (char *)tmp + b.off, b.len);
    }
    coll_status_t st;
    COLL_CHECK_GOTO(coll_prim_run(comm, ops, nk, COLL_UINT8, COLL_SUM), st, out);
    COLL_CHECK_GOTO(coll_prim_sendrecv(comm, tmp, (size_t)sz * c.blk, parent, NULL, 0, -1), st, out);
out:
    coll_tmp_put(comm, g, tmp);
    return st;
}

const coll_algo_t coll_algo_gather_binomial
    = COLL_ALGO_OF(COLL_GATHER, "binomial", run, coll_rooted_binomial_cost,
                   .desc = "binomial tree, each member sends its subtree's blocks in one message; ceil(log2 p) alpha + "
                           "(p-1)/p n beta");
