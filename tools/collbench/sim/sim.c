/*
 * sim.c - `collbench sim`: the predicted time of a collective on H hosts x L
 * ranks, from the real algorithms (chosen by the real selection) run on the
 * simulated transport (src/transport/sim.h: coroutine ranks, virtual time,
 * per-host NIC contention). Output: hccl_test's table plus the algorithm the
 * automatic selection chose; --compare-algos adds every usable algorithm's
 * prediction; --verify moves real data and checks every element.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../cb.h"
#include "coll.h"
#include "../../common/coll_internal.h"
#include "../calib.h"
#include "sim.h"
#include "../../common/huge_hint.h"

#define TOOL "sim"
#define SIM_MAX_RANKS (1 << 20)

static const struct {
    const char *name;
    const cb_desc_t *desc;
} colls[] = {
    {"allreduce", &cb_desc_all_reduce},
    {"allgather", &cb_desc_all_gather},
    {"allgatherv", &cb_desc_all_gatherv},
    {"reducescatter", &cb_desc_reduce_scatter},
    {"reducescatterv", &cb_desc_reduce_scatterv},
    {"reduce", &cb_desc_reduce},
    {"broadcast", &cb_desc_broadcast},
    {"scatter", &cb_desc_scatter},
    {"gather", &cb_desc_gather},
    {"alltoall", &cb_desc_alltoall},
    {"alltoallv", &cb_desc_alltoallv},
};
#define NCOLLS (sizeof colls / sizeof colls[0])

static const cb_desc_t *find_coll(const char *s)
{
    char a[40];
    size_t o = 0;
    for (size_t i = 0; s[i] && o < sizeof a - 1; i++)
        if (s[i] != '_' && s[i] != '-')
            a[o++] = s[i];
    a[o] = '\0';
    if (!strcasecmp(a, "bcast"))
        return &cb_desc_broadcast;
    for (size_t i = 0; i < NCOLLS; i++)
        if (!strcasecmp(a, colls[i].name))
            return colls[i].desc;
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collbench sim -n RANKS -H HOSTS|L0,L1,... -c COLLECTIVE [options]\n"
            "Predicts a collective's time by running the real algorithms on a simulated cluster\n"
            "(one process, virtual time). Options:\n"
            "  -n RANKS            ranks (1..%d); may be left out with a ranks-per-host list\n"
            "  -H HOSTS|LIST       hosts (ranks spread evenly, the first ones get one more), or ranks\n"
            "                      per host: -H 3,5,2 (default: 1 host)\n"
            "  -c COLLECTIVE       allreduce allgather allgatherv reduce_scatter reduce_scatterv reduce\n"
            "                      broadcast scatter gather alltoall alltoallv\n"
            "  -b -e -f -i         sizes as hccl_test (default -b 8K; -e 64M, or 128K with --verify; -f 2)\n"
            "  -d DTYPE -o OP -r ROOT   as hccl_test (fp32, sum, 0)\n"
            "  --algo NAME         force an algorithm (default: automatic selection)\n"
            "  --compare-algos     also predict every usable algorithm of the collective\n"
            "  --verify            move real data and check every element (every rank holds its buffers)\n"
            "  --json              JSON on stdout instead of the table\n"
            "  --net-gbps G --net-us US --net-overhead-us US   NIC between hosts (100, 2, 1)\n"
            "  --shm-gbps G --shm-us US --shm-overhead-us US   within a host (200, 0.3, 0.2)\n"
            "  --reduce-gbps G     reduction throughput, Gbit/s of input (80)\n"
            "  --net-step-us US --net-step-bytes B   extra time of a message between hosts, in full from\n"
            "                      B bytes up, less below (0, 262144): a ring step's cost beyond the wire\n"
            "  --net-cpu-gbps G    TCP Gbit/s one core sends and receives; a host's NIC runs at most at\n"
            "                      G x its cores (0: no limit)\n"
            "  --cores-per-host C  CPU cores the ranks of a host share (0: one per rank; default 0); with\n"
            "                      more ranks than cores, copies, reductions and per-message costs slow\n"
            "                      down by busy ranks / cores (docs/sim-calibration.md)\n"
            "  --copy-core-gbps G  memcpy Gbit/s per core while all of a host's cores copy (memory\n"
            "                      bandwidth shared); copies and reductions slow down by one core's\n"
            "                      rate (2 x shm) / G more on a host with busy ranks (0: no limit)\n"
            "  --cache-bytes B     last-level cache a host's ranks share: a call whose buffers on the\n"
            "                      host (send + receive, all its ranks) fit copies from the cache,\n"
            "                      without the --copy-core-gbps share (0: not modelled; default 0)\n"
            "  --probe-us US --probe-gbps G   what the selection is told of the network, as libcoll's\n"
            "                      init probe would measure it (default: --net-us + overhead, --net-gbps)\n"
            "  --calibration FILE  the link parameters from a calibration file (key = value) written by\n"
            "                      collbench net/bw --calibration-out; the flags above win over its keys\n"
            "  --iters K --warmup W   predict the mean of K calls made back to back after W (default 1,\n"
            "                      0): what a link's state between calls changes (--net-burst-bytes)\n"
            "  --net-burst-bytes B a token bucket of B bytes on each host's link, both ways, refilled at\n"
            "                      --net-gbps, full before the first call (tc tbf; 0: none, default)\n"
            "  --buf-huge 0|1      the ranks' buffers are on 2 MiB pages: one host's selection prefers the\n"
            "                      single-copy algorithms (default: as the test executables here: 1 where\n"
            "                      transparent huge pages are not off, or COLL_BUF_HUGE)\n"
            "Ranks of one simulated host read each other's memory: the direct, cma and shm algorithms\n"
            "run as on a real host; their barriers and small exchanges cost a shm round, their copies\n"
            "and reductions B / shm or reduce bandwidth.\n",
            SIM_MAX_RANKS);
}

/* Sizes only: the one working block every simulated rank shares (transport/sim.h),
 * address space never touched (MAP_NORESERVE). As large as the largest block an
 * algorithm asks for: 8 x the vector (regroupings), or with several hosts 3 L x
 * it, L = the most ranks on a host (the hier AlltoAll's leader holds its host's
 * blocks three times: gathered, packed, received), up to 1 TiB; a larger
 * request takes a private block, whose bytes the sim then copies into every
 * message sent from it. O(H). */
static size_t shared_scratch_bytes(const cbt_sim_opts_t *so, unsigned long long maxbytes)
{
    unsigned long long m = 8;
    for (int h = 0; so->nhosts > 1 && h < so->nhosts; h++)
        if (3ull * (unsigned long long)so->host_nranks[h] > m)
            m = 3ull * (unsigned long long)so->host_nranks[h];
    if (maxbytes > (1ull << 40) / m)
        m = 8;
    return (size_t)(maxbytes * m) + ((size_t)1 << 20);
}

static int parse_hosts(const char *v, cbt_sim_opts_t *so)
{
    if (!strchr(v, ',')) {
        long long h;
        if (cbt_parse_ll(TOOL, "-H", v, 1, SIM_MAX_RANKS, &h))
            return -1;
        so->nhosts = (int)h;
        so->host_nranks = NULL;
        return 0;
    }
    int k = 1;
    for (const char *p = v; *p; p++)
        k += *p == ',';
    so->host_nranks = calloc((size_t)k, sizeof(int));
    char *dup = strdup(v), *save = NULL;
    int i = 0;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long long l;
        if (cbt_parse_ll(TOOL, "-H (ranks of a host)", t, 1, SIM_MAX_RANKS, &l)) {
            free(dup);
            return -1;
        }
        so->host_nranks[i++] = (int)l;
    }
    free(dup);
    if (i != k)
        return cbt_usage_error(TOOL, "invalid -H '%s' (allowed: a host count, or ranks per host like 4,4,3)", v), -1;
    so->nhosts = k;
    return 0;
}

/* What the command line gave beyond the options in cbt_sim_opts_t. */
typedef struct {
    long long nranks;
    const char *hosts, *coll;
    unsigned explicit_keys; /* link flags given: they win over the calibration file's keys */
} sim_args_t;

static void set_defaults(cbt_sim_opts_t *so)
{
    memset(so, 0, sizeof *so);
    cb_opts_t *o = &so->o;
    o->prog = "collbench sim";
    o->minbytes = 8192;
    o->maxbytes = 0;
    o->stepfactor = 2;
    o->dt = COLL_FP32;
    o->op = COLL_SUM;
    o->iters = 1;
    so->nhosts = 1;
    so->p = coll_sim_defaults();
    so->buf_huge = -1;
    so->iters = 1;
}

/* --buf-huge left out: what the test executables would tell the selection on
 * this machine (huge-first buffers where THP is not off: huge_hint.h), so the
 * prediction is of their runs; COLL_BUF_HUGE set wins, as it does for them. */
static int test_tools_buf_huge(void)
{
    cb_buf_huge_hint(coll_cfg_bool(COLL_CFG_TEST_HUGE));
    return coll_buf_huge_cfg();
}

/* The link flags (each the calibration key of the same name): 1 after one
 * (*i moved past its value), 0 if a is not one, -1 on an error. */
static int link_opt(cbt_sim_opts_t *so, sim_args_t *g, int argc, char **argv, int *i)
{
    const struct {
        const char *opt, *key;
        double lo, hi;
        const char *unit;
        double *dst;
    } t[] = {
        {"--net-gbps", "net_gbps", 1e-3, 1e6, "Gbit/s", &so->p.net_gbps},
        {"--net-us", "net_us", 0, 1e6, "us", &so->p.net_us},
        {"--net-overhead-us", "net_overhead_us", 0, 1e6, "us", &so->p.net_ovh_us},
        {"--shm-gbps", "shm_gbps", 1e-3, 1e6, "Gbit/s", &so->p.shm_gbps},
        {"--shm-us", "shm_us", 0, 1e6, "us", &so->p.shm_us},
        {"--shm-overhead-us", "shm_overhead_us", 0, 1e6, "us", &so->p.shm_ovh_us},
        {"--reduce-gbps", "reduce_gbps", 1e-3, 1e6, "Gbit/s", &so->p.reduce_gbps},
        {"--cores-per-host", "cores_per_host", 0, 1e6, "cores (0: one per rank)", &so->p.cores_per_host},
        {"--net-step-us", "net_step_us", 0, 1e7, "us", &so->p.net_step_us},
        {"--net-step-bytes", "net_step_bytes", 1, 1e12, "bytes", &so->p.net_step_bytes},
        {"--net-cpu-gbps", "net_cpu_gbps", 0, 1e6, "Gbit/s per core (0: no limit)", &so->p.net_cpu_gbps},
        {"--copy-core-gbps", "copy_core_gbps", 0, 1e6, "Gbit/s per core (0: no limit)", &so->p.copy_core_gbps},
        {"--probe-us", "probe_us", 0, 1e6, "us (0: net_us)", &so->p.probe_us},
        {"--probe-gbps", "probe_gbps", 0, 1e6, "Gbit/s (0: net_gbps)", &so->p.probe_gbps},
        {"--net-burst-bytes", "net_burst_bytes", 0, 1e12, "bytes (0: no bucket)", &so->p.net_burst_bytes},
        {"--cache-bytes", "cache_bytes", 0, 1e15, "bytes (0: no cache model)", &so->p.cache_bytes},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        if (strcmp(argv[*i], t[k].opt))
            continue;
        const char *val = cbt_optval(TOOL, argc, argv, i);
        if (!val || cbt_parse_double(TOOL, t[k].opt, val, t[k].lo, t[k].hi, t[k].unit, t[k].dst))
            return -1;
        g->explicit_keys |= cbt_calib_bit(t[k].key);
        return 1;
    }
    return 0;
}

/* -b, -e and -i: the sizes of the sweep. */
static int size_opt(cb_opts_t *o, const char *a, const char *val)
{
    unsigned long long s;
    if (cbt_parse_size(TOOL, a, val, 0, 1ull << 40, &s))
        return -1;
    if (a[1] == 'b')
        o->minbytes = s;
    else if (a[1] == 'e')
        o->maxbytes = s;
    else {
        o->stepbytes = s;
        o->step_set = 1;
        o->stepfactor = 0;
    }
    return 0;
}

#define VAL() \
    if (!(val = cbt_optval(TOOL, argc, argv, i))) \
    return -1

/* What each simulated call moves, as hccl_test spells it (-b -e -i -f the
 * sizes, -d -o -r the data), argv[*i] with its value (*i moved past it):
 * 1 taken, 0 not one of these, -1 an error. */
static int data_opt(cb_opts_t *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *val;
    long long v;
    if (!strcmp(a, "-b") || !strcmp(a, "-e") || !strcmp(a, "-i")) {
        VAL();
        return size_opt(o, a, val) ? -1 : 1;
    } else if (!strcmp(a, "-f")) {
        VAL();
        if (cbt_parse_ll(TOOL, "-f", val, 2, 1024, &v))
            return -1;
        o->stepfactor = (unsigned long long)v;
    } else if (!strcmp(a, "-d")) {
        VAL();
        if (coll_dtype_from_name(val, &o->dt) != COLL_SUCCESS)
            return cbt_usage_error(TOOL,
                                   "invalid -d '%s' (allowed: int8 uint8 int16 uint16 int32 uint32 "
                                   "int64 uint64 fp16 bf16 fp32 fp64)",
                                   val),
                   -1;
    } else if (!strcmp(a, "-o")) {
        VAL();
        if (coll_op_from_name(val, &o->op) != COLL_SUCCESS)
            return cbt_usage_error(TOOL, "invalid -o '%s' (allowed: sum prod max min)", val), -1;
    } else if (!strcmp(a, "-r")) {
        VAL();
        if (cbt_parse_ll(TOOL, "-r", val, 0, SIM_MAX_RANKS - 1, &v))
            return -1;
        o->root = (int)v;
    } else {
        return 0;
    }
    return 1;
}

/* Argument argv[*i] (with its value, *i moved past it): -1 on an error. */
static int parse_opt(cbt_sim_opts_t *so, sim_args_t *g, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *val;
    long long v;
    int t;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        usage(stdout);
        exit(0);
    } else if ((t = data_opt(&so->o, argc, argv, i)) != 0) {
        return t < 0 ? -1 : 0;
    } else if (!strcmp(a, "-n")) {
        VAL();
        if (cbt_parse_ll(TOOL, "-n", val, 1, SIM_MAX_RANKS, &g->nranks))
            return -1;
    } else if (!strcmp(a, "-H")) {
        VAL();
        g->hosts = val;
    } else if (!strcmp(a, "-c")) {
        VAL();
        g->coll = val;
    } else if (!strcmp(a, "--algo")) {
        VAL();
        so->algo = val;
    } else if (!strcmp(a, "--verify")) {
        so->o.check = 1;
    } else if (!strcmp(a, "--json")) {
        so->json = 1;
    } else if (!strcmp(a, "--compare-algos")) {
        so->compare = 1;
    } else if (!strcmp(a, "--calibration")) {
        VAL();
        so->calibration = val;
    } else if (!strcmp(a, "--iters") || !strcmp(a, "--warmup")) {
        VAL();
        if (cbt_parse_ll(TOOL, a, val, a[2] == 'i' ? 1 : 0, 1000, &v))
            return -1;
        *(a[2] == 'i' ? &so->iters : &so->warmup) = (int)v;
    } else if (!strcmp(a, "--buf-huge")) {
        VAL();
        if (strcmp(val, "0") && strcmp(val, "1"))
            return cbt_usage_error(TOOL, "invalid --buf-huge '%s' (allowed: 0 or 1)", val), -1;
        so->buf_huge = val[0] == '1';
    } else {
        int r = link_opt(so, g, argc, argv, i);
        if (r)
            return r < 0 ? -1 : 0;
        return cbt_usage_error(TOOL, "unknown option '%s' (see collbench sim --help)", a), -1;
    }
    return 0;
}
#undef VAL

/* The ranks of every host, from -n and -H (a host count or a list). */
static int lay_out_ranks(cbt_sim_opts_t *so, sim_args_t *g)
{
    long long nranks = g->nranks;
    const char *hosts = g->hosts;
    if (hosts && parse_hosts(hosts, so))
        return -1;
    if (so->host_nranks) {
        long long sum = 0;
        for (int h = 0; h < so->nhosts; h++)
            sum += so->host_nranks[h];
        if (nranks && nranks != sum)
            return cbt_usage_error(TOOL, "invalid -n %lld: the ranks per host of -H '%s' add up to %lld", nranks, hosts,
                                   sum),
                   -1;
        if (sum > SIM_MAX_RANKS)
            return cbt_usage_error(TOOL, "invalid -H '%s': %lld ranks (allowed: at most %d)", hosts, sum,
                                   SIM_MAX_RANKS),
                   -1;
        nranks = sum;
    } else {
        if (!nranks)
            return cbt_usage_error(TOOL, "missing -n RANKS (or -H with ranks per host, like -H 4,4)"), -1;
        if (so->nhosts > nranks)
            return cbt_usage_error(TOOL, "invalid -H %d: more hosts than the %lld ranks of -n", so->nhosts, nranks), -1;
        so->host_nranks = calloc((size_t)so->nhosts, sizeof(int));
        for (int h = 0; h < so->nhosts; h++)
            so->host_nranks[h] = (int)(nranks / so->nhosts + (h < nranks % so->nhosts));
    }
    so->nranks = (int)nranks;
    return 0;
}

/* --algo names an algorithm of the collective; else the error lists them. */
static int check_algo(const cbt_sim_opts_t *so)
{
    if (!so->algo || coll_algo_find(so->desc->kind, so->algo))
        return 0;
    char names[400];
    size_t k = 0;
    names[0] = '\0';
    for (int i = 0; coll_algo_table[i]; i++)
        if (coll_algo_table[i]->kind == so->desc->kind && k + 20 < sizeof names)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? " " : "", coll_algo_table[i]->name);
    return cbt_usage_error(TOOL, "invalid --algo '%s' for %s (allowed: %s)", so->algo, coll_kind_name(so->desc->kind),
                           names),
           -1;
}

static int parse(int argc, char **argv, cbt_sim_opts_t *so)
{
    set_defaults(so);
    cb_opts_t *o = &so->o;
    sim_args_t g = {0, NULL, NULL, 0};
    for (int i = 1; i < argc; i++)
        if (parse_opt(so, &g, argc, argv, &i))
            return -1;
    if (so->calibration && cbt_calib_read(TOOL, so->calibration, &so->p, g.explicit_keys))
        return -1;
    if (!g.coll)
        return cbt_usage_error(TOOL,
                               "missing -c COLLECTIVE (allowed: allreduce allgather allgatherv reduce_scatter "
                               "reduce_scatterv reduce broadcast scatter gather alltoall alltoallv)"),
               -1;
    if (!(so->desc = find_coll(g.coll)))
        return cbt_usage_error(TOOL,
                               "invalid -c '%s' (allowed: allreduce allgather allgatherv reduce_scatter "
                               "reduce_scatterv reduce broadcast scatter gather alltoall alltoallv)",
                               g.coll),
               -1;
    if (lay_out_ranks(so, &g))
        return -1;
    if (o->root >= so->nranks)
        return cbt_usage_error(TOOL, "invalid -r %d (allowed: 0..%d)", o->root, so->nranks - 1), -1;
    if (!o->maxbytes)
        o->maxbytes = o->minbytes > (o->check ? 128u << 10 : 64u << 20) ? o->minbytes
                                                                        : (o->check ? 128u << 10 : 64u << 20);
    if (o->minbytes > o->maxbytes)
        return cbt_usage_error(TOOL, "invalid -b %llu: larger than -e %llu", o->minbytes, o->maxbytes), -1;
    if (check_algo(so))
        return -1;
    so->p.buf_huge = so->buf_huge >= 0 ? so->buf_huge : test_tools_buf_huge();
    so->p.move_data = o->check;
    so->p.shared_scratch = o->check ? 0 : shared_scratch_bytes(so, o->maxbytes);
    return 0;
}

static coll_status_t force(const cbt_sim_opts_t *so, const char *name)
{
    char spec[128];
    if (!name)
        return coll_algo_force(NULL);
    snprintf(spec, sizeof spec, "%s=%s", coll_kind_name(so->desc->kind), name);
    return coll_algo_force(spec);
}

static const char *check_str(const cbt_sim_opts_t *so, const cbt_sim_result_t *r)
{
    if (r->failed)
        return "error";
    return !so->o.check ? "NULL" : r->wrong ? "failed" : "success";
}

static void row_bw(const cbt_sim_opts_t *so, const cbt_sim_result_t *r, double *alg, double *bus)
{
    *alg = r->t_us > 0 ? (double)r->bytes / r->t_us / 1e3 : 0;
    *bus = *alg * so->desc->busbw_factor(so->nranks);
}

static void json_header(const cbt_sim_opts_t *so)
{
    const cb_opts_t *o = &so->o;
    printf("{\"schema\": \"collbench-sim/1\", \"collective\": \"%s\", \"ranks\": %d, \"hosts\": %d, "
           "\"dtype\": \"%s\", \"op\": \"%s\", \"root\": %d, \"verify\": %d,\n \"link\": {\"net_gbps\": %g, "
           "\"net_us\": %g, \"net_overhead_us\": %g, \"shm_gbps\": %g, \"shm_us\": %g, \"shm_overhead_us\": %g, "
           "\"reduce_gbps\": %g, \"cores_per_host\": %g, \"net_step_us\": %g, \"net_step_bytes\": %g, "
           "\"net_cpu_gbps\": %g, \"copy_core_gbps\": %g, \"cache_bytes\": %g, \"probe_us\": %g, "
           "\"probe_gbps\": %g, \"buf_huge\": %d},\n \"calibration\": ",
           so->desc->name, so->nranks, so->nhosts, coll_dtype_name(o->dt), coll_op_name(o->op), o->root, o->check,
           so->p.net_gbps, so->p.net_us, so->p.net_ovh_us, so->p.shm_gbps, so->p.shm_us, so->p.shm_ovh_us,
           so->p.reduce_gbps, so->p.cores_per_host, so->p.net_step_us, so->p.net_step_bytes, so->p.net_cpu_gbps,
           so->p.copy_core_gbps, so->p.cache_bytes, so->p.probe_us, so->p.probe_gbps, so->p.buf_huge);
    if (so->calibration)
        cbt_json_str(stdout, so->calibration);
    else
        printf("null");
    printf(",\n \"rows\": [");
}

static void table_header(const cbt_sim_opts_t *so)
{
    const cb_opts_t *o = &so->o;
    printf("# collbench sim: %s, %d ranks on %d hosts, %s %s; net %g Gbit/s %g us +%g us/msg, shm %g Gbit/s "
           "%g us +%g us/msg, reduce %g Gbit/s",
           so->desc->name, so->nranks, so->nhosts, coll_dtype_name(o->dt), coll_op_name(o->op), so->p.net_gbps,
           so->p.net_us, so->p.net_ovh_us, so->p.shm_gbps, so->p.shm_us, so->p.shm_ovh_us, so->p.reduce_gbps);
    if (so->p.cores_per_host > 0)
        printf(", %g cores per host", so->p.cores_per_host);
    if (so->p.net_step_us > 0)
        printf(", net step +%g us from %g B", so->p.net_step_us, so->p.net_step_bytes);
    if (so->p.net_cpu_gbps > 0)
        printf(", TCP %g Gbit/s per core", so->p.net_cpu_gbps);
    if (so->p.copy_core_gbps > 0)
        printf(", copies %g Gbit/s per core", so->p.copy_core_gbps);
    if (so->p.cache_bytes > 0)
        printf(", cache %g MiB per host", so->p.cache_bytes / 1048576);
    if (so->p.probe_us > 0 || so->p.probe_gbps > 0)
        printf(", selection told %g us, %g Gbit/s", so->p.probe_us, so->p.probe_gbps);
    if (so->p.buf_huge)
        printf(", buffers on 2 MiB pages");
    if (so->calibration)
        printf(" (calibration %s)", so->calibration);
    printf("\ndata_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result: | bus_bandwidth(GB/s): | "
           "algorithm:\n");
}

/* --compare-algos: size s run with every algorithm of the collective forced
 * in turn (r: the automatic run, to mark its choice); their messages are
 * added to *msgs. Returns 1 if one that ran got wrong data. */
static int compare_algos(const cbt_sim_opts_t *so, cbt_sim_job_t *job, unsigned long long s, const cbt_sim_result_t *r,
                         unsigned long long *msgs)
{
    int bad = 0, k = 0;
    if (so->json)
        printf(", \"algos\": {");
    for (int i = 0; coll_algo_table[i]; i++) {
        const coll_algo_t *al = coll_algo_table[i];
        if (al->kind != so->desc->kind)
            continue;
        cbt_sim_result_t q;
        force(so, al->name);
        cbt_sim_job_run(job, (size_t)s, &q);
        *msgs += q.msgs;
        int ran = !q.failed && q.algo && !strcmp(q.algo, al->name);
        double qa, qb;
        row_bw(so, &q, &qa, &qb);
        if (ran && q.wrong)
            bad = 1;
        if (so->json) {
            if (ran)
                printf("%s\"%s\": {\"time_us\": %.3f, \"check\": \"%s\"}", k++ ? ", " : "", al->name, q.t_us,
                       check_str(so, &q));
        } else if (ran) {
            printf("#   %-14s %14.2f us  algbw %10.5f  busbw %10.5f  %s%s\n", al->name, q.t_us, qa, qb,
                   check_str(so, &q), r->algo && !strcmp(r->algo, al->name) ? "  <- auto" : "");
        } else {
            printf("#   %-14s %14s\n", al->name, "not usable here");
        }
    }
    if (so->json)
        printf("}");
    return bad;
}

int cbt_sim_main(int argc, char **argv)
{
    cbt_sim_opts_t so;
    if (parse(argc, argv, &so))
        return CBT_EXIT_USAGE;
    /* the selection sees the simulated network as the init probe would measure
     * it, or what a real probe measured (probe_us, probe_gbps: a calibration) */
    coll_tuning_set_tcp(so.p.probe_us > 0 ? so.p.probe_us : so.p.net_us + so.p.net_ovh_us,
                        (so.p.probe_gbps > 0 ? so.p.probe_gbps : so.p.net_gbps) / 8);
    if (force(&so, so.algo) != COLL_SUCCESS)
        return cbt_usage_error(TOOL, "%s", coll_last_error());
    cbt_sim_job_t job;
    double t0 = cbt_now();
    if (cbt_sim_job_init(&job, &so)) {
        cbt_sim_job_free(&job);
        return CBT_EXIT_FAIL;
    }
    const cb_opts_t *o = &so.o;
    int rc = CBT_EXIT_OK;
    if (so.json)
        json_header(&so);
    else
        table_header(&so);
    fflush(stdout);
    int first = 1;
    unsigned long long s = o->minbytes, msgs = 0;
    for (;;) {
        cbt_sim_result_t r;
        double alg, bus;
        force(&so, so.algo);
        cbt_sim_job_run(&job, (size_t)s, &r);
        row_bw(&so, &r, &alg, &bus);
        if (r.failed || r.wrong)
            rc = CBT_EXIT_FAIL;
        if (so.json)
            printf("%s\n  {\"bytes\": %zu, \"time_us\": %.3f, \"algbw\": %.6f, \"busbw\": %.6f, \"check\": \"%s\", "
                   "\"algorithm\": \"%s\", \"messages\": %llu, \"switches\": %llu, \"wall_s\": %.3f",
                   first ? "" : ",", r.bytes, r.t_us, alg, bus, check_str(&so, &r), r.algo ? r.algo : "", r.msgs,
                   r.switches, r.wall_s);
        else
            printf("%-17zu | %-14.2f | %-20.5f | %-13s | %-20.5f | %s%s\n", r.bytes, r.t_us, alg, check_str(&so, &r),
                   bus, r.algo ? r.algo : "-", so.algo ? " (forced)" : "");
        first = 0;
        msgs += r.msgs;
        if (so.compare && compare_algos(&so, &job, s, &r, &msgs))
            rc = CBT_EXIT_FAIL;
        if (so.json)
            printf("}");
        fflush(stdout);
        unsigned long long next;
        if (!cb_next_size(o, s, &next))
            break;
        s = next;
    }
    double wall = cbt_now() - t0;
    if (so.json)
        printf("\n ], \"messages\": %llu, \"wall_s\": %.3f}\n", msgs, wall);
    else
        printf("# simulated in %.2f s (%llu messages)\n", wall, msgs);
    cbt_sim_job_free(&job);
    free(so.host_nranks);
    return rc;
}
