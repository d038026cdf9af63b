/*
 * assess.h - `collbench assess`: one command that checks every host of a job
 * and names the slow host and the slow link (in the spirit of ClusterKit).
 *   main.c     options, launch, the host map (one speaker per host)
 *   measure.c  the measurements: pairs (round-robin), ring (ordered, random),
 *              node (d2d and flops per host, one host at a time)
 *   shm.c      node-shm: shared-memory p2p between two ranks of each host
 *              with several, all hosts at once
 *   bisect.c   bisect: random halvings, every pair of a halving at once
 *   coll.c     coll: the AllReduce sweep per group of hosts and on the job
 *   rounds.c   the schedules and the steps every round shares
 *   judge.c    medians, thresholds, suspects
 *   report.c   tables and outliers (stdout); json.c the --json DIR files
 * Only the speakers (local rank 0 of each host) move data, and for node-shm
 * each host's second rank (it maps 2 x SIZE bytes too); the other ranks join
 * the barrier that opens each round and the gather that closes it.
 * Memory: rank 0 holds H x H matrices (H hosts); every other rank O(H).
 */
#ifndef CBT_ASSESS_H
#define CBT_ASSESS_H

#include <stdint.h>
#include <stdio.h>

#include "coll.h"

#define CBT_AS_HOST_MAX 64 /* bytes of a host name */

enum {
    CBT_AS_PAIRS = 1 << 0,
    CBT_AS_RING = 1 << 1,
    CBT_AS_NODE = 1 << 2,
    CBT_AS_BISECT = 1 << 3,
    CBT_AS_COLL = 1 << 4
};
#define CBT_AS_ALL (CBT_AS_PAIRS | CBT_AS_RING | CBT_AS_NODE | CBT_AS_BISECT | CBT_AS_COLL)

/* coll: AllReduce sizes of the sweep (-s / 8^k down to 1K, at most this many) */
#define CBT_AS_COLL_SIZES 6

/* confirmation passes: what is still past the threshold is measured again,
 * alone, up to this many times (the better figure kept each time) */
#define CBT_AS_CONFIRM 2
#define CBT_AS_SHM_FIRST 2 /* node-shm: all-at-once rounds of the first pass (shm.c) */
/* pairs and bisect: up to this many passes, the second and later only over
 * marginal suspects (past the threshold, not past CBT_AS_CLEAR x it): a clear outlier
 * costs one pass, a healthy link that a burst of load hit gets more chances */
#define CBT_AS_CONFIRM_PAIRS 4
/* clear outlier: past CBT_AS_CLEAR x the threshold (bandwidth below th/4 of
 * the median, latency above 4/th of it); healthy links on a loaded 2-core VM
 * measured down to 15% of the median alone, a tbf-limited one 1-5% */
#define CBT_AS_CLEAR 0.25

/* node: seconds each probe (d2d, flops) warms up, then measures */
#define CBT_AS_NODE_WARMUP_S 0.1
#define CBT_AS_NODE_S 0.3
/* node-shm: seconds of ping-pongs (latency) and of sends (bandwidth) */
#define CBT_AS_SHM_LAT_S 0.1
#define CBT_AS_SHM_BW_S 0.3

typedef struct {
    unsigned tests;          /* CBT_AS_* bits */
    unsigned long long size; /* -s bytes per execution */
    long long et;            /* -et executions per measurement */
    long long lat_iters;     /* --lat-iters ping-pongs per latency */
    long long rings;         /* --rings random rings */
    unsigned long long seed; /* --seed of the random rings and halvings */
    long long halvings;      /* --halvings of bisect */
    long long group_size;    /* --group-size K hosts per coll group */
    double threshold;        /* --threshold (0, 1] */
    double lat_threshold;    /* --lat-threshold (0, 1], 0 = threshold */
    const char *json_dir;    /* --json DIR or NULL */
    int quiet;
    int npus, npus_set;
    const char *launch;
} cbt_as_opts_t;

typedef struct {
    char name[CBT_AS_HOST_MAX];
    int speaker; /* rank that speaks for the host (its local rank 0) */
    int nranks;  /* ranks on the host */
} cbt_as_host_t;

/* What rank 0 collects. Matrices are n x n, row = source; -1 = not measured. */
typedef struct {
    int n;
    const cbt_as_host_t *hosts;
    double *uni, *bidi, *lat; /* GB/s, GB/s, microseconds (half round trip) */
    int *round;               /* round of the pair, -1 none */
    /* confirmation: the second measurement of each suspect link, -1 where the
     * link was not suspect; uni/bidi/lat above hold the better of the two */
    double *again_uni, *again_bidi, *again_lat;
    int nconfirm;       /* suspect pairs measured again */
    int pairs_ref;      /* reference pair a * n + b of the last confirmation, -1 none */
    double *ring_again; /* nrings x n: the ring measured again, -1 not */
    /* node: per host GB/s (d2d) and GFLOPS (fp64); the second measurement of
     * a suspect host (-1 none); d2d/gflops hold the better of the two */
    double *d2d, *gflops, *again_d2d, *again_gflops;
    int node_done;
    /* node-shm: per host GB/s and latency (us) between its speaker and its
     * second rank over libcoll's shared-memory path (-1: one rank, none);
     * again_*: the measurement alone of a suspect host (-1 none) */
    double *shm_gbs, *shm_lat, *again_shm_gbs, *again_shm_lat;
    int nrings;   /* 1 ordered + random ones; 0 when ring did not run */
    int *succ;    /* nrings x n: successor host of h in ring r */
    double *ring; /* nrings x n: GB/s of h -> succ */
    /* bisect: nhalv halvings; per halving g and host h its partner (-1 idle),
     * the pair's GB/s (both directions together), the pair measured again
     * alone (-1 not); bis holds the better of the two */
    int nhalv;
    int *bis_peer;
    double *bis, *bis_again;
    /* coll: ngroups groups of consecutive hosts (group of host h: grp[h]);
     * per group and size the bus bandwidth GB/s (-1 none), the group measured
     * again alone (-1 not); the whole job's sweep in job_bus */
    int ngroups, ncsizes;
    int *grp;
    unsigned long long csize[CBT_AS_COLL_SIZES];
    double *gbus, *gbus_again; /* ngroups x CBT_AS_COLL_SIZES */
    double job_bus[CBT_AS_COLL_SIZES];
} cbt_as_result_t;

typedef struct {
    const cbt_as_opts_t *o;
    coll_comm_t comm;
    int rank, nranks, nhosts;
    int me_host;  /* host index of this rank */
    int speaker;  /* this rank speaks for its host */
    int shm_peer; /* node-shm: the speaker's second rank of its host, that
                   * rank's speaker; -1 for every other rank */
    const cbt_as_host_t *hosts;
    unsigned char *src, *dst;
    cbt_as_result_t *res; /* rank 0 only */
} cbt_as_ctx_t;

/* A pair figure of the pairs test (judge.c): its n x n matrix, the
 * confirmation's measurement of each link (-1 none). */
typedef struct {
    const char *test, *unit;
    int lower_is_bad;    /* bandwidth: 1, latency: 0 */
    const double *m;     /* n x n */
    int directed;        /* uni: a->b and b->a differ */
    const double *again; /* n x n: the confirmation measurement, -1 none */
} cbt_as_fig_t;

/* The files, each using only those below it:
 *   main.c     options, launch, the host map, the tests in order, the report
 *   report.c   what rank 0 prints: tables, OUTLIER lines     -> json.c, judge.c
 *   json.c     --json DIR: a file per test, outliers.json
 *   measure.c  pairs, ring, node                              -> shm.c
 *   shm.c, bisect.c, coll.c  the other measurements          -> judge.c, rounds.c
 *   judge.c    medians, thresholds, suspects (pure)
 *   rounds.c   schedules (pure), the suspects to every rank, progress */

/* rounds.c. Rounds for n hosts: n - 1 when n is even, n when odd (a virtual
 * host n makes it even; its partner is idle). */
int cbt_as_rounds(int n);
/* Partner of host h in round r, or -1 when h is idle in that round. */
int cbt_as_partner(int r, int h, int n);
/* Random ring order of n hosts from a seed (Fisher-Yates); perm[i] = i-th host. */
void cbt_as_ring_order(unsigned long long seed, int n, int *perm);
/* Partner of every host in halving g of n hosts (-1: idle when n is odd) and
 * its side (0 or 1; pairs have one host on each side). Pure: a random
 * relabelling of the hosts (from seed) walked through the round-robin rounds,
 * so a host meets a different partner in each halving (up to H-1 of them),
 * and a coin per pair for its sides. */
void cbt_as_halving(unsigned long long seed, int g, int n, int *peer, int *side);
/* Groups of --group-size K consecutive hosts; a remainder smaller than K
 * joins the last group. grp[h] = group of host h; returns the group count. */
int cbt_as_groups(int n, int k, int *grp);
/* Rank 0's list of suspects (len ints) to every rank, for a confirmation pass:
 * 0, or the exit code after naming the failure and aborting the communicator. */
int cbt_as_share_suspects(cbt_as_ctx_t *c, int *sus, size_t len);
/* -et timed exchanges of -s bytes, c->src to rank `to` and c->dst from rank
 * `from`, after one untimed (times in ex); the median in *med (seconds, 1e-9
 * at the least). The first failure's status. */
coll_status_t cbt_as_exchange(cbt_as_ctx_t *c, int to, int from, double *ex, double *med);
/* A progress line on stderr. */
void cbt_as_progress(const char *what, int done, int total, double t_start);
/* A test's confirmation, the one loop of every test (pairs, ring, bisect,
 * node, node-shm, coll): up to `passes` passes; in each, rank 0 lists the
 * suspects (find), every rank learns the list (cbt_as_share_suspects) and each
 * suspect is measured again (again, with a progress line), until a pass finds
 * none. sus is one buffer of len ints: sus[0] the count, sus[1 .. head-1] the
 * test's own (a reference pair), the suspects from sus[head]. */
typedef struct {
    const char *what, *what_later; /* progress: first pass, later ones (NULL: what) */
    int passes, head;
    size_t len;
    void (*find)(cbt_as_ctx_t *c, int pass, int *sus, void *arg);    /* rank 0 */
    int (*again)(cbt_as_ctx_t *c, const int *sus, int k, void *arg); /* every rank */
    void *arg;
} cbt_as_confirm_t;
/* A test's two buffers: the suspects' list of nsus ints (*sus) and, returned,
 * rank 0's gather of one rec-byte record a rank (NULL on the other ranks).
 * *rc: 0, or the exit code after "out of memory" (nothing left allocated). */
void *cbt_as_round_bufs(cbt_as_ctx_t *c, size_t rec, size_t nsus, int **sus, int *rc);
/* 0, or the exit code of the failure (named, the communicator aborted). */
int cbt_as_confirm(cbt_as_ctx_t *c, const cbt_as_confirm_t *cf, int *sus);

/* judge.c. Median of the values >= 0 of v[0..n) (reorders a copy); -1 when
 * none. The better of two figures (-1 = none). */
double cbt_as_median(const double *v, int n);
double cbt_as_better(int lower_is_better, double a, double b);
/* Latency outliers use this threshold instead of --threshold (0: the same);
 * set once from the options before any test runs, on every rank. */
void cbt_as_set_lat_threshold(double t);
/* pairs: the three figures (uni, bidi, latency); a figure's median over its
 * links (v: scratch of n x n); past the threshold after its confirmation. */
void cbt_as_figs(const cbt_as_result_t *r, cbt_as_fig_t *figs);
double cbt_as_fig_median(const cbt_as_result_t *r, const cbt_as_fig_t *f, double *v);
int cbt_as_confirmed(const cbt_as_fig_t *f, int ij, double med, double th);
/* The suspect pairs after the first pass (a figure of theirs past the
 * threshold): up to max entries a * n + b (a < b) in out; how many.
 * marginal: only figures past the threshold but not past CBT_AS_CLEAR x it (the
 * second confirmation: a clear outlier, measured alone once, is not measured
 * a third time). */
int cbt_as_suspects(const cbt_as_result_t *r, double th, int marginal, int *out, int max);
/* ring: each ring's slowest host (-1 none); suspect rings (slowest host
 * below th x the median ring): indexes in out. */
void cbt_as_ring_mins(const cbt_as_result_t *r, int nrings, double *mins);
int cbt_as_ring_suspects(const cbt_as_result_t *r, int nrings, double th, int *out);
/* Suspect hosts of node (d2d or flops below th x the median host). */
int cbt_as_node_suspects(const cbt_as_result_t *r, double th, int *out);
/* Suspect hosts of node-shm (GB/s below th x the median of hosts with
 * several ranks, latency above the median / lat_th). */
int cbt_as_shm_suspects(const cbt_as_result_t *r, double th, double lat_th, int *out);
/* bisect: the median pair of every halving (v: scratch of nhalv x n + 1);
 * suspect pairs (below th x the median pair): g * n + a (a the lower);
 * marginal: not below CBT_AS_CLEAR x th x the median (as cbt_as_suspects);
 * pair i slow after its confirmation. */
double cbt_as_bis_median(const cbt_as_result_t *r, double *v);
int cbt_as_bisect_suspects(const cbt_as_result_t *r, double th, int marginal, int *out);
int cbt_as_bis_slow(const cbt_as_result_t *r, int i, double med, double th);
/* coll: suspect groups (the largest size's bus bandwidth, index
 * CBT_AS_TOP of csize[], below th x the median group). */
#define CBT_AS_TOP 0
int cbt_as_coll_suspects(const cbt_as_result_t *r, double th, int *out);

/* The measurements, collective over every rank; a CBT_EXIT_* code.
 * measure.c: pairs, ring, node (which runs node-shm too). */
int cbt_as_pairs(cbt_as_ctx_t *c);
int cbt_as_ring(cbt_as_ctx_t *c);
int cbt_as_node(cbt_as_ctx_t *c);
int cbt_as_node_shm(cbt_as_ctx_t *c); /* shm.c */
int cbt_as_bisect(cbt_as_ctx_t *c);   /* bisect.c */
int cbt_as_coll(cbt_as_ctx_t *c);     /* coll.c */

/* json.c (rank 0). Notes an OUTLIER line (test, subject, value, median) for
 * DIR/outliers.json; forgets them. The JSON file DIR/<test>.json opened
 * with the common header. Every file of --json DIR: 0, or -1 when one could
 * not be written. */
void cbt_as_note_outlier(const char *test, const char *subject, double v, double med);
void cbt_as_forget_outliers(void);
FILE *cbt_as_json_open(const cbt_as_opts_t *o, const cbt_as_result_t *r, const char *test);
int cbt_as_json_write(const cbt_as_opts_t *o, const cbt_as_result_t *r);

/* report.c (rank 0): tables to stdout, outliers, JSON; returns the number of
 * outliers, or -1 when a JSON file could not be written. */
int cbt_as_report(const cbt_as_opts_t *o, const cbt_as_result_t *r);

#endif
