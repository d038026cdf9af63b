/*
 * bw.h - `collbench bw` (ascend-dmi spelling: `collbench --bw`): bandwidth tests.
 * bw.c parses the options every mode shares and dispatches on -t to a mode
 * (d2d.c: host memory copy). A new mode adds one row to the table in bw.c and
 * one run function; options bw.c does not know are handed to the mode in
 * `extra` (argv-style) for it to parse or reject.
 */
#ifndef CBT_BW_H
#define CBT_BW_H

typedef struct {
    const char *type;        /* -t: "d2d", "p2p" */
    unsigned long long size; /* -s bytes (default 512 MiB) */
    int size_set;            /* -s given */
    long long exec_times;    /* -et, 1..1000 (default 40) */
    int json;                /* -fmt json */
    int quiet;               /* -q: tables only */
    const char *calib_out;   /* --calibration-out FILE (d2d) */
    int nextra;              /* options left for the mode */
    char **extra;
} cbt_bw_opts_t;

#define CBT_BW_SIZE_MIN 1ULL
#define CBT_BW_SIZE_MAX (4ULL << 30)
#define CBT_BW_SIZE_DEFAULT 536870912ULL
#define CBT_BW_ET_MIN 1
#define CBT_BW_ET_MAX 1000
#define CBT_BW_ET_DEFAULT 40

/* Warm-up of every mode: a process's first few hundred milliseconds of copying
 * run at about half the steady rate on the development VM (64 MiB p2p between
 * local ranks ~10 GB/s in the first measurement, 25-28 GB/s after 0.5 s; d2d
 * memcpy 9-11 GB/s at -et 20, 12-15 at -et 200; bench/results/p2p-local-20261203.md),
 * so, as iperf3 --omit does, each process copies for this long before its
 * first timed execution and reports the steady state. */
#define CBT_BW_WARMUP_S 0.5

/* Modes: return a CBT_EXIT_* code. */
int cbt_bw_d2d(const cbt_bw_opts_t *o);
int cbt_bw_hosts(const cbt_bw_opts_t *o); /* hosts.c */

/* collbench assess --tests node: GB/s of the d2d memcpy path on this thread,
 * n bytes from src to dst, bytes copied over `seconds` after `warmup` (a
 * throughput over time, not a median execution: a host whose CPU share is
 * small copies less in that time). */
#include <stddef.h>
double cbt_d2d_probe(void *dst, const void *src, size_t n, double warmup, double seconds);

/* ascend-dmi table: header, one row, footer. */
void cbt_bw_table_head(const char *title);
void cbt_bw_table_row(unsigned long long bytes, long long times, double gbs, double us);
void cbt_bw_table_foot(void);

#endif
