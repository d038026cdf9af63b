/*
 * tree.c - binomial tree and chain arithmetic (see tree.h).
 */
#include "coll/tree.h"

static int lowbit(int v)
{
    return v & -v;
}

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
