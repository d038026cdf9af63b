/*
 * cli.c - command line of the hccl_test-compatible executables.
 * Flags, defaults and the size loop follow docs of the original (see
 * the shared reference hccl_test-compat.md); every bad value is one line on
 * stderr naming the flag, the value and what is allowed, exit code 2, before
 * any process is forked or any shared memory is created.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "../common/coll_internal.h"
#include "driver.h"

/* Standalone default for -p: every online CPU, as hccl_test uses every device. */
int cb_default_npus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > CB_MAX_NPUS_STANDALONE ? CB_MAX_NPUS_STANDALONE : (int)n;
}

static const char FORMATS[] = "collbench hccl plain";

static int parse_format(const char *s, cb_format_t *out)
{
    if (!strcmp(s, "collbench"))
        *out = CB_FMT_COLLBENCH;
    else if (!strcmp(s, "hccl"))
        *out = CB_FMT_HCCL;
    else if (!strcmp(s, "plain"))
        *out = CB_FMT_PLAIN;
    else
        return -1;
    return 0;
}

enum {
    OPT_ALGO = 256,
    OPT_JSON,
    OPT_CSV,
    OPT_PRINT_CONFIG,
    OPT_LIST_ALGOS,
    OPT_TIMEOUT,
    OPT_TIME_AGG,
    OPT_EQUAL_COUNTS,
    OPT_VERSION,
    OPT_HOLD_AFTER,
    OPT_FORMAT,
    OPT_MIN_BW,
    OPT_STATS,
    OPT_IN_PLACE
};

static const struct option long_opts[] = {
    {"op", required_argument, NULL, 'o'},
    {"datatype", required_argument, NULL, 'd'},
    {"minbytes", required_argument, NULL, 'b'},
    {"maxbytes", required_argument, NULL, 'e'},
    {"stepbytes", required_argument, NULL, 'i'},
    {"stepfactor", required_argument, NULL, 'f'},
    {"root", required_argument, NULL, 'r'},
    {"iters", required_argument, NULL, 'n'},
    {"warmup_iters", required_argument, NULL, 'w'},
    {"check", required_argument, NULL, 'c'},
    {"npus", required_argument, NULL, 'p'},
    {"zero_copy", required_argument, NULL, 'z'},
    {"help", no_argument, NULL, 'h'},
    {"algo", required_argument, NULL, OPT_ALGO},
    {"json", required_argument, NULL, OPT_JSON},
    {"csv", required_argument, NULL, OPT_CSV},
    {"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
    {"list-algos", no_argument, NULL, OPT_LIST_ALGOS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"time-agg", required_argument, NULL, OPT_TIME_AGG},
    {"equal-counts", no_argument, NULL, OPT_EQUAL_COUNTS},
    {"version", no_argument, NULL, OPT_VERSION},
    {"hold-after", required_argument, NULL, OPT_HOLD_AFTER},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"min-bw", required_argument, NULL, OPT_MIN_BW},
    {"stats", no_argument, NULL, OPT_STATS},
    {"in-place", required_argument, NULL, OPT_IN_PLACE},
    {"sizes", required_argument, NULL, CB_OPT_SIZES},
    {"duration", required_argument, NULL, CB_OPT_DURATION},
    {"cycles", required_argument, NULL, CB_OPT_CYCLES},
    {"off-cache", no_argument, NULL, CB_OPT_OFF_CACHE},
    {NULL, 0, NULL, 0},
};

static char prog_buf[64];

int cb_cli_vfail(const char *prog, char *err, size_t errlen, const char *fmt, va_list ap)
{
    int n = snprintf(err, errlen, "%s: ", prog);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    return CB_EXIT_USAGE;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cb_cli_vfail(prog_buf, err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

/* Strict decimal integer in [lo, hi]: no sign unless lo < 0, no suffix, no blanks. */
static int parse_ll(const char *s, long long lo, long long hi, long long *out)
{
    if (!s || !*s)
        return -1;
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    if (!*p)
        return -1;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_size(const char *s, unsigned long long *out)
{
    /* coll_parse_size accepts digits + optional K/M/G; reject signs and blanks. */
    if (!s || !*s || s[0] < '0' || s[0] > '9')
        return -1;
    return coll_parse_size(s, out);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcasecmp(s + a - b, suf) == 0;
}

static void set_defaults(const cb_desc_t *d, cb_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    snprintf(prog_buf, sizeof(prog_buf), "%s_test", d->name);
    o->prog = prog_buf;
    o->minbytes = o->maxbytes = 64ull << 20;
    o->op = COLL_SUM;
    o->dt = COLL_FP32;
    o->iters = 20;
    o->plant_rank = -1;
    o->warmup = 10;
    o->check = 1;
    o->npus = cb_default_npus();
    o->timeout = -1;
    o->hold_after = -1;
    o->agg = CB_AGG_MAX;
    o->min_bw = -1;
    cb_cli_list_defaults(o);
}

/* What the parse saw beyond cb_opts_t. */
typedef struct {
    int ff_set, op_given_warn, format_set;
} cli_seen_t;

/* o->command: the command line, the program shown as prog_buf. */
static void record_command(cb_opts_t *o, int argc, char **argv)
{
    size_t cl = 0;
    for (int i = 0; i < argc && cl + 1 < sizeof(o->command); i++) {
        const char *a = i == 0 ? prog_buf : argv[i];
        int n = snprintf(o->command + cl, sizeof(o->command) - cl, "%s%s", i ? " " : "", a);
        if (n < 0)
            break;
        cl += (size_t)n;
    }
}

/* The options that take a size or a whole number: -b -e -i -f -r -n -w -c -p -z. */
static int number_opt(int c, const char *arg, cb_opts_t *o, cli_seen_t *seen, char *err, size_t errlen)
{
    long long v;
    switch (c) {
    case 'b':
        if (parse_size(arg, &o->minbytes))
            return fail(err, errlen, "invalid -b '%s': allowed a byte count with optional K/M/G suffix (e.g. 8K, 64M)",
                        arg);
        break;
    case 'e':
        if (parse_size(arg, &o->maxbytes))
            return fail(err, errlen, "invalid -e '%s': allowed a byte count with optional K/M/G suffix (e.g. 8K, 64M)",
                        arg);
        break;
    case 'i':
        if (parse_size(arg, &o->stepbytes))
            return fail(err, errlen, "invalid -i '%s': allowed a byte count >= 0 with optional K/M/G suffix", arg);
        o->step_set = 1;
        break;
    case 'f':
        if (parse_ll(arg, 2, 1024, &v))
            return fail(err, errlen, "invalid -f '%s': allowed an integer factor 2..1024 (must be > 1)", arg);
        o->stepfactor = (unsigned long long)v;
        seen->ff_set = 1;
        break;
    case 'r':
        if (parse_ll(arg, 0, CB_MAX_NPUS * 65536LL, &v))
            return fail(err, errlen, "invalid -r '%s': allowed 0 <= root < ranks", arg);
        o->root = (int)v;
        break;
    case 'n':
        if (parse_ll(arg, 1, 1000000000, &v))
            return fail(err, errlen, "invalid -n '%s': allowed 1..1000000000 iterations", arg);
        o->iters = (int)v;
        break;
    case 'w':
        if (parse_ll(arg, 0, 1000000000, &v))
            return fail(err, errlen, "invalid -w '%s': allowed 0..1000000000 iterations", arg);
        o->warmup = (int)v;
        break;
    case 'c':
        if (parse_ll(arg, 0, 1, &v))
            return fail(err, errlen, "invalid -c '%s': allowed 0 (off) or 1 (on)", arg);
        o->check = (int)v;
        break;
    case 'p':
        if (parse_ll(arg, 1, CB_MAX_NPUS, &v))
            return fail(err, errlen, "invalid -p '%s': allowed 1..%d ranks per node", arg, CB_MAX_NPUS);
        o->npus = (int)v;
        o->npus_set = 1;
        break;
    default: /* 'z' */
        if (parse_ll(arg, 0, 1, &v))
            return fail(err, errlen, "invalid -z '%s': allowed 0 (off) or 1 (zero copy)", arg);
        o->zero_copy = (int)v;
        break;
    }
    return 0;
}

/* Seconds in [0, max]: -1 if s is not one. */
static int parse_seconds(const char *s, double max, double *out)
{
    char *end;
    errno = 0;
    double t = strtod(s, &end);
    if (!*s || *end || errno || !(t >= 0) || t > max)
        return -1;
    *out = t;
    return 0;
}

/* A bandwidth in GB/s: a finite decimal >= 0. */
static int parse_gbps(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= 0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

static int parse_agg(const char *s, cb_agg_t *out)
{
    if (!strcmp(s, "max"))
        *out = CB_AGG_MAX;
    else if (!strcmp(s, "avg"))
        *out = CB_AGG_AVG;
    else if (!strcmp(s, "min"))
        *out = CB_AGG_MIN;
    else if (!strcmp(s, "all"))
        *out = CB_AGG_ALL;
    else
        return -1;
    return 0;
}

/* --in-place 0|1|both, for the collectives that have an in-place form
 * (broadcast: always in place, so 0 and 1 are the same and both is refused). */
static int in_place_opt(const cb_desc_t *d, const char *arg, cb_opts_t *o, char *err, size_t errlen)
{
    if (!strcmp(arg, "0"))
        o->in_place = CB_IP_OFF;
    else if (!strcmp(arg, "1"))
        o->in_place = CB_IP_ONLY;
    else if (!strcmp(arg, "both"))
        o->in_place = CB_IP_BOTH;
    else
        return fail(err, errlen, "invalid --in-place '%s': allowed 0, 1 or both", arg);
    if (o->in_place == CB_IP_OFF || d->run_ip || (o->in_place == CB_IP_ONLY && (d->flags & CB_F_INPLACE)))
        return 0;
    if (d->flags & CB_F_INPLACE)
        return fail(err, errlen, "invalid --in-place '%s': %s is always in place (allowed 0 or 1)", arg, prog_buf);
    return fail(err, errlen,
                "invalid --in-place '%s': %s has no in-place form (allowed 0; in place: all_reduce reduce "
                "reduce_scatter all_gather broadcast)",
                arg, prog_buf);
}

static int algo_opt(const char *arg, cb_opts_t *o, char *err, size_t errlen)
{
    char why[256] = "";
    if (!*arg)
        return fail(err, errlen, "invalid --algo '': allowed an algorithm name (see --list-algos)");
    /* COLL_ALGO set here, resolved once by the configuration (with
     * COLL_DETERMINISTIC=1: only algorithms that honour it); refused, it
     * stays as it was */
    if (coll_cfg_try_set(COLL_CFG_ALGO, arg, why, sizeof(why)))
        return fail(err, errlen, "invalid --algo '%s': %s", arg, why[0] ? why : "allowed names: see --list-algos");
    o->algo = arg;
    return 0;
}

/* The options that take a name, a file or seconds: -o -d --algo --json
 * --csv --timeout --hold-after --time-agg --format. */
static int text_opt(const cb_desc_t *d, int c, const char *arg, cb_opts_t *o, cli_seen_t *seen, char *err,
                    size_t errlen)
{
    switch (c) {
    case 'o':
        if (cb_cli_list_opt(d, c, arg, o, err, errlen))
            return CB_EXIT_USAGE;
        o->op_set = 1;
        if (!(d->flags & CB_F_REDUCE))
            seen->op_given_warn = 1;
        return 0;
    case 'd': return cb_cli_list_opt(d, c, arg, o, err, errlen);
    case OPT_ALGO: return algo_opt(arg, o, err, errlen);
    case OPT_JSON:
        if (!*arg)
            return fail(err, errlen, "invalid --json '': allowed a file name");
        o->json = arg;
        return 0;
    case OPT_CSV:
        if (!*arg)
            return fail(err, errlen, "invalid --csv '': allowed a file name");
        o->csv = arg;
        return 0;
    case OPT_TIMEOUT:
        if (parse_seconds(arg, 1e7, &o->timeout))
            return fail(err, errlen, "invalid --timeout '%s': allowed seconds 0..10000000 (0 = never)", arg);
        return 0;
    case OPT_HOLD_AFTER:
        if (parse_seconds(arg, 3600, &o->hold_after))
            return fail(err, errlen, "invalid --hold-after '%s': allowed seconds 0..3600", arg);
        return 0;
    case OPT_MIN_BW:
        if (parse_gbps(arg, &o->min_bw))
            return fail(err, errlen, "invalid --min-bw '%s': allowed a bandwidth in GB/s >= 0 (e.g. 12.5)", arg);
        o->min_bw_src = "--min-bw";
        return 0;
    case OPT_IN_PLACE: return in_place_opt(d, arg, o, err, errlen);
    case OPT_TIME_AGG:
        if (parse_agg(arg, &o->agg))
            return fail(err, errlen, "invalid --time-agg '%s': allowed max avg min all", arg);
        return 0;
    default: /* OPT_FORMAT */
        if (parse_format(arg, &o->format))
            return fail(err, errlen, "invalid --format '%s': allowed %s", arg, FORMATS);
        seen->format_set = 1;
        return 0;
    }
}

/* The getopt loop; returns at once after -h or --version. */
static int parse_opts(const cb_desc_t *d, int argc, char **argv, cb_opts_t *o, cli_seen_t *seen, char *err,
                      size_t errlen)
{
    opterr = 0;
    optind = 0; /* GNU: full re-initialisation (parse may run more than once) */
    for (;;) {
        int idx = -1, rc = 0;
        int c = getopt_long(argc, argv, ":o:d:b:e:i:f:r:n:w:c:p:z:h", long_opts, &idx);
        if (c == -1)
            break;
        switch (c) {
        case 'b':
        case 'e':
        case 'i':
        case 'f':
        case 'r':
        case 'n':
        case 'w':
        case 'c':
        case 'p':
        case 'z': rc = number_opt(c, optarg, o, seen, err, errlen); break;
        case 'o':
        case 'd':
        case OPT_ALGO:
        case OPT_JSON:
        case OPT_CSV:
        case OPT_TIMEOUT:
        case OPT_HOLD_AFTER:
        case OPT_TIME_AGG:
        case OPT_MIN_BW:
        case OPT_IN_PLACE:
        case OPT_FORMAT: rc = text_opt(d, c, optarg, o, seen, err, errlen); break;
        case OPT_STATS: o->stats = 1; break;
        case CB_OPT_SIZES:
        case CB_OPT_DURATION:
        case CB_OPT_CYCLES:
        case CB_OPT_OFF_CACHE: rc = cb_cli_list_opt(d, c, optarg, o, err, errlen); break;
        case 'h': o->action = CB_ACT_HELP; return 0;
        case OPT_VERSION: o->action = CB_ACT_VERSION; return 0;
        case OPT_PRINT_CONFIG: o->action = CB_ACT_PRINT_CONFIG; break;
        case OPT_LIST_ALGOS: o->action = CB_ACT_LIST_ALGOS; break;
        case OPT_EQUAL_COUNTS: o->equal_counts = 1; break;
        case ':':
            if (optopt && optopt < 256)
                return fail(err, errlen, "option -%c needs a value (see --help)", optopt);
            return fail(err, errlen, "option '%s' needs a value (see --help)", argv[optind - 1]);
        default:
            if (optopt && optopt < 256 && optopt != '?')
                return fail(err, errlen, "unknown option -%c (see --help)", optopt);
            return fail(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return fail(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
    return 0;
}

/* The table format: --format, else COLL_TEST_FORMAT (checked even when
 * --format wins, so a typo is never silent). */
static int resolve_format(cb_opts_t *o, const cli_seen_t *seen, char *err, size_t errlen)
{
    const char *env_fmt = coll_cfg_str(COLL_CFG_TEST_FORMAT);
    cb_format_t env_format = CB_FMT_COLLBENCH;
    if (env_fmt[0] && parse_format(env_fmt, &env_format))
        return fail(err, errlen, "invalid COLL_TEST_FORMAT '%s': allowed %s", env_fmt, FORMATS);
    if (!seen->format_set)
        o->format = env_format;
    const char *fname = o->format == CB_FMT_HCCL ? "hccl" : "plain";
    if (o->format != CB_FMT_COLLBENCH && o->agg == CB_AGG_ALL)
        return fail(err, errlen,
                    "invalid --time-agg 'all' with the %s format: allowed max avg min (that table has four columns)",
                    fname);
    if (o->format != CB_FMT_COLLBENCH && o->stats)
        return fail(err, errlen, "invalid --stats with the %s format: allowed with --format collbench only", fname);
    if (o->format != CB_FMT_COLLBENCH && o->in_place == CB_IP_BOTH)
        return fail(err, errlen, "invalid --in-place 'both' with the %s format: allowed 0 or 1 (four columns)", fname);
    return 0;
}

/* The size sweep: -e >= -b, the step (-i, else a tenth of the range), warnings. */
static int check_sizes(cb_opts_t *o, const cli_seen_t *seen, char *err, size_t errlen)
{
    if (o->maxbytes < o->minbytes)
        return fail(err, errlen, "invalid -e '%llu': allowed maxbytes >= minbytes (-b %llu)", o->maxbytes, o->minbytes);
    if (seen->ff_set && o->step_set)
        fprintf(stderr, "%s: warning: -f %llu wins over -i %llu\n", prog_buf, o->stepfactor, o->stepbytes);
    if (!o->step_set) {
        o->stepbytes = (o->maxbytes - o->minbytes) / 10;
        if (o->stepbytes == 0)
            o->stepbytes = 1;
    } else if (o->stepbytes == 0 && !seen->ff_set && o->maxbytes > o->minbytes) {
        fprintf(stderr, "%s: warning: -i 0 runs the start size once (%llu bytes)\n", prog_buf, o->minbytes);
    }
    return 0;
}

/* COLL_TEST_MIN_BW: the gate when --min-bw is not given (checked even when
 * it is, so a typo is never silent). */
static int env_min_bw(cb_opts_t *o, char *err, size_t errlen)
{
    const char *v = coll_cfg_str(COLL_CFG_TEST_MIN_BW);
    double bw;
    if (!v || !*v)
        return 0;
    if (parse_gbps(v, &bw))
        return fail(err, errlen, "invalid COLL_TEST_MIN_BW '%s': allowed a bandwidth in GB/s >= 0 (e.g. 12.5)", v);
    if (o->min_bw < 0) {
        o->min_bw = bw;
        o->min_bw_src = "COLL_TEST_MIN_BW";
    }
    return 0;
}

/* COLL_TEST_OUTPUT: one more output file, kind by extension. */
static int env_output(cb_opts_t *o, char *err, size_t errlen)
{
    const char *env_out = coll_cfg_str(COLL_CFG_TEST_OUTPUT);
    if (!env_out || !*env_out)
        return 0;
    if (has_suffix(env_out, ".json")) {
        if (!o->json)
            o->json = env_out;
    } else if (has_suffix(env_out, ".csv")) {
        if (!o->csv)
            o->csv = env_out;
    } else {
        return fail(err, errlen, "invalid COLL_TEST_OUTPUT '%s': allowed a file name ending in .json or .csv", env_out);
    }
    return 0;
}

int cb_cli_parse(const cb_desc_t *d, int argc, char **argv, cb_opts_t *o, char *err, size_t errlen)
{
    set_defaults(d, o);
    if (errlen)
        err[0] = '\0';
    record_command(o, argc, argv);
    cli_seen_t seen = {0, 0, 0};
    int rc = parse_opts(d, argc, argv, o, &seen, err, errlen);
    if (rc || o->action != CB_ACT_RUN)
        return rc;
    if ((rc = resolve_format(o, &seen, err, errlen)) || (rc = check_sizes(o, &seen, err, errlen))
        || (rc = cb_cli_list_check(o, err, errlen)))
        return rc;
    if (seen.op_given_warn)
        fprintf(stderr, "%s: warning: -o is ignored: %s does not reduce\n", prog_buf, prog_buf);
    if (o->equal_counts && !(d->flags & CB_F_VARIABLE))
        fprintf(stderr, "%s: warning: --equal-counts only changes the v tests; ignored\n", prog_buf);
    if ((rc = env_min_bw(o, err, errlen)))
        return rc;
    return env_output(o, err, errlen);
}

int cb_cli_check_ranks(const cb_opts_t *o, int nranks, char *err, size_t errlen)
{
    if (o->root < 0 || o->root >= nranks)
        return fail(err, errlen, "invalid -r '%d': allowed 0 <= root < ranks (0..%d)", o->root, nranks - 1);
    return 0;
}

int cb_next_size(const cb_opts_t *o, unsigned long long s, unsigned long long *next)
{
    unsigned long long n;
    if (o->stepfactor > 1) {
        if (s == 0)
            n = 1; /* 0 * f would never end the sweep */
        else if (s > o->maxbytes / o->stepfactor)
            return 0;
        else
            n = s * o->stepfactor;
    } else {
        if (o->stepbytes == 0)
            return 0; /* -i 0: the start size once */
        if (s > o->maxbytes - o->stepbytes)
            return 0;
        n = s + o->stepbytes;
    }
    if (n > o->maxbytes)
        return 0;
    *next = n;
    return 1;
}

static void usage_extras(FILE *out)
{
    fputs("  --algo NAME            force an algorithm (COLL_ALGO syntax; see --list-algos)\n"
          "  --list-algos           list the algorithms and exit\n"
          "  --json FILE, --csv FILE  also write results (COLL_TEST_OUTPUT=FILE.json|.csv too)\n"
          "  --time-agg max|avg|min|all  time across ranks (default max = slowest rank;\n"
          "                         all adds min/avg/max columns)\n"
          "  --timeout SEC          a collective waiting longer fails (COLL_EXEC_TIMEOUT)\n"
          "  --equal-counts         v tests: equal counts like the original\n"
          "  --format collbench|hccl|plain  table layout (COLL_TEST_FORMAT too): hccl prints\n"
          "                         exactly hccl_test's four columns, rows ending in the check\n"
          "                         result; plain the whitespace table of the seed skill's docs\n"
          "                         (data_size avg_time(us) alg_bandwidth(GB/s) check_result)\n"
          "  --stats                columns of per-iteration times over iterations and ranks\n"
          "                         (min p50 p99 max, us) and the straggler (rank@host that\n"
          "                         entered last most often, - if none)\n"
          "  --in-place 0|1|both    time the out-of-place form (0, default), the in-place one\n"
          "                         (1: sendbuf == recvbuf, or the rank's block of it) or both\n"
          "                         (two column groups; JSON rows with in_place); all_reduce,\n"
          "                         reduce, reduce_scatter, all_gather (broadcast: always)\n"
          "  --sizes LIST           exact sizes instead of -b/-e (e.g. 8K,1M,64M)\n"
          "  --duration SEC         burn-in: repeat the sweep for SEC seconds, one '# pass'\n"
          "                         line each; SIGINT/SIGTERM stop it cleanly after the size\n"
          "                         in progress (footer, result files, no leftovers)\n"
          "  --cycles N             burn-in: N passes (0 = until SIGINT/SIGTERM)\n"
          "  --off-cache            rotate buffer sets that together exceed twice the last-\n"
          "                         level cache, so no call finds its data in cache\n"
          "  --min-bw GBPS          exit 6 when the average bus bandwidth (the footer's figure)\n"
          "                         is below GBPS (COLL_TEST_MIN_BW too; for job prologues)\n"
          "  --hold-after SEC       tests: after the sweep every rank prints its init time\n"
          "                         on stderr, then sleeps SEC before destroy (fds sampled)\n"
          "  --print-config         print every COLL_* setting and exit\n"
          "  --version              print the version and exit\n\n",
          out);
}

void cb_cli_usage(const cb_desc_t *d, FILE *out)
{
    const char *p = prog_buf[0] ? prog_buf : d->name;
    fprintf(out,
            "Usage: %s [options]      (also: mpirun -n N %s [options])\n"
            "Benchmarks and checks %s; output compatible with Huawei hccl_test.\n\n"
            "  -b, --minbytes SIZE    start size (default 64M); K/M/G = powers of 1024\n"
            "  -e, --maxbytes SIZE    end size (default 64M); must be >= -b\n"
            "  -i, --stepbytes SIZE   additive step (default (max-min)/10, or 1);\n"
            "                         -i 0 runs the start size once\n"
            "  -f, --stepfactor N     multiplicative step, integer > 1 (wins over -i)\n"
            "  -n, --iters N          timed iterations (default 20, >= 1)\n"
            "  -w, --warmup_iters N   warm-up iterations (default 10)\n"
            "  -o, --op OP            sum prod max min (default sum; reducing tests only);\n"
            "                         a comma list or all: one table each (reducing tests)\n"
            "  -d, --datatype T       int8 int16 int32 int64 uint8 uint16 uint32 uint64\n"
            "                         fp16 fp32 fp64 bfp16 (default fp32); a comma list or\n"
            "                         all: one table each\n"
            "  -r, --root R           root rank, 0 <= R < ranks (default 0)\n"
            "  -c, --check 0|1        verify results (default 1)\n"
            "  -p, --npus N           ranks per node (1..%d). Standalone (no mpirun/torchrun/\n"
            "                         srun): the number of ranks forked, default all online\n"
            "                         CPUs (%d here, like hccl_test's all devices), at most %d.\n"
            "                         Under a launcher: a mismatch is only a warning.\n"
            "  -z, --zero_copy 0|1    buffers in shared memory from coll_mem_alloc (default 0)\n"
            "  -h, --help             this text\n"
            "collbench extras:\n",
            p, p, coll_kind_name(d->kind), CB_MAX_NPUS, cb_default_npus(), CB_MAX_NPUS_STANDALONE);
    usage_extras(out);
    fputs("Columns: data_size(Bytes) | aveg_time(us) | alg_bandwidth(GB/s) | check_result |\n"
          "bus_bandwidth(GB/s). The first four are the original's (--format hccl: only those,\n"
          "byte for byte); time is the slowest rank's average; check_result is success,\n"
          "failed, or NULL (-c 0, or the expected value is not exact in this dtype for\n"
          "this op and rank count). Under the default table, nccl-tests' footer\n"
          "('# Out of bounds values : N OK|FAILED', '# Avg bus bandwidth    : X') and\n"
          "'# Run cost' (init time, peak RSS, /dev/shm bytes, sockets).\n",
          out);
    if (d->flags & CB_F_VARIABLE)
        fprintf(out,
                "\nUnequal counts (default; --equal-counts gives the original's equal ones):\n"
                "with T = data_size / element size elements and n ranks, rank r's share has\n"
                "weight r+1, except rank 1 which gets 0 elements when n >= 3; rank r gets\n"
                "floor(T * w_r / W) elements (W = sum of weights), the last rank the remainder.\n"
                "%s",
                d->kind == COLL_ALLTOALLV ? "alltoallv: rank r sends share[(q - r) mod n] to peer q, so every rank\n"
                                            "sends and receives T elements in total.\n"
                    : d->kind == COLL_ALLGATHERV ? "allgatherv: rank r contributes its share.\n"
                                                 : "reduce_scatterv: rank r receives its share.\n");
    fprintf(out,
            "\nLaunch: mpirun (Open MPI or MPICH; MPI only exchanges the unique id), torchrun-\n"
            "style environment (RANK WORLD_SIZE MASTER_ADDR MASTER_PORT; rank 0 hosts the\n"
            "rendezvous; under torchrun on MASTER_PORT+1; without COLL_SECRET the secret is\n"
            "derived from the job's ids: weak protection), srun (SLURM_PROCID/NTASKS), or\n"
            "standalone (forks -p ranks). COLL_TEST_CPUS pins local rank i to the i-th CPU.\n\n"
            "Exit codes: 0 ok; 1 a check failed; 2 bad command line; 3 communicator/\n"
            "transport setup failed; 4 timeout; 5 a peer aborted; 6 average bus bandwidth\n"
            "below --min-bw.\n");
}
