/*
 * cb.h - shared helpers of the `collbench` tool (the files of tools/collbench).
 *
 * The tool is independent of libcoll except for coll_parse_size() and the
 * config getters (src/core/config.h, the only reader of the environment).
 * Exit codes of every subcommand:
 *   0 success, 1 run failed (e.g. a result did not validate),
 *   2 bad command line (one line on stderr naming the value and what is allowed),
 *   3 network / peer error, 4 timed out waiting for a peer.
 */
#ifndef CBT_CB_H
#define CBT_CB_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../launch/launch.h"

enum {
    CBT_EXIT_OK = 0,
    CBT_EXIT_FAIL = 1,
    CBT_EXIT_USAGE = 2,
    CBT_EXIT_CONN = 3,
    CBT_EXIT_TIMEOUT = 4,
};

#define CBT_KIB 1024ULL
#define CBT_MIB (1024ULL * 1024ULL)
#define CBT_GIB (1024ULL * 1024ULL * 1024ULL)
#define CBT_MAX_CPUS 1024 /* CPU_SETSIZE */

/* The exit code of a failed libcoll call in a measuring run: 4 timed out, 1 out
 * of memory, 3 any other (a network or peer error). */
static inline int cbt_exit_of(coll_status_t st)
{
    return st == COLL_ERR_TIMEOUT ? CBT_EXIT_TIMEOUT : st == COLL_ERR_NO_MEMORY ? CBT_EXIT_FAIL : CBT_EXIT_CONN;
}

/* Monotonic clock. */
double cbt_now(void);

/* Print "collbench TOOL: MESSAGE" (one line) to stderr; returns CBT_EXIT_USAGE. */
int cbt_usage_error(const char *tool, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, for runtime errors; returns `code`. */
int cbt_error(const char *tool, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A failed libcoll call of a measuring rank: one line "collbench TOOL: rank R:
 * PREFIXCALL: STATUS: LAST ERROR", the communicator aborted when abort_comm is
 * not NULL (so the other ranks stop waiting); returns cbt_exit_of(st). */
int cbt_call_failed(const char *tool, int rank, const char *prefix, const char *call, coll_status_t st,
                    coll_comm_t abort_comm);
/* Return that from the enclosing function when `call` does not succeed. */
#define CBT_TRY(tool, rank, prefix, abort_comm, call) \
    do { \
        coll_status_t st_ = (call); \
        if (st_ != COLL_SUCCESS) \
            return cbt_call_failed(tool, rank, prefix, #call, st_, abort_comm); \
    } while (0)

/* Option values. Each prints one line "collbench TOOL: invalid OPT 'VAL' (allowed: ...)"
 * and returns -1 on error, 0 on success. */
int cbt_parse_size(const char *tool, const char *opt, const char *val, unsigned long long lo, unsigned long long hi,
                   unsigned long long *out);
int cbt_parse_ll(const char *tool, const char *opt, const char *val, long long lo, long long hi, long long *out);
int cbt_parse_double(const char *tool, const char *opt, const char *val, double lo, double hi, const char *unit,
                     double *out);
/* The value following argv[*i] (advances *i); NULL after printing an error if missing. */
const char *cbt_optval(const char *tool, int argc, char **argv, int *i);
/* cb_launch_detect for a collbench command (prog: "collbench NAME", kept in
 * l): its error printed, or a warning when -p (npus_set) differs from the
 * ranks a launcher started; more than max_ranks ranks (0: no limit) is a usage
 * error. 0, or the exit code. */
int cbt_launch(cb_launch_t *l, const char *prog, int npus, int npus_set, int max_ranks);

/* One measuring rank of a subcommand (rank.c): cbt_rank_main is the rank
 * function every subcommand gives cb_launch_run, with a cbt_rank_job_t as its
 * argument. It places the rank (place(arg, rank) when set and it returns 1,
 * else pinned to its local rank's CPU as "collbench TOOL"), joins the
 * communicator (a failure: one line, the exit code of cbt_exit_of), runs
 * body, and destroys the communicator; body aborts it first where the peers
 * must learn of a failure. Returns body's code. */
typedef struct {
    const char *tool; /* "assess", "topo", "bw" */
    int (*body)(void *arg, coll_comm_t comm, int rank, int nranks);
    int (*place)(void *arg, int rank); /* optional */
    void *arg;
} cbt_rank_job_t;
int cbt_rank_main(void *job, const cb_launch_t *l, int rank, int nranks, const coll_unique_id_t *id);
/* Start (or join) the ranks l names, each running cbt_rank_main(job); the exit code. */
int cbt_rank_run(cb_launch_t *l, cbt_rank_job_t *job);

/* CPUs this process may run on, one per physical core first (lowest CPU id of each
 * core), then the remaining SMT siblings. Returns how many were written; *ncores
 * (optional) receives the number of distinct physical cores. */
int cbt_cpu_list(int *cpus, int max, int *ncores);
/* Physical core key (package << 16 | core id) of a CPU, or the CPU id if unknown. */
long cbt_cpu_core_key(int cpu);
int cbt_pin_self(int cpu);

/* ascend-dmi device ids on a CPU machine (dev.c): device N = NUMA node N,
 * card N = socket (package) N. */
#define CBT_DEV_MAX 256
#define CBT_DEV_MASK_WORDS 16
typedef struct {
    int card, id;                                    /* -m card, and the id */
    cpu_set_t cpus;                                  /* its CPUs */
    unsigned long long nodemask[CBT_DEV_MASK_WORDS]; /* its NUMA nodes (memory) */
} cbt_dev_t;
/* 0, or -1 with "device 1 does not exist: this machine has NUMA node(s) 0" in err. */
int cbt_dev_lookup(int card, int id, cbt_dev_t *out, char *err, size_t errlen);
/* Pin the calling thread to the device's CPUs and its allocations to its nodes. */
int cbt_dev_bind(const cbt_dev_t *d, char *err, size_t errlen);
/* "-m device|card" value: 0 device, 1 card, -1 after printing the usage error. */
int cbt_parse_devmode(const char *tool, const char *val);

/* MemAvailable of /proc/meminfo in bytes; 0 when unknown. */
unsigned long long cbt_mem_available(void);
void cbt_cpu_model(char *buf, size_t n);
/* Nominal core clock in MHz: /sys cpufreq cpuinfo_max_freq, else /proc/cpuinfo
 * 'cpu MHz'. Returns 0 when unknown; *source names where it came from. */
double cbt_cpu_mhz(const char **source);

/* Output alike across the subcommands (out.c). The rule under and over
 * ascend-dmi's tables. */
extern const char CBT_RULE[];
/* JSON string literal (quoted, escaped). */
void cbt_json_str(FILE *f, const char *s);
/* A JSON number with its separator before it: "null" when v < 0 (not measured). */
void cbt_json_num(FILE *f, const char *sep, double v);
/* n x n JSON array of arrays of cell(arg, row, column) (null when < 0). */
void cbt_json_matrix(FILE *f, int n, double (*cell)(const void *arg, int i, int j), const void *arg);
/* ascend-dmi's bandwidth matrix on stdout: TITLE, "Size(Bytes): S  Execute
 * Times: ET", a rule, the "src\dst" header of column numbers, row i: i and
 * cell(arg, i, j) as %12.6f ("-" when < 0), a rule. */
void cbt_print_matrix(const char *title, unsigned long long size, long long et, int n,
                      double (*cell)(const void *arg, int i, int j), const void *arg);
/* An n x n row-major matrix as cell() for the two above: cbt_dense_cell(&d, i, j) = d.m[i * n + j]. */
typedef struct {
    const double *m;
    int n;
} cbt_dense_t;
double cbt_dense_cell(const void *dense, int i, int j);
/* "512 MiB", "1.5 GiB", "12 B" */
void cbt_fmt_bytes(char *buf, size_t n, unsigned long long bytes);

/* Subcommands. argv[0] is the subcommand name. */
int cbt_flops_main(int argc, char **argv);
int cbt_bw_main(int argc, char **argv);
int cbt_net_main(int argc, char **argv);
int cbt_sim_main(int argc, char **argv); /* sim/sim.c */

#endif
