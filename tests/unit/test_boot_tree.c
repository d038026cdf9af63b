/*
 * test_boot_tree.c - the bootstrap tree: its layout (pure), and abort notices
 * and deaths travelling along it between real processes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "../lib/fork_ranks.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every rank but 0 has exactly one parent that lists it as a child; subtrees
 * are the contiguous ranges the children split; depth is logarithmic. */
static void check_tree(int n, int k)
{
    int *par = calloc((size_t)n, sizeof *par), *hi = calloc((size_t)n, sizeof *hi);
    int *seen = calloc((size_t)n, sizeof *seen), *depth = calloc((size_t)n, sizeof *depth);
    assert_non_null(par);
    assert_non_null(hi);
    assert_non_null(seen);
    assert_non_null(depth);
    int child[64], chi[64], nc;
    for (int r = 0; r < n; r++) {
        coll_bootstrap_tree(n, k, r, &par[r], &hi[r], &nc, child, chi);
        assert_true(hi[r] > r && hi[r] <= n);
        assert_true(nc <= k);
        int expect = r + 1;
        for (int i = 0; i < nc; i++) {
            assert_int_equal(child[i], expect); /* children split [r+1, hi) in order */
            assert_true(chi[i] > child[i]);
            expect = chi[i];
            seen[child[i]]++;
        }
        assert_int_equal(expect, nc ? hi[r] : r + 1);
        if (nc == 0)
            assert_int_equal(hi[r], r + 1);
    }
    assert_int_equal(par[0], -1);
    assert_int_equal(hi[0], n);
    int maxd = 0;
    for (int r = 1; r < n; r++) {
        assert_int_equal(seen[r], 1);
        assert_true(par[r] >= 0 && par[r] < r);
        assert_true(r < hi[par[r]] && hi[r] <= hi[par[r]]);
        depth[r] = depth[par[r]] + 1;
        if (depth[r] > maxd)
            maxd = depth[r];
    }
    /* each level divides the range by k (rounded up): depth <= ceil(log_k n) + 1 */
    double bound = ceil(log((double)n) / log((double)k)) + 1;
    assert_true(maxd <= (int)bound);
    free(par);
    free(hi);
    free(seen);
    free(depth);
}

static void test_tree_layout(void **state)
{
    (void)state;
    for (int n = 1; n <= 200; n++)
        check_tree(n, COLL_BOOT_K);
    check_tree(1000, 2);
    check_tree(32768, COLL_BOOT_K);
    int par, hi, nc, child[COLL_BOOT_K], chi[COLL_BOOT_K];
    coll_bootstrap_tree(32768, COLL_BOOT_K, 0, &par, &hi, &nc, child, chi);
    assert_int_equal(nc, COLL_BOOT_K);
    assert_int_equal(chi[0] - child[0], 4096); /* 32767 = 8 x 4096 - 1: near-equal parts */
}

static const uint8_t test_secret[COLL_SECRET_BYTES] = {7, 7, 7};

/* When rank 'who' aborted or died (CLOCK_MONOTONIC, one clock for all the
 * processes), in a page shared by the forked ranks: the second is measured
 * from that event. It was measured from each rank's own return from the
 * barrier, which also counted how late the victim was scheduled after the
 * barrier's release (20 ranks on 2 cores, beside other tests, under ASan). */
static double *g_abort_at;

/* n processes join; rank 'who' then aborts (how = 0) or dies without a word
 * (how = 1); every other rank must hear of it naming that rank within a second. */
static int notice_child(const coll_id_info_t *info, int rank, int n, int who, int how, const char *prefix)
{
    alarm(30);
    coll_bootstrap_t bs;
    if (coll_bootstrap_init(&bs, info, prefix, rank, n, 20.0, NULL, NULL, 0, NULL) != COLL_SUCCESS)
        return 10;
    if (coll_bootstrap_barrier(&bs) != COLL_SUCCESS)
        return 11;
    if (rank == who) {
        double at = now_s();
        __atomic_store(g_abort_at, &at, __ATOMIC_RELEASE);
        if (how == 1)
            _exit(0); /* no goodbye: a death */
        coll_bootstrap_abort(&bs, "planted abort");
        usleep(300 * 1000);
        coll_bootstrap_close(&bs);
        return 0;
    }
    double t0 = now_s();
    char why[320];
    int got = -1;
    while (got < 0 && now_s() - t0 < 5.0)
        got = coll_bootstrap_check_abort(&bs, 50, why, sizeof why);
    double heard = now_s(), at;
    __atomic_load(g_abort_at, &at, __ATOMIC_ACQUIRE);
    if (got < 0)
        return 12;
    if (at <= 0 || at > heard)
        return 18; /* a notice before the event: impossible */
    double el = heard - at;
    /* a death is named by the neighbours that saw it; the rest hear it from them */
    if (got != who)
        return 13;
    if (how == 0 && !strstr(why, "planted abort"))
        return 14;
    if (how == 1 && strcmp(why, COLL_BOOT_DIED))
        return 15;
    if (el > 1.0)
        return 16;
    /* later helpers fail at once with the same rank */
    if (coll_bootstrap_barrier(&bs) != COLL_ERR_ABORTED)
        return 17;
    coll_bootstrap_close(&bs);
    return 0;
}

typedef struct {
    const coll_id_info_t *info;
    int n, who, how;
    const char *prefix;
} notice_arg_t;

static int notice_rank(int rank, void *arg)
{
    const notice_arg_t *na = arg;
    return notice_child(na->info, rank, na->n, na->who, na->how, na->prefix);
}

static void run_notice(int n, int who, int how)
{
    coll_id_info_t info;
    coll_store_server_t *s = NULL;
    assert_int_equal(coll_store_server_start("127.0.0.1", 0, test_secret, &s, &info), COLL_SUCCESS);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "n%d-%d-%d", n, who, how);
    notice_arg_t na = {&info, n, who, how, prefix};
    g_abort_at = mmap(NULL, sizeof *g_abort_at, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(g_abort_at != MAP_FAILED);
    *g_abort_at = 0;
    int bad = cb_ranks_run(n, notice_rank, &na, prefix);
    munmap(g_abort_at, sizeof *g_abort_at);
    coll_store_server_stop(s);
    assert_int_equal(bad, 0);
}

static void test_abort_floods(void **state)
{
    (void)state;
    run_notice(2, 1, 0);
    run_notice(20, 0, 0);  /* from the root down */
    run_notice(20, 19, 0); /* from a leaf up and down again */
}

static void test_death_floods(void **state)
{
    (void)state;
    run_notice(20, 1, 1); /* an inner node: its subtree and the rest both hear */
    run_notice(20, 0, 1); /* the root */
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_layout),
        cmocka_unit_test(test_abort_floods),
        cmocka_unit_test(test_death_floods),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
