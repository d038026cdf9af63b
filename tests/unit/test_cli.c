/*
 * test_cli.c - the test executables' command line (tools/driver/cli.c), the
 * size sweep, the v-test count split, the launcher helpers and the data
 * patterns: every flag, defaults, suffixes, every invalid value.
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
#include "driver/driver.h"
#include "launch/launch.h"

static char errbuf[1024];

/* Parses a space-separated command line for descriptor d. */
static int parse(const cb_desc_t *d, cb_opts_t *o, const char *line)
{
    static char buf[1024];
    static char *argv[64];
    snprintf(buf, sizeof(buf), "%s", line);
    int argc = 0;
    argv[argc++] = (char *)"prog";
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    errbuf[0] = '\0';
    return cb_cli_parse(d, argc, argv, o, errbuf, sizeof(errbuf));
}

static void test_defaults(void **state)
{
    (void)state;
    cb_opts_t o;
    assert_int_equal(parse(&cb_desc_all_reduce, &o, ""), 0);
    assert_string_equal(o.prog, "all_reduce_test");
    assert_int_equal(o.action, CB_ACT_RUN);
    assert_true(o.minbytes == 64ull << 20 && o.maxbytes == 64ull << 20);
    assert_true(o.stepbytes == 1); /* (max-min)/10 == 0 -> 1 */
    assert_true(o.stepfactor == 0);
    assert_int_equal(o.op, COLL_SUM);
    assert_int_equal(o.dt, COLL_FP32);
    assert_int_equal(o.root, 0);
    assert_int_equal(o.iters, 20);
    assert_int_equal(o.warmup, 10);
    assert_int_equal(o.check, 1);
    assert_int_equal(o.npus, cb_default_npus());
    assert_int_equal(o.npus_set, 0);
    assert_int_equal(o.zero_copy, 0);
    assert_int_equal(o.agg, CB_AGG_MAX);
    assert_null(o.algo);
    assert_null(o.json);
    assert_null(o.csv);
    assert_true(o.timeout < 0);
    assert_true(o.hold_after < 0);
    assert_int_equal(o.equal_counts, 0);
}

static void test_short_flags(void **state)
{
    (void)state;
    cb_opts_t o;
    assert_int_equal(parse(&cb_desc_reduce, &o, "-o max -d int8 -b 8K -e 64M -i 1k -f 2 -r 1 -n 5 -w 0 -c 0 -p 4 -z 1"),
                     0);
    assert_int_equal(o.op, COLL_MAX);
    assert_int_equal(o.dt, COLL_INT8);
    assert_true(o.minbytes == 8192);
    assert_true(o.maxbytes == 64ull << 20);
    assert_true(o.stepbytes == 1024);
    assert_true(o.stepfactor == 2);
    assert_int_equal(o.root, 1);
    assert_int_equal(o.iters, 5);
    assert_int_equal(o.warmup, 0);
    assert_int_equal(o.check, 0);
    assert_int_equal(o.npus, 4);
    assert_int_equal(o.npus_set, 1);
    assert_int_equal(o.zero_copy, 1);
}

static void test_long_flags(void **state)
{
    (void)state;
    cb_opts_t o;
    assert_int_equal(parse(&cb_desc_all_gatherv, &o,
                           "--op prod --datatype bfp16 --minbytes 1M --maxbytes 1G --stepbytes 0 "
                           "--root 2 --iters 7 --warmup_iters 3 --check 1 --npus 8 --zero_copy 0 "
                           "--json r.json --csv r.csv --time-agg all --timeout 2.5 --equal-counts"),
                     0);
    assert_int_equal(o.op, COLL_PROD);
    assert_int_equal(o.dt, COLL_BF16);
    assert_true(o.minbytes == 1ull << 20 && o.maxbytes == 1ull << 30);
    assert_true(o.stepbytes == 0 && o.step_set);
    assert_int_equal(o.root, 2);
    assert_int_equal(o.iters, 7);
    assert_int_equal(o.warmup, 3);
    assert_int_equal(o.npus, 8);
    assert_string_equal(o.json, "r.json");
    assert_string_equal(o.csv, "r.csv");
    assert_int_equal(o.agg, CB_AGG_ALL);
    assert_true(o.timeout == 2.5);
    assert_int_equal(o.equal_counts, 1);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--stepfactor 4 --time-agg min"), 0);
    assert_true(o.stepfactor == 4);
    assert_int_equal(o.agg, CB_AGG_MIN);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--hold-after 2.5"), 0);
    assert_true(o.hold_after == 2.5);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--time-agg avg"), 0);
    assert_int_equal(o.agg, CB_AGG_AVG);
}

static void test_actions(void **state)
{
    (void)state;
    cb_opts_t o;
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "-h"), 0);
    assert_int_equal(o.action, CB_ACT_HELP);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--help"), 0);
    assert_int_equal(o.action, CB_ACT_HELP);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--version"), 0);
    assert_int_equal(o.action, CB_ACT_VERSION);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--print-config"), 0);
    assert_int_equal(o.action, CB_ACT_PRINT_CONFIG);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--list-algos"), 0);
    assert_int_equal(o.action, CB_ACT_LIST_ALGOS);
}

static void test_suffixes(void **state)
{
    (void)state;
    cb_opts_t o;
    static const struct {
        const char *s;
        unsigned long long v;
    } t[] = {
        {"0", 0},           {"1", 1},           {"8k", 8192},       {"8K", 8192},
        {"3m", 3ull << 20}, {"2G", 2ull << 30}, {"2g", 2ull << 30}, {"123", 123},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char line[64];
        snprintf(line, sizeof(line), "-b %s -e 4G", t[i].s);
        assert_int_equal(parse(&cb_desc_all_reduce, &o, line), 0);
        assert_true(o.minbytes == t[i].v);
    }
}

static void expect_error(const cb_desc_t *d, const char *line, const char *needle)
{
    cb_opts_t o;
    int rc = parse(d, &o, line);
    if (rc != CB_EXIT_USAGE || !strstr(errbuf, needle))
        fail_msg("'%s': rc %d, message '%s' (wanted '%s')", line, rc, errbuf, needle);
    assert_non_null(strstr(errbuf, "_test: "));
}

static void test_invalid(void **state)
{
    (void)state;
    const cb_desc_t *d = &cb_desc_all_reduce;
    expect_error(d, "-d fp33",
                 "invalid -d 'fp33': allowed int8 int16 int32 int64 uint8 uint16 uint32 uint64 fp16 fp32 fp64 bfp16");
    expect_error(d, "--datatype x", "invalid -d 'x'");
    expect_error(d, "-o avg", "invalid -o 'avg': allowed sum prod max min");
    expect_error(d, "-b 12Q", "invalid -b '12Q'");
    expect_error(d, "-b -5", "invalid -b '-5'");
    expect_error(d, "-b K", "invalid -b 'K'");
    expect_error(d, "-e 1x", "invalid -e '1x'");
    expect_error(d, "-b 1M -e 1K", "invalid -e '1024'");
    expect_error(d, "-i 5Z", "invalid -i '5Z'");
    expect_error(d, "-f 1", "invalid -f '1'");
    expect_error(d, "-f 0", "invalid -f '0'");
    expect_error(d, "-f 1.5", "invalid -f '1.5'");
    expect_error(d, "-f abc", "invalid -f 'abc'");
    expect_error(d, "-n 0", "invalid -n '0'");
    expect_error(d, "-n -3", "invalid -n '-3'");
    expect_error(d, "-n 10x", "invalid -n '10x'");
    expect_error(d, "-w -1", "invalid -w '-1'");
    expect_error(d, "-c 2", "invalid -c '2'");
    expect_error(d, "-z 5", "invalid -z '5'");
    expect_error(d, "-p 0", "invalid -p '0'");
    expect_error(d, "-p 1025", "invalid -p '1025'");
    expect_error(d, "-r -1", "invalid -r '-1'");
    expect_error(d, "-r x", "invalid -r 'x'");
    expect_error(d, "--time-agg median", "invalid --time-agg 'median': allowed max avg min all");
    expect_error(d, "--timeout -1", "invalid --timeout '-1'");
    expect_error(d, "--timeout abc", "invalid --timeout 'abc'");
    expect_error(d, "--hold-after -1", "invalid --hold-after '-1': allowed seconds 0..3600");
    expect_error(d, "--algo no_such_algo_xyz", "invalid --algo 'no_such_algo_xyz'");
    expect_error(d, "--bogus", "unknown option '--bogus'");
    expect_error(d, "-x", "unknown option -x");
    expect_error(d, "-b", "needs a value");
    expect_error(d, "--minbytes", "needs a value");
    expect_error(d, "stray", "unexpected argument 'stray'");
}

/* --format and COLL_TEST_FORMAT (hccl_test's exact four-column table). */
static void test_format(void **state)
{
    (void)state;
    cb_opts_t o;
    unsetenv("COLL_TEST_FORMAT");
    coll_cfg_reload();
    assert_int_equal(parse(&cb_desc_all_reduce, &o, ""), 0);
    assert_int_equal(o.format, CB_FMT_COLLBENCH);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--format hccl"), 0);
    assert_int_equal(o.format, CB_FMT_HCCL);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--format=collbench"), 0);
    assert_int_equal(o.format, CB_FMT_COLLBENCH);
    assert_int_equal(parse(&cb_desc_broadcast, &o, "--format hccl --time-agg min"), 0);
    assert_int_equal(o.format, CB_FMT_HCCL);
    expect_error(&cb_desc_all_reduce, "--format HCCL", "invalid --format 'HCCL': allowed collbench hccl");
    expect_error(&cb_desc_all_reduce, "--format json", "invalid --format 'json': allowed collbench hccl");
    expect_error(&cb_desc_all_reduce, "--format", "needs a value");
    expect_error(&cb_desc_all_reduce, "--format hccl --time-agg all", "invalid --time-agg 'all' with the hccl format");

    setenv("COLL_TEST_FORMAT", "hccl", 1);
    coll_cfg_reload();
    assert_int_equal(parse(&cb_desc_all_reduce, &o, ""), 0);
    assert_int_equal(o.format, CB_FMT_HCCL);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--format collbench"), 0); /* flag wins */
    assert_int_equal(o.format, CB_FMT_COLLBENCH);
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--help"), 0);
    setenv("COLL_TEST_FORMAT", "csv", 1);
    coll_cfg_reload();
    expect_error(&cb_desc_all_reduce, "", "invalid COLL_TEST_FORMAT 'csv': allowed collbench hccl");
    expect_error(&cb_desc_all_reduce, "--format hccl", "invalid COLL_TEST_FORMAT 'csv'");
    unsetenv("COLL_TEST_FORMAT");
    coll_cfg_reload();
    assert_int_equal(parse(&cb_desc_all_reduce, &o, ""), 0);
}

/* The article's names (seed 001): tree and hybrid (= hier), any case. */
static void test_algo_names(void **state)
{
    (void)state;
    cb_opts_t o;
    const char *ok[] = {"--algo tree",
                        "--algo Tree",
                        "--algo TREE",
                        "--algo allreduce=tree",
                        "--algo hybrid",
                        "--algo Hybrid",
                        "--algo allreduce=HYBRID",
                        "--algo all_reduce=Tree;allgather=hybrid"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        assert_int_equal(parse(&cb_desc_all_reduce, &o, ok[i]), 0);
    const coll_algo_t *h = coll_algo_find(COLL_ALLREDUCE, "HyBrid"), *t = coll_algo_find(COLL_ALLREDUCE, "TREE");
    assert_non_null(h);
    assert_string_equal(h->name, "hier");
    assert_non_null(t);
    assert_string_equal(t->name, "tree");
    assert_null(coll_algo_find(COLL_BROADCAST, "tree"));
    char why[512];
    int forced[COLL_KIND_COUNT];
    assert_int_not_equal(coll_algo_resolve("broadcast=tree", forced, why, sizeof why), 0);
    assert_non_null(strstr(why, "hybrid = hier"));
    assert_int_not_equal(coll_algo_resolve("hybird", forced, why, sizeof why), 0);
    assert_non_null(strstr(why, "tree"));
    /* resolved once, into what the selection reads: the table's entries */
    assert_int_equal(coll_algo_resolve("all_reduce=Tree;allgather=hybrid", forced, why, sizeof why), 0);
    assert_ptr_equal(coll_algo_table[forced[COLL_ALLREDUCE]], t);
    assert_ptr_equal(coll_algo_table[forced[COLL_ALLGATHER]], coll_algo_find(COLL_ALLGATHER, "hier"));
    assert_int_equal(forced[COLL_BROADCAST], -1);
    /* --algo sets COLL_ALGO so resolved; a bad one keeps what was there */
    assert_int_equal(parse(&cb_desc_all_reduce, &o, "--algo allreduce=hybrid"), 0);
    assert_ptr_equal(coll_algo_table[coll_cfg_algo(COLL_ALLREDUCE)], h);
    assert_int_not_equal(parse(&cb_desc_all_reduce, &o, "--algo allreduce=nope"), 0);
    assert_ptr_equal(coll_algo_table[coll_cfg_algo(COLL_ALLREDUCE)], h);
    coll_cfg_set(COLL_CFG_ALGO, NULL);
    assert_int_equal(coll_cfg_algo(COLL_ALLREDUCE), -1);
}

static void test_ranks(void **state)
{
    (void)state;
    cb_opts_t o;
    assert_int_equal(parse(&cb_desc_broadcast, &o, "-r 3"), 0);
    assert_int_equal(cb_cli_check_ranks(&o, 4, errbuf, sizeof(errbuf)), 0);
    assert_int_equal(cb_cli_check_ranks(&o, 3, errbuf, sizeof(errbuf)), CB_EXIT_USAGE);
    assert_non_null(strstr(errbuf, "invalid -r '3'"));
    assert_non_null(strstr(errbuf, "0..2"));
}

static int sweep(const char *line, unsigned long long *out, int max)
{
    cb_opts_t o;
    assert_int_equal(parse(&cb_desc_all_reduce, &o, line), 0);
    int n = 0;
    unsigned long long s = o.minbytes;
    do {
        out[n++] = s;
    } while (n < max && cb_next_size(&o, s, &s));
    return n;
}

static void test_sweep(void **state)
{
    (void)state;
    unsigned long long s[64];
    int n = sweep("-b 8K -e 64M -f 2", s, 64);
    assert_int_equal(n, 14);
    assert_true(s[0] == 8192 && s[13] == 64ull << 20);
    n = sweep("-b 100 -e 200", s, 64); /* step (200-100)/10 = 10 */
    assert_int_equal(n, 11);
    assert_true(s[1] == 110 && s[10] == 200);
    n = sweep("-b 100 -e 200 -i 0", s, 64); /* -i 0: the start size once */
    assert_int_equal(n, 1);
    n = sweep("-b 1K -e 1K", s, 64);
    assert_int_equal(n, 1);
    n = sweep("-b 0 -e 4 -f 2", s, 64); /* 0, 1, 2, 4 */
    assert_int_equal(n, 4);
    n = sweep("-b 1 -e 5", s, 64); /* (5-1)/10 == 0 -> step 1 */
    assert_int_equal(n, 5);
    n = sweep("-b 3 -e 40 -f 3 -i 1", s, 64); /* -f wins: 3 9 27 */
    assert_int_equal(n, 3);
    n = sweep("-b 16G -e 16G", s, 64);
    assert_int_equal(n, 1);
}

static void test_split(void **state)
{
    (void)state;
    size_t c[8], d[8];
    assert_int_equal(cb_split_counts(10, 4, 1, c, d), 8);
    assert_true(c[0] == 2 && c[3] == 2 && d[3] == 6);
    /* unequal, n = 4: weights 1 0 3 4 (W = 8) */
    assert_int_equal(cb_split_counts(80, 4, 0, c, d), 80);
    assert_true(c[0] == 10 && c[1] == 0 && c[2] == 30 && c[3] == 40);
    assert_true(d[2] == 10 && d[3] == 40);
    assert_int_equal(cb_split_counts(81, 4, 0, c, d), 81);
    assert_true(c[3] == 41);
    /* n = 2: weights 1 2, no zero */
    assert_int_equal(cb_split_counts(9, 2, 0, c, d), 9);
    assert_true(c[0] == 3 && c[1] == 6);
    assert_int_equal(cb_split_counts(0, 5, 0, c, d), 0);
    assert_int_equal(cb_split_counts(7, 1, 0, c, d), 7);
    assert_int_equal(cb_zero_rank(2), -1);
    assert_int_equal(cb_zero_rank(3), 1);
}

static void test_launch_helpers(void **state)
{
    (void)state;
    assert_int_equal(cb_cpulist_count("0-3,8,10-11"), 7);
    assert_int_equal(cb_cpulist_nth("0-3,8,10-11", 0), 0);
    assert_int_equal(cb_cpulist_nth("0-3,8,10-11", 4), 8);
    assert_int_equal(cb_cpulist_nth("0-3,8,10-11", 6), 11);
    assert_int_equal(cb_cpulist_nth("0-3,8,10-11", 7), -1);
    assert_int_equal(cb_cpulist_count("3-1"), -1);
    assert_int_equal(cb_cpulist_count("a"), -1);
    assert_int_equal(cb_cpulist_count("1,"), -1);
    assert_int_equal(cb_cpulist_count(""), -1);
    char h[64];
    assert_int_equal(cb_nodelist_host("node[01-03,07]", 0, h, sizeof(h)), 0);
    assert_string_equal(h, "node01");
    assert_int_equal(cb_nodelist_host("node[01-03,07]", 3, h, sizeof(h)), 0);
    assert_string_equal(h, "node07");
    assert_int_equal(cb_nodelist_host("node[01-03,07]", 4, h, sizeof(h)), -1);
    assert_int_equal(cb_nodelist_host("a1,b[9-10]", 2, h, sizeof(h)), 0);
    assert_string_equal(h, "b10");
    assert_int_equal(cb_nodelist_host("single", 0, h, sizeof(h)), 0);
    assert_string_equal(h, "single");
    /* several bracket groups: their product, the last varying fastest */
    const char *multi = "rack[1-2]-n[01-03],gpu[7]x,c[9-10]s[2,4]";
    const char *want[] = {"rack1-n01", "rack1-n02", "rack1-n03", "rack2-n01", "rack2-n02", "rack2-n03",
                          "gpu7x",     "c9s2",      "c9s4",      "c10s2",     "c10s4"};
    for (int i = 0; i < 11; i++) {
        assert_int_equal(cb_nodelist_host(multi, i, h, sizeof(h)), 0);
        assert_string_equal(h, want[i]);
    }
    assert_int_equal(cb_nodelist_host(multi, 11, h, sizeof(h)), -1);
    const char *bad[] = {"a[1-2", "a]1", "a[[1]]", "a[2-1]", "a[x]", "a[1,]", ",a", "a[]", "a[1-1234567890]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(cb_nodelist_host(bad[i], 0, h, sizeof(h)), -1);
    assert_int_equal(cb_nodelist_host("averyveryverylonghostname[1-2]", 0, h, 8), -1); /* does not fit */
    int c1[] = {0, 5, 0}, c2[] = {0, 0}, c3[] = {5, 1, 5}, c4[] = {137, 0}, c5[] = {4, 3};
    assert_int_equal(cb_worst_code(c1, 3), 5);
    assert_int_equal(cb_worst_code(c2, 2), 0);
    assert_int_equal(cb_worst_code(c3, 3), 1);
    assert_int_equal(cb_worst_code(c4, 2), 5);
    assert_int_equal(cb_worst_code(c5, 2), 4);
    int c6[] = {6, 6, 6}, c7[] = {6, 1}, c8[] = {6, 5}; /* --min-bw gate: below a failure */
    assert_int_equal(cb_worst_code(c6, 3), 6);
    assert_int_equal(cb_worst_code(c7, 2), 1);
    assert_int_equal(cb_worst_code(c8, 2), 5);
}

static void test_data(void **state)
{
    (void)state;
    cb_data_t d;
    assert_int_equal(cb_data_init(&d, COLL_FP16, 1, COLL_SUM, 8), 0);
    assert_int_equal(d.exact, 1);
    /* reduced pattern: sum over ranks of each rank's pattern, exactly */
    uint16_t *p = malloc(CB_PERIOD * 2);
    double *acc = calloc(CB_PERIOD, sizeof(double));
    for (int r = 0; r < 8; r++) {
        cb_pattern(&d, r, p);
        for (int k = 0; k < CB_PERIOD; k++)
            acc[k] += cb_elem_to_double(COLL_FP16, &p[k]);
    }
    for (int k = 0; k < CB_PERIOD; k++)
        assert_true(cb_elem_to_double(COLL_FP16, (uint16_t *)d.red + k) == acc[k]);
    free(p);
    free(acc);
    cb_data_free(&d);
    assert_int_equal(cb_data_init(&d, COLL_BF16, 1, COLL_SUM, 200), 0);
    assert_int_equal(d.exact, 0);
    cb_data_free(&d);
    assert_int_equal(cb_data_init(&d, COLL_INT8, 1, COLL_SUM, 300), 0);
    assert_int_equal(d.exact, 1); /* integers wrap exactly */
    cb_data_free(&d);
    assert_int_equal(cb_data_init(&d, COLL_INT8, 1, COLL_PROD, 7), 0);
    assert_int_equal(d.exact, 1);
    for (int k = 0; k < CB_PERIOD; k++) {
        double v = cb_elem_to_double(COLL_INT8, (int8_t *)d.red + k);
        assert_true(v != 0 && v >= -64 && v <= 64);
    }
    cb_data_free(&d);

    /* fill / compare, including a misplaced element */
    cb_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.dt = COLL_INT32;
    c.esize = 4;
    assert_int_equal(cb_data_init(&c.data, COLL_INT32, 0, COLL_SUM, 4), 0);
    size_t n = 5000;
    int32_t *b = malloc(n * 4);
    cb_fill_seed(&c.data, b, n, 3, 17);
    assert_int_equal(cb_compare_seed(&c, b, n, 3, 17, 0), 0);
    assert_true(cb_compare_seed(&c, b, n, 2, 17, 0) > n / 2);
    int32_t t = b[1234];
    b[1234] = b[1235];
    b[1235] = t;
    uint64_t w = cb_compare_seed(&c, b, n, 3, 17, 0);
    assert_true(w == 2 || (b[1234] == b[1235] && w == 0));
    cb_poison(&c.data, b, n);
    assert_true(cb_compare_seed(&c, b, n, 3, 17, 0) == n);

    /* blocks (scatter, all-to-all): round trip, a neighbour's block (sender
     * or receiver off by one, or far apart) fails most elements, a swap and
     * the poison are caught; int8 (m = 128) and int32 (m = 200) */
    for (int ti = 0; ti < 2; ti++) {
        coll_dtype_t dt = ti ? COLL_INT8 : COLL_INT32;
        cb_data_free(&c.data);
        c.dt = dt;
        c.esize = coll_dtype_size(dt);
        assert_int_equal(cb_data_init(&c.data, dt, 0, COLL_SUM, 32768), 0);
        int pairs[][4] = {{0, 5, 1, 5},    {7, 3, 7, 4},    {4095, 0, 4094, 0}, {12, 32767, 12, 32766},
                          {1021, 9, 0, 9}, {3, 1021, 3, 0}, {200, 1, 200, 8120}};
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            cb_fill_block(&c.data, b, n, pairs[i][0], pairs[i][1]);
            assert_int_equal(cb_compare_block(&c, b, n, pairs[i][0], pairs[i][1], 0), 0);
            assert_true(cb_compare_block(&c, b, n, pairs[i][2], pairs[i][3], 0) > n / 2);
            assert_true(cb_compare_block(&c, b + 1, n - 8, pairs[i][0], pairs[i][1], 0) > n / 2);
        }
        cb_fill_block(&c.data, b, 1, 9, 9);
        assert_int_equal(cb_compare_block(&c, b, 1, 9, 9, 0), 0);
        char *e = (char *)b + 700 * c.esize;
        cb_fill_block(&c.data, b, n, 11, 13);
        char sv[8];
        memcpy(sv, e, c.esize);
        memcpy(e, e + c.esize, c.esize);
        w = cb_compare_block(&c, b, n, 11, 13, 0);
        assert_true(w == 1 || (memcmp(sv, e, c.esize) == 0 && w == 0));
        cb_poison(&c.data, b, n);
        assert_true(cb_compare_block(&c, b, n, 11, 13, 0) == n);
    }
    free(b);
    cb_data_free(&c.data);
}

static void test_descriptors(void **state)
{
    (void)state;
    int k = 0;
    for (; cb_desc_table[k]; k++) {
        const cb_desc_t *d = cb_desc_table[k];
        assert_ptr_equal(cb_desc_find(d->name), d);
        assert_non_null(d->layout);
        assert_non_null(d->init);
        assert_non_null(d->run);
        assert_non_null(d->check);
    }
    assert_int_equal(k, 10);
    assert_true(cb_desc_all_reduce.busbw_factor(4) == 1.5);
    assert_true(cb_desc_all_gather.busbw_factor(4) == 0.75);
    assert_true(cb_desc_broadcast.busbw_factor(4) == 1.0);
    assert_true(cb_desc_reduce.busbw_factor(4) == 1.0);
    assert_true(cb_desc_scatter.busbw_factor(4) == 0.75);
    /* layouts: whole elements per rank */
    cb_ctx_t c;
    memset(&c, 0, sizeof(c));
    size_t a[6][5];
    c.counts = a[0];
    c.displs = a[1];
    c.scounts = a[2];
    c.sdispls = a[3];
    c.rcounts = a[4];
    c.rdispls = a[5];
    c.nranks = 5;
    c.rank = 2;
    c.esize = 4;
    cb_desc_all_gather.layout(&c, 1000); /* 250 elements -> 50 each */
    assert_true(c.bytes == 1000 && c.send_elems == 50 && c.recv_elems == 250);
    cb_desc_all_gather.layout(&c, 1001);
    assert_true(c.bytes == 1000);
    cb_desc_reduce_scatter.layout(&c, 1004);
    assert_true(c.bytes == 1000 && c.send_elems == 250 && c.recv_elems == 50);
    cb_desc_alltoallv.layout(&c, 4000); /* 1000 elements, unequal */
    assert_true(c.bytes == 4000 && c.send_elems == 1000 && c.recv_elems == 1000);
    cb_desc_all_reduce.layout(&c, 10);
    assert_true(c.bytes == 8 && c.send_elems == 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),   cmocka_unit_test(test_short_flags), cmocka_unit_test(test_long_flags),
        cmocka_unit_test(test_actions),    cmocka_unit_test(test_suffixes),    cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_format),     cmocka_unit_test(test_ranks),       cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_algo_names), cmocka_unit_test(test_split),       cmocka_unit_test(test_launch_helpers),
        cmocka_unit_test(test_data),       cmocka_unit_test(test_descriptors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
