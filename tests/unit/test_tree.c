/*
 * test_tree.c - binomial tree and chain arithmetic (src/coll/execution/tree.c) for every
 * rank count 1..64 and every root: a spanning tree rooted at root, parent and
 * children agree, subtrees are the contiguous relative ranges their
 * scatter/gather messages assume, children come deepest first, depth is
 * ceil(log2 p); chains visit root, root+1, ... once each. Double binary
 * trees (tree AllReduce): both trees span 0..p-1 with parent and children
 * agreeing, heights and depths consistent, ceil(log2 p) high; no member is
 * interior in both, none has more than two children over both trees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "coll/execution/tree.h"

#define MAXP 64

static int ceil_log2(int p)
{
    int d = 0;
    while ((1 << d) < p)
        d++;
    return d;
}

static void test_depth(void **state)
{
    (void)state;
    for (int p = 1; p <= 4096; p++)
        assert_int_equal(coll_tree_binomial_depth(p), ceil_log2(p));
}

static void check_binomial(int p, int root)
{
    int kids[MAXP][COLL_TREE_MAX_CHILDREN], nk[MAXP], parent[MAXP];
    for (int i = 0; i < p; i++) {
        parent[i] = coll_tree_binomial_parent(i, root, p);
        nk[i] = coll_tree_binomial_children(i, root, p, kids[i]);
        assert_true(nk[i] >= 0 && nk[i] <= ceil_log2(p));
        if (i == root)
            assert_int_equal(parent[i], -1);
        else
            assert_true(parent[i] >= 0 && parent[i] < p && parent[i] != i);
    }
    for (int i = 0; i < p; i++) {
        int v = coll_tree_rel(i, root, p);
        assert_int_equal(coll_tree_abs(v, root, p), i);
        /* every child names i as its parent; children deepest (largest offset) first */
        int sum = 1, prev_off = p + 1;
        for (int k = 0; k < nk[i]; k++) {
            int c = kids[i][k];
            assert_true(c >= 0 && c < p && c != i);
            assert_int_equal(parent[c], i);
            int off = coll_tree_rel(c, root, p) - v;
            assert_true(off > 0 && (off & (off - 1)) == 0);
            assert_true(off < prev_off);
            prev_off = off;
            sum += coll_tree_binomial_subtree(c, root, p);
        }
        /* i appears exactly once among its parent's children */
        if (parent[i] >= 0) {
            int seen = 0;
            for (int k = 0; k < nk[parent[i]]; k++)
                seen += kids[parent[i]][k] == i;
            assert_int_equal(seen, 1);
        }
        /* subtree = 1 + children's subtrees, and the children's ranges tile
         * [v + 1, v + size) in increasing relative order (reverse of kids[]) */
        int size = coll_tree_binomial_subtree(i, root, p);
        assert_int_equal(size, sum);
        assert_true(size >= 1 && v + size <= p);
        int next = v + 1;
        for (int k = nk[i] - 1; k >= 0; k--) {
            int c = kids[i][k];
            assert_int_equal(coll_tree_rel(c, root, p), next);
            next += coll_tree_binomial_subtree(c, root, p);
        }
        assert_int_equal(next, v + size);
        /* path to the root: no cycle, at most ceil(log2 p) hops */
        int hops = 0;
        for (int j = i; j != root; j = parent[j]) {
            hops++;
            assert_true(hops <= ceil_log2(p));
        }
    }
    assert_int_equal(coll_tree_binomial_subtree(root, root, p), p);
}

static void test_binomial_all(void **state)
{
    (void)state;
    for (int p = 1; p <= MAXP; p++)
        for (int root = 0; root < p; root++)
            check_binomial(p, root);
}

static void test_binomial_example(void **state)
{
    (void)state;
    int k[COLL_TREE_MAX_CHILDREN];
    /* the worked example of tree.h: p = 6, root = 2 */
    assert_int_equal(coll_tree_binomial_children(2, 2, 6, k), 3);
    assert_int_equal(k[0], 0);
    assert_int_equal(k[1], 4);
    assert_int_equal(k[2], 3);
    assert_int_equal(coll_tree_binomial_children(4, 2, 6, k), 1);
    assert_int_equal(k[0], 5);
    assert_int_equal(coll_tree_binomial_subtree(4, 2, 6), 2);
    assert_int_equal(coll_tree_binomial_parent(1, 2, 6), 0);
    assert_int_equal(coll_tree_binomial_children(1, 2, 6, k), 0);
    /* large p: no overflow in the mask loop */
    assert_int_equal(coll_tree_binomial_children(0, 0, 1 << 30, k), 30);
    assert_int_equal(k[0], 1 << 29);
}

static void test_chain_all(void **state)
{
    (void)state;
    for (int p = 1; p <= MAXP; p++)
        for (int root = 0; root < p; root++) {
            int seen[MAXP] = {0}, i = root, n = 0, last = -1;
            assert_int_equal(coll_tree_chain_prev(root, root, p), -1);
            while (i >= 0) {
                assert_true(i < p);
                assert_int_equal(seen[i], 0);
                assert_int_equal(i, (root + n) % p);
                assert_int_equal(coll_tree_chain_prev(i, root, p), last);
                seen[i] = 1;
                n++;
                last = i;
                i = coll_tree_chain_next(i, root, p);
            }
            assert_int_equal(n, p);
            assert_int_equal(last, (root + p - 1) % p);
        }
}

static void check_dbtree(int p)
{
    int nkids[2][MAXP];
    for (int t = 0; t < 2; t++) {
        int root = coll_dbtree_root(t, p), count = 0;
        assert_true(root >= 0 && root < p);
        assert_int_equal(coll_dbtree_parent(t, root, p), -1);
        assert_int_equal(coll_dbtree_depth(t, root, p), 0);
        assert_int_equal(coll_dbtree_height(t, root, p), ceil_log2(p));
        for (int i = 0; i < p; i++) {
            int kids[2], par = coll_dbtree_parent(t, i, p);
            int n = nkids[t][i] = coll_dbtree_children(t, i, p, kids);
            assert_true(n >= 0 && n <= 2);
            if (i != root) {
                assert_true(par >= 0 && par < p && par != i);
                assert_int_equal(coll_dbtree_depth(t, i, p), coll_dbtree_depth(t, par, p) + 1);
                int pk[2], pn = coll_dbtree_children(t, par, p, pk), seen = 0;
                for (int k = 0; k < pn; k++)
                    seen += pk[k] == i;
                assert_int_equal(seen, 1);
            }
            /* height = 1 + the first (deepest) child's; the second is no deeper */
            int h = 0;
            for (int k = 0; k < n; k++) {
                assert_true(kids[k] >= 0 && kids[k] < p && kids[k] != i);
                assert_int_equal(coll_dbtree_parent(t, kids[k], p), i);
                int hk = coll_dbtree_height(t, kids[k], p);
                if (k == 0)
                    h = hk + 1;
                else
                    assert_true(hk + 1 <= h);
            }
            assert_int_equal(coll_dbtree_height(t, i, p), h);
            assert_true(coll_dbtree_depth(t, i, p) + h <= ceil_log2(p));
            count++;
        }
        assert_int_equal(count, p);
    }
    for (int i = 0; i < p; i++) {
        int interior = 0;
        for (int t = 0; t < 2; t++)
            interior += nkids[t][i] > 0 && coll_dbtree_parent(t, i, p) >= 0;
        assert_true(interior <= 1);
        assert_true(nkids[0][i] + nkids[1][i] <= 2);
    }
}

static void test_dbtree_all(void **state)
{
    (void)state;
    for (int p = 1; p <= MAXP; p++)
        check_dbtree(p);
    /* the worked example of tree.h: p = 6 */
    int k[2];
    assert_int_equal(coll_dbtree_root(1, 6), 5);
    assert_int_equal(coll_dbtree_children(0, 4, 6, k), 2);
    assert_int_equal(k[0], 2);
    assert_int_equal(k[1], 5);
    assert_int_equal(coll_dbtree_children(1, 1, 6, k), 2);
    assert_int_equal(k[0], 3);
    assert_int_equal(k[1], 0);
    assert_int_equal(coll_dbtree_parent(1, 2, 6), 3);
    /* odd p: tree 1 is tree 0 shifted by one */
    assert_int_equal(coll_dbtree_root(1, 7), 1);
    assert_int_equal(coll_dbtree_parent(1, 5, 7), coll_dbtree_parent(0, 4, 7) + 1);
    /* chunks: ~4 per level, 32 KiB .. chunk_max, whole elements */
    assert_int_equal(coll_dbtree_chunk((size_t)8 << 20, 3, 256 << 10, 4), 256 << 10);
    assert_int_equal(coll_dbtree_chunk((size_t)1 << 20, 4, 256 << 10, 4), 64 << 10);
    assert_int_equal(coll_dbtree_chunk(1000, 3, 256 << 10, 4), 32 << 10);
    assert_int_equal(coll_dbtree_chunk(1000, 3, 6, 4), 4);
    assert_int_equal(coll_dbtree_chunk(1000, 3, 2, 8), 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_depth),     cmocka_unit_test(test_binomial_all), cmocka_unit_test(test_binomial_example),
        cmocka_unit_test(test_chain_all), cmocka_unit_test(test_dbtree_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
