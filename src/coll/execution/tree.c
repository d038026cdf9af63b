/*
 * tree.c - binomial tree and chain arithmetic (see tree.h).
 */
#include "coll/execution/tree.h"

static int lowbit(int v) { return v & -v; }

int coll_tree_binomial_depth(int p)
{
    int d = 0;
    for (long m = 1; m < p; m *= 2)
        d++;
    return d;
}

int coll_tree_binomial_parent(int i, int root, int p)
{
    int v = coll_tree_rel(i, root, p);
    if (v == 0)
        return -1;
    return coll_tree_abs(v - lowbit(v), root, p);
}

int coll_tree_binomial_children(int i, int root, int p, int *out)
{
    int v = coll_tree_rel(i, root, p);
    long limit = v == 0 ? (long)p : (long)lowbit(v); /* children use masks below this */
    long top = 1;
    while (top * 2 < limit)
        top *= 2;
    int n = 0;
    for (long m = top; m >= 1; m /= 2)
        if (m < limit && (long)v + m < (long)p)
            out[n++] = coll_tree_abs(v + (int)m, root, p);
    return n;
}

int coll_tree_binomial_subtree(int i, int root, int p)
{
    int v = coll_tree_rel(i, root, p);
    if (v == 0)
        return p;
    int s = lowbit(v);
    return s < p - v ? s : p - v;
}

int coll_tree_chain_next(int i, int root, int p)
{
    int v = coll_tree_rel(i, root, p);
    return v + 1 < p ? coll_tree_abs(v + 1, root, p) : -1;
}

int coll_tree_chain_prev(int i, int root, int p)
{
    int v = coll_tree_rel(i, root, p);
    return v > 0 ? coll_tree_abs(v - 1, root, p) : -1;
}

/* In-order binary tree rooted at 0 (tree 0 of the double binary tree). */
static int btree_parent(int r, int p)
{
    if (r == 0)
        return -1;
    int b = lowbit(r);
    long up = (long)(r ^ b) | ((long)b << 1);
    return up >= p ? r ^ b : (int)up;
}

static int btree_children(int r, int p, int *out)
{
    if (p <= 1)
        return 0;
    if (r == 0) {
        long top = 1;
        while (top * 2 < p)
            top *= 2;
        out[0] = (int)top;
        return 1;
    }
    int half = lowbit(r) / 2, n = 0;
    if (half == 0)
        return 0;
    out[n++] = r - half;
    for (int l = half; l > 0; l /= 2)
        if ((long)r + l < p) {
            out[n++] = r + l;
            break;
        }
    return n;
}

/* Tree 1: member i sits where member map(i) sits in tree 0. */
static int to_b(int t, int i, int p)
{
    if (t == 0 || i < 0)
        return i;
    return p % 2 == 0 ? p - 1 - i : (i - 1 + p) % p;
}

static int from_b(int t, int r, int p)
{
    if (t == 0 || r < 0)
        return r;
    return p % 2 == 0 ? p - 1 - r : (r + 1) % p;
}

int coll_dbtree_root(int t, int p) { return from_b(t, 0, p); }

int coll_dbtree_parent(int t, int i, int p) { return from_b(t, btree_parent(to_b(t, i, p), p), p); }

int coll_dbtree_children(int t, int i, int p, int *out)
{
    int n = btree_children(to_b(t, i, p), p, out);
    for (int k = 0; k < n; k++)
        out[k] = from_b(t, out[k], p);
    return n;
}

int coll_dbtree_height(int t, int i, int p)
{
    /* the first child always heads the deepest subtree */
    int h = 0, kids[2];
    for (int r = to_b(t, i, p); btree_children(r, p, kids) > 0; r = kids[0])
        h++;
    return h;
}

int coll_dbtree_depth(int t, int i, int p)
{
    int d = 0;
    for (int r = to_b(t, i, p); r != 0; r = btree_parent(r, p))
        d++;
    return d;
}

size_t coll_dbtree_chunk(size_t half_bytes, int height, size_t chunk_max, size_t esize)
{
    size_t want = half_bytes / (size_t)(4 * (height > 0 ? height : 1));
    if (want < ((size_t)32 << 10))
        want = (size_t)32 << 10;
    if (want > chunk_max)
        want = chunk_max;
    want -= want % esize;
    return want ? want : esize;
}
