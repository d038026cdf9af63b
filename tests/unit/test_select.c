/*
 * test_select.c - automatic selection (coll/registry.c: forced -> rules in
 * tuning_rules.c -> cost model in tuning.c) on synthetic communicators: the
 * simulated transport builds any host layout in one process (no run, only
 * coll_algo_select on rank 0's world). Asserts the documented rules:
 *   - one host (shared memory, sim_direct.c): the measured HOST rules (direct
 *     AllReduce up to 32K and at 2-4 ranks, cma above from 5; 2-rank allgather direct up to 16M, ring
 *     above; 3-4 ranks alltoall direct, scatter / gather linear; small
 *     broadcast / reduce binomial), the shm barrier from 5 ranks
 *     (dissemination below: collbench topo -p 4 agrees);
 *   - one host whose callers' buffers are on 2 MiB pages (comm->buf_huge): the
 *     HUGE rules (single-copy cma at 2 and 4 ranks where it beats the staged
 *     copies); at other rank counts, and with 4 KiB pages, the HOST rules;
 *   - a crowded host (more than 2 ranks per core, from 5 ranks): the CROWDED
 *     rules (staged direct AllReduce at every size, trees for small rooted
 *     calls, linear scatter / gather up to 8M); under 5 ranks they do not apply;
 *   - one rank per host: nothing single-host or hierarchical, the
 *     dissemination barrier, log-step algorithms for small messages, and past
 *     COLL_PEERS_MAX (64) members no algorithm that talks to every member;
 *   - several hosts with several ranks each: hierarchical algorithms;
 *   - uneven layouts: whatever is chosen is usable;
 *   - forcing: COLL_ALGO and coll_algo_force win wherever the algorithm is
 *     usable, and give way to automatic selection where it is not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll/algo.h"
#include "core/config.h"
#include "transport/sim.h"

#define KB(x) ((size_t)(x) << 10)
#define MB(x) ((size_t)(x) << 20)

static const coll_kind_t kinds[] = {COLL_ALLREDUCE, COLL_ALLGATHER, COLL_REDUCE_SCATTER, COLL_REDUCE, COLL_BROADCAST,
                                    COLL_SCATTER,   COLL_GATHER,    COLL_ALLTOALL,       COLL_BARRIER};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))
static const size_t sizes[] = {1024, KB(64), MB(1), MB(16), MB(256)};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static coll_sim_t *make(int nh, const int *hn, double oversub)
{
    coll_sim_params_t sp = coll_sim_defaults();
    coll_sim_t *s = NULL;
    assert_int_equal(coll_sim_create(nh, hn, &sp, &s), COLL_SUCCESS);
    for (int r = 0; r < coll_sim_nranks(s); r++)
        coll_sim_comm(s, r)->oversub = oversub;
    return s;
}

static coll_sim_t *uniform(int nh, int l, double oversub)
{
    int *hn = malloc((size_t)nh * sizeof *hn);
    assert_non_null(hn);
    for (int h = 0; h < nh; h++)
        hn[h] = l;
    coll_sim_t *s = make(nh, hn, oversub);
    free(hn);
    return s;
}

/* What rank 0 picks on the world for kind at bytes (fp32 sum, root 0). */
static const coll_algo_t *pick_algo(coll_sim_t *s, coll_kind_t k, size_t bytes)
{
    coll_comm *c = coll_sim_comm(s, 0);
    coll_args_t a = {.kind = k, .dt = COLL_FP32, .op = COLL_SUM, .esize = 4};
    if (k != COLL_BARRIER) {
        a.count = bytes / 4;
        a.bytes = bytes;
    }
    const coll_algo_t *al = NULL;
    if (coll_algo_select(c, &c->world, &a, &al) != COLL_SUCCESS)
        fail_msg("no %s algorithm for %zu bytes on %d ranks: %s", coll_kind_name(k), bytes, c->nranks,
                 coll_last_error());
    assert_true(coll_algo_is_usable(al, c, &c->world, &a));
    return al;
}

static const char *pick(coll_sim_t *s, coll_kind_t k, size_t bytes) { return pick_algo(s, k, bytes)->name; }

#define EXPECT(s, k, bytes, want) \
    do { \
        const char *got_ = pick(s, k, bytes); \
        if (strcmp(got_, want)) \
            fail_msg("%s %zu bytes on %d ranks (%d hosts): %s, expected %s (line %d)", coll_kind_name(k), \
                     (size_t)(bytes), coll_sim_nranks(s), coll_sim_comm(s, 0)->nhosts, got_, want, __LINE__); \
    } while (0)

static void test_one_host(void **state)
{
    (void)state;
    for (int l = 2; l <= 64; l++) {
        coll_sim_t *s = uniform(1, l, 1.0);
        assert_non_null(coll_sim_comm(s, 0)->direct);
        EXPECT(s, COLL_ALLREDUCE, 1024, "direct");
        EXPECT(s, COLL_ALLREDUCE, KB(32), "direct");
        EXPECT(s, COLL_ALLREDUCE, KB(32) + 4, l <= 4 ? "direct" : "cma");
        EXPECT(s, COLL_ALLREDUCE, MB(256), l <= 4 ? "direct" : "cma");
        EXPECT(s, COLL_BARRIER, 0, l <= 4 ? "dissemination" : "shm"); /* cost: 2 rounds beat a shm barrier */
        for (int k = 0; k < NKINDS; k++)
            for (int i = 0; i < NSIZES; i++)
                assert_false(pick_algo(s, kinds[k], sizes[i])->flags & COLL_ALGO_F_HIER);
        if (l == 2) {
            EXPECT(s, COLL_ALLGATHER, MB(16), "direct");
            EXPECT(s, COLL_ALLGATHER, MB(256), "direct"); /* 2 ranks: staged, streamed copy-out (tuning_rules.c) */
            EXPECT(s, COLL_ALLTOALL, 1024, "direct");     /* 2 ranks up to 16K (tuning_rules.c) */
            EXPECT(s, COLL_ALLTOALL, KB(16), "direct");
            EXPECT(s, COLL_ALLTOALL, KB(64), "pairwise");
            EXPECT(s, COLL_ALLTOALL, MB(16) - 8, "pairwise");
            EXPECT(s, COLL_ALLTOALL, MB(16), "direct"); /* 2 ranks from 16M (tuning_rules.c) */
            EXPECT(s, COLL_ALLTOALL, MB(64), "direct");
            EXPECT(s, COLL_SCATTER, KB(32), "binomial");
            EXPECT(s, COLL_SCATTER, MB(1), "cma");
            EXPECT(s, COLL_SCATTER, MB(32) - 8, "cma"); /* from 64K up to 32M (tuning_rules.c) */
            EXPECT(s, COLL_SCATTER, MB(32), "direct");
            EXPECT(s, COLL_SCATTER, MB(64), "direct");
            EXPECT(s, COLL_BROADCAST, MB(32), "direct");
            EXPECT(s, COLL_GATHER, MB(32), "direct");
            EXPECT(s, COLL_BROADCAST, KB(8), "binomial");
            EXPECT(s, COLL_BROADCAST, KB(16), "direct"); /* 2 ranks 16K-32K (rotating windows) */
            EXPECT(s, COLL_GATHER, KB(64), "direct");    /* 2 ranks 16K-64K */
            EXPECT(s, COLL_BROADCAST, MB(1), "cma");
            EXPECT(s, COLL_GATHER, MB(1), "binomial");
            EXPECT(s, COLL_GATHER, MB(16), "cma");
            EXPECT(s, COLL_REDUCE_SCATTER, MB(1), "direct");   /* 2 ranks 64K-1M (tuning_rules.c) */
            EXPECT(s, COLL_REDUCE_SCATTER, KB(128), "direct"); /* (rotating stage windows) */
            EXPECT(s, COLL_REDUCE_SCATTER, MB(2), "ring");     /* 2 ranks 1M-16M */
            EXPECT(s, COLL_REDUCE_SCATTER, KB(8), "direct");   /* 2 ranks up to 16K */
            EXPECT(s, COLL_REDUCE_SCATTER, KB(64), "ring");
            EXPECT(s, COLL_REDUCE_SCATTER, MB(64), "direct");
            EXPECT(s, COLL_REDUCE, KB(8), "binomial"); /* 2-4 ranks up to 512K (tuning_rules.c) ... */
            EXPECT(s, COLL_REDUCE, KB(16), "direct");  /* ... but 2 ranks 16K-4M direct */
            EXPECT(s, COLL_REDUCE, KB(512), "direct");
            EXPECT(s, COLL_REDUCE, MB(1), "direct");
            EXPECT(s, COLL_REDUCE, MB(8), "pipeline"); /* 2 ranks 4M-16M */
            EXPECT(s, COLL_REDUCE, MB(16), "direct");  /* 2 ranks from 16M (tuning_rules.c) */
            EXPECT(s, COLL_REDUCE, MB(64), "direct");
        }
        if (l == 4) {
            EXPECT(s, COLL_ALLTOALL, MB(4), "direct");
            EXPECT(s, COLL_ALLTOALL, MB(8), "cma");
            EXPECT(s, COLL_ALLTOALL, MB(16), "direct"); /* 4 ranks from 16M (tuning_rules.c) */
            EXPECT(s, COLL_BROADCAST, KB(256), "binomial");
            EXPECT(s, COLL_BROADCAST, MB(8), "cma");
            EXPECT(s, COLL_BROADCAST, MB(64), "direct");
            EXPECT(s, COLL_SCATTER, MB(4), "cma");
            EXPECT(s, COLL_SCATTER, MB(64), "direct");
            EXPECT(s, COLL_ALLGATHER, MB(64), "direct");
            EXPECT(s, COLL_GATHER, MB(8), "linear");
            EXPECT(s, COLL_GATHER, MB(16), "direct"); /* 4 ranks from 16M (tuning_rules.c) */
        }
        if (l >= 3 && l <= 4) {
            EXPECT(s, COLL_ALLTOALL, 1024, "direct");
            EXPECT(s, COLL_ALLTOALL, MB(16), "direct");
            EXPECT(s, COLL_SCATTER, MB(1), "linear");
            EXPECT(s, COLL_GATHER, MB(1), "linear");
        }
        if (l <= 4)
            EXPECT(s, COLL_BROADCAST, MB(64), l == 3 ? "binomial" : "direct");
        if (l >= 3 && l <= 4) {
            EXPECT(s, COLL_REDUCE, KB(64), "binomial");
            EXPECT(s, COLL_REDUCE, KB(512), "binomial");
        }
        coll_sim_destroy(s);
    }
}

static void set_huge(coll_sim_t *s, int on)
{
    for (int r = 0; r < coll_sim_nranks(s); r++)
        coll_sim_comm(s, r)->buf_huge = on;
}

/* nh hosts of l ranks pick the same algorithms with and without buf_huge. */
static void expect_hint_ignored(int nh, int l)
{
    coll_sim_t *a = uniform(nh, l, 1.0), *b = uniform(nh, l, 1.0);
    set_huge(b, 1);
    for (int k = 0; k < NKINDS; k++)
        for (int i = 0; i < NSIZES; i++)
            assert_string_equal(pick(a, kinds[k], sizes[i]), pick(b, kinds[k], sizes[i]));
    coll_sim_destroy(a);
    coll_sim_destroy(b);
}

static void test_huge_host(void **state)
{
    (void)state;
    coll_sim_t *s = uniform(1, 2, 1.0);
    EXPECT(s, COLL_ALLGATHER, MB(1), "direct"); /* 4 KiB pages: the HOST rules */
    EXPECT(s, COLL_ALLTOALL, MB(1), "pairwise");
    EXPECT(s, COLL_BROADCAST, MB(64), "direct");
    set_huge(s, 1);
    EXPECT(s, COLL_ALLREDUCE, KB(32), "direct");
    EXPECT(s, COLL_ALLREDUCE, KB(256), "direct"); /* rotating stage windows: no cma rule */
    EXPECT(s, COLL_ALLREDUCE, MB(1), "direct");
    EXPECT(s, COLL_ALLGATHER, KB(16), "direct");
    EXPECT(s, COLL_ALLGATHER, MB(1), "cma");
    EXPECT(s, COLL_ALLGATHER, MB(64), "cma");
    EXPECT(s, COLL_ALLTOALL, MB(1), "cma");
    EXPECT(s, COLL_BROADCAST, MB(64), "cma");
    EXPECT(s, COLL_SCATTER, MB(64), "cma");
    EXPECT(s, COLL_GATHER, KB(64), "direct"); /* 2 ranks 16K-64K, any page size */
    EXPECT(s, COLL_GATHER, KB(128), "cma");
    EXPECT(s, COLL_ALLGATHER, KB(64), "direct");
    EXPECT(s, COLL_ALLGATHER, KB(128), "cma");
    EXPECT(s, COLL_GATHER, KB(8), "binomial");
    coll_sim_destroy(s);
    s = uniform(1, 4, 1.0);
    set_huge(s, 1);
    EXPECT(s, COLL_ALLREDUCE, MB(1), "direct");
    EXPECT(s, COLL_ALLGATHER, MB(1), "cma");
    EXPECT(s, COLL_ALLGATHER, MB(64), "cma");
    EXPECT(s, COLL_ALLTOALL, KB(64), "direct");
    EXPECT(s, COLL_ALLTOALL, MB(1), "cma");
    EXPECT(s, COLL_SCATTER, KB(256), "linear");
    EXPECT(s, COLL_SCATTER, MB(1), "cma");
    EXPECT(s, COLL_SCATTER, MB(64), "cma");
    EXPECT(s, COLL_GATHER, KB(256), "linear");
    EXPECT(s, COLL_GATHER, MB(1), "cma");
    EXPECT(s, COLL_BROADCAST, MB(16), "cma");
    EXPECT(s, COLL_BROADCAST, MB(64), "direct");
    EXPECT(s, COLL_GATHER, MB(16), "cma");
    coll_sim_destroy(s);
    /* other rank counts, and across hosts: the hint changes nothing */
    for (int l = 3; l <= 8; l += (l == 3 ? 2 : 1))
        expect_hint_ignored(1, l);
    expect_hint_ignored(2, 2);
}

static void test_crowded_host(void **state)
{
    (void)state;
    for (int l = 2; l <= 64; l++) {
        coll_sim_t *s = uniform(1, l, 4.0);             /* 4 ranks per core */
        if (l < 5) {                                    /* the crowded rows start at 5 ranks */
            EXPECT(s, COLL_ALLREDUCE, MB(1), "direct"); /* the HOST rule of 2-4 ranks */
            coll_sim_destroy(s);
            continue;
        }
        EXPECT(s, COLL_ALLREDUCE, 1024, "direct");
        EXPECT(s, COLL_ALLREDUCE, MB(1), "direct");
        EXPECT(s, COLL_ALLREDUCE, MB(256), "direct");
        EXPECT(s, COLL_BROADCAST, KB(128), "binomial");
        EXPECT(s, COLL_BROADCAST, MB(1), "direct");
        EXPECT(s, COLL_REDUCE, KB(128), "binomial");
        EXPECT(s, COLL_SCATTER, KB(16), "binomial");
        EXPECT(s, COLL_SCATTER, MB(8), "linear");
        EXPECT(s, COLL_GATHER, MB(8), "linear");
        coll_sim_destroy(s);
    }
}

static void test_rank_per_host(void **state)
{
    (void)state;
    for (int h = 2; h <= 512; h = h < 16 ? h + 1 : h * 2) {
        coll_sim_t *s = uniform(h, 1, 1.0);
        assert_null(coll_sim_comm(s, 0)->direct);
        EXPECT(s, COLL_BARRIER, 0, "dissemination");
        for (int k = 0; k < NKINDS; k++)
            for (int i = 0; i < NSIZES; i++) {
                const coll_algo_t *al = pick_algo(s, kinds[k], sizes[i]);
                if (al->flags & (COLL_ALGO_F_SINGLE_HOST | COLL_ALGO_F_HIER))
                    fail_msg("%s on %d hosts of one rank: %s", coll_kind_name(kinds[k]), h, al->name);
                if (h > 64 && (al->flags & COLL_ALGO_F_ALL_PEERS))
                    fail_msg("%s %zu bytes on %d hosts (past COLL_PEERS_MAX): %s talks to every member",
                             coll_kind_name(kinds[k]), sizes[i], h, al->name);
            }
        if (h >= 8) { /* small messages: log-step algorithms, not p - 1 steps */
            EXPECT(s, COLL_ALLREDUCE, 1024, "hd");
            EXPECT(s, COLL_ALLGATHER, 1024, "bruck");
            EXPECT(s, COLL_BROADCAST, 1024, "binomial");
            EXPECT(s, COLL_ALLTOALL, 1024, "bruck");
            EXPECT(s, COLL_REDUCE_SCATTER, 1024, "halving");
        }
        coll_sim_destroy(s);
    }
}

static void test_hosts_of_several(void **state)
{
    (void)state;
    static const int hs[] = {2, 3, 16, 128, 512};
    for (int i = 0; i < (int)(sizeof hs / sizeof hs[0]); i++)
        for (int l = 2; l <= 8; l *= 2) {
            coll_sim_t *s = uniform(hs[i], l, 1.0);
            assert_non_null(coll_sim_comm(s, 0)->direct);
            EXPECT(s, COLL_BARRIER, 0, "hier");
            EXPECT(s, COLL_ALLREDUCE, 1024, "hier");
            EXPECT(s, COLL_ALLGATHER, 1024, "hier");
            EXPECT(s, COLL_BROADCAST, 1024, "hier");
            if (l >= 4)
                for (int j = 0; j < 3; j++) {
                    EXPECT(s, COLL_ALLREDUCE, sizes[j], "hier");
                    EXPECT(s, COLL_ALLGATHER, sizes[j], "hier");
                    /* hier, or across many hosts at small sizes the log-step halving */
                    if (strcmp(pick(s, COLL_REDUCE_SCATTER, sizes[j]), "halving"))
                        EXPECT(s, COLL_REDUCE_SCATTER, sizes[j], "hier");
                    EXPECT(s, COLL_BROADCAST, sizes[j], "hier");
                }
            for (int k = 0; k < NKINDS; k++)
                for (int j = 0; j < NSIZES; j++)
                    assert_false(pick_algo(s, kinds[k], sizes[j])->flags & COLL_ALGO_F_SINGLE_HOST);
            coll_sim_destroy(s);
        }
}

/* The hierarchical AlltoAll holds 3 x local ranks x bytes per rank at each
 * host leader; it is usable only within COLL_SCRATCH_MAX (default 1 GiB):
 * 2 hosts x 8 ranks, 42 MiB per rank (1008 MiB) yes, 43 MiB no; 0 = no limit. */
static void test_scratch_cap(void **state)
{
    (void)state;
    coll_sim_t *s = uniform(2, 8, 1.0);
    coll_comm *c = coll_sim_comm(s, 0);
    const coll_algo_t *hier = coll_algo_find(COLL_ALLTOALL, "hier");
    assert_non_null(hier);
    static const struct {
        const char *env;
        size_t mib;
        int usable;
    } cases[] = {{NULL, 42, 1}, {NULL, 43, 0}, {NULL, 1024, 0}, {"0", 1024, 1}, {"96M", 4, 1}, {"95M", 4, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].env)
            assert_int_equal(setenv("COLL_SCRATCH_MAX", cases[i].env, 1), 0);
        else
            assert_int_equal(unsetenv("COLL_SCRATCH_MAX"), 0);
        coll_cfg_reload();
        size_t bytes = cases[i].mib << 20;
        coll_args_t a = {.kind = COLL_ALLTOALL, .dt = COLL_FP32, .esize = 4, .count = bytes / 4 / 16, .bytes = bytes};
        if (coll_algo_is_usable(hier, c, &c->world, &a) != cases[i].usable)
            fail_msg("alltoall hier, 2 hosts x 8 ranks, %zu MiB per rank, COLL_SCRATCH_MAX=%s: usable %d, expected %d",
                     cases[i].mib, cases[i].env ? cases[i].env : "(unset)", !cases[i].usable, cases[i].usable);
        if (!cases[i].usable)
            assert_string_not_equal(pick(s, COLL_ALLTOALL, bytes), "hier");
    }
    assert_int_equal(unsetenv("COLL_SCRATCH_MAX"), 0);
    coll_cfg_reload();
    coll_sim_destroy(s);
}

static void test_uneven(void **state)
{
    (void)state;
    for (int p = 6; p <= 64; p += 29) {
        int a[2] = {1, p - 1}, b[3] = {3, 1, p - 4};
        coll_sim_t *s[2] = {make(2, a, 1.0), make(3, b, 1.0)};
        for (int x = 0; x < 2; x++) {
            for (int k = 0; k < NKINDS; k++)
                for (int j = 0; j < NSIZES; j++)
                    pick_algo(s[x], kinds[k], sizes[j]); /* usable (asserted there) */
            coll_sim_destroy(s[x]);
        }
    }
}

static void test_forced(void **state)
{
    (void)state;
    /* COLL_ALGO (set in main before the first selection) */
    coll_sim_t *host = uniform(1, 4, 1.0), *net = uniform(8, 1, 1.0), *both = uniform(4, 4, 1.0);
    EXPECT(host, COLL_ALLREDUCE, MB(1), "tree");
    EXPECT(net, COLL_ALLREDUCE, 1024, "tree");
    EXPECT(host, COLL_BROADCAST, 1024, "binomial"); /* not named: the rules */
    /* programmatic: replaces the whole set */
    assert_int_equal(coll_algo_force("allreduce=ring;alltoall=pairwise;barrier=dissemination"), COLL_SUCCESS);
    EXPECT(host, COLL_ALLREDUCE, 1024, "ring");
    EXPECT(net, COLL_ALLREDUCE, MB(256), "ring");
    EXPECT(both, COLL_ALLREDUCE, MB(1), "ring");
    EXPECT(net, COLL_ALLTOALL, 1024, "pairwise");
    EXPECT(host, COLL_BARRIER, 0, "dissemination");
    /* not usable: automatic choice instead */
    assert_int_equal(coll_algo_force("allreduce=direct;allgather=hier"), COLL_SUCCESS);
    EXPECT(host, COLL_ALLREDUCE, 1024, "direct");
    EXPECT(net, COLL_ALLREDUCE, 1024, "hd");
    EXPECT(both, COLL_ALLREDUCE, 1024, "hier");
    EXPECT(host, COLL_ALLGATHER, 1024, "bruck"); /* as unforced (collbench topo -p 4 agrees) */
    EXPECT(both, COLL_ALLGATHER, 1024, "hier");
    assert_int_not_equal(coll_algo_force("allreduce=nope"), COLL_SUCCESS);
    assert_int_equal(coll_algo_force(NULL), COLL_SUCCESS);
    EXPECT(host, COLL_ALLREDUCE, MB(1), "direct");
    coll_sim_destroy(host);
    coll_sim_destroy(net);
    coll_sim_destroy(both);
}

static int unforce(void **state)
{
    (void)state;
    return coll_algo_force(NULL) == COLL_SUCCESS ? 0 : -1;
}

int main(void)
{
    setenv("COLL_ALGO", "allreduce=tree", 1);
    unsetenv("COLL_CMA");
    unsetenv("COLL_TUNING_RULES_OFF");
    unsetenv("COLL_DETERMINISTIC");
    unsetenv("COLL_PEERS_MAX");
    unsetenv("COLL_TUNING_FILE");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_forced, unforce), /* first: reads COLL_ALGO, then clears the forced set */
        cmocka_unit_test(test_one_host),
        cmocka_unit_test(test_huge_host),
        cmocka_unit_test(test_crowded_host),
        cmocka_unit_test(test_rank_per_host),
        cmocka_unit_test(test_hosts_of_several),
        cmocka_unit_test(test_uneven),
        cmocka_unit_test(test_scratch_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
