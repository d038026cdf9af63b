/*
 * driver.h - the one benchmark driver behind the ten hccl_test-compatible
 * executables (bin/<name>_test). Each collective is a small descriptor
 * (desc_<name>.c): its layout for a data size, how to run it, its bus-bandwidth
 * factor. Data generation and checking are shared (data.c); so are the CLI
 * (cli.c), the size loop and table (driver.c) and JSON/CSV output (output.c).
 *
 * Per-rank flow for one data size S (see driver.c):
 *   layout(S) -> init (send data, poisoned receive buffers) -> warm-up ->
 *   barrier -> timed loop -> [in-place: re-init + one more run] -> check ->
 *   all-reduce of {time, wrong} -> rank 0 prints the row.
 */
#ifndef CB_DRIVER_H
#define CB_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include "coll.h"

/* Exit codes of every test executable (documented in --help). */
enum {
    CB_EXIT_OK = 0,
    CB_EXIT_CHECK = 1,   /* a result check failed */
    CB_EXIT_USAGE = 2,   /* bad command line (or bad COLL_* variable) */
    CB_EXIT_SETUP = 3,   /* communicator / transport setup failed */
    CB_EXIT_TIMEOUT = 4, /* a collective timed out */
    CB_EXIT_ABORTED = 5, /* a peer aborted or died */
    CB_EXIT_MIN_BW = 6,  /* average bus bandwidth below --min-bw / COLL_TEST_MIN_BW */
};

#define CB_PERIOD 1021 /* data patterns repeat with this (prime) period */
#define CB_MAX_NPUS 1024
#define CB_MAX_NPUS_STANDALONE 256
#define CB_MAX_SIZES 256
#define COLL_NUM_DTYPES_MAX 16

int cb_default_npus(void); /* standalone -p default: online CPUs */

typedef enum { CB_FMT_COLLBENCH = 0, CB_FMT_HCCL, CB_FMT_PLAIN } cb_format_t;
typedef enum { CB_AGG_MAX = 0, CB_AGG_AVG, CB_AGG_MIN, CB_AGG_ALL } cb_agg_t;
typedef enum { CB_IP_OFF = 0, CB_IP_ONLY, CB_IP_BOTH } cb_inplace_t; /* --in-place 0|1|both */
typedef enum { CB_ACT_RUN = 0, CB_ACT_HELP, CB_ACT_VERSION, CB_ACT_PRINT_CONFIG, CB_ACT_LIST_ALGOS } cb_action_t;

/* Parsed command line. */
typedef struct {
    const char *prog; /* "all_reduce_test" */
    cb_action_t action;
    unsigned long long minbytes, maxbytes, stepbytes;
    int step_set;                  /* -i given */
    unsigned long long stepfactor; /* 0 = off */
    coll_op_t op;
    int op_set;
    coll_dtype_t dt;
    int root;
    int iters, warmup;
    int check;
    int npus, npus_set;
    int zero_copy;
    const char *algo;       /* --algo, NULL = not given */
    const char *json, *csv; /* output files (also from COLL_TEST_OUTPUT) */
    double timeout;         /* --timeout seconds, < 0 = not given */
    double hold_after;      /* --hold-after seconds, < 0 = not given (tests) */
    cb_agg_t agg;
    cb_format_t format; /* --format / COLL_TEST_FORMAT */
    int equal_counts;
    double min_bw;          /* --min-bw / COLL_TEST_MIN_BW GB/s, < 0 = no gate */
    const char *min_bw_src; /* "--min-bw" or "COLL_TEST_MIN_BW" */
    int stats;              /* --stats: per-iteration columns */
    cb_inplace_t in_place;
    /* -d/-o lists or all (dts[0] == dt, ops[0] == op), --sizes */
    coll_dtype_t dts[COLL_NUM_DTYPES_MAX];
    int ndt;
    coll_op_t ops[4];
    int nop;
    unsigned long long sizes[CB_MAX_SIZES];
    int nsizes;            /* 0: the -b/-e sweep */
    double duration;       /* --duration SEC, < 0 = off */
    long long cycles;      /* --cycles N, < 0 = off, 0 = until SIGINT/SIGTERM */
    int off_cache;         /* --off-cache: rotate buffer sets beyond the LLC */
    char command[1024];    /* argv joined, for result headers */
    int plant_rank;        /* COLL_TEST_PLANT: this rank corrupts what it checks (-1: none) */
    long long plant_index; /* ... at this element */
} cb_opts_t;

typedef struct cb_desc cb_desc_t;

/* Pattern generator shared by init and check (data.c). */
typedef struct {
    coll_dtype_t dt;
    size_t esize;
    int nranks;
    int mode; /* CB_MODE_* */
    coll_op_t op;
    long long m, lo;     /* values lo .. lo+m-1 (sum/any modes) */
    int t;               /* prod: at most t factors of 2 per element */
    int exact;           /* expectation exact and representable */
    void *red;           /* typed reduced pattern (CB_PERIOD elements) */
    void *tmp;           /* scratch typed pattern */
    void *poison;        /* typed poison pattern */
    unsigned char *bidx; /* blocks (non-reducing): index pattern, CB_PERIOD values 0..m-1 */
    void *bval;          /* blocks: typed value lo + v for v = 0..m-1 */
} cb_data_t;

/* Per-rank state for the current data size. */
typedef struct {
    const cb_desc_t *desc;
    const cb_opts_t *opts;
    coll_comm_t comm;
    int rank, nranks, root;
    coll_dtype_t dt;
    coll_op_t op;
    size_t esize;
    int equal_counts;
    cb_data_t data;
    /* layout for the current size (elements); arrays have nranks entries */
    size_t bytes;                                  /* data_size after rounding */
    size_t send_elems, recv_elems;                 /* of this rank */
    size_t *counts, *displs;                       /* v-tests: per-rank counts and prefix sums */
    size_t *scounts, *sdispls, *rcounts, *rdispls; /* alltoallv (this rank's) */
    void *sendbuf, *recvbuf;
    size_t send_cap, recv_cap; /* bytes allocated */
    /* first mismatch seen by this rank's check */
    int bad_seen;
    double *iter_us; /* 2 x min(iters, CB_ITER_MAX): end times, then stalled times */
    int in_place;    /* the group being timed uses the in-place form */
    int plant_due;   /* COLL_TEST_PLANT names this rank: the next comparison changes an element first */
    /* --off-cache: nsets buffer sets carved from pool, used in turn */
    char *pool;
    size_t pool_cap, set_stride, set_recv_off;
    int nsets;
    /* over the sweep (every rank has the reduced figures) */
    uint64_t wrong_total;
    double busbw_sum;
    int nrows;
} cb_ctx_t;

#define CB_F_REDUCE (1u << 0)   /* takes -o */
#define CB_F_ROOTED (1u << 1)   /* takes -r */
#define CB_F_VARIABLE (1u << 2) /* v-test: unequal counts unless --equal-counts */
#define CB_F_INPLACE (1u << 3)  /* runs in place: re-init and rerun before the check */

/* One collective. */
struct cb_desc {
    const char *name; /* executable is <name>_test */
    coll_kind_t kind;
    unsigned flags;
    double (*busbw_factor)(int nranks);
    /* Computes the layout for data size `bytes` into c (counts, send_elems,
     * recv_elems, c->bytes = size rounded to whole elements per rank). */
    void (*layout)(cb_ctx_t *c, size_t bytes);
    /* Fills the send buffer and poisons the receive buffer. */
    void (*init)(cb_ctx_t *c);
    coll_status_t (*run)(cb_ctx_t *c);
    /* Wrong elements on this rank (prints the first mismatch). */
    uint64_t (*check)(cb_ctx_t *c);
    /* The in-place form (NULL: none; include/coll.h says which exist): input
     * placed where the result goes, the call with aliased buffers, and the
     * check when the result is not in recvbuf (NULL: check). */
    void (*init_ip)(cb_ctx_t *c);
    coll_status_t (*run_ip)(cb_ctx_t *c);
    uint64_t (*check_ip)(cb_ctx_t *c);
};

/* The ten hccl_test descriptors and gather's (desc_<name>.c; gather has no
 * executable and is not in cb_desc_table), and a lookup by name. */
extern const cb_desc_t cb_desc_all_reduce, cb_desc_all_gather, cb_desc_all_gatherv, cb_desc_reduce_scatter,
    cb_desc_reduce_scatterv, cb_desc_reduce, cb_desc_broadcast, cb_desc_scatter, cb_desc_alltoall, cb_desc_alltoallv,
    cb_desc_gather;
extern const cb_desc_t *const cb_desc_table[]; /* NULL-terminated */
const cb_desc_t *cb_desc_find(const char *name);

/* cli.c. Returns 0 (opts filled; opts->action says what to do) or CB_EXIT_USAGE
 * with a one-line message in err ("<prog>: invalid -d 'fp33': allowed ..."). */
int cb_cli_parse(const cb_desc_t *d, int argc, char **argv, cb_opts_t *o, char *err, size_t errlen);
void cb_cli_usage(const cb_desc_t *d, FILE *out);
/* "<prog>: " + the formatted message into err; returns CB_EXIT_USAGE (cli.c and cli_lists.c). */
int cb_cli_vfail(const char *prog, char *err, size_t errlen, const char *fmt, va_list ap);
/* Validation that needs the rank count (known before any process starts). */
int cb_cli_check_ranks(const cb_opts_t *o, int nranks, char *err, size_t errlen);
/* cli_lists.c: -d/-o lists and all, --sizes, --duration, --cycles,
 * --off-cache (c = the option; returns 0 or CB_EXIT_USAGE with err set). */
int cb_cli_list_opt(const cb_desc_t *d, int c, const char *arg, cb_opts_t *o, char *err, size_t errlen);
void cb_cli_list_defaults(cb_opts_t *o);
/* After parsing: --sizes sets min/max, conflicts. */
int cb_cli_list_check(cb_opts_t *o, char *err, size_t errlen);
enum { CB_OPT_SIZES = 512, CB_OPT_DURATION, CB_OPT_CYCLES, CB_OPT_OFF_CACHE };
/* Next size of the sweep after s (0 = done). */
int cb_next_size(const cb_opts_t *o, unsigned long long s, unsigned long long *next);

/* agree.c: 0 when every rank was given the same run-shaping options (one
 * allreduce), else CB_EXIT_USAGE after a line naming this rank's command. */
int cb_agree_opts(cb_ctx_t *c);

/* driver.c: main of every test executable. */
int cb_main(const cb_desc_t *d, int argc, char **argv);
/* One call of the collective in the form being timed (c->in_place). */
coll_status_t cb_run(cb_ctx_t *c);

/* The six per-rank arrays of a v-collective (counts, displs, scounts,
 * sdispls, rcounts, rdispls), n each, from one block a of CB_CTX_ARRAYS x n. */
#define CB_CTX_ARRAYS 6
void cb_ctx_set_arrays(cb_ctx_t *c, size_t *a, size_t n);

/* Common layout helpers (desc_common.c). */
double cb_busbw_one(int n);
double cb_busbw_nm1(int n);
double cb_busbw_allreduce(int n);
/* Per-rank counts of `total` elements: equal (total rounded down to a multiple
 * of n, returned) or the unequal scheme (see cb_cli_usage). */
size_t cb_split_counts(size_t total, int n, int equal, size_t *counts, size_t *displs);
/* Which rank gets no data in the unequal scheme (-1 if none). */
int cb_zero_rank(int n);
/* The usual init: the send buffer holds this rank's own pattern, the receive
 * buffer poison (all-reduce, reduce, the gather and reduce-scatter families). */
void cb_seed_init(cb_ctx_t *c);
/* Every rank sends and receives the whole vector of `bytes` (all-reduce, reduce). */
void cb_layout_whole(cb_ctx_t *c, size_t bytes);
/* Shared checks of the gather, reduce-scatter and all-to-all families. */
uint64_t cb_gather_check(cb_ctx_t *c);
uint64_t cb_rs_check(cb_ctx_t *c);
void cb_a2a_init(cb_ctx_t *c);
uint64_t cb_a2a_check(cb_ctx_t *c);
size_t cb_a2a_layout(cb_ctx_t *c, size_t total, int equal);

/* data.c */
enum { CB_MODE_ANY = 0, CB_MODE_SUM, CB_MODE_PROD, CB_MODE_MAXMIN };
int cb_data_init(cb_data_t *d, coll_dtype_t dt, int reducing, coll_op_t op, int nranks);
void cb_data_free(cb_data_t *d);
/* Typed pattern of CB_PERIOD elements for `seed` into out. */
void cb_pattern(const cb_data_t *d, int seed, void *out);
/* dst[j] = pat[(start + j) % CB_PERIOD] for j < n. */
void cb_fill(void *dst, size_t n, const void *pat, size_t esize, size_t start);
/* Fill n elements with pattern `seed` from index start. */
void cb_fill_seed(cb_data_t *d, void *dst, size_t n, int seed, size_t start);
/* Poison n elements (a pattern no rank sends). */
void cb_poison(cb_data_t *d, void *dst, size_t n);
/* Compare n elements of buf with pattern pat from start; returns the number
 * wrong; the first one (index base + j) is printed once per size per rank. */
uint64_t cb_compare(cb_ctx_t *c, const void *buf, size_t n, const void *pat, size_t start, size_t base);
uint64_t cb_compare_seed(cb_ctx_t *c, const void *buf, size_t n, int seed, size_t start, size_t base);
double cb_elem_to_double(coll_dtype_t dt, const void *p);
/* The block from rank `from` to rank `to` (scatter, all-to-all; non-reducing
 * data only): n elements filled / checked in O(n), with no per-block set-up
 * (N^2 blocks). Blocks sent by one rank, or received by one, all differ. */
void cb_fill_block(const cb_data_t *d, void *dst, size_t n, int from, int to);
uint64_t cb_compare_block(cb_ctx_t *c, const void *buf, size_t n, int from, int to, size_t base);
/* Seeds: per-rank data, per-block data (scatter, alltoall) and poison. */
#define CB_SEED_RANK(r) (r)
#define CB_SEED_BLOCKS 1000003 /* the index pattern every block is a shift of (data.c) */
#define CB_SEED_POISON 999983

/* Per-iteration times of one size over iterations and ranks (stats.c). */
#define CB_ITER_MAX 4096 /* iterations per rank kept for the statistics */
typedef struct {
    double min, p50, p99, max; /* us */
    int straggler;             /* rank that entered last most often, -1 none */
    int late, counted;         /* iterations it was the late one / with a late one */
} cb_iter_stats_t;

/* What the run itself cost (stats.c): this rank's, then reduced over ranks. */
typedef struct {
    double init_s;       /* communicator init, max over ranks */
    double peak_rss_mib; /* max over ranks */
    double shm_bytes;    /* /dev/shm segments of the communicator, all hosts */
    double sockets;      /* open sockets, sum over ranks */
} cb_cost_t;

/* output.c */
typedef struct {
    unsigned long long bytes, count;
    double tmin, tavg, tmax; /* us */
    cb_iter_stats_t it;      /* it.counted < 0: not measured */
    double t;                /* the table's time (--time-agg) */
    int in_place;
    coll_dtype_t dt;
    coll_op_t op;
    double algbw, busbw; /* GB/s */
    uint64_t wrong;
    const char *check; /* "success" "failed" "NULL" */
    char algo[48];
} cb_row_t;

typedef struct {
    const cb_desc_t *desc;
    const cb_opts_t *opts;
    const char *launcher;
    char start_time[32];
    int nranks, nhosts;
    char (*hosts)[64];   /* [nhosts] */
    int *ranks_per_host; /* [nhosts] */
    int *rank_host;      /* [nranks] index into hosts, NULL if not gathered */
    cb_cost_t cost;
    int cost_known;
    int local_size; /* of rank 0's host */
    cb_row_t *rows;
    size_t nrows, cap;
    int exit_code;
    char error[512];
} cb_results_t;

int cb_results_add(cb_results_t *r, const cb_row_t *row);
/* "rank@host" of a straggler (or "-") into out. */
void cb_straggler_name(const cb_results_t *r, int rank, char *out, size_t len);
/* Writes the requested files (atomically); returns 0 or -1 (message on stderr). */
int cb_results_write(const cb_results_t *r);
void cb_results_free(cb_results_t *r);

/* stats.c. cb_iter_reduce: every rank passes 2n values, its n iteration end
 * times (us from the barrier's exit) then the time it was stalled in each;
 * rank 0 gets the statistics (others: st->counted = -1). Collective. */
coll_status_t cb_iter_reduce(coll_comm_t comm, int rank, int nranks, const double *t, int n, cb_iter_stats_t *st);
/* Statistics of nranks x 2n values (rank-major, as above); pure. */
void cb_iter_stats(const double *all, int nranks, int n, cb_iter_stats_t *st);
/* This rank's cost; then cb_cost_reduce over ranks (collective). */
void cb_cost_local(cb_cost_t *c, double init_s, int rank, int local_rank);
coll_status_t cb_cost_reduce(coll_comm_t comm, cb_cost_t *c);

/* table.c: the table on stdout (rank 0). */
void cb_table_header(const cb_opts_t *o);
/* ip: the in-place row beside row (--in-place both), else NULL. */
void cb_table_row(const cb_opts_t *o, const cb_results_t *res, const cb_row_t *row, const cb_row_t *ip);
/* The footer (collbench format only); avg_busbw < 0 = no rows. */
void cb_table_footer(const cb_opts_t *o, const cb_results_t *res, uint64_t wrong, double avg_busbw);

/* stall.c: a watcher thread that notes when this process did not run. */
int cb_stall_start(void);
void cb_stall_stop(void);
void cb_stall_charge(double t0, const double *end, int n, double *stall);

/* driver.c / sweep.c */
/* One data size (all its groups), row printed by rank 0: 0 or an exit code >= 3. */
int cb_run_size(cb_ctx_t *c, cb_results_t *res, size_t bytes, int *any_failed);
/* A failed call: message, abort, the exit code (recorded in res). */
int cb_fail_call(cb_ctx_t *c, cb_results_t *res, const char *what, coll_status_t st);
/* sweep.c: every pass, table and size of the launch. */
int cb_sweep(cb_ctx_t *c, cb_results_t *res, int *any_failed);
size_t cb_llc_bytes(void);
/* --off-cache: buffer set i (mod the sets) in c->sendbuf / c->recvbuf. */
void cb_use_set(cb_ctx_t *c, int i);

#endif
