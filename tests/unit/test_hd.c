/*
 * test_hd.c - recursive halving-doubling arithmetic (src/coll/execution/hd.c) for every
 * rank count 1..64: the fold pairs and virtual ranks are a bijection onto
 * 0..pof2-1, partners agree on every step (my send window is their keep
 * window), and a simulated AllReduce over contribution bitmasks ends with
 * every member holding every member's contribution exactly once per block.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coll/execution/hd.h"

#define MAXP 64

static void test_pof2(void **state)
{
    (void)state;
    for (int p = 1; p <= 4096; p++) {
        int q = coll_hd_pof2(p);
        assert_true(q <= p && 2 * q > p && (q & (q - 1)) == 0);
        assert_int_equal(1 << coll_hd_nsteps(p), q);
    }
}

static void test_vranks(void **state)
{
    (void)state;
    for (int p = 1; p <= MAXP; p++) {
        int q = coll_hd_pof2(p), seen[MAXP] = {0}, active = 0;
        for (int i = 0; i < p; i++) {
            int v = coll_hd_vrank(i, p), f = coll_hd_fold_peer(i, p);
            if (f >= 0) {
                assert_int_equal(coll_hd_fold_peer(f, p), i);
                assert_int_equal(f, i ^ 1);
                /* exactly one of the pair stays: the odd one */
                assert_true((v < 0) == ((i & 1) == 0));
            } else {
                assert_true(v >= 0);
            }
            if (v >= 0) {
                assert_true(v < q);
                assert_int_equal(seen[v]++, 0);
                assert_int_equal(coll_hd_member(v, p), i);
                active++;
            }
        }
        assert_int_equal(active, q);
    }
}

static void test_steps(void **state)
{
    (void)state;
    for (int p = 1; p <= MAXP; p++) {
        int q = coll_hd_pof2(p), ns = coll_hd_nsteps(p);
        for (int v = 0; v < q; v++) {
            int lo = 0, n = q; /* window held before each step */
            for (int s = 0; s < ns; s++) {
                coll_hd_step_t st = coll_hd_halving(v, p, s);
                coll_hd_step_t pt = coll_hd_halving(st.peer, p, s);
                assert_true(st.peer >= 0 && st.peer < q && st.peer != v);
                assert_int_equal(pt.peer, v);
                assert_int_equal(st.send_lo, pt.keep_lo);
                assert_int_equal(st.send_n, pt.keep_n);
                assert_int_equal(st.keep_lo, pt.send_lo);
                /* the two halves tile the current window */
                assert_int_equal(st.send_n + st.keep_n, n);
                assert_int_equal(st.send_n, st.keep_n);
                int a = st.send_lo < st.keep_lo ? st.send_lo : st.keep_lo;
                assert_int_equal(a, lo);
                assert_true(v >= st.keep_lo && v < st.keep_lo + st.keep_n);
                lo = st.keep_lo;
                n = st.keep_n;
            }
            assert_int_equal(lo, v);
            assert_int_equal(n, 1);
        }
    }
}

/* Simulate the whole AllReduce on bitmasks: blk[i][b] = set of members whose
 * block b has been summed into member i's copy. */
static void test_simulate(void **state)
{
    (void)state;
    static uint64_t blk[MAXP][MAXP], next[MAXP][MAXP];
    for (int p = 1; p <= MAXP; p++) {
        int q = coll_hd_pof2(p), ns = coll_hd_nsteps(p);
        uint64_t all = p == 64 ? ~0ULL : ((1ULL << p) - 1);
        for (int i = 0; i < p; i++)
            for (int b = 0; b < q; b++)
                blk[i][b] = 1ULL << i;
        for (int i = 0; i < p; i++) { /* fold in: the odd member adds the even one's vector */
            int f = coll_hd_fold_peer(i, p);
            if (f >= 0 && coll_hd_vrank(i, p) >= 0)
                for (int b = 0; b < q; b++) {
                    assert_int_equal(blk[i][b] & blk[f][b], 0);
                    blk[i][b] |= blk[f][b];
                }
        }
        for (int s = 0; s < ns; s++) {
            memcpy(next, blk, sizeof blk);
            for (int v = 0; v < q; v++) {
                int i = coll_hd_member(v, p);
                coll_hd_step_t st = coll_hd_halving(v, p, s);
                int j = coll_hd_member(st.peer, p);
                for (int b = st.keep_lo; b < st.keep_lo + st.keep_n; b++) {
                    assert_int_equal(blk[i][b] & blk[j][b], 0); /* nothing counted twice */
                    next[i][b] = blk[i][b] | blk[j][b];
                }
            }
            memcpy(blk, next, sizeof blk);
        }
        for (int v = 0; v < q; v++)
            assert_true(blk[coll_hd_member(v, p)][v] == all);
        for (int s = ns - 1; s >= 0; s--) {
            memcpy(next, blk, sizeof blk);
            for (int v = 0; v < q; v++) {
                int i = coll_hd_member(v, p);
                coll_hd_step_t st = coll_hd_halving(v, p, s);
                int j = coll_hd_member(st.peer, p);
                for (int b = st.send_lo; b < st.send_lo + st.send_n; b++)
                    next[i][b] = blk[j][b];
            }
            memcpy(blk, next, sizeof blk);
        }
        for (int i = 0; i < p; i++)
            if (coll_hd_vrank(i, p) < 0)
                for (int b = 0; b < q; b++)
                    blk[i][b] = blk[coll_hd_fold_peer(i, p)][b];
        for (int i = 0; i < p; i++)
            for (int b = 0; b < q; b++)
                assert_true(blk[i][b] == all);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pof2),
        cmocka_unit_test(test_vranks),
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_simulate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
