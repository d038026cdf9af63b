/*
 * test_sim_algos.c - every algorithm of every collective, forced in turn, on
 * the simulated transport (src/transport/sim.h) with real data checked
 * element by element by the test driver's own init/check (tools/driver), in
 * one process: p = 1..64 ranks, host layouts one host, one rank per host, two
 * hosts, 1,p-1 and 3,1,p-4; every root up to 8 ranks, first/middle/last
 * above; the driver's unequal v-counts (rank 1 gets none, small totals give
 * more zeros); sizes 0, a few elements, ~5 KB and (up to 16 ranks) ~100 KB; the dtype and op rotate over every pair. The staging buffer is
 * shrunk to 64 KiB (COLL_BUFFSIZE) so the direct algorithms' chunk loops run.
 * Fails naming any algorithm of the registry that never ran verified, and any
 * run whose algorithm was not the forced one although it was reported usable.
 * Barrier: every rank must see every other's arrival after each barrier.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <malloc.h>
#include <sys/mman.h>

#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/execution/prim.h"
#include "core/config.h"
#include "driver/driver.h"
#include "transport/sim.h"

#define MAXP 64
#define MAXALGO 128

/* Caches: the data tables per (dt, op) and, for the gather checks, each
 * rank's pattern (CB_PERIOD elements, which the driver would regenerate for
 * every block on every rank: p^2 per run), computed once per rank count (and
 * dtype for the patterns) and reused. Blocks (scatter, all-to-all) need no
 * cache: cb_fill_block / cb_compare_block are O(bytes). */
static struct {
    int n; /* rank count the caches are for */
    cb_data_t data[2][COLL_DTYPE_COUNT][COLL_OP_COUNT];
    char have[2][COLL_DTYPE_COUNT][COLL_OP_COUNT];
    coll_dtype_t pat_dt; /* patterns below are for this dtype */
    char *pats;          /* [n * n + n][CB_PERIOD * esize]: blocks, then ranks */
    char *pat_have;
} cache;

static void cache_reset(int n)
{
    for (int r = 0; r < 2; r++)
        for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
            for (int op = 0; op < COLL_OP_COUNT; op++)
                if (cache.have[r][dt][op])
                    cb_data_free(&cache.data[r][dt][op]);
    free(cache.pats);
    free(cache.pat_have);
    memset(&cache, 0, sizeof cache);
    cache.n = n;
    cache.pat_dt = COLL_DTYPE_COUNT;
}

static const cb_data_t *cached_data(int n, coll_dtype_t dt, int reducing, coll_op_t op)
{
    if (cache.n != n)
        cache_reset(n);
    if (!reducing)
        op = COLL_SUM;
    if (!cache.have[reducing][dt][op]) {
        assert_int_equal(cb_data_init(&cache.data[reducing][dt][op], dt, reducing, op, n), 0);
        cache.have[reducing][dt][op] = 1;
    }
    return &cache.data[reducing][dt][op];
}

/* Rank to's pattern (from = -1: blocks have cb_fill_block) for c's dtype. */
static const char *pattern(cb_ctx_t *c, int from, int to)
{
    int n = c->nranks;
    size_t pb = (size_t)CB_PERIOD * c->esize, i = (size_t)to;
    if (cache.pat_dt != c->dt) {
        free(cache.pats);
        free(cache.pat_have);
        cache.pats = malloc((size_t)n * CB_PERIOD * 8);
        cache.pat_have = calloc((size_t)n, 1);
        assert_non_null(cache.pats);
        assert_non_null(cache.pat_have);
        cache.pat_dt = c->dt;
    }
    if (!cache.pat_have[i]) {
        assert_true(from < 0); /* blocks: cb_fill_block / cb_compare_block, no pattern */
        cb_pattern(&c->data, CB_SEED_RANK(to), cache.pats + i * pb);
        cache.pat_have[i] = 1;
    }
    return cache.pats + i * pb;
}

static uint64_t fast_gather_check(cb_ctx_t *c)
{
    if (c->desc->kind == COLL_GATHER && c->rank != c->root)
        return 0;
    uint64_t wrong = 0;
    for (int b = 0; b < c->nranks; b++)
        if (c->counts[b])
            wrong += cb_compare(c, (char *)c->recvbuf + c->displs[b] * c->esize, c->counts[b], pattern(c, -1, b), 0,
                                c->displs[b]);
    return wrong;
}

static void fast_a2a_init(cb_ctx_t *c)
{
    for (int q = 0; q < c->nranks; q++)
        if (c->scounts[q])
            cb_fill_block(&c->data, (char *)c->sendbuf + c->sdispls[q] * c->esize, c->scounts[q], c->rank, q);
    cb_poison(&c->data, c->recvbuf, c->recv_elems);
}

static uint64_t fast_a2a_check(cb_ctx_t *c)
{
    uint64_t wrong = 0;
    for (int p = 0; p < c->nranks; p++)
        if (c->rcounts[p])
            wrong += cb_compare_block(c, (char *)c->recvbuf + c->rdispls[p] * c->esize, c->rcounts[p], p, c->rank,
                                      c->rdispls[p]);
    return wrong;
}

static cb_desc_t descs[12];

/* The driver's descriptors, with the pattern-heavy checks replaced by the
 * cached ones above (same patterns, same comparison). */
static void descs_init(void)
{
    const cb_desc_t *src[] = {&cb_desc_all_reduce,     &cb_desc_all_gather,      &cb_desc_all_gatherv,
                              &cb_desc_reduce_scatter, &cb_desc_reduce_scatterv, &cb_desc_reduce,
                              &cb_desc_broadcast,      &cb_desc_scatter,         &cb_desc_gather,
                              &cb_desc_alltoall,       &cb_desc_alltoallv,       NULL};
    for (int i = 0; src[i]; i++) {
        descs[i] = *src[i];
        if (descs[i].check == cb_gather_check || descs[i].kind == COLL_GATHER)
            descs[i].check = fast_gather_check;
        if (descs[i].init == cb_a2a_init) {
            descs[i].init = fast_a2a_init;
            descs[i].check = fast_a2a_check;
        }
    }
}

static const coll_dtype_t dts[] = {COLL_INT8,  COLL_UINT8,  COLL_FP16, COLL_BF16,  COLL_INT16,  COLL_UINT16,
                                   COLL_INT32, COLL_UINT32, COLL_FP32, COLL_INT64, COLL_UINT64, COLL_FP64};
#define NDT ((int)(sizeof dts / sizeof dts[0]))

static int ran[MAXALGO], nlayouts; /* by index in coll_algo_table: verified runs */
static unsigned long long nruns, combos[COLL_DTYPE_COUNT][COLL_OP_COUNT];

typedef struct {
    const cb_desc_t *d;
    cb_ctx_t c[MAXP];
    size_t arrays[MAXP][CB_CTX_ARRAYS * MAXP];
} job_t;

static coll_status_t rank_fn(coll_comm *comm, void *arg)
{
    job_t *j = arg;
    return j->d->run(&j->c[comm->rank]);
}

/* One verified run of d with algorithm al forced; 1 if al ran. */
static int run_one(coll_sim_t *sim, const cb_desc_t *d, int ai, int root, size_t bytes, unsigned k, const char *lay)
{
    static job_t j;
    const coll_algo_t *al = coll_algo_table[ai];
    int n = coll_sim_nranks(sim);
    int reducing = (d->flags & CB_F_REDUCE) != 0;
    /* reducing: dtype and op rotate every run; moving only: the dtype per
     * layout (the caches keep one dtype's block patterns) */
    coll_dtype_t dt = reducing ? dts[k % NDT] : dts[nlayouts % NDT];
    coll_op_t op = reducing ? (coll_op_t)((k / NDT) % COLL_OP_COUNT) : COLL_SUM;
    cb_opts_t o;
    memset(&o, 0, sizeof o);
    o.check = 1;
    o.dt = dt;
    o.op = op;
    o.root = root;
    o.maxbytes = o.minbytes = bytes;
    const cb_data_t *data = cached_data(n, dt, reducing, op);
    j.d = d;
    for (int r = 0; r < n; r++) {
        cb_ctx_t *c = &j.c[r];
        memset(c, 0, sizeof *c);
        c->desc = d;
        c->opts = &o;
        c->comm = coll_sim_comm(sim, r);
        c->rank = r;
        c->nranks = n;
        c->root = root;
        c->dt = dt;
        c->op = op;
        c->esize = coll_dtype_size(dt);
        c->data = *data;
        cb_ctx_set_arrays(c, j.arrays[r], (size_t)n);
        d->layout(c, bytes);
        c->send_cap = c->send_elems * c->esize + 64;
        c->recv_cap = c->recv_elems * c->esize + 64;
        c->sendbuf = malloc(c->send_cap);
        c->recvbuf = malloc(c->recv_cap);
        assert_non_null(c->sendbuf);
        assert_non_null(c->recvbuf);
        d->init(c);
    }
    char spec[96];
    snprintf(spec, sizeof spec, "%s=%s", coll_kind_name(al->kind), al->name);
    assert_int_equal(coll_algo_force(spec), COLL_SUCCESS);
    double t = 0;
    coll_status_t st = coll_sim_run(sim, rank_fn, &j, &t);
    if (st != COLL_SUCCESS)
        fail_msg("%s %s on %d ranks (hosts %s), %zu bytes, %s, root %d: %s", d->name, al->name, n, lay, bytes,
                 coll_dtype_name(dt), root, coll_last_error());
    const char *used = coll_comm_last_algo(coll_sim_comm(sim, 0));
    int forced_ran = used && !strcmp(used, al->name);
    uint64_t wrong = 0;
    for (int r = 0; r < n; r++) {
        wrong += d->check(&j.c[r]);
        free(j.c[r].sendbuf);
        free(j.c[r].recvbuf);
    }
    if (wrong)
        fail_msg("%s %s (ran %s) on %d ranks (hosts %s), %zu bytes, %s %s, root %d: %llu wrong elements", d->name,
                 al->name, used ? used : "?", n, lay, bytes, coll_dtype_name(dt), reducing ? coll_op_name(op) : "-",
                 root, (unsigned long long)wrong);
    nruns++;
    if (forced_ran) {
        ran[ai]++;
        combos[dt][op]++;
    }
    return forced_ran;
}

static void run_layout(int nh, const int *hn)
{
    int p = 0;
    char lay[256] = "";
    size_t len = 0;
    for (int h = 0; h < nh; h++) {
        p += hn[h];
        if (len < sizeof lay - 16)
            len += (size_t)snprintf(lay + len, sizeof lay - len, "%s%d", h ? "," : "", hn[h]);
    }
    coll_sim_params_t sp = coll_sim_defaults();
    sp.move_data = 1;
    coll_sim_t *sim = NULL;
    assert_int_equal(coll_sim_create(nh, hn, &sp, &sim), COLL_SUCCESS);
    static unsigned k;
    nlayouts++;
    for (int di = 0; descs[di].name; di++) {
        const cb_desc_t *d = &descs[di];
        int roots[MAXP], nroots = 0;
        if (!(d->flags & CB_F_ROOTED))
            roots[nroots++] = 0;
        else if (p <= 8)
            for (int r = 0; r < p; r++)
                roots[nroots++] = r;
        else {
            roots[nroots++] = 0;
            roots[nroots++] = p / 2;
            roots[nroots++] = p - 1;
        }
        size_t sizes[4] = {0, (size_t)(3 * p + 1) * 8, 5000 + (size_t)p * 8, 100000};
        int nsizes = p <= 16 ? 4 : 3;
        for (int ai = 0; coll_algo_table[ai]; ai++) {
            if (coll_algo_table[ai]->kind != d->kind)
                continue;
            for (int ri = 0; ri < nroots; ri++)
                for (int si = 0; si < nsizes; si++)
                    run_one(sim, d, ai, roots[ri], sizes[si], k++, lay);
        }
    }
    coll_sim_destroy(sim);
}

/* CB_SIM_ALGOS_MAXP (1..64, default 64): the sanitizer runs (tests/mp/90)
 * stop at a smaller p; every algorithm must still run verified. */
static int max_p(void)
{
    const char *e = getenv("CB_SIM_ALGOS_MAXP");
    int m = e ? atoi(e) : MAXP;
    return m >= 1 && m <= MAXP ? m : MAXP;
}

static void test_every_algo(void **state)
{
    (void)state;
    int hn[MAXP], pmax = max_p();
    descs_init();
    for (int p = 1; p <= pmax; p++) {
        hn[0] = p;
        run_layout(1, hn); /* one host */
        if (p >= 2) {
            for (int i = 0; i < p; i++)
                hn[i] = 1;
            run_layout(p, hn); /* one rank per host */
            hn[0] = p / 2;
            hn[1] = p - p / 2;
            run_layout(2, hn); /* two hosts */
        }
        if (p >= 3) {
            hn[0] = 1;
            hn[1] = p - 1;
            run_layout(2, hn);
        }
        if (p >= 6) {
            hn[0] = 3;
            hn[1] = 1;
            hn[2] = p - 4;
            run_layout(3, hn);
        }
    }
    int missing = 0;
    for (int ai = 0; coll_algo_table[ai]; ai++) {
        const coll_algo_t *al = coll_algo_table[ai];
        if (al->kind == COLL_BARRIER || al->kind == COLL_SENDRECV)
            continue;
        if (!ran[ai]) {
            print_error("never ran verified: %s/%s\n", coll_kind_name(al->kind), al->name);
            missing++;
        }
    }
    for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
        for (int op = 0; op < COLL_OP_COUNT; op++)
            if (!combos[dt][op]
                && (dt == COLL_INT8 || dt == COLL_FP16 || dt == COLL_BF16 || dt == COLL_FP32 || dt == COLL_INT64
                    || dt == COLL_FP64 || dt == COLL_UINT8 || dt == COLL_INT32)) {
                print_error("never ran: %s %s\n", coll_dtype_name((coll_dtype_t)dt), coll_op_name((coll_op_t)op));
                missing++;
            }
    cache_reset(0);
    printf("%llu verified runs\n", nruns);
    assert_int_equal(missing, 0);
}

/* Barrier: after each of 3 barriers, every rank sees every rank's arrival. */
static int arrived[MAXP][3];

static coll_status_t barrier_fn(coll_comm *comm, void *arg)
{
    for (int b = 0; b < 3; b++) {
        arrived[comm->rank][b] = 1;
        COLL_CHECK(coll_barrier(comm));
        for (int r = 0; r < comm->nranks; r++)
            if (!arrived[r][b])
                return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL, "rank %d left barrier %d before rank %d came",
                                  comm->rank, b, r);
    }
    return COLL_SUCCESS;
}

static void test_barrier(void **state)
{
    (void)state;
    coll_sim_params_t sp = coll_sim_defaults();
    sp.move_data = 1;
    int hn[MAXP];
    for (int p = 1, pmax = max_p(); p <= pmax; p += p < 8 ? 1 : 7) {
        for (int lay = 0; lay < 3; lay++) {
            int nh;
            if (lay == 0) {
                nh = 1;
                hn[0] = p;
            } else if (lay == 1) {
                nh = p;
                for (int i = 0; i < p; i++)
                    hn[i] = 1;
            } else {
                if (p < 3)
                    continue;
                nh = 2;
                hn[0] = 1;
                hn[1] = p - 1;
            }
            coll_sim_t *sim = NULL;
            assert_int_equal(coll_sim_create(nh, hn, &sp, &sim), COLL_SUCCESS);
            for (int ai = 0; coll_algo_table[ai]; ai++) {
                const coll_algo_t *al = coll_algo_table[ai];
                if (al->kind != COLL_BARRIER)
                    continue;
                char spec[96];
                snprintf(spec, sizeof spec, "barrier=%s", al->name);
                assert_int_equal(coll_algo_force(spec), COLL_SUCCESS);
                memset(arrived, 0, sizeof arrived);
                double t;
                if (coll_sim_run(sim, barrier_fn, NULL, &t) != COLL_SUCCESS)
                    fail_msg("barrier %s on %d ranks (%d hosts): %s", al->name, p, nh, coll_last_error());
                const char *used = coll_comm_last_algo(coll_sim_comm(sim, 0));
                if (used && !strcmp(used, al->name))
                    ran[ai]++;
            }
            coll_sim_destroy(sim);
        }
    }
    for (int ai = 0; coll_algo_table[ai]; ai++)
        if (coll_algo_table[ai]->kind == COLL_BARRIER && !ran[ai])
            fail_msg("barrier %s never ran", coll_algo_table[ai]->name);
}

/* A direct wait that can never end is reported as a deadlock, not a hang:
 * rank 0 of a one-host simulation enters a direct barrier alone. */
static coll_status_t lonely_fn(coll_comm *comm, void *arg)
{
    if (comm->rank != 0)
        return COLL_SUCCESS;
    return comm->direct->barrier(comm);
}

static void test_direct_deadlock(void **state)
{
    (void)state;
    coll_sim_params_t sp = coll_sim_defaults();
    int hn[1] = {4};
    coll_sim_t *sim = NULL;
    assert_int_equal(coll_sim_create(1, hn, &sp, &sim), COLL_SUCCESS);
    assert_non_null(coll_sim_comm(sim, 0)->direct);
    double t;
    assert_int_not_equal(coll_sim_run(sim, lonely_fn, NULL, &t), COLL_SUCCESS);
    assert_non_null(strstr(coll_last_error(), "deadlock"));
    assert_non_null(strstr(coll_last_error(), "direct barrier"));
    coll_sim_destroy(sim);
    /* one rank per host: no direct peers, as on real hosts without shm */
    int one[2] = {1, 1};
    assert_int_equal(coll_sim_create(2, one, &sp, &sim), COLL_SUCCESS);
    assert_null(coll_sim_comm(sim, 0)->direct);
    coll_sim_destroy(sim);
}

/* The direct capability's copies and reductions (direct.h) cost virtual time
 * and, sizes only, are not done: AllReduce of 1 MiB fp32 on one host of 4
 * ranks, forced direct then cma. With data: every element right, and the time
 * at least the model's work (direct: copy in of the peers' slices + copy out
 * at one memcpy's rate, 2 x shm_bw, the 1/p slice reduced from p inputs at
 * reduce_bw; cma: that reduction). Sizes only:
 * the same time, on buffers that fault if anyone touches them. */
#define DC_P 4
#define DC_N (256 * 1024)
static struct {
    float *sb[DC_P], *rb[DC_P];
} dc;

static coll_status_t dc_fn(coll_comm *comm, void *arg)
{
    return coll_all_reduce(dc.sb[comm->rank], dc.rb[comm->rank], DC_N, COLL_FP32, COLL_SUM, comm);
}

static void test_direct_costs(void **state)
{
    (void)state;
    coll_sim_params_t sp = coll_sim_defaults();
    sp.move_data = 1;
    /* a direct copy is one memcpy: 2 x shm_gbps (a message's rate holds its copy in and out) */
    double us_b = 8.0 / (2 * sp.shm_gbps * 1e3), red_b = 8.0 / (sp.reduce_gbps * 1e3), bytes = 4.0 * DC_N;
    const char *algos[2] = {"allreduce=direct", "allreduce=cma"};
    double reduce_us = (DC_P - 1) * bytes / DC_P * red_b; /* my 1/p slice, p inputs */
    /* direct stages all but its own slice: (p-1)/p n in, n out */
    double least[2] = {(2.0 * DC_P - 1) / DC_P * bytes * us_b + reduce_us, reduce_us};
    int hn[1] = {DC_P};
    size_t len = 4 * (size_t)DC_N;
    char *none = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(none != MAP_FAILED);
    for (int a = 0; a < 2; a++) {
        double t[2];
        for (int move = 1; move >= 0; move--) {
            sp.move_data = move;
            for (int r = 0; r < DC_P; r++) {
                dc.sb[r] = move ? malloc(len) : (float *)none;
                dc.rb[r] = move ? malloc(len) : (float *)(none + len);
                assert_non_null(dc.sb[r]);
                assert_non_null(dc.rb[r]);
                for (size_t i = 0; move && i < DC_N; i++)
                    dc.sb[r][i] = (float)(r + 1) + (float)(i % 7);
            }
            coll_sim_t *sim = NULL;
            assert_int_equal(coll_sim_create(1, hn, &sp, &sim), COLL_SUCCESS);
            assert_int_equal(coll_algo_force(algos[a]), COLL_SUCCESS);
            if (coll_sim_run(sim, dc_fn, NULL, &t[move]) != COLL_SUCCESS)
                fail_msg("%s, move_data %d: %s", algos[a], move, coll_last_error());
            assert_string_equal(coll_comm_last_algo(coll_sim_comm(sim, 0)), algos[a] + strlen("allreduce="));
            coll_sim_destroy(sim);
            for (int r = 0; move && r < DC_P; r++) {
                for (size_t i = 0; i < DC_N; i++)
                    if (dc.rb[r][i] != (float)(10 + DC_P * (int)(i % 7)))
                        fail_msg("%s: rank %d element %zu is %g", algos[a], r, i, (double)dc.rb[r][i]);
                free(dc.sb[r]);
                free(dc.rb[r]);
            }
        }
        assert_int_equal(coll_algo_force(NULL), COLL_SUCCESS);
        if (t[0] != t[1] || t[1] < least[a])
            fail_msg("%s: %.2f us with data, %.2f us sizes only; its copies and reductions take %.2f us", algos[a],
                     t[1], t[0], least[a]);
    }
    munmap(none, 2 * len);
}

/* The CPU factor of an oversubscribed host (sim.h) counts the ranks busy at
 * the time, not the ranks the host has: on a host of 4 ranks sharing 1 core,
 * a lone 1 MiB message from rank 0 to rank 1 (ranks 2 and 3 idle) costs what
 * it costs with a core per rank, while a direct AllReduce, in which all 4
 * copy and reduce at once, takes more than 3x as long. copy_core_gbps (the
 * memory bandwidth the cores share) slows copies and reductions of busy
 * ranks even without more ranks than cores: 4 ranks on 4 cores copying at
 * half a lone core's rate take longer than 1.5x, but not when their buffers
 * fit cache_bytes (coll_sim_working_set). An algorithm's own copy
 * (coll_local_copy) costs its bytes at one memcpy's rate, 2 x shm_gbps. */
#define CF_BYTES ((size_t)1 << 20)
static char *cf_buf[4];

static coll_status_t cf_pair_fn(coll_comm *comm, void *arg)
{
    if (comm->rank == 0)
        return coll_prim_sendrecv(comm, cf_buf[0], CF_BYTES, 1, NULL, 0, -1);
    if (comm->rank == 1)
        return coll_prim_sendrecv(comm, NULL, 0, -1, cf_buf[1], CF_BYTES, 0);
    return COLL_SUCCESS;
}

static coll_status_t cf_copy_fn(coll_comm *comm, void *arg)
{
    if (comm->rank == 0)
        coll_local_copy(comm, cf_buf[0], cf_buf[1], CF_BYTES);
    return COLL_SUCCESS;
}

static coll_status_t cf_allreduce_fn(coll_comm *comm, void *arg)
{
    float *b = (float *)(void *)cf_buf[comm->rank];
    return coll_all_reduce(b, b, CF_BYTES / 4, COLL_FP32, COLL_SUM, comm);
}

static size_t cf_ws; /* each rank's working set told to the sim (0: not told) */

static double cf_run(coll_sim_params_t sp, coll_sim_fn fn)
{
    int hn[1] = {4};
    coll_sim_t *sim = NULL;
    double t = -1;
    size_t ws[4] = {cf_ws, cf_ws, cf_ws, cf_ws};
    assert_int_equal(coll_sim_create(1, hn, &sp, &sim), COLL_SUCCESS);
    if (cf_ws)
        coll_sim_working_set(sim, ws);
    if (coll_sim_run(sim, fn, NULL, &t) != COLL_SUCCESS)
        fail_msg("cores %g, copy_core_gbps %g: %s", sp.cores_per_host, sp.copy_core_gbps, coll_last_error());
    coll_sim_destroy(sim);
    return t;
}

static void test_cpu_factor(void **state)
{
    (void)state;
    coll_sim_params_t sp = coll_sim_defaults();
    sp.move_data = 1;
    for (int r = 0; r < 4; r++) {
        cf_buf[r] = calloc(1, CF_BYTES);
        assert_non_null(cf_buf[r]);
    }
    double pair0 = cf_run(sp, cf_pair_fn), copy0 = cf_run(sp, cf_copy_fn);
    double x = (double)CF_BYTES * 8 / (sp.shm_gbps * 1e3); /* the message's copies, us */
    if (pair0 < x)
        fail_msg("1 MiB within a host: %.2f us, its copies alone take %.2f us", pair0, x);
    assert_int_equal(coll_algo_force("allreduce=direct"), COLL_SUCCESS);
    double ar0 = cf_run(sp, cf_allreduce_fn);
    sp.cores_per_host = 1;
    double pair1 = cf_run(sp, cf_pair_fn), ar1 = cf_run(sp, cf_allreduce_fn);
    sp.cores_per_host = 4;
    double ar4 = cf_run(sp, cf_allreduce_fn);
    sp.copy_core_gbps = sp.shm_gbps; /* every core copies at half of what one copies alone (2 x shm_gbps) */
    double ar4m = cf_run(sp, cf_allreduce_fn);
    /* the cache model: 4 ranks x 2 MiB fit a 16 MiB cache (no memory-bandwidth share), not a 4 MiB one */
    cf_ws = 2 * CF_BYTES;
    sp.cache_bytes = 16 << 20;
    double ar4c = cf_run(sp, cf_allreduce_fn);
    sp.cache_bytes = 4 << 20;
    double ar4nc = cf_run(sp, cf_allreduce_fn);
    cf_ws = 0;
    assert_int_equal(coll_algo_force(NULL), COLL_SUCCESS);
    for (int r = 0; r < 4; r++)
        free(cf_buf[r]);
    double cp = (double)CF_BYTES * 8 / (2 * sp.shm_gbps * 1e3);
    if (copy0 < cp * 0.999 || copy0 > cp * 1.001)
        fail_msg("coll_local_copy of 1 MiB: %.3f us, one memcpy at 2 x shm_gbps takes %.3f us", copy0, cp);
    if (pair1 != pair0)
        fail_msg("a lone message on a host of 4 ranks and 1 core: %.2f us, %.2f us with a core per rank", pair1, pair0);
    /* (4 W + B) / (W + B) for the ranks' work W and the barriers' B: about 3x here (3.006x with the
     * own slice copied out after the second barrier, 2.996x with it copied beside the reduction) */
    if (ar1 < 2.9 * ar0)
        fail_msg("direct AllReduce, 4 ranks on 1 core: %.2f us, with a core each %.2f us (expected > 2.9x)", ar1, ar0);
    if (ar4 != ar0)
        fail_msg("direct AllReduce, 4 ranks on 4 cores: %.2f us, with a core each %.2f us", ar4, ar0);
    if (ar4m < 1.5 * ar0)
        fail_msg("direct AllReduce, 4 cores sharing half the copy rate: %.2f us, alone %.2f us (expected > 1.5x)", ar4m,
                 ar0);
    if (ar4c != ar0 || ar4nc != ar4m)
        fail_msg("direct AllReduce, 4 cores sharing half the copy rate, 8 MiB of buffers: %.2f us with a 16 MiB cache "
                 "(expected %.2f, as alone), %.2f us with 4 MiB (expected %.2f)",
                 ar4c, ar0, ar4nc, ar4m);
}

/* A receive posted before a send does not hold the send back: two ranks on
 * two hosts each post [recv from the other, send to it] of 1 MiB in one
 * step; the exchange takes one transmission (both directions at once), as
 * with the send posted first, not two (2026-12-04: the receive took the
 * message before its arrival and moved the clock past it, so the send left
 * a transmission late). */
#define RF_BYTES ((size_t)1 << 20)
static char *rf_buf[2][2];
static int rf_recv_first;

/* The two ranks' send and receive buffers: allocated (1) or freed (0). */
static void rf_bufs(int alloc)
{
    for (int r = 0; r < 2; r++)
        for (int b = 0; b < 2; b++) {
            if (!alloc) {
                free(rf_buf[r][b]);
                continue;
            }
            rf_buf[r][b] = calloc(1, RF_BYTES);
            assert_non_null(rf_buf[r][b]);
        }
}

static coll_status_t rf_fn(coll_comm *comm, void *arg)
{
    int me = comm->rank, peer = 1 - me;
    coll_prim_t ops[2] = {coll_prim_send(peer, rf_buf[me][0], RF_BYTES), coll_prim_recv(peer, rf_buf[me][1], RF_BYTES)};
    if (rf_recv_first) {
        coll_prim_t t = ops[0];
        ops[0] = ops[1];
        ops[1] = t;
    }
    return coll_prim_run(comm, ops, 2, COLL_UINT8, COLL_SUM);
}

static void test_recv_first(void **state)
{
    (void)state;
    coll_sim_params_t sp = coll_sim_defaults();
    sp.move_data = 1;
    sp.net_gbps = 10;
    int hn[2] = {1, 1};
    double t[2];
    rf_bufs(1);
    for (rf_recv_first = 0; rf_recv_first < 2; rf_recv_first++) {
        coll_sim_t *sim = NULL;
        assert_int_equal(coll_sim_create(2, hn, &sp, &sim), COLL_SUCCESS);
        if (coll_sim_run(sim, rf_fn, NULL, &t[rf_recv_first]) != COLL_SUCCESS)
            fail_msg("exchange, receive first %d: %s", rf_recv_first, coll_last_error());
        coll_sim_destroy(sim);
    }
    rf_bufs(0);
    double x = (double)RF_BYTES * 8 / (sp.net_gbps * 1e3); /* one transmission, us */
    if (t[0] < x || t[0] > 1.01 * x + 10 || t[1] != t[0])
        fail_msg("1 MiB each way at 10 Gbit/s: %.1f us send first, %.1f us receive first; one transmission %.1f us",
                 t[0], t[1], x);
}

/* The links' token bucket (net_burst_bytes, a tc tbf link): 1 MiB each way
 * between 2 hosts at 1 Gbit/s with a 1 MiB bucket and the CPUs' limit at 10
 * Gbit/s goes at 10 Gbit/s while the bucket (full before the run) lasts; a
 * second exchange right behind it finds the bucket all but empty and takes
 * the link's time, less what refilled meanwhile; no bucket: the link's time. */
static coll_status_t tb_fn(coll_comm *comm, void *arg)
{
    coll_status_t st = rf_fn(comm, arg);
    return st == COLL_SUCCESS && arg ? rf_fn(comm, NULL) : st;
}

static void test_token_bucket(void **state)
{
    (void)state;
    coll_sim_params_t sp = coll_sim_defaults();
    sp.move_data = 1;
    sp.net_gbps = 1;
    sp.net_cpu_gbps = 10;
    sp.cores_per_host = 1;
    int hn[2] = {1, 1};
    double t[3];
    rf_bufs(1);
    rf_recv_first = 0;
    for (int k = 0; k < 3; k++) { /* one exchange with a bucket, two with it, one without */
        sp.net_burst_bytes = k < 2 ? (double)RF_BYTES : 0;
        coll_sim_t *sim = NULL;
        assert_int_equal(coll_sim_create(2, hn, &sp, &sim), COLL_SUCCESS);
        if (coll_sim_run(sim, tb_fn, k == 1 ? sim : NULL, &t[k]) != COLL_SUCCESS)
            fail_msg("exchange %d: %s", k, coll_last_error());
        coll_sim_destroy(sim);
    }
    rf_bufs(0);
    double slow = (double)RF_BYTES * 8 / 1e3, fast = slow / 10; /* us at 1 and at 10 Gbit/s */
    if (t[0] < fast || t[0] > 1.01 * fast + 10)
        fail_msg("full bucket: %.1f us, want the CPUs' rate, %.1f us", t[0], fast);
    if (t[2] < slow || t[2] > 1.01 * slow + 10)
        fail_msg("no bucket: %.1f us, want the link's time, %.1f us", t[2], slow);
    double second = t[1] - t[0], refill = fast * 1e3 / 8;                /* bytes refilled while the first went */
    double want = refill / 1.25e3 + ((double)RF_BYTES - refill) / 125.0; /* 10 and 1 Gbit/s in bytes/us */
    if (second < 0.98 * want || second > 1.02 * want + 10)
        fail_msg("second exchange: %.1f us, want %.1f us (%.0f bytes refilled)", second, want, refill);
}

/* Pairwise AlltoAll(V) with 2, 4 and 16 exchange steps in flight
 * (COLL_ALLTOALL_WINDOW): every element right, on one rank per host and on
 * two hosts, p up to 19 (windows wider than p-1, and p-1 not a multiple of
 * the window). The default window (1) runs in test_every_algo. */
static void test_pairwise_window(void **state)
{
    (void)state;
    static const char *const wins[] = {"2", "4", "16"};
    static const int ps[] = {2, 3, 6, 19};
    descs_init();
    for (int wi = 0; wi < 3; wi++) {
        assert_int_equal(setenv("COLL_ALLTOALL_WINDOW", wins[wi], 1), 0);
        coll_cfg_reload();
        assert_int_equal(coll_cfg_int(COLL_CFG_A2A_WINDOW), atoi(wins[wi]));
        for (int pi = 0; pi < 4; pi++) {
            int p = ps[pi], hn[MAXP], nruns_before = 0;
            for (int lay = 0; lay < 2; lay++) {
                int nh = lay ? 2 : p;
                for (int i = 0; i < p; i++)
                    hn[i] = 1;
                if (lay) {
                    hn[0] = p / 2;
                    hn[1] = p - p / 2;
                }
                coll_sim_params_t sp = coll_sim_defaults();
                sp.move_data = 1;
                coll_sim_t *sim = NULL;
                assert_int_equal(coll_sim_create(nh, hn, &sp, &sim), COLL_SUCCESS);
                for (int di = 0; descs[di].name; di++)
                    for (int ai = 0; coll_algo_table[ai]; ai++) {
                        if (coll_algo_table[ai]->kind != descs[di].kind
                            || strcmp(coll_algo_table[ai]->name, "pairwise"))
                            continue;
                        nruns_before++;
                        if (!run_one(sim, &descs[di], ai, 0, 5000 + (size_t)p * 8, (unsigned)p,
                                     lay ? "2" : "1 per host"))
                            fail_msg("window %s: %s pairwise did not run on %d ranks", wins[wi], descs[di].name, p);
                    }
                coll_sim_destroy(sim);
            }
            assert_int_equal(nruns_before, 4); /* alltoall and alltoallv, two layouts */
        }
    }
    assert_int_equal(unsetenv("COLL_ALLTOALL_WINDOW"), 0);
    coll_cfg_reload();
}

int main(void)
{
    setenv("COLL_BUFFSIZE", "65536", 1);
    /* keep freed buffers and messages in the heap: fresh pages for every run
     * (kernel page clearing) were a third of the time at 64 ranks */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20); /* direct algorithms: several chunks at 100 KB */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_direct_deadlock), cmocka_unit_test(test_direct_costs),
        cmocka_unit_test(test_cpu_factor),      cmocka_unit_test(test_barrier),
        cmocka_unit_test(test_recv_first),      cmocka_unit_test(test_token_bucket),
        cmocka_unit_test(test_pairwise_window), cmocka_unit_test(test_every_algo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
