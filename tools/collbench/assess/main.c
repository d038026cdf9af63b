/*
 * main.c - `collbench assess`: checks every host of a job and names the slow
 * host and the slow link. Started like the other multi-rank tools (forked here
 * with -p N, or by mpirun / torchrun-style environment / srun). Hosts are told
 * apart by COLL_HOST_ID when set, else the host name; the ranks of a host
 * elect its local rank 0 as speaker, and only speakers move data (measure.c).
 * Rank 0 prints the tables and the outliers (report.c).
 * Exit: 0 no outlier, 1 outliers, 2 bad command line, 3 network, 4 timeout,
 * 5 a rank aborted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../launch/launch.h"
#include "assess.h"
#include "../cb.h"
#include "../../common/coll_internal.h"

static const char *TOOL = "assess";

#define AS_MAX_RANKS 4096
static const char *const ALLOWED = "pairs, ring, bisect, node, coll, all";

typedef struct {
    char host[CBT_AS_HOST_MAX];
    int32_t local_rank;
    int32_t pad;
} rank_id_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collbench assess [--tests LIST] [-s SIZE] [-et N] [--lat-iters N] [--rings K] [--halvings K]\n"
            "                        [--group-size K] [--seed S] [--threshold T] [--json DIR] [-p N] [-q]\n"
            "  --tests LIST     comma list of: pairs, ring, bisect, node, coll, all (default all)\n"
            "Cost of each test for H hosts (r: the link rate, SIZE: -s, et: -et; confirmations add one pair,\n"
            "ring or group per suspect, twice at most):\n"
            "     pairs  latency, unidirectional (both ways) and bidirectional bandwidth of every pair of hosts,\n"
            "            round robin: H-1 rounds of H/2 disjoint pairs (H rounds when H is odd, one host idle\n"
            "            per round). Time = (H-1 rounds) x per-round time, per round ~ lat-iters x RTT\n"
            "            + 3 x (et + 1) x SIZE / r: 127 rounds for 128 hosts, 999 for 1,000.\n"
            "     ring   every host sends to its successor at once: 1 ordered ring + K random ones (--rings).\n"
            "            Time ~ (1 + K) x (et + 1) x SIZE / r: constant in H.\n"
            "     bisect half the hosts against the other half, --halvings K random halvings (seeded, default 3;\n"
            "            a host meets a different partner in each), every pair of a halving exchanging both\n"
            "            ways at once; per halving the aggregate and the worst pair. Time ~ K x (et + 1) x\n"
            "            SIZE / r: k halvings, constant in H. A host is named when more than half of its pairs\n"
            "            (and two or more: K >= 3) are slow.\n"
            "     node   memory bandwidth (the d2d memcpy path, SIZE bytes, 0.3 s) and FP64 GFLOPS (one\n"
            "            thread, 0.3 s) of each host's speaker, one host at a time (hosts sharing a machine do\n"
            "            not disturb each other). Time ~ 0.8 s per host: H x 0.8 s (constant per host).\n"
            "            Then node-shm: on every host with 2+ ranks, shared-memory p2p between its speaker and\n"
            "            its second rank (latency 0.1 s, SIZE sends 0.3 s), all hosts at once, twice (the\n"
            "            better kept): ~0.8 s, constant in H, plus 0.4 s per suspect host; one-rank hosts print '-'.\n"
            "     coll   the AllReduce sweep of libcoll (FP32 sum, SIZE, SIZE/8, ... down to 1K) on every\n"
            "            group of --group-size K consecutive hosts (default 2; a remainder joins the last\n"
            "            group), all groups at once, then on the whole job; a group whose bus bandwidth at\n"
            "            SIZE is below the threshold is named. Time ~ 2 x sweep per group, constant in H.\n"
            "  A 1,000-host run in minutes: pairs is the only test that grows with H; leave it out\n"
            "  (--tests ring,bisect,node,coll) or make its rounds short (-s 1M -et 3 --lat-iters 20: ~10 ms a\n"
            "  round at 100 Gb/s, 999 rounds ~ 10 s plus the barriers), and run pairs on the suspects later.\n"
            "  -s SIZE          bytes per execution (default 8M; 1K..4G, K/M/G suffixes)\n"
            "  -et N            timed executions per measurement (default 10, 1..1000)\n"
            "  --lat-iters N    8-byte ping-pongs per pair latency, the smallest reported (default 100, 1..100000)\n"
            "  --rings K        random rings (default 2, 0..64); --seed S their and the halvings' seed (default 1)\n"
            "  --halvings K     bisect's halvings (default 3, 1..64)\n"
            "  --group-size K   coll's hosts per group (default 2, 1..4096)\n"
            "  --threshold T    outlier: below T x the test's median, latency above median / T (default 0.8,\n"
            "                   0.01..1)\n"
            "  --lat-threshold L  latency's own threshold (default T): latency above median / L.\n"
            "                   Confirmation: every pair with a figure past the threshold in the first pass\n"
            "                   is measured again, one pair at a time (no other traffic), right after a\n"
            "                   healthy reference pair whose change since the first pass scales it; what is\n"
            "                   still past the threshold but not past a quarter of it is measured again, 4 passes\n"
            "                   at most (cost: one reference and one pair per suspect and pass: 2 x (H-1) for\n"
            "                   one clearly bad host); each figure is the best of its measurements and a link\n"
            "                   is named only when still past the threshold. Halvings' pairs are confirmed the\n"
            "                   same way; rings, coll groups and node hosts are measured again alone, twice at\n"
            "                   most. A host is named when most of its links are.\n"
            "  --json DIR       one file per test: DIR/pairs.json, ring.json, bisect.json, node.json, coll.json,\n"
            "                   and outliers.json (DIR must exist); collbench-report assess DIR draws them\n"
            "  -p N             standalone: ranks forked here (default 1; one host, nothing to compare)\n"
            "  -q               no progress on stderr\n"
            "  --schedule N     print the pairs rounds and bisect's halvings for N hosts and exit (nothing\n"
            "                   launched; --halvings and --seed before it apply)\n"
            "Output: progress per round on stderr, tables and 'OUTLIER <test> <host or a->b>: <value> (median <m>,\n"
            "<pct>%%)' lines on stdout. Exit 0 no outlier, 1 outliers, 2 bad command line, 3 network error,\n"
            "4 timeout, 5 a rank aborted.\n");
}

/* --schedule N: the pairs rounds for N hosts, then bisect's halvings (K of
 * --halvings, --seed, as given before --schedule), nothing launched. */
static void print_schedule(int n, int k, unsigned long long seed)
{
    int nr = cbt_as_rounds(n);
    printf("%d hosts: %d rounds\n", n, nr);
    for (int r = 0; r < nr; r++) {
        printf("round %d:", r + 1);
        for (int h = 0; h < n; h++) {
            int p = cbt_as_partner(r, h, n);
            if (p > h)
                printf(" %d-%d", h, p);
        }
        for (int h = 0; h < n; h++)
            if (cbt_as_partner(r, h, n) < 0)
                printf(" idle %d", h);
        printf("\n");
    }
    int *peer = malloc((size_t)n * sizeof *peer), *side = malloc((size_t)n * sizeof *side);
    for (int g = 0; g < k && peer && side && n > 1; g++) {
        cbt_as_halving(seed, g, n, peer, side);
        printf("halving %d:", g + 1);
        for (int h = 0; h < n; h++) /* side A first */
            if (peer[h] >= 0 && side[h] == 0)
                printf(" %d-%d", h, peer[h]);
        for (int h = 0; h < n; h++)
            if (peer[h] < 0)
                printf(" idle %d", h);
        printf("\n");
    }
    free(peer), free(side);
}

static int parse_tests(const char *v, unsigned *out)
{
    char buf[256];
    if (strlen(v) >= sizeof buf)
        return cbt_usage_error(TOOL, "invalid --tests: too long (allowed: %s)", ALLOWED);
    snprintf(buf, sizeof buf, "%s", v);
    unsigned t = 0;
    for (char *save = NULL, *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (!strcmp(s, "pairs"))
            t |= CBT_AS_PAIRS;
        else if (!strcmp(s, "ring"))
            t |= CBT_AS_RING;
        else if (!strcmp(s, "node"))
            t |= CBT_AS_NODE;
        else if (!strcmp(s, "bisect"))
            t |= CBT_AS_BISECT;
        else if (!strcmp(s, "coll"))
            t |= CBT_AS_COLL;
        else if (!strcmp(s, "all"))
            t |= CBT_AS_ALL;
        else
            return cbt_usage_error(TOOL, "invalid --tests '%s': unknown test '%s' (allowed: %s)", v, s, ALLOWED);
    }
    if (!t)
        return cbt_usage_error(TOOL, "invalid --tests '%s' (allowed: %s)", v, ALLOWED);
    *out = t;
    return 0;
}

static void *map_buf(size_t n)
{
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Host map from every rank's (host, local rank): host order = first rank seen. */
static int host_map(const rank_id_t *ids, int nranks, cbt_as_host_t *hosts, int *nhosts, int *of)
{
    int n = 0;
    for (int r = 0; r < nranks; r++) {
        int h = 0;
        while (h < n && strcmp(hosts[h].name, ids[r].host))
            h++;
        if (h == n) {
            memset(&hosts[n], 0, sizeof hosts[n]);
            snprintf(hosts[n].name, sizeof hosts[n].name, "%s", ids[r].host);
            hosts[n].speaker = -1;
            n++;
        }
        hosts[h].nranks++;
        if (ids[r].local_rank == 0 && hosts[h].speaker < 0)
            hosts[h].speaker = r;
        of[r] = h;
    }
    for (int h = 0; h < n; h++)
        if (hosts[h].speaker < 0) /* no local rank 0 seen: the lowest rank speaks */
            for (int r = nranks - 1; r >= 0; r--)
                if (of[r] == h)
                    hosts[h].speaker = r;
    *nhosts = n;
    return 0;
}

static int alloc_result(cbt_as_result_t *r, int n, const cbt_as_opts_t *o)
{
    size_t nn = (size_t)n * (size_t)n, ng = (size_t)(1 + o->rings) * (size_t)n;
    r->n = n;
    r->pairs_ref = -1;
    r->uni = malloc(nn * sizeof *r->uni), r->bidi = malloc(nn * sizeof *r->bidi);
    r->lat = malloc(nn * sizeof *r->lat), r->round = malloc(nn * sizeof *r->round);
    r->succ = malloc(ng * sizeof *r->succ), r->ring = malloc(ng * sizeof *r->ring);
    r->again_uni = malloc(nn * sizeof *r->again_uni), r->again_bidi = malloc(nn * sizeof *r->again_bidi);
    r->again_lat = malloc(nn * sizeof *r->again_lat), r->ring_again = malloc(ng * sizeof *r->ring_again);
    r->d2d = malloc((size_t)n * sizeof *r->d2d), r->gflops = malloc((size_t)n * sizeof *r->gflops);
    r->again_d2d = malloc((size_t)n * sizeof *r->d2d), r->again_gflops = malloc((size_t)n * sizeof *r->gflops);
    r->shm_gbs = malloc((size_t)n * sizeof *r->shm_gbs), r->shm_lat = malloc((size_t)n * sizeof *r->shm_lat);
    r->again_shm_gbs = malloc((size_t)n * sizeof *r->shm_gbs),
    r->again_shm_lat = malloc((size_t)n * sizeof *r->shm_lat);
    if (!r->shm_gbs || !r->shm_lat || !r->again_shm_gbs || !r->again_shm_lat)
        return -1;
    for (int h = 0; h < n; h++)
        r->shm_gbs[h] = r->shm_lat[h] = r->again_shm_gbs[h] = r->again_shm_lat[h] = -1;
    size_t nb = (size_t)o->halvings * (size_t)n, ngc = (size_t)n * CBT_AS_COLL_SIZES;
    r->bis_peer = malloc(nb * sizeof *r->bis_peer), r->bis = malloc(nb * sizeof *r->bis);
    r->bis_again = malloc(nb * sizeof *r->bis_again), r->grp = malloc((size_t)n * sizeof *r->grp);
    r->gbus = malloc(ngc * sizeof *r->gbus), r->gbus_again = malloc(ngc * sizeof *r->gbus_again);
    if (!r->d2d || !r->gflops || !r->again_d2d || !r->again_gflops || !r->bis_peer || !r->bis || !r->bis_again
        || !r->grp || !r->gbus || !r->gbus_again)
        return -1;
    for (size_t i = 0; i < nb; i++)
        r->bis_peer[i] = -1, r->bis[i] = r->bis_again[i] = -1;
    for (size_t i = 0; i < ngc; i++)
        r->gbus[i] = r->gbus_again[i] = -1;
    for (int i = 0; i < CBT_AS_COLL_SIZES; i++)
        r->job_bus[i] = -1;
    for (int h = 0; h < n; h++)
        r->d2d[h] = r->gflops[h] = r->again_d2d[h] = r->again_gflops[h] = -1;
    if (!r->uni || !r->bidi || !r->lat || !r->round || !r->succ || !r->ring || !r->again_uni || !r->again_bidi
        || !r->again_lat || !r->ring_again)
        return -1;
    for (size_t i = 0; i < nn; i++)
        r->uni[i] = r->bidi[i] = r->lat[i] = -1, r->round[i] = -1,
        r->again_uni[i] = r->again_bidi[i] = r->again_lat[i] = -1;
    for (size_t i = 0; i < ng; i++)
        r->succ[i] = -1, r->ring[i] = -1, r->ring_again[i] = -1;
    return 0;
}

static void free_result(cbt_as_result_t *r)
{
    free(r->uni), free(r->bidi), free(r->lat), free(r->round), free(r->succ), free(r->ring);
    free(r->again_uni), free(r->again_bidi), free(r->again_lat), free(r->ring_again);
    free(r->d2d), free(r->gflops), free(r->again_d2d), free(r->again_gflops);
    free(r->shm_gbs), free(r->shm_lat), free(r->again_shm_gbs), free(r->again_shm_lat);
    free(r->bis_peer), free(r->bis), free(r->bis_again), free(r->grp), free(r->gbus), free(r->gbus_again);
}

/* node-shm's partner of rank me: its host's speaker pairs with the lowest
 * other rank of the host, and that rank with the speaker; -1 otherwise. O(N). */
static int shm_peer(const int *of, int nranks, const cbt_as_host_t *hosts, int me)
{
    int sp = hosts[of[me]].speaker, second = -1;
    for (int r = 0; r < nranks && second < 0; r++)
        if (of[r] == of[me] && r != sp)
            second = r;
    if (second < 0)
        return -1;
    return me == sp ? second : me == second ? sp : -1;
}

/* This rank's host name (COLL_HOST_ID, else the system's) and local rank. */
static void rank_identity(coll_comm_t comm, rank_id_t *me)
{
    memset(me, 0, sizeof *me);
    const char *hid = coll_cfg_str(COLL_CFG_HOST_ID);
    if (*hid)
        snprintf(me->host, sizeof me->host, "%s", hid);
    else if (gethostname(me->host, sizeof me->host - 1) != 0)
        snprintf(me->host, sizeof me->host, "unknown");
    int lr = 0, ls = 1;
    coll_comm_local(comm, &lr, &ls);
    me->local_rank = lr;
}

/* Rank 0: the result tables, and the plan on stderr unless -q. */
static int open_result(cbt_as_ctx_t *c, cbt_as_result_t *res)
{
    const cbt_as_opts_t *o = c->o;
    if (alloc_result(res, c->nhosts, o))
        return cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory for %d hosts", c->nhosts);
    res->hosts = c->hosts;
    c->res = res;
    if (!o->quiet)
        fprintf(stderr,
                "collbench assess: %d ranks on %d hosts; pairs: %d rounds, ring: %lld rings, bisect: %lld "
                "halvings (seed %llu), node: %d hosts, coll: groups of %lld hosts\n",
                c->nranks, c->nhosts, o->tests & CBT_AS_PAIRS ? cbt_as_rounds(c->nhosts) : 0,
                o->tests & CBT_AS_RING ? 1 + o->rings : 0, o->tests & CBT_AS_BISECT ? o->halvings : 0, o->seed,
                o->tests & CBT_AS_NODE ? c->nhosts : 0, o->tests & CBT_AS_COLL ? o->group_size : 0);
    return CBT_EXIT_OK;
}

/* The chosen tests in order, a barrier, then rank 0's report. */
static int run_tests(cbt_as_ctx_t *c, const cbt_as_result_t *res)
{
    const cbt_as_opts_t *o = c->o;
    int rc;
    coll_status_t st;
    if ((o->tests & CBT_AS_PAIRS) && (rc = cbt_as_pairs(c)))
        return rc;
    if ((o->tests & CBT_AS_RING) && c->nhosts > 1 && (rc = cbt_as_ring(c)))
        return rc;
    if ((o->tests & CBT_AS_BISECT) && c->nhosts > 1 && (rc = cbt_as_bisect(c)))
        return rc;
    if ((o->tests & CBT_AS_NODE) && (rc = cbt_as_node(c)))
        return rc;
    if ((o->tests & CBT_AS_COLL) && (rc = cbt_as_coll(c)))
        return rc;
    if ((st = coll_barrier(c->comm)) != COLL_SUCCESS)
        return cbt_error(TOOL, CBT_EXIT_CONN, "rank %d: barrier: %s", c->rank, coll_strerror(st));
    if (c->rank == 0) {
        int k = cbt_as_report(o, res);
        return k < 0 ? CBT_EXIT_FAIL : k > 0 ? CBT_EXIT_FAIL : CBT_EXIT_OK;
    }
    return CBT_EXIT_OK;
}

static int rank_body(void *arg, coll_comm_t comm, int rank, int nranks)
{
    const cbt_as_opts_t *o = arg;
    int rc = CBT_EXIT_OK;
    rank_id_t me;
    rank_identity(comm, &me);

    coll_status_t st;
    rank_id_t *ids = calloc((size_t)nranks, sizeof *ids);
    cbt_as_host_t *hosts = calloc((size_t)nranks, sizeof *hosts);
    int *of = calloc((size_t)nranks, sizeof *of);
    cbt_as_result_t res = {0};
    cbt_as_ctx_t c = {.o = o, .comm = comm, .rank = rank, .nranks = nranks, .hosts = hosts};
    size_t sz = (size_t)o->size;
    if (!ids || !hosts || !of) {
        rc = cbt_error(TOOL, CBT_EXIT_FAIL, "rank %d: out of memory", rank);
        coll_comm_abort(comm);
        goto out;
    }
    if ((st = coll_all_gather(&me, ids, sizeof me, COLL_UINT8, comm)) != COLL_SUCCESS) {
        rc = cbt_error(TOOL, st == COLL_ERR_TIMEOUT ? CBT_EXIT_TIMEOUT : CBT_EXIT_CONN, "rank %d: allgather: %s: %s",
                       rank, coll_strerror(st), coll_last_error());
        goto out;
    }
    host_map(ids, nranks, hosts, &c.nhosts, of);
    c.me_host = of[rank];
    c.speaker = hosts[c.me_host].speaker == rank;
    c.shm_peer = shm_peer(of, nranks, hosts, rank);
    if ((c.speaker || c.shm_peer >= 0) && (!(c.src = map_buf(sz)) || !(c.dst = map_buf(sz)))) {
        rc = cbt_error(TOOL, CBT_EXIT_FAIL, "rank %d: cannot map 2 x %zu bytes", rank, sz);
        coll_comm_abort(comm);
        goto out;
    }
    if (c.src)
        memset(c.src, rank & 0xff, sz);
    if (rank == 0 && (rc = open_result(&c, &res))) {
        coll_comm_abort(comm);
        goto out;
    }
    rc = run_tests(&c, &res);
out:
    if (c.src)
        munmap(c.src, sz ? sz : 1);
    if (c.dst)
        munmap(c.dst, sz ? sz : 1);
    free_result(&res);
    free(ids), free(hosts), free(of);
    return rc;
}

/* Option argv[*i] (and its value, *i moved past it); *stop = 1 after one
 * that ends the command (--help, --schedule). Returns an exit code. */
static int parse_opt(cbt_as_opts_t *o, int argc, char **argv, int *i, int *stop)
{
    const char *a = argv[*i], *v;
    long long ll;
    unsigned long long ull;
    /* the options that take a whole number: names, the name an error gives,
     * range, where the value goes */
    const struct {
        const char *name, *alias, *label;
        long long lo, hi, *out;
    } ll_opts[] = {
        {"-et", "--et", "-et", 1, 1000, &o->et},
        {"--lat-iters", NULL, "--lat-iters", 1, 100000, &o->lat_iters},
        {"--rings", NULL, "--rings", 0, 64, &o->rings},
        {"--halvings", NULL, "--halvings", 1, 64, &o->halvings},
        {"--group-size", NULL, "--group-size", 1, 4096, &o->group_size},
    };
    for (size_t k = 0; k < sizeof ll_opts / sizeof ll_opts[0]; k++) {
        if (strcmp(a, ll_opts[k].name) && (!ll_opts[k].alias || strcmp(a, ll_opts[k].alias)))
            continue;
        if (!(v = cbt_optval(TOOL, argc, argv, i))
            || cbt_parse_ll(TOOL, ll_opts[k].label, v, ll_opts[k].lo, ll_opts[k].hi, ll_opts[k].out))
            return CBT_EXIT_USAGE;
        return CBT_EXIT_OK;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        usage(stdout);
        *stop = 1;
    } else if (!strcmp(a, "--tests") || !strcmp(a, "-t")) {
        if (!(v = cbt_optval(TOOL, argc, argv, i)) || parse_tests(v, &o->tests))
            return CBT_EXIT_USAGE;
    } else if (!strcmp(a, "-s") || !strcmp(a, "--size")) {
        if (!(v = cbt_optval(TOOL, argc, argv, i)) || cbt_parse_size(TOOL, "-s", v, 1024, 4ULL << 30, &o->size))
            return CBT_EXIT_USAGE;
    } else if (!strcmp(a, "--seed")) {
        if (!(v = cbt_optval(TOOL, argc, argv, i)) || cbt_parse_size(TOOL, a, v, 0, ~0ULL, &ull))
            return CBT_EXIT_USAGE;
        o->seed = ull;
    } else if (!strcmp(a, "--threshold")) {
        if (!(v = cbt_optval(TOOL, argc, argv, i)) || cbt_parse_double(TOOL, a, v, 0.01, 1.0, "", &o->threshold))
            return CBT_EXIT_USAGE;
    } else if (!strcmp(a, "--lat-threshold")) {
        if (!(v = cbt_optval(TOOL, argc, argv, i)) || cbt_parse_double(TOOL, a, v, 0.01, 1.0, "", &o->lat_threshold))
            return CBT_EXIT_USAGE;
    } else if (!strcmp(a, "--json")) {
        if (!(v = cbt_optval(TOOL, argc, argv, i)))
            return CBT_EXIT_USAGE;
        struct stat sb;
        if (stat(v, &sb) != 0 || !S_ISDIR(sb.st_mode))
            return cbt_usage_error(TOOL, "invalid --json '%s': not a directory (allowed: an existing directory)", v);
        o->json_dir = v;
    } else if (!strcmp(a, "-p") || !strcmp(a, "--npus")) {
        if (!(v = cbt_optval(TOOL, argc, argv, i)) || cbt_parse_ll(TOOL, "-p", v, 1, 64, &ll))
            return CBT_EXIT_USAGE;
        o->npus = (int)ll, o->npus_set = 1;
    } else if (!strcmp(a, "--schedule")) {
        if (!(v = cbt_optval(TOOL, argc, argv, i)) || cbt_parse_ll(TOOL, a, v, 1, 100000, &ll))
            return CBT_EXIT_USAGE;
        print_schedule((int)ll, (int)o->halvings, o->seed);
        *stop = 1;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
        o->quiet = 1;
    } else {
        return cbt_usage_error(TOOL, "unknown option '%s' (see collbench assess --help)", a);
    }
    return CBT_EXIT_OK;
}

int cbt_assess_main(int argc, char **argv)
{
    cbt_as_opts_t o = {.tests = CBT_AS_ALL,
                       .size = 8ULL << 20,
                       .et = 10,
                       .lat_iters = 100,
                       .rings = 2,
                       .halvings = 3,
                       .group_size = 2,
                       .seed = 1,
                       .threshold = 0.8,
                       .npus = 1};
    for (int i = 1; i < argc; i++) {
        int stop = 0, rc = parse_opt(&o, argc, argv, &i, &stop);
        if (rc || stop)
            return rc;
    }
    cb_launch_t l;
    int rc = cbt_launch(&l, "collbench assess", o.npus, o.npus_set, AS_MAX_RANKS);
    if (rc)
        return rc;
    o.launch = l.name;
    cbt_as_set_lat_threshold(o.lat_threshold);
    cbt_rank_job_t job = {.tool = TOOL, .body = rank_body, .arg = &o};
    return cbt_rank_run(&l, &job);
}
