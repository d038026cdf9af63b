/*
 * p2p_cmd.c - the command of `collbench bw -t p2p`: its options, and how its
 * ranks come to exist: standalone (-p N forked here) or a launcher (--sp 2,
 * mpirun, torchrun-style variables, srun) through cbt_rank_main, or the two
 * ends of a shared directory (--sp 0 / --sp 1, spdir.c). The measurement
 * itself: p2p.c (cbt_p2p_run), the tables: p2p_out.c.
 */
#include <stdlib.h>
#include <string.h>

#include "p2p.h"
#include "../cb.h"
#include "../../launch/launch.h"

static const char *TOOL = "bw";

/* The two ranks of --ds/--dd are bound to their devices, the others pinned by rank. */
static int place(void *arg, int rank)
{
    const cbt_p2p_opts_t *o = arg;
    if (o->ds < 0 || rank > 1)
        return 0;
    cbt_p2p_bind_dev(o->card, rank == 0 ? o->ds : o->dd); /* a failure is reported by cbt_p2p_run */
    return 1;
}

/* A verdict both ends agreed on (e.g. -et differs) ends both alike; any other
 * failure aborts the peers. */
static int rank_body(void *arg, coll_comm_t comm, int rank, int nranks)
{
    int rc = cbt_p2p_run(comm, arg, NULL);
    if (rc != CBT_EXIT_OK && !cbt_p2p_agreed())
        coll_comm_abort(comm);
    return rc != CBT_EXIT_OK && cbt_p2p_agreed() ? rc | CB_LAUNCH_AGREED : rc;
}

static int is_opt(const char *a, const char *s1, const char *s2, const char *s3)
{
    return !strcmp(a, s1) || (s2 && !strcmp(a, s2)) || (s3 && !strcmp(a, s3));
}

/* Which of --ds, --dd and -m were given. */
typedef struct {
    int ds, dd, m;
} p2p_set_t;

static int is_p2p_opt(const char *a)
{
    return is_opt(a, "-sp", "--sp", "--super-pod") || is_opt(a, "-ip", "--ip", "--peer-ip")
        || is_opt(a, "-hip", "--hip", "--host-ip") || is_opt(a, "-spp", "--spp", "--super-pod-path")
        || is_opt(a, "-ds", "--ds", "--device-src") || is_opt(a, "-dd", "--dd", "--device-dst")
        || is_opt(a, "-d", "--device", NULL) || is_opt(a, "-m", "--mode", NULL) || is_opt(a, "-p", "--npus", NULL);
}

/* Option a (one is_p2p_opt knows) with its value v. */
static int set_opt(cbt_p2p_opts_t *o, p2p_set_t *set, const char *a, const char *v)
{
    long long ll;
    if (is_opt(a, "-sp", "--sp", "--super-pod")) {
        if (cbt_parse_ll(TOOL, "--sp", v, 0, 2, &ll))
            return CBT_EXIT_USAGE;
        o->sp = (int)ll;
    } else if (is_opt(a, "-ip", "--ip", "--peer-ip")) {
        o->ip = v;
    } else if (is_opt(a, "-hip", "--hip", "--host-ip")) {
        o->hip = v;
    } else if (is_opt(a, "-spp", "--spp", "--super-pod-path")) {
        o->spp = v;
    } else if (is_opt(a, "-d", "--device", NULL)) {
        if (cbt_parse_ll(TOOL, "-d", v, 0, CBT_DEV_MAX - 1, &ll))
            return CBT_EXIT_USAGE;
        o->dev = (int)ll;
    } else if (is_opt(a, "-m", "--mode", NULL)) {
        if ((o->card = cbt_parse_devmode(TOOL, v)) < 0)
            return CBT_EXIT_USAGE;
        set->m = 1;
    } else if (is_opt(a, "-ds", "--ds", "--device-src")) {
        if (cbt_parse_ll(TOOL, "--ds", v, 0, CBT_DEV_MAX - 1, &ll))
            return CBT_EXIT_USAGE;
        o->ds = (int)ll, set->ds = 1;
    } else if (is_opt(a, "-dd", "--dd", "--device-dst")) {
        if (cbt_parse_ll(TOOL, "--dd", v, 0, CBT_DEV_MAX - 1, &ll))
            return CBT_EXIT_USAGE;
        o->dd = (int)ll, set->dd = 1;
    } else {
        if (cbt_parse_ll(TOOL, "-p", v, 2, CBT_P2P_NPUS_MAX, &ll))
            return CBT_EXIT_USAGE;
        o->npus = (int)ll, o->npus_set = 1;
    }
    return 0;
}

/* The shared-directory options: all three with --sp 0/1, none without. */
static int check_spdir(const cbt_p2p_opts_t *o, int spdir)
{
    if (spdir) {
        if (!o->ip || !o->hip || !o->spp)
            return cbt_usage_error(TOOL, "--sp %d needs --ip PEER_IP, --hip OWN_IP and --spp SHARED_DIR (missing %s)",
                                   o->sp,
                                   !o->ip        ? "--ip"
                                       : !o->hip ? "--hip"
                                                 : "--spp");
        if (o->npus_set)
            return cbt_usage_error(TOOL, "--sp %d runs one rank on each end: -p does not apply", o->sp);
    } else if (o->ip || o->hip || o->spp) {
        return cbt_usage_error(TOOL,
                               "%s applies only to the shared-directory mode (--sp 0 on the source, --sp 1 "
                               "on the target)",
                               o->ip        ? "--ip"
                                   : o->hip ? "--hip"
                                            : "--spp");
    }
    return 0;
}

/* The options together: device ids resolved, combinations that do not go. */
static int check_opts(cbt_p2p_opts_t *o, p2p_set_t set)
{
    int ds_set = set.ds;
    if (set.ds != set.dd)
        return cbt_usage_error(TOOL, "--ds and --dd go together (source and destination device)");
    if (ds_set && o->dev >= 0)
        return cbt_usage_error(TOOL, "-d does not go with --ds/--dd (-d D is --ds D --dd D)");
    int spdir = o->sp == 0 || o->sp == 1;
    if (spdir && ds_set)
        return cbt_usage_error(TOOL,
                               "--sp %d runs one rank on each end: --ds/--dd does not apply (use -d DEVICE on "
                               "each end)",
                               o->sp);
    if (!spdir && (o->dev >= 0 || set.m)) { /* -d D = --ds D --dd D; -m alone: device/card 0 */
        if (o->dev >= 0)
            o->ds = o->dd = o->dev;
        else if (!ds_set)
            o->ds = o->dd = 0;
        ds_set = 1;
    }
    if (spdir && set.m && o->dev < 0)
        o->dev = 0;
    /* --ds/--dd are ascend-dmi's device ids, no longer ranks: the pair is always
     * rank 0 (source) and rank 1 (target), so they need a run of two ranks */
    if (ds_set && o->npus_set && o->npus != 2)
        return cbt_usage_error(TOOL,
                               "--ds/--dd/-d are device ids of the source (rank 0) and the target (rank 1), "
                               "not ranks: they need 2 ranks, not -p %d (drop them to measure every pair of ranks)",
                               o->npus);
    return check_spdir(o, spdir);
}

static int parse(const cbt_bw_opts_t *bw, cbt_p2p_opts_t *o)
{
    *o = (cbt_p2p_opts_t){.bw = bw, .sp = -1, .ds = -1, .dd = -1, .dev = -1, .npus = 2};
    p2p_set_t set = {0, 0, 0};
    for (int i = 0; i < bw->nextra; i++) {
        const char *a = bw->extra[i];
        const char *v = i + 1 < bw->nextra ? bw->extra[i + 1] : NULL;
        if (!is_p2p_opt(a))
            return cbt_usage_error(TOOL, "unknown option '%s' for -t p2p (see collbench bw --help)", a);
        if (!v)
            return cbt_usage_error(TOOL, "missing value after %s", a);
        i++;
        int rc = set_opt(o, &set, a, v);
        if (rc)
            return rc;
    }
    return check_opts(o, set);
}

int cbt_bw_p2p(const cbt_bw_opts_t *bw)
{
    cbt_p2p_opts_t o;
    int rc = parse(bw, &o);
    if (rc)
        return rc;
    if (o.sp == 0 || o.sp == 1) {
        o.launch = "spdir";
        /* bound before the communicator exists, so that libcoll's threads inherit it */
        if (o.dev >= 0 && cbt_p2p_bind_dev(o.card, o.dev) != 0)
            return cbt_usage_error(TOOL, "%s", cbt_p2p_dev_error());
        o.ds = 0, o.dd = 1; /* source = rank 0, target = rank 1 */
        return cbt_p2p_spdir(&o);
    }
    cb_launch_t l;
    if ((rc = cbt_launch(&l, "collbench bw", o.npus, o.npus_set, 0)) != 0)
        return rc;
    o.launch = l.name;
    if (bw->calib_out && l.kind == CB_LAUNCH_STANDALONE)
        return cbt_usage_error(TOOL,
                               "invalid --calibration-out with standalone ranks (one host; allowed: 2 ranks on "
                               "2 hosts started by a launcher, or --sp 0/1)");
    if (o.sp == 2 && l.kind == CB_LAUNCH_STANDALONE)
        return cbt_usage_error(TOOL,
                               "--sp 2 is the MPI mode: start it under mpirun (mpirun -n 2 collbench bw -t "
                               "p2p --sp 2 ...), or drop --sp to fork the ranks here (-p N)");
    if (l.nranks < 2)
        return cbt_usage_error(TOOL, "-t p2p needs at least 2 ranks (%s started %d)", l.name, l.nranks);
    if (o.ds >= 0 && l.nranks != 2)
        return cbt_usage_error(TOOL,
                               "--ds/--dd/-d are device ids of the source (rank 0) and the target (rank 1), "
                               "not ranks: they need 2 ranks, %s started %d (drop them to measure every pair)",
                               l.name, l.nranks);
    if (l.kind == CB_LAUNCH_STANDALONE) {
        /* both ends are on this node: check their devices before forking */
        cbt_dev_t d;
        char e[512];
        for (int k = 0; k < 2 && o.ds >= 0; k++)
            if (cbt_dev_lookup(o.card, k ? o.dd : o.ds, &d, e, sizeof e) != 0)
                return cbt_usage_error(TOOL,
                                       "%s %d: %s (--ds/--dd are device ids on the source and the target "
                                       "node, not ranks)",
                                       o.dev >= 0 ? "-d"
                                           : k    ? "--dd"
                                                  : "--ds",
                                       k ? o.dd : o.ds, e);
        unsigned long long need = 2ULL * bw->size * (unsigned long long)o.npus, avail = cbt_mem_available();
        if (avail && need > avail / 10 * 9) {
            char a[32], b[32];
            cbt_fmt_bytes(a, sizeof a, need);
            cbt_fmt_bytes(b, sizeof b, avail);
            return cbt_usage_error(TOOL,
                                   "-s %llu with -p %d needs %s (send + receive buffer per rank) but only %s is "
                                   "available (MemAvailable, 90%% usable); use a smaller -s",
                                   bw->size, o.npus, a, b);
        }
    }
    cbt_rank_job_t job = {.tool = TOOL, .body = rank_body, .place = place, .arg = &o};
    return cbt_rank_run(&l, &job);
}
