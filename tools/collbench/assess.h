/*
 * assess.h - `collbench assess`: one command that checks every host of a job
 * and names the slow host and the slow link (in the spirit of ClusterKit).
 *   assess.c        options, launch, the host map (one speaker per host)
 *   assess_run.c    the measurements: pairs (round-robin), ring (ordered, random),
 *                   node (d2d and flops per host, one host at a time)
 *   assess_out.c    median, outliers, tables (stdout), JSON files (--json DIR)
 * Only the speakers (local rank 0 of each host) move data; the other ranks join
 * the barrier that opens each round and the gather that closes it.
 * Memory: rank 0 holds H x H matrices (H hosts); every other rank O(H).
 */
#ifndef CBT_ASSESS_H
#define CBT_ASSESS_H

#include <stdint.h>

#include "coll.h"

#define CBT_AS_HOST_MAX 64 /* bytes of a host name */

enum { CBT_AS_PAIRS = 1 << 0, CBT_AS_RING = 1 << 1, CBT_AS_NODE = 1 << 2 };

/* confirmation passes: what is still past the threshold is measured again,
 * alone, up to this many times (the better figure kept each time) */
#define CBT_AS_CONFIRM 2

/* node: seconds each probe (d2d, flops) warms up, then measures */
#define CBT_AS_NODE_WARMUP_S 0.1
#define CBT_AS_NODE_S 0.3

typedef struct {
    unsigned tests;           /* CBT_AS_* bits */
    unsigned long long size;  /* -s bytes per execution */
    long long et;             /* -et executions per measurement */
    long long lat_iters;      /* --lat-iters ping-pongs per latency */
    long long rings;          /* --rings random rings */
    unsigned long long seed;  /* --seed of the random rings */
    double threshold;         /* --threshold (0, 1] */
    double lat_threshold;     /* --lat-threshold (0, 1], 0 = threshold */
    const char *json_dir;     /* --json DIR or NULL */
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
    int nconfirm;             /* suspect pairs measured again */
    double *ring_again;       /* nrings x n: the ring measured again, -1 not */
    /* node: per host GB/s (d2d) and GFLOPS (fp64); the second measurement of
     * a suspect host (-1 none); d2d/gflops hold the better of the two */
    double *d2d, *gflops, *again_d2d, *again_gflops;
    int node_done;
    int nrings;               /* 1 ordered + random ones; 0 when ring did not run */
    int *succ;                /* nrings x n: successor host of h in ring r */
    double *ring;             /* nrings x n: GB/s of h -> succ */
} cbt_as_result_t;

typedef struct {
    const cbt_as_opts_t *o;
    coll_comm_t comm;
    int rank, nranks, nhosts;
    int me_host; /* host index of this rank */
    int speaker; /* this rank speaks for its host */
    const cbt_as_host_t *hosts;
    unsigned char *src, *dst;
    cbt_as_result_t *res; /* rank 0 only */
} cbt_as_ctx_t;

/* Pure schedule helpers (circle method). Rounds for n hosts: n - 1 when n is
 * even, n when odd (a virtual host n makes it even; its partner is idle). */
int cbt_as_rounds(int n);
/* Partner of host h in round r, or -1 when h is idle in that round. */
int cbt_as_partner(int r, int h, int n);
/* Random ring order of n hosts from a seed (Fisher-Yates); perm[i] = i-th host. */
void cbt_as_ring_order(unsigned long long seed, int n, int *perm);
/* Median of the values >= 0 of v[0..n) (reorders a copy); -1 when none. */
double cbt_as_median(const double *v, int n);

/* assess_run.c: collective over every rank; a CBT_EXIT_* code. */
int cbt_as_pairs(cbt_as_ctx_t *c);
int cbt_as_ring(cbt_as_ctx_t *c);
int cbt_as_node(cbt_as_ctx_t *c);

/* assess_out.c: the suspect pairs after the first pass (a figure of theirs
 * past the threshold): up to max entries a * n + b (a < b) in out; how many. */
int cbt_as_suspects(const cbt_as_result_t *r, double th, int *out, int max);
/* Suspect rings (slowest host below th x the median ring): indexes in out. */
int cbt_as_ring_suspects(const cbt_as_result_t *r, int nrings, double th, int *out);

/* Suspect hosts of node (d2d or flops below th x the median host). */
int cbt_as_node_suspects(const cbt_as_result_t *r, double th, int *out);

/* assess_out.c (rank 0): tables to stdout, outliers, JSON; returns the
 * number of outliers, or -1 when a JSON file could not be written. */
int cbt_as_report(const cbt_as_opts_t *o, const cbt_as_result_t *r);

/* Latency outliers use this threshold instead of --threshold (0: the same). */
void cbt_as_set_lat_threshold(double t);

#endif
