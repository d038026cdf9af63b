/*
 * hosts.c - `collbench bw -t hosts`: what the hosts' cores push through
 * TCP when every rank of every host streams at once.
 *
 * Every host runs L ranks (the same L on every host); local rank l of host h
 * exchanges -s bytes with coll_sendrecv, sending to local rank l of host h + 1
 * and receiving from local rank l of host h - 1 (a shift by one host, through
 * a communicator split by local rank: one rank per host), all H x L ranks at
 * once, -et times after a warm-up. So each host sends L streams and receives
 * L streams, as the ranks of a collective across hosts do, through libcoll's
 * own TCP path (its progress, polling and waits). Reported: the rate each
 * host sent (H x L x -s x -et / the slowest rank's time, / H), and the sum.
 *
 * --calibration-out FILE writes net_cpu_gbps (docs/sim-calibration.md): the
 * bytes all hosts sent per second / the cores of the machines they ran on.
 * Machines are told apart by the kernel's boot id: namespace hosts on one
 * machine share its cores (net_cpu_gbps = sum / the machine's cores, which
 * the sim's cores_per_host = cores / H turns back into the sum / H per host);
 * separate machines each bring their own. It is a CPU figure: run it where no
 * link limits the streams (no tc rate; the file's net_gbps, if any, is
 * compared and a run that reached 90-105% of it is flagged in the file's
 * comment). Scale: H x L ranks, each one connection out and one in; memory
 * 2 x -s per rank; the communicator split costs one allgather.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bw.h"
#include "../calib.h"
#include "../cb.h"
#include "../../common/fnv.h"
#include "../../launch/launch.h"

static const char *TOOL = "bw";

typedef struct {
    const cbt_bw_opts_t *bw;
} hosts_opts_t;

typedef struct {
    uint64_t boot;  /* hash of the kernel's boot id: the machine */
    uint64_t cores; /* physical cores this rank may use */
} rank_info_t;

#define TRY(call) \
    do { \
        coll_status_t st_ = (call); \
        if (st_ != COLL_SUCCESS) { \
            rc = cbt_error(TOOL, cbt_exit_of(st_), "rank %d: %s: %s: %s", rank, #call, coll_strerror(st_), \
                           coll_last_error()); \
            goto out; \
        } \
    } while (0)

static uint64_t boot_hash(void)
{
    char b[128] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(b, sizeof b, f))
            b[0] = 0;
        fclose(f);
    }
    return cb_fnv1a(CB_FNV_INIT, b, strcspn(b, "\n")); /* every rank of a machine gets the same */
}

static uint64_t pat(uint64_t i, uint64_t key)
{
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL ^ (key + 1) * 0xC2B2AE3D27D4EB4FULL;
    return x ^ (x >> 31);
}

/* The buffer's 8-byte words from key; the tail bytes stay as mapped (0). */
static void fill(unsigned char *p, size_t n, uint64_t key)
{
    for (size_t i = 0; i < n / 8; i++) {
        uint64_t w = pat(i, key);
        memcpy(p + i * 8, &w, 8);
    }
}

static int check(const unsigned char *p, size_t n, uint64_t key)
{
    for (size_t i = 0; i < n / 8; i++) {
        uint64_t w = pat(i, key);
        if (memcmp(p + i * 8, &w, 8))
            return 0;
    }
    return 1;
}

/* Machines (distinct boot ids) of the n ranks and the sum of their cores
 * (the first rank seen of each machine tells its cores). O(n^2) in ranks,
 * once: a calibration's few dozen. */
static void machines(const rank_info_t *ri, int n, int *nm, double *cores)
{
    *nm = 0;
    *cores = 0;
    for (int r = 0; r < n; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = ri[q].boot == ri[r].boot;
        if (!seen) {
            ++*nm;
            *cores += (double)ri[r].cores;
        }
    }
}

/* Rank 0's result: what was measured and where. */
typedef struct {
    int nhosts, ls, nm; /* hosts, ranks per host, machines */
    double cores;       /* of the machines */
    double per_exec;    /* seconds per execution */
    double sum_gbs;     /* every host's sends, GB/s */
    double host_gbs;    /* each host's */
} hosts_result_t;

static void print_result(const cbt_bw_opts_t *bw, const hosts_result_t *r)
{
    if (bw->json) {
        printf("{\"schema\": \"collbench-bw-hosts/1\", \"hosts\": %d, \"ranks_per_host\": %d, \"machines\": %d, "
               "\"cores\": %g, \"bytes\": %llu, \"execute_times\": %lld, \"elapsed_us\": %.3f, "
               "\"host_send_gbs\": %.6f, \"sum_send_gbs\": %.6f, \"net_cpu_gbps\": %.6f}\n",
               r->nhosts, r->ls, r->nm, r->cores, bw->size, bw->exec_times, r->per_exec * 1e6, r->host_gbs, r->sum_gbs,
               r->sum_gbs * 8 / r->cores);
    } else {
        if (!bw->quiet)
            printf("%d hosts x %d ranks, every rank sends to the next host and receives from the previous one at "
                   "once (libcoll); %d machine(s), %g cores\n",
                   r->nhosts, r->ls, r->nm, r->cores);
        cbt_bw_table_head("Bandwidth each host sends (GB/s)");
        cbt_bw_table_row(bw->size, bw->exec_times, r->host_gbs, r->per_exec * 1e6);
        cbt_bw_table_foot();
        if (!bw->quiet)
            printf("all hosts: %.3f GB/s sent (%.3f Gbit/s per core of the machines)\n", r->sum_gbs,
                   r->sum_gbs * 8 / r->cores);
    }
    fflush(stdout);
}

/* --calibration-out: net_cpu_gbps, every host's sends over the machines' cores. */
static int write_calibration(const cbt_bw_opts_t *bw, const hosts_result_t *r)
{
    double link = 0;
    char by[320];
    /* a rate at the link's (90..105% of net_gbps) suggests the link, not the cores, was the limit */
    int limited = !cbt_calib_get(bw->calib_out, "net_gbps", &link) && r->host_gbs * 8 >= 0.9 * link
        && r->host_gbs * 8 <= 1.05 * link;
    snprintf(by, sizeof by,
             "collbench bw -t hosts -s %llu: %d hosts x %d ranks, %.3f Gbit/s sent per host, %d machine(s), "
             "%g cores%s",
             bw->size, r->nhosts, r->ls, r->host_gbs * 8, r->nm, r->cores,
             limited ? "; WARNING: 90% of net_gbps or more, a link may have been the limit" : "");
    cbt_calib_kv_t kv[1] = {{"net_cpu_gbps", r->sum_gbs * 8 / r->cores}};
    return cbt_calib_write(TOOL, bw->calib_out, by, kv, 1);
}

/* The job's shape: ranks, hosts, my local rank and count; usage (exit 2) unless
 * 2 or more hosts have the same number of ranks each. */
static int hosts_shape(coll_comm_t comm, int rank, int *nranks, int *nhosts, int *lr, int *ls)
{
    int rc = CBT_EXIT_OK;
    TRY(coll_comm_size(comm, nranks));
    TRY(coll_comm_nhosts(comm, nhosts));
    TRY(coll_comm_local(comm, lr, ls));
    int64_t lsz[2] = {*ls, -*ls};
    TRY(coll_all_reduce(lsz, lsz, 2, COLL_INT64, COLL_MAX, comm));
    if (*nhosts < 2 || lsz[0] != -lsz[1]) {
        if (rank == 0)
            rc = cbt_usage_error(TOOL,
                                 "-t hosts needs 2 or more hosts with the same ranks on each (this run: %d host(s), "
                                 "%lld to %lld ranks per host)",
                                 *nhosts, (long long)-lsz[1], (long long)lsz[0]);
        else
            rc = CBT_EXIT_USAGE;
    }
out:
    return rc;
}

/* The ring of host leaders (sub): warm-up until every rank has streamed for
 * CBT_BW_WARMUP_S, then -et timed sendrecvs of n bytes to `to` from `from`;
 * v = {the slowest rank's seconds, 1 when any rank's data differs}. */
static int hosts_stream(coll_comm_t comm, coll_comm_t sub, const cbt_bw_opts_t *bw, unsigned char *src,
                        unsigned char *dst, int to, int from, uint64_t tag, int rank, double v[2])
{
    int rc = CBT_EXIT_OK;
    size_t n = (size_t)bw->size;
    double tw = cbt_now(), more = 1;
    while (more > 0) {
        TRY(coll_sendrecv(src, n, to, dst, n, from, COLL_UINT8, sub));
        more = cbt_now() - tw < CBT_BW_WARMUP_S;
        TRY(coll_all_reduce(&more, &more, 1, COLL_FP64, COLL_MAX, comm));
    }
    memset(dst, 0, n);
    TRY(coll_barrier(comm));
    double t0 = cbt_now();
    for (long long t = 0; t < bw->exec_times; t++)
        TRY(coll_sendrecv(src, n, to, dst, n, from, COLL_UINT8, sub));
    v[0] = cbt_now() - t0, v[1] = !check(dst, n, tag);
    TRY(coll_all_reduce(v, v, 2, COLL_FP64, COLL_MAX, comm));
out:
    return rc;
}

static int hosts_run(coll_comm_t comm, const hosts_opts_t *o, int rank)
{
    const cbt_bw_opts_t *bw = o->bw;
    size_t n = (size_t)bw->size;
    int rc, nranks = 0, nhosts = 0, lr = 0, ls = 1, sr = 0, sn = 0;
    coll_comm_t sub = NULL;
    unsigned char *src = MAP_FAILED, *dst = MAP_FAILED;
    rank_info_t *ri = NULL;
    if ((rc = hosts_shape(comm, rank, &nranks, &nhosts, &lr, &ls)) != CBT_EXIT_OK)
        goto out;
    TRY(coll_comm_split(comm, lr, rank, &sub)); /* one rank per host, host order of the leaders */
    TRY(coll_comm_rank(sub, &sr));
    TRY(coll_comm_size(sub, &sn));
    int to = (sr + 1) % sn, from = (sr + sn - 1) % sn;
    src = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    dst = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ri = calloc((size_t)nranks, sizeof *ri);
    if (src == MAP_FAILED || dst == MAP_FAILED || !ri) {
        rc = cbt_error(TOOL, CBT_EXIT_FAIL, "rank %d: out of memory for 2 x %zu bytes", rank, n);
        goto out;
    }
    int ncores = 0, cpus[CBT_MAX_CPUS];
    if (cbt_cpu_list(cpus, CBT_MAX_CPUS, &ncores) < 1 || ncores < 1)
        ncores = 1;
    rank_info_t me = {boot_hash(), (uint64_t)ncores};
    TRY(coll_all_gather(&me, ri, 2, COLL_UINT64, comm));
    fill(src, n, (uint64_t)lr << 32 | (uint64_t)sr);
    memset(dst, 0, n);
    double v[2];
    if ((rc = hosts_stream(comm, sub, bw, src, dst, to, from, (uint64_t)lr << 32 | (uint64_t)from, rank, v)))
        goto out;
    if (v[1] != 0) {
        rc = rank == 0 ? cbt_error(TOOL, CBT_EXIT_FAIL, "received data differs from what was sent") : CBT_EXIT_FAIL;
        goto out;
    }
    if (rank != 0)
        goto out;
    double el = v[0] > 0 ? v[0] : 1e-9;
    hosts_result_t res = {.nhosts = nhosts, .ls = ls, .per_exec = el / (double)bw->exec_times};
    res.sum_gbs = (double)n * (double)nranks * (double)bw->exec_times / el / 1e9; /* every host's sends */
    res.host_gbs = res.sum_gbs / nhosts;
    machines(ri, nranks, &res.nm, &res.cores);
    print_result(bw, &res);
    if (bw->calib_out)
        rc = write_calibration(bw, &res);
out:
    if (src != MAP_FAILED)
        munmap(src, n);
    if (dst != MAP_FAILED)
        munmap(dst, n);
    free(ri);
    if (sub)
        coll_comm_destroy(sub);
    return rc;
}

/* A failure other than bad usage (which every rank finds alike) aborts the peers. */
static int rank_body(void *arg, coll_comm_t comm, int rank, int nranks)
{
    int rc = hosts_run(comm, arg, rank);
    if (rc != CBT_EXIT_OK && rc != CBT_EXIT_USAGE)
        coll_comm_abort(comm);
    return rc;
}

int cbt_bw_hosts(const cbt_bw_opts_t *bw)
{
    hosts_opts_t o = {.bw = bw};
    if (bw->nextra > 0)
        return cbt_usage_error(TOOL, "unknown option '%s' for -t hosts (allowed: -s, -et, -fmt, -q, --calibration-out)",
                               bw->extra[0]);
    cb_launch_t l;
    int rc = cbt_launch(&l, "collbench bw", 2, 0, 0);
    if (rc != 0)
        return rc;
    if (l.kind == CB_LAUNCH_STANDALONE)
        return cbt_usage_error(TOOL,
                               "-t hosts needs ranks on 2 or more hosts, started by a launcher (torchrun-style "
                               "variables, mpirun, srun); standalone ranks share one host");
    cbt_rank_job_t job = {.tool = TOOL, .body = rank_body, .arg = &o};
    return cbt_rank_run(&l, &job);
}
