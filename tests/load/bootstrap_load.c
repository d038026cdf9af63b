/*
 * bootstrap_load.c - the store side of the init exchange of N ranks on H hosts,
 * replayed in one process through the real server and the real client calls:
 *
 *   every rank r: connect, GATHER its 296-byte peer record into slot r of
 *                 "c<nonce>/peers" (n = N), close;
 *                 connect, GET wait 0 of "c<nonce>/!probe" (a job-failure probe:
 *                 must answer TIMEOUT), close;
 *   the root:     GET of the whole table (waiting), check every record, DEL.
 *
 * Ranks run from a pool of threads (-j, default 8), each doing its share one
 * rank after the other, so only a few sockets are open at once. The store sees
 * 2N + 1 connections. Prints one line:
 *   bootstrap_load N=<n> hosts=<h> time_s=<t> store_peak_rss_mib=<m> store_bytes=<b>
 * store_peak_rss_mib is the process's VmHWM: an upper bound of the store's (the
 * clients share the process). Exit 0 on success, 1 on a failure, 2 on bad
 * arguments.
 *
 * Loopback ports: each connection leaves a TIME_WAIT on the client side (the
 * client closes first), 2N + 1 of them per run against ~28K ephemeral ports
 * (32768-60999). Linux reuses a TIME_WAIT port for a new connection after 1 s
 * when net.ipv4.tcp_tw_reuse is 1 or 2 (2, the default, allows it on loopback
 * only), and drops TIME_WAITs beyond tcp_max_tw_buckets; checked with three
 * N=32768 runs back to back (197K connections in ~20 s): no connect failed.
 * Were ports to run out, coll_store_connect retries with back-off (slower, not
 * a failure); binding clients to other 127.x source addresses would be the fix.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/log.h"

#define REC_BYTES 296
#define MAX_RANKS (COLL_STORE_MAX_VALUE / REC_BYTES) /* the table is one value */
#define MAX_THREADS 64
#define TIMEOUT_S 60.0

/* A plausible peer record: what a rank publishes for the others. */
typedef struct {
    uint32_t magic, rank, nranks, host_id, pid, local_rank;
    uint16_t family, port;
    uint8_t addr[16];
    char hostname[64];
    uint8_t caps[188]; /* transport capabilities, shm name, ... */
} record_t;
_Static_assert(sizeof(record_t) == REC_BYTES, "peer record is 296 bytes");

typedef struct {
    coll_id_info_t info;
    int n, hosts, nthreads;
    char key[64], probe[64];
    atomic_int failed;
    char why[512];
    pthread_mutex_t lock;
} load_t;

typedef struct {
    load_t *l;
    int tid;
} worker_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int host_of(const load_t *l, int r) { return (int)((int64_t)r * l->hosts / l->n); }

static void make_record(const load_t *l, int r, record_t *rec)
{
    memset(rec, 0, sizeof *rec);
    int h = host_of(l, r);
    rec->magic = 0x52454550u; /* "PEER" */
    rec->rank = (uint32_t)r;
    rec->nranks = (uint32_t)l->n;
    rec->host_id = (uint32_t)h;
    rec->pid = (uint32_t)(100000 + r);
    rec->local_rank = (uint32_t)(r - (int)(((int64_t)h * l->n + l->hosts - 1) / l->hosts));
    rec->family = 2;
    rec->port = (uint16_t)(20000 + r % 40000);
    rec->addr[0] = 10, rec->addr[1] = (uint8_t)(h >> 16), rec->addr[2] = (uint8_t)(h >> 8);
    rec->addr[3] = (uint8_t)h;
    snprintf(rec->hostname, sizeof rec->hostname, "node%d", h);
    for (size_t i = 0; i < sizeof rec->caps; i++)
        rec->caps[i] = (uint8_t)(r * 7 + i);
}

static void fail(load_t *l, const char *what, int r)
{
    pthread_mutex_lock(&l->lock);
    if (!atomic_load(&l->failed))
        snprintf(l->why, sizeof l->why, "rank %d: %s: %s", r, what, coll_last_error());
    atomic_store(&l->failed, 1);
    pthread_mutex_unlock(&l->lock);
}

static int one_rank(load_t *l, int r)
{
    coll_store_t *c = NULL;
    record_t rec;
    make_record(l, r, &rec);
    if (coll_store_connect(&l->info, TIMEOUT_S, &c) != COLL_SUCCESS)
        return fail(l, "connect", r), -1;
    coll_status_t st = coll_store_gather(c, l->key, (uint32_t)l->n, (uint32_t)r, &rec, sizeof rec);
    coll_store_close(c);
    if (st != COLL_SUCCESS)
        return fail(l, "gather", r), -1;
    /* the failure probe of a rank waiting for the tree */
    if (coll_store_connect(&l->info, TIMEOUT_S, &c) != COLL_SUCCESS)
        return fail(l, "connect for the probe", r), -1;
    void *v = NULL;
    size_t len = 0;
    st = coll_store_try_get(c, l->probe, &v, &len);
    coll_store_close(c);
    if (st != COLL_ERR_TIMEOUT) {
        free(v);
        coll_error(COLL_ERR_INTERNAL, COLL_SUB_BOOTSTRAP, "probe answered %s, not TIMEOUT", coll_strerror(st));
        return fail(l, "probe", r), -1;
    }
    return 0;
}

static void *worker(void *arg)
{
    worker_t *w = arg;
    load_t *l = w->l;
    int per = (l->n + l->nthreads - 1) / l->nthreads;
    int lo = w->tid * per, hi = lo + per < l->n ? lo + per : l->n;
    for (int r = lo; r < hi && !atomic_load(&l->failed); r++)
        if (one_rank(l, r) != 0)
            break;
    return NULL;
}

/* The root: the whole table once, every record at its index, then DEL. */
static void *root(void *arg)
{
    load_t *l = arg;
    coll_store_t *c = NULL;
    void *v = NULL;
    size_t len = 0;
    if (coll_store_connect(&l->info, TIMEOUT_S, &c) != COLL_SUCCESS)
        return fail(l, "root connect", 0), NULL;
    if (coll_store_get(c, l->key, TIMEOUT_S, &v, &len) != COLL_SUCCESS) {
        coll_store_close(c);
        return fail(l, "root GET of the table", 0), NULL;
    }
    if (len != (size_t)l->n * REC_BYTES) {
        coll_error(COLL_ERR_INTERNAL, COLL_SUB_BOOTSTRAP, "table of %zu bytes, want %zu", len,
                   (size_t)l->n * REC_BYTES);
        fail(l, "root", 0);
    }
    for (int r = 0; r < l->n && !atomic_load(&l->failed); r++) {
        record_t want;
        make_record(l, r, &want);
        if (memcmp((uint8_t *)v + (size_t)r * REC_BYTES, &want, REC_BYTES) != 0) {
            coll_error(COLL_ERR_INTERNAL, COLL_SUB_BOOTSTRAP, "record %d of the table is wrong", r);
            fail(l, "root check", 0);
        }
    }
    free(v);
    if (coll_store_del(c, l->key) != COLL_SUCCESS)
        fail(l, "root DEL", 0);
    coll_store_close(c);
    return NULL;
}

static double vm_hwm_mib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb / 1024.0;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "bootstrap_load: %s '%s': must be an integer in %ld..%ld\n", opt, s, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: bootstrap_load -n RANKS -H HOSTS [-j THREADS]\n"
            "  RANKS 1..%d (the table of 296-byte records is one value of at most "
            "16 MiB), HOSTS 1..RANKS, THREADS 1..%d (default 8)\n",
            (int)MAX_RANKS, MAX_THREADS);
}

int main(int argc, char **argv)
{
    static load_t l;
    l.n = -1, l.hosts = -1, l.nthreads = 8;
    int opt;
    const char *hs = NULL;
    while ((opt = getopt(argc, argv, "n:H:j:h")) != -1) {
        if (opt == 'n' && parse_int("-n", optarg, 1, (long)MAX_RANKS, &l.n) != 0)
            return 2;
        if (opt == 'H')
            hs = optarg; /* its range depends on -n */
        if (opt == 'j' && parse_int("-j", optarg, 1, MAX_THREADS, &l.nthreads) != 0)
            return 2;
        if (opt == 'h' || opt == '?')
            return usage(), opt == 'h' ? 0 : 2;
    }
    if (optind < argc || l.n < 0 || !hs) {
        fprintf(stderr, "bootstrap_load: %s\n", optind < argc ? "unexpected argument" : "-n and -H are required");
        return usage(), 2;
    }
    if (parse_int("-H", hs, 1, l.n, &l.hosts) != 0)
        return 2;
    if (l.nthreads > l.n)
        l.nthreads = l.n;
    pthread_mutex_init(&l.lock, NULL);

    uint8_t secret[COLL_SECRET_BYTES];
    uint64_t nonce = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
    coll_sha256(&nonce, sizeof nonce, secret);
    coll_store_server_t *srv = NULL;
    if (coll_store_server_start("127.0.0.1", 0, secret, &srv, &l.info) != COLL_SUCCESS) {
        fprintf(stderr, "bootstrap_load: cannot start the store: %s\n", coll_last_error());
        return 1;
    }
    snprintf(l.key, sizeof l.key, "c%016llx/peers", (unsigned long long)nonce);
    snprintf(l.probe, sizeof l.probe, "c%016llx/!probe", (unsigned long long)nonce);

    double t0 = now_s();
    pthread_t rt, th[MAX_THREADS];
    worker_t w[MAX_THREADS];
    int started = 0, root_started = pthread_create(&rt, NULL, root, &l) == 0;
    for (; root_started && started < l.nthreads; started++) {
        w[started] = (worker_t){.l = &l, .tid = started};
        if (pthread_create(&th[started], NULL, worker, &w[started]) != 0)
            break;
    }
    if (!root_started || started < l.nthreads) {
        snprintf(l.why, sizeof l.why, "cannot start the client threads");
        atomic_store(&l.failed, 1);
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (root_started && started < l.nthreads) /* the root would wait for the table */
        pthread_cancel(rt);
    if (root_started)
        pthread_join(rt, NULL);
    double dt = now_s() - t0;
    uint64_t in = 0, out = 0, peak_conns = 0, peak_val = 0;
    coll_store_server_stats(srv, &in, &out, &peak_conns, &peak_val);
    coll_store_server_stop(srv);
    if (atomic_load(&l.failed)) {
        fprintf(stderr, "bootstrap_load: FAILED (N=%d hosts=%d): %s\n", l.n, l.hosts, l.why);
        return 1;
    }
    printf("bootstrap_load N=%d hosts=%d time_s=%.2f store_peak_rss_mib=%.1f store_bytes=%llu\n", l.n, l.hosts, dt,
           vm_hwm_mib(), (unsigned long long)(in + out));
    return 0;
}
