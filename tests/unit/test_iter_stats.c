/*
 * test_iter_stats.c - tools/driver/stats.c: percentiles of per-iteration
 * times and the straggler rule on arrival times (end times of each call from
 * each rank's own barrier exit): a rank that arrives late is named; constant
 * skews (a clock offset, an algorithm's exit order) and jitter name nobody.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "driver/driver.h"

enum { R = 4, N = 200 };

/* Rank-major R x 2N: end times of N calls of 100 us on R ranks, then the
 * stalled time of each call (0 here); late[i] = rank that arrives `by` us
 * late at call i (-1 none); skew[r] added to all of rank r; jitter:
 * deterministic pseudo-random 0..jit us per call and rank. */
static void make(double *all, const int *late, double by, const double *skew, double jit)
{
    unsigned s = 12345;
    double t = 0;
    memset(all, 0, sizeof(double) * R * 2 * N);
    for (int i = 0; i < N; i++) {
        /* a call ends when its last rank arrived plus the call's own time */
        double arrive_last = t + (late && late[i] >= 0 ? by : 0);
        t = arrive_last + 100.0;
        for (int r = 0; r < R; r++) {
            s = s * 1103515245u + 12345u;
            all[r * 2 * N + i] = t + (skew ? skew[r] : 0) + jit * (double)(s >> 16 & 1023) / 1023.0;
        }
        if (late && i + 1 < N && late[i + 1] >= 0) /* the late rank leaves call i later */
            all[late[i + 1] * 2 * N + i] += by;
    }
}

static void test_percentiles(void **state)
{
    (void)state;
    double all[2 * 2 * 100] = {0};
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 100; i++)
            all[r * 200 + i] = (double)(i + 1) * 10.0 + (r ? 5.0 : 0.0); /* every call 10 us, rank 1 +5 once */
    cb_iter_stats_t st;
    cb_iter_stats(all, 2, 100, &st);
    assert_true(st.min >= 9.99 && st.min <= 10.01);
    assert_true(st.p50 >= 9.99 && st.p50 <= 10.01);
    assert_true(st.max >= 14.99 && st.max <= 15.01); /* rank 1's first call */
    assert_int_equal(st.straggler, -1);
}

static void test_late_rank_named(void **state)
{
    (void)state;
    static double all[R * 2 * N];
    int late[N];
    for (int i = 0; i < N; i++)
        late[i] = i % 3 == 1 ? 2 : -1; /* rank 2 late at a third of the calls */
    make(all, late, 5000.0, NULL, 5.0);
    cb_iter_stats_t st;
    cb_iter_stats(all, R, N, &st);
    assert_int_equal(st.straggler, 2);
    assert_true(st.late > st.counted / 2);
    assert_true(st.max >= 5000.0);
}

static void test_constant_skew_not_named(void **state)
{
    (void)state;
    static double all[R * 2 * N];
    double skew[R] = {0, 300.0, -40.0, 7.0}; /* rank 1 always looks 300 us late */
    make(all, NULL, 0, skew, 5.0);
    cb_iter_stats_t st;
    cb_iter_stats(all, R, N, &st);
    assert_int_equal(st.straggler, -1);
}

static void test_jitter_not_named(void **state)
{
    (void)state;
    static double all[R * 2 * N];
    make(all, NULL, 0, NULL, 400.0); /* jitter up to 4x the call time, on every rank */
    cb_iter_stats_t st;
    cb_iter_stats(all, R, N, &st);
    assert_int_equal(st.straggler, -1);
}

static void test_rotating_late_not_named(void **state)
{
    (void)state;
    static double all[R * 2 * N];
    int late[N];
    for (int i = 0; i < N; i++)
        late[i] = i % 2 ? i / 2 % R : -1; /* every rank late as often */
    make(all, late, 5000.0, NULL, 5.0);
    cb_iter_stats_t st;
    cb_iter_stats(all, R, N, &st);
    assert_int_equal(st.straggler, -1);
    assert_true(st.counted > 50);
}

/* A rank stopped inside calls: everyone's call takes the stop, nobody arrives
 * late, but its stalled time names it. */
static void test_stalled_rank_named(void **state)
{
    (void)state;
    static double all[R * 2 * N];
    make(all, NULL, 0, NULL, 5.0);
    for (int i = 0; i < N; i += 4) {
        for (int j = i; j < N; j++) /* call i lasts 20 ms longer for every rank */
            for (int r = 0; r < R; r++)
                all[r * 2 * N + j] += 20000.0;
        all[1 * 2 * N + N + i] = 19000.0; /* rank 1 did not run for 19 ms of it */
    }
    cb_iter_stats_t st;
    cb_iter_stats(all, R, N, &st);
    assert_int_equal(st.straggler, 1);
    assert_true(st.late >= N / 4 - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles),
        cmocka_unit_test(test_late_rank_named),
        cmocka_unit_test(test_constant_skew_not_named),
        cmocka_unit_test(test_jitter_not_named),
        cmocka_unit_test(test_rotating_late_not_named),
        cmocka_unit_test(test_stalled_rank_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
