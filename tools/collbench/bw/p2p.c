/*
 * p2p.c - `collbench bw -t p2p` (ascend-dmi --bw -t p2p): bandwidth between
 * two ranks of libcoll through coll_send / coll_recv / coll_sendrecv.
 *
 * Launch (how the ranks come to exist):
 *   standalone      no launcher: -p N ranks forked here (default 2)
 *   --sp 2 / mpirun started by mpirun (or torchrun / srun); ascend-dmi's MPI mode
 *   --sp 0 / --sp 1 two independent processes, source and target, that meet
 *                   through a shared directory (spdir.c)
 * What is measured:
 *   --ds S --dd D   the seed's four tables: unidirectional S -> D, bidirectional
 *                   S <-> D, unidirectional D -> S, bidirectional D <-> S
 *   (neither)       every pair: unidirectional both ways and bidirectional, as
 *                   two matrices (GB/s)
 *   --sp 0/1        the pair source(rank 0)/target(rank 1); each end prints its
 *                   own direction, as ascend-dmi does
 * One measurement: a 1-byte handshake both ways, then -et executions of -s
 * bytes (unidirectional: coll_send / coll_recv and a 1-byte ack at the end;
 * bidirectional: coll_sendrecv), timed by the sender (bidirectional: the slower
 * end). Elapsed Time = that time / -et; Bandwidth = Size / Elapsed (decimal GB/s),
 * 2 x Size / Elapsed for bidirectional. Warm-up executions come first (at
 * least one; 0.5 s of them before a rank's first measurement, see WARMUP_S);
 * the receiver's buffer is cleared before and verified after.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "p2p.h"
#include "../calib.h"
#include "../cb.h"
#include "../../launch/launch.h"

static const char *TOOL = "bw";

/* Warm-up (bw.h, CBT_BW_WARMUP_S): each rank moves data for that long before
 * its first timed execution, in executions of at most WARMUP_MAX bytes. Only
 * the executions count, not the 1-byte exchange after each that says whether
 * to go on. Where that exchange costs far more than an execution (a small -s
 * sent eagerly, on cores busy with other work: the sender's execution takes
 * microseconds, each exchange waits for the peer to be scheduled) the
 * warm-up also ends after WARMUP_WALL_S of wall time in all: a pair at -s 64K
 * -et 2 took 15-20 s on the 2-core VM loaded by other work and 104 s with two
 * CPU hogs, 5 s with this bound; -s 1M is not affected (1 s). */
#define WARMUP_MAX (256ULL << 20)
#define WARMUP_S CBT_BW_WARMUP_S
#define WARMUP_WALL_S (10 * CBT_BW_WARMUP_S)

/* ------------------------------------------------------------ devices */

/* This process's device (--ds/--dd/-d), and why binding to it failed ("" when
 * it did not): a rank started by mpirun finds out on its own node, and the
 * settings exchange of cbt_p2p_run makes every rank exit 2 with it. */
static int g_mydev = -1;
static char g_deverr[512];
/* agree_settings refused the run on every rank alike (CB_LAUNCH_AGREED) */
static int g_agreed;

/* Look the device up and bind this thread (and the threads it starts, libcoll's
 * included) to its CPUs and memory. 0, or -1 with g_deverr set. */
int cbt_p2p_bind_dev(int card, int id)
{
    cbt_dev_t d;
    if (cbt_dev_lookup(card, id, &d, g_deverr, sizeof g_deverr) != 0
        || cbt_dev_bind(&d, g_deverr, sizeof g_deverr) != 0)
        return -1;
    g_mydev = id;
    return 0;
}

const char *cbt_p2p_dev_error(void) { return g_deverr; }

/* ------------------------------------------------------------ data pattern */

static uint64_t pattern_word(uint64_t i, int rank)
{
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)rank + 1) * 0xC2B2AE3D27D4EB4FULL;
    return x ^ (x >> 29);
}

static void pattern_fill(unsigned char *p, size_t n, int rank)
{
    size_t w = n / 8;
    uint64_t *q = (uint64_t *)(void *)p;
    for (size_t i = 0; i < w; i++)
        q[i] = pattern_word(i, rank);
    uint64_t last = pattern_word(w, rank);
    memcpy(p + w * 8, &last, n - w * 8);
}

static int pattern_ok(const unsigned char *p, size_t n, int rank)
{
    size_t w = n / 8;
    const uint64_t *q = (const uint64_t *)(const void *)p;
    for (size_t i = 0; i < w; i++)
        if (q[i] != pattern_word(i, rank))
            return 0;
    uint64_t last = pattern_word(w, rank);
    return memcmp(p + w * 8, &last, n - w * 8) == 0;
}

/* ------------------------------------------------------------ measurement */

typedef struct {
    coll_comm_t comm;
    int rank, nranks;
    unsigned char *src, *dst;
    size_t size;
    long long times;
    double busy_s; /* seconds this rank has spent moving data so far (warm-up) */
    double warm_s; /* seconds of wall time in warm-up loops so far */
} ctx_t;

#define TRY(call) CBT_TRY(TOOL, c->rank, "", NULL, call)

/* One execution of n bytes between me and peer. */
static coll_status_t exec_once(ctx_t *c, int s, int d, int bidi, size_t n)
{
    if (bidi) {
        int peer = c->rank == s ? d : s;
        return coll_sendrecv(c->src, n, peer, c->dst, n, peer, COLL_UINT8, c->comm);
    }
    return c->rank == s ? coll_send(c->src, n, COLL_UINT8, d, c->comm) : coll_recv(c->dst, n, COLL_UINT8, s, c->comm);
}

/* Every rank calls it (ranks outside the pair only join the final reduction). */
static int measure(ctx_t *c, int s, int d, int bidi, cbt_p2p_result_t *out)
{
    double v[2] = {0, 0}; /* elapsed seconds, data errors */
    if (c->rank == s || c->rank == d) {
        int peer = c->rank == s ? d : s;
        int receiver = bidi || c->rank == d;
        unsigned char b1 = 1, b2 = 0;
        if (receiver)
            memset(c->dst, 0, c->size);
        /* warm-up: executions of up to WARMUP_MAX bytes, at least one, until
         * both ends have moved data for WARMUP_S in this process (the first
         * measurement of a rank warms up, the later ones run one execution) */
        size_t w = c->size < WARMUP_MAX ? c->size : (size_t)WARMUP_MAX;
        for (unsigned char more = 1; more;) {
            double tw = cbt_now();
            TRY(exec_once(c, s, d, bidi, w));
            c->busy_s += cbt_now() - tw;
            unsigned char mine = c->busy_s < WARMUP_S && c->warm_s < WARMUP_WALL_S, theirs = 0;
            TRY(coll_sendrecv(&mine, 1, peer, &theirs, 1, peer, COLL_UINT8, c->comm));
            c->warm_s += cbt_now() - tw;
            more = mine || theirs;
        }
        TRY(coll_sendrecv(&b1, 1, peer, &b2, 1, peer, COLL_UINT8, c->comm));
        double t0 = cbt_now();
        for (long long t = 0; t < c->times; t++)
            TRY(exec_once(c, s, d, bidi, c->size));
        if (bidi)
            TRY(coll_sendrecv(&b1, 1, peer, &b2, 1, peer, COLL_UINT8, c->comm));
        else if (c->rank == d)
            TRY(coll_send(&b1, 1, COLL_UINT8, s, c->comm));
        else
            TRY(coll_recv(&b2, 1, COLL_UINT8, d, c->comm));
        double t1 = cbt_now();
        c->busy_s += t1 - t0;
        if (bidi || c->rank == s)
            v[0] = t1 - t0;
        if (receiver && !pattern_ok(c->dst, c->size, peer))
            v[1] = 1;
    }
    TRY(coll_all_reduce(v, v, 2, COLL_FP64, COLL_MAX, c->comm));
    double per = v[0] / (double)c->times;
    if (per <= 0)
        per = 1e-9;
    *out = (cbt_p2p_result_t){.src = s,
                              .dst = d,
                              .bidi = bidi,
                              .us = per * 1e6,
                              .gbs = (double)c->size * (bidi ? 2.0 : 1.0) / per / 1e9,
                              .ok = v[1] == 0};
    return CBT_EXIT_OK;
}

static void *map_buf(size_t n)
{
    size_t map = (n + 4095) & ~(size_t)4095;
    void *p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (map >= (2u << 20))
        madvise(p, map, MADV_HUGEPAGE);
#endif
    return p;
}

static void unmap_buf(void *p, size_t n)
{
    if (p)
        munmap(p, (n + 4095) & ~(size_t)4095);
}

/* "shm", "tcp" or "shm+tcp": from the topology (peers on my host use shm). */
static const char *transport_of(coll_comm_t comm, int nranks)
{
    int nhosts = 1, lr = 0, ls = 1;
    coll_comm_nhosts(comm, &nhosts);
    coll_comm_local(comm, &lr, &ls);
    if (nhosts == 1)
        return "shm";
    return ls > 1 ? "shm+tcp" : "tcp";
}

/* --calibration-out: the sim's extra time of a message between hosts
 * (net_step_us), from the bidirectional exchange of rank 0 and rank 1 on two
 * hosts, one -s message each way through coll_sendrecv, as one step of a
 * ring: its time less the message's transmission at the file's net_gbps and
 * less the file's net_us (both written before by `collbench net
 * --calibration-out`, net_us 0 when absent). It holds what a step costs
 * beyond the wire: TCP's ACK clocking behind the reverse data and waking the
 * receiving rank on its (maybe loaded) host. -s should be the pipelining
 * chunk of the ring algorithms (COLL_CHUNK); it becomes net_step_bytes.
 * Also probe_us and probe_gbps: what libcoll's init probe measured between
 * these two hosts (the leaders of hosts 0 and 1, as in every run across the
 * same hosts), which is what the real selection works from and so what the
 * sim's must be told (a tc tbf link lets the probe's 1 MiB through in its
 * bucket at veth speed: 2-3 GB/s on a 5 Gbit/s link; its 8-byte round trips
 * give the best, not the typical latency: 7-10 us where `net --lat` says
 * 9-45). Without a probe (one host, COLL_NET_PROBE=0) they are left out. */
static int write_calibration(const cbt_p2p_opts_t *o, const cbt_p2p_report_t *rep)
{
    const char *f = o->bw->calib_out;
    double gbps, lat = 0;
    if (rep->nranks != 2 || strcmp(rep->transport, "tcp"))
        return cbt_usage_error(TOOL,
                               "invalid --calibration-out with %d ranks over %s (allowed: 2 ranks on 2 hosts, tcp)",
                               rep->nranks, rep->transport);
    if (cbt_calib_get(f, "net_gbps", &gbps))
        return cbt_usage_error(TOOL,
                               "--calibration-out %s has no net_gbps: run collbench net HOST --calibration-out %s "
                               "first (p2p derives net_step_us from it)",
                               f, f);
    if (cbt_calib_get(f, "net_us", &lat))
        lat = 0;
    const cbt_p2p_result_t *x = NULL;
    for (int i = 0; i < rep->nres; i++)
        if (rep->res[i].bidi)
            x = &rep->res[i];
    if (!x)
        return cbt_error(TOOL, CBT_EXIT_FAIL, "no bidirectional measurement for --calibration-out");
    double wire = (double)o->bw->size * 8 / (gbps * 1e3), step = x->us - wire - lat;
    const coll_link_cost_t *pr = coll_tuning_tcp();
    int probed = !strcmp(coll_tuning_tcp_source(), "probe") && pr->beta_us_per_b > 0;
    double probe_gbps = probed ? 8.0 / (pr->beta_us_per_b * 1e3) : 0;
    char by[240];
    snprintf(by, sizeof by,
             "collbench bw -t p2p -s %llu: exchange %.1f us, transmission at net_gbps %.1f us, net_us %.1f; "
             "init probe %.1f us, %.2f Gbit/s",
             o->bw->size, x->us, wire, lat, probed ? pr->lat_us : 0, probe_gbps);
    cbt_calib_kv_t kv[4] = {{"net_step_us", step > 0 ? step : 0},
                            {"net_step_bytes", (double)o->bw->size},
                            {"probe_us", pr->lat_us},
                            {"probe_gbps", probe_gbps}};
    return cbt_calib_write(TOOL, f, by, kv, probed ? 4 : 2);
}

/* A verdict every rank reached alike from the same collective's result (its
 * message, if any, printed): the ranks meet once more, so that none goes on
 * to exit, abort or be killed while a peer is still inside that collective
 * (its exit code would become "aborted", 3). rc is returned whatever the
 * meeting gives: a peer that met us and then left is no failure. */
static int agreed_end(const ctx_t *c, int rc)
{
    fflush(stdout);
    fflush(stderr);
    g_agreed = coll_barrier(c->comm) == COLL_SUCCESS;
    return rc;
}

int cbt_p2p_agreed(void) { return g_agreed; }

/* Same -s / -et everywhere (the two ends of --sp 0/1 are started separately),
 * and enough memory on every host: everyone learns every problem from one
 * all-reduce (a second one could meet a peer that has already given up). st:
 * the rank table's all-gather, whose failure is reported here. ls: ranks on
 * this host. */
static int agree_settings(const ctx_t *c, const cbt_p2p_opts_t *o, int ls, coll_status_t st)
{
    unsigned long long need = 2ULL * c->size * (unsigned long long)ls, avail = cbt_mem_available();
    double nomem = g_deverr[0] ? 2 : avail && need > avail / 10 * 9 ? 1 : 0;
    /* MAX of each value and of its negation: the largest and the smallest */
    double mine[5] = {(double)c->size, (double)c->times, -(double)c->size, -(double)c->times, nomem}, agree[5];
    if (st == COLL_SUCCESS)
        st = coll_all_reduce(mine, agree, 5, COLL_FP64, COLL_MAX, c->comm);
    if (st != COLL_SUCCESS)
        return cbt_error(TOOL, cbt_exit_of(st), "rank %d: exchanging settings: %s: %s", c->rank, coll_strerror(st),
                         coll_last_error());
    if (agree[0] != -agree[2] || agree[1] != -agree[3])
        return agreed_end(c,
                          cbt_error(TOOL, CBT_EXIT_USAGE,
                                    "the two ends disagree on -s / -et (this one: -s %llu -et %lld; the largest "
                                    "seen: -s %.0f -et %.0f): start both with the same values",
                                    o->bw->size, o->bw->exec_times, agree[0], agree[1]));
    if (!agree[4])
        return CBT_EXIT_OK;
    int rc = CBT_EXIT_USAGE;
    if (nomem == 2) {
        rc = cbt_error(TOOL, CBT_EXIT_USAGE, "rank %d: %s", c->rank, g_deverr);
    } else if (nomem) {
        char a[32], b[32];
        cbt_fmt_bytes(a, sizeof a, need);
        cbt_fmt_bytes(b, sizeof b, avail);
        rc = cbt_error(TOOL, CBT_EXIT_USAGE,
                       "rank %d: -s %llu needs %s on this host (send + receive buffer for each of its %d "
                       "ranks) but only %s is available (MemAvailable, 90%% usable); use a smaller -s",
                       c->rank, o->bw->size, a, ls, b);
    }
    /* The ranks that found nothing wrong wait until the one that did has
     * said why: under mpirun the first rank to exit non-zero gets the
     * others killed, which could silence the only useful line. */
    return agreed_end(c, rc);
}

/* The send (filled) and receive buffers, on every rank or on none. */
static int map_buffers(ctx_t *c)
{
    c->src = map_buf(c->size);
    c->dst = map_buf(c->size);
    double nobuf = !c->src || !c->dst, anynobuf = 0;
    if (c->src)
        pattern_fill(c->src, c->size, c->rank);
    if (c->dst)
        memset(c->dst, 0, c->size);
    coll_status_t st = coll_all_reduce(&nobuf, &anynobuf, 1, COLL_FP64, COLL_MAX, c->comm);
    if (st != COLL_SUCCESS)
        return cbt_error(TOOL, cbt_exit_of(st), "rank %d: exchanging the buffers' state: %s: %s", c->rank,
                         coll_strerror(st), coll_last_error());
    if (anynobuf)
        return agreed_end(c,
                          cbt_error(TOOL, CBT_EXIT_FAIL, "rank %d: cannot map 2 x %zu bytes%s", c->rank, c->size,
                                    nobuf ? "" : " on a peer"));
    return CBT_EXIT_OK;
}

/* --ds/--dd: the source is rank 0, the target rank 1 (both directions,
 * one way and both ways); else every pair i < j: i->j, j->i, both ways. */
static int measure_all(ctx_t *c, const cbt_p2p_opts_t *o, cbt_p2p_result_t *res, int *nres)
{
    int rc = CBT_EXIT_OK, n = c->nranks;
    if (o->ds >= 0) {
        const int plan[4][3] = {{0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {1, 0, 1}};
        for (int i = 0; i < 4 && rc == CBT_EXIT_OK; i++)
            rc = measure(c, plan[i][0], plan[i][1], plan[i][2], &res[(*nres)++]);
        return rc;
    }
    for (int i = 0; i < n && rc == CBT_EXIT_OK; i++)
        for (int j = i + 1; j < n && rc == CBT_EXIT_OK; j++) {
            rc = measure(c, i, j, 0, &res[(*nres)++]);
            if (rc == CBT_EXIT_OK)
                rc = measure(c, j, i, 0, &res[(*nres)++]);
            if (rc == CBT_EXIT_OK)
                rc = measure(c, i, j, 1, &res[(*nres)++]);
        }
    return rc;
}

/* The tables (or JSON), --calibration-out, and the exit code of the check. */
static int report(const ctx_t *c, const cbt_p2p_opts_t *o, const cbt_p2p_report_t *rep)
{
    int rc = CBT_EXIT_OK, bad = 0;
    for (int i = 0; i < rep->nres; i++)
        bad |= !rep->res[i].ok;
    if (o->sp == 0 || o->sp == 1) {
        /* each end prints its own direction: the source tables 0-1, the target 2-3 */
        int first = c->rank == 0 ? 0 : 2;
        if (o->bw->json)
            cbt_p2p_print_json(rep, first, 2);
        else
            cbt_p2p_print_pair(rep, first, 2);
    } else if (c->rank == 0) {
        if (o->bw->json)
            cbt_p2p_print_json(rep, 0, rep->nres);
        else if (o->ds >= 0)
            cbt_p2p_print_pair(rep, 0, rep->nres);
        else
            cbt_p2p_print_matrix(rep);
    }
    fflush(stdout);
    if (o->bw->calib_out && c->rank == 0 && !bad)
        rc = write_calibration(o, rep);
    if (bad && (c->rank == 0 || o->sp == 0 || o->sp == 1))
        rc = cbt_error(TOOL, CBT_EXIT_FAIL, "received data differs from what was sent (see the check field)");
    else if (bad)
        rc = CBT_EXIT_FAIL;
    return bad ? agreed_end(c, rc) : rc; /* every rank saw the same check (measure's all-reduce) */
}

int cbt_p2p_run(coll_comm_t comm, const cbt_p2p_opts_t *o, const char *const *pods)
{
    ctx_t cc = {.comm = comm, .size = (size_t)o->bw->size, .times = o->bw->exec_times}, *c = &cc;
    TRY(coll_comm_rank(comm, &c->rank));
    TRY(coll_comm_size(comm, &c->nranks));
    int n = c->nranks, rc = CBT_EXIT_OK, lr = 0, ls = 1;
    TRY(coll_comm_local(comm, &lr, &ls));

    cbt_p2p_rank_t me = {.device = g_mydev >= 0 ? g_mydev : lr};
    if (gethostname(me.host, sizeof me.host - 1) != 0)
        snprintf(me.host, sizeof me.host, "unknown");
    cbt_p2p_rank_t *ranks = calloc((size_t)n, sizeof *ranks);
    char(*pod)[64] = calloc((size_t)n, sizeof *pod);
    cbt_p2p_result_t *res = calloc((size_t)n * (size_t)n * 2 + 4, sizeof *res);
    if (!ranks || !pod || !res) {
        free(ranks), free(pod), free(res);
        return cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
    }
    coll_status_t st = coll_all_gather(&me, ranks, sizeof me, COLL_UINT8, comm);
    if ((rc = agree_settings(c, o, ls, st)) != CBT_EXIT_OK)
        goto out;
    for (int r = 0; r < n; r++) {
        if (pods && pods[r])
            snprintf(pod[r], sizeof pod[r], "%s", pods[r]);
        else
            snprintf(pod[r], sizeof pod[r], "rank %d", r);
    }
    int nres = 0;
    if ((rc = map_buffers(c)) != CBT_EXIT_OK || (rc = measure_all(c, o, res, &nres)) != CBT_EXIT_OK)
        goto out;
    cbt_p2p_report_t rep = {.o = o,
                            .nranks = n,
                            .me = c->rank,
                            .ranks = ranks,
                            .pod = pod,
                            .res = res,
                            .nres = nres,
                            .transport = transport_of(comm, n)};
    rc = report(c, o, &rep);
out:
    unmap_buf(c->src, c->size);
    unmap_buf(c->dst, c->size);
    free(ranks);
    free(pod);
    free(res);
    return rc;
}
