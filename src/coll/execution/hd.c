/*
 * hd.c - recursive halving-doubling peer arithmetic (see hd.h).
 */
#include "coll/execution/hd.h"

int coll_hd_pof2(int p)
{
    int q = 1;
    while (q <= p / 2)
        q *= 2;
    return q;
}

int coll_hd_nsteps(int p)
{
    int s = 0;
    for (int q = coll_hd_pof2(p); q > 1; q /= 2)
        s++;
    return s;
}

int coll_hd_vrank(int i, int p)
{
    int r = p - coll_hd_pof2(p);
    if (i < 2 * r)
        return (i & 1) ? i / 2 : -1;
    return i - r;
}

int coll_hd_member(int v, int p)
{
    int r = p - coll_hd_pof2(p);
    return v < r ? 2 * v + 1 : v + r;
}

int coll_hd_fold_peer(int i, int p)
{
    int r = p - coll_hd_pof2(p);
    return i < 2 * r ? (i ^ 1) : -1;
}

coll_hd_step_t coll_hd_halving(int v, int p, int s)
{
    int mask = coll_hd_pof2(p) >> (s + 1);
    int lo = v & ~(2 * mask - 1);
    coll_hd_step_t st;
    st.peer = v ^ mask;
    st.send_n = st.keep_n = mask;
    if (v & mask) {
        st.keep_lo = lo + mask;
        st.send_lo = lo;
    } else {
        st.keep_lo = lo;
        st.send_lo = lo + mask;
    }
    return st;
}
