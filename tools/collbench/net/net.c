/*
 * net.c - `collbench net`: perftest-style TCP bandwidth / latency test.
 *
 *   server:  collbench net [-p PORT] [--bind ADDR] [--timeout SEC] [--json]
 *   client:  collbench net HOST [-p PORT] [-s SIZE | -a] [-n ITERS | -D SEC] [-b] [-q N]
 *                          [--lat] [--json] [--connect-timeout SEC] [--retry SEC]
 *
 * The client's flags drive the test: they travel to the server in the handshake
 * (net.h) and both sides print the same table (ib_send_bw / ib_send_lat columns,
 * bandwidth in decimal GB/s). The server serves one client, then exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../calib.h"
#include "../cb.h"
#include "net.h"

static const char *TOOL = "net";
static const char *LINE = "---------------------------------------------------------------------------------------";

typedef struct {
    const char *host; /* NULL = server */
    int port;
    const char *bind_addr;
    double timeout; /* server: wait for a client (0 = forever) */
    double connect_timeout, retry;
    int json;
    const char *calib_out; /* client: --calibration-out FILE */
    int calib_cpu;         /* --calibration-cpu: the CPUs limit the stream, not the link */
    cbt_net_params_t p;
    int size_set, iters_set, set_mask; /* what the command line gave */
    uint8_t key[32];                   /* of COLL_SECRET / COLL_SECRET_FILE (auth.c) */
    int open;                          /* none set: the all-zero key */
} net_opts_t;

typedef struct {
    unsigned long long bytes, iters;
    double peak, avg, rate;
    cbt_net_lat_t lat;
} row_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collbench net [-p PORT] [--bind ADDR] [--timeout SEC] [--json]            (server)\n"
            "       collbench net HOST [-p PORT] [-s SIZE | -a] [-n ITERS | -D SEC] [-b] [-q N]\n"
            "                     [--lat] [--json] [--connect-timeout SEC] [--retry SEC]     (client)\n"
            "  -p, --port PORT         TCP port, 1..65535 (default 18515)\n"
            "  -s, --size SIZE         message size, 1..1G (default 65536; 2 with --lat)\n"
            "  -a, --all               sweep sizes 2 B .. 8 MiB, powers of 2\n"
            "  -n, --iters N           messages per connection, 1..100000000 (default 1000)\n"
            "  -D, --duration SEC      run each size for SEC seconds, 0.1..3600, instead of -n\n"
            "  -b, --bidirectional     both directions at once (bandwidths add up)\n"
            "  -q, --qp N              parallel connections, one thread each, 1..64 (default 1)\n"
            "  --lat                   ping-pong latency (t = round trip / 2)\n"
            "  --json, -fmt json       JSON on stdout instead of the table\n"
            "  --connect-timeout SEC   client: give up connecting after SEC, 0.1..600 (default 10)\n"
            "  --retry SEC             client: retry a refused connection for SEC, 0..600 (default 0)\n"
            "  --bind ADDR             server: listen on this address only (default: all, IPv6 and IPv4)\n"
            "  --timeout SEC           server: exit 4 if no client comes within SEC, 0..86400 (0 = wait)\n"
            "  --calibration-out FILE  client: set the link keys of a collbench sim calibration file\n"
            "                          (docs/sim-calibration.md): a bandwidth test writes net_gbps (the\n"
            "                          largest size's average, one direction), --lat writes net_us (the\n"
            "                          smallest size's typical one-way time) and net_overhead_us = 0\n"
            "  --calibration-cpu       with -b, when no link limits the stream (no tc rate, or both ends on\n"
            "                          one machine's cores): write net_cpu_gbps, both directions' sum / the\n"
            "                          cores, instead of net_gbps\n"
            "The client's flags drive the test; the server prints the same table.\n");
}

enum { SET_S = 1, SET_N = 2, SET_A = 4, SET_B = 8, SET_Q = 16, SET_D = 32, SET_LAT = 64 };

/* The options without a value; 0 if a is not one of them. */
static int flag_opt(net_opts_t *o, const char *a)
{
    if (!strcmp(a, "-a") || !strcmp(a, "--all"))
        o->p.all = 1, o->set_mask |= SET_A;
    else if (!strcmp(a, "-b") || !strcmp(a, "--bidirectional"))
        o->p.bidir = 1, o->set_mask |= SET_B;
    else if (!strcmp(a, "--lat"))
        o->p.lat = 1, o->set_mask |= SET_LAT;
    else if (!strcmp(a, "--json"))
        o->json = 1;
    else if (!strcmp(a, "--calibration-cpu"))
        o->calib_cpu = 1;
    else
        return 0;
    return 1;
}

#define VAL() \
    if (!(v = cbt_optval(TOOL, argc, argv, i))) \
    return -1

/* What is measured (-s, -n, -D, -q) and how it is printed (-fmt), argv[*i]
 * with its value (*i moved past it): 1 taken, 0 not one of these, -1 an error. */
static int test_opt(net_opts_t *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    long long ll;
    if (!strcmp(a, "-s") || !strcmp(a, "--size")) {
        VAL();
        if (cbt_parse_size(TOOL, a, v, 1, CBT_GIB, &o->p.size))
            return -1;
        o->set_mask |= SET_S;
    } else if (!strcmp(a, "-n") || !strcmp(a, "--iters")) {
        VAL();
        if (cbt_parse_ll(TOOL, a, v, 1, 100000000, &ll))
            return -1;
        o->p.iters = (unsigned long long)ll;
        o->set_mask |= SET_N;
    } else if (!strcmp(a, "-D") || !strcmp(a, "--duration")) {
        VAL();
        if (cbt_parse_double(TOOL, a, v, 0.1, 3600, "seconds", &o->p.duration))
            return -1;
        o->set_mask |= SET_D;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--qp")) {
        VAL();
        if (cbt_parse_ll(TOOL, a, v, 1, CBT_NET_MAXQ, &ll))
            return -1;
        o->p.nconn = (int)ll;
        o->set_mask |= SET_Q;
    } else if (!strcmp(a, "-fmt") || !strcmp(a, "--fmt") || !strcmp(a, "--format")) {
        VAL();
        if (strcmp(v, "json") && strcmp(v, "normal"))
            return cbt_usage_error(TOOL, "invalid %s '%s' (allowed: normal, json)", a, v), -1;
        o->json = !strcmp(v, "json");
    } else {
        return 0;
    }
    return 1;
}

/* Argument argv[*i] (with its value, *i moved past it): -1 on an error. */
static int parse_opt(net_opts_t *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    long long ll;
    int t;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        usage(stdout);
        exit(0);
    } else if (flag_opt(o, a)) {
        return 0;
    } else if ((t = test_opt(o, argc, argv, i)) != 0) {
        return t < 0 ? -1 : 0;
    } else if (!strcmp(a, "-p") || !strcmp(a, "--port")) {
        VAL();
        if (cbt_parse_ll(TOOL, a, v, 1, 65535, &ll))
            return -1;
        o->port = (int)ll;
    } else if (!strcmp(a, "--connect-timeout")) {
        VAL();
        if (cbt_parse_double(TOOL, a, v, 0.1, 600, "seconds", &o->connect_timeout))
            return -1;
    } else if (!strcmp(a, "--retry")) {
        VAL();
        if (cbt_parse_double(TOOL, a, v, 0, 600, "seconds", &o->retry))
            return -1;
    } else if (!strcmp(a, "--timeout")) {
        VAL();
        if (cbt_parse_double(TOOL, a, v, 0, 86400, "seconds", &o->timeout))
            return -1;
    } else if (!strcmp(a, "--bind")) {
        VAL();
        o->bind_addr = v;
    } else if (!strcmp(a, "--calibration-out")) {
        VAL();
        o->calib_out = v;
    } else if (a[0] == '-') {
        return cbt_usage_error(TOOL, "unknown option '%s' (see collbench net --help)", a), -1;
    } else if (!o->host) {
        o->host = a;
    } else {
        return cbt_usage_error(TOOL, "unexpected argument '%s' (one HOST at most)", a), -1;
    }
    return 0;
}
#undef VAL

/* The options together: combinations that do not go; the default size. */
static int check_args(net_opts_t *o)
{
    if ((o->set_mask & SET_A) && (o->set_mask & SET_S))
        return cbt_usage_error(TOOL, "-a and -s exclude each other (-a sweeps 2 B..8 MiB)"), -1;
    if ((o->set_mask & SET_D) && (o->set_mask & SET_N))
        return cbt_usage_error(TOOL, "-D and -n exclude each other"), -1;
    if (o->p.lat && o->p.bidir)
        return cbt_usage_error(TOOL, "invalid -b with --lat (latency is a ping-pong; allowed: bandwidth tests)"), -1;
    if (o->p.lat && o->p.nconn > 1)
        return cbt_usage_error(TOOL, "invalid -q %d with --lat (allowed: 1)", o->p.nconn), -1;
    if (o->host && o->bind_addr)
        return cbt_usage_error(TOOL, "--bind is a server option (the client connects to HOST)"), -1;
    if (o->calib_cpu && (!o->calib_out || !o->p.bidir || o->p.lat))
        return cbt_usage_error(TOOL,
                               "--calibration-cpu needs --calibration-out FILE and -b (a bidirectional bandwidth "
                               "test)"),
               -1;
    if (!o->host && o->calib_out)
        return cbt_usage_error(TOOL, "--calibration-out is a client option (the client drives the test)"), -1;
    if (o->host && o->timeout > 0)
        return cbt_usage_error(TOOL, "--timeout is a server option (client: --connect-timeout)"), -1;
    if (!(o->set_mask & SET_S))
        o->p.size = o->p.lat ? 2 : 65536;
    return 0;
}

static int parse_args(int argc, char **argv, net_opts_t *o)
{
    for (int i = 1; i < argc; i++)
        if (parse_opt(o, argc, argv, &i) != 0)
            return -1;
    return check_args(o);
}

static int sweep(const cbt_net_params_t *p, unsigned long long *sizes)
{
    if (!p->all) {
        sizes[0] = p->size;
        return 1;
    }
    int n = 0;
    for (unsigned long long s = CBT_NET_SWEEP_MIN; s <= CBT_NET_SWEEP_MAX; s *= 2)
        sizes[n++] = s;
    return n;
}

static void banner(const net_opts_t *o, const char *peer)
{
    const cbt_net_params_t *p = &o->p;
    printf("%s\n", LINE);
    printf("                    TCP Send %s Test (collbench net, %s)\n", p->lat ? "Latency" : "BW",
           o->host ? "client" : "server");
    printf(" Number of conns : %-6d         Transport type : TCP (TCP_NODELAY)\n", p->nconn);
    printf(" Direction       : %-14s Peer           : %s\n",
           p->lat         ? "ping-pong"
               : p->bidir ? "bidirectional"
                          : "unidirectional",
           peer);
    if (p->duration > 0)
        printf(" Duration        : %g s per size\n", p->duration);
    else
        printf(" Iterations      : %llu per connection\n", p->iters);
    if (p->all)
        printf(" Message sizes   : 2 B .. 8 MiB (powers of 2)\n");
    else
        printf(" Message size    : %llu\n", p->size);
    printf("%s\n", LINE);
    if (p->lat)
        printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
               "99%% percentile[usec]   99.9%% percentile[usec]\n");
    else
        printf(" #bytes     #iterations    BW peak[GB/s]    BW average[GB/s]   MsgRate[Mpps]\n");
    fflush(stdout);
}

static void print_row(const cbt_net_params_t *p, const row_t *r)
{
    if (p->lat)
        printf(" %-7llu %-10llu     %-7.2f        %-7.2f      %-7.2f          %-7.2f        %-7.2f          %-7.2f"
               "                 %-7.2f\n",
               r->bytes, r->lat.iters, r->lat.min, r->lat.max, r->lat.typical, r->lat.avg, r->lat.stdev, r->lat.p99,
               r->lat.p999);
    else
        printf(" %-7llu    %-10llu     %-9.4f        %-9.4f          %-9.6f\n", r->bytes, r->iters, r->peak, r->avg,
               r->rate);
    fflush(stdout);
}

static void print_json(const net_opts_t *o, const char *peer, const row_t *rows, int n)
{
    const cbt_net_params_t *p = &o->p;
    printf("{\"schema\": \"collbench-net/1\", \"role\": \"%s\", \"test\": \"%s\", \"direction\": \"%s\", "
           "\"connections\": %d, \"port\": %d, \"peer\": ",
           o->host ? "client" : "server", p->lat ? "lat" : "bw",
           p->lat         ? "pingpong"
               : p->bidir ? "bi"
                          : "uni",
           p->nconn, o->port);
    cbt_json_str(stdout, peer);
    printf(", \"duration_s\": %g, \"results\": [", p->duration);
    for (int i = 0; i < n; i++) {
        const row_t *r = &rows[i];
        if (p->lat)
            printf("%s\n  {\"bytes\": %llu, \"iterations\": %llu, \"t_min_us\": %.3f, \"t_max_us\": %.3f, "
                   "\"t_typical_us\": %.3f, \"t_avg_us\": %.3f, \"t_stdev_us\": %.3f, \"t_p99_us\": %.3f, "
                   "\"t_p999_us\": %.3f}",
                   i ? "," : "", r->bytes, r->lat.iters, r->lat.min, r->lat.max, r->lat.typical, r->lat.avg,
                   r->lat.stdev, r->lat.p99, r->lat.p999);
        else
            printf("%s\n  {\"bytes\": %llu, \"iterations\": %llu, \"bw_peak_gbs\": %.6f, \"bw_avg_gbs\": %.6f, "
                   "\"msg_rate_mpps\": %.6f}",
                   i ? "," : "", r->bytes, r->iters, r->peak, r->avg, r->rate);
    }
    printf("]}\n");
}

/* Handshake: returns 0 and fills fds (data) or an exit code. */
static int client_connect(net_opts_t *o, int *ctrl, int *fds, char *peer, size_t pn)
{
    char err[512];
    int fd = cbt_sock_connect(o->host, o->port, o->connect_timeout, o->retry, err, sizeof err);
    if (fd < 0)
        return cbt_error(TOOL, CBT_EXIT_CONN, "%s", err);
    *ctrl = fd;
    cbt_sock_peer(fd, peer, pn);
    cbt_sock_tune(fd, o->connect_timeout);
    uint64_t session;
    if (coll_auth_random(&session, sizeof session) != COLL_SUCCESS)
        return cbt_error(TOOL, CBT_EXIT_CONN, "%s", coll_last_error());
    const cbt_net_params_t *p = &o->p;
    uint64_t w[10] = {CBT_NET_MAGIC,      CBT_NET_VERSION,  session, (uint64_t)p->lat, (uint64_t)p->bidir,
                      (uint64_t)p->nconn, (uint64_t)p->all, p->size, p->iters,         cbt_dbits(p->duration)};
    coll_auth_bind_t b = cbt_net_bind(session, 0, 0, p->nconn);
    int auth = cbt_words_send(fd, w, 10) ? -1 : cbt_net_auth_connect(fd, o->key, &b);
    if (auth == 1)
        return cbt_error(TOOL, CBT_EXIT_CONN,
                         "server %s did not prove it knows our secret (COLL_SECRET / COLL_SECRET_FILE differ, "
                         "or one end has none)",
                         peer);
    if (auth != 0 || cbt_words_recv(fd, w, 2) || w[0] != CBT_NET_MAGIC)
        return cbt_error(TOOL, CBT_EXIT_CONN, "%s:%d (%s) is not a collbench net server (no handshake answer)", o->host,
                         o->port, peer);
    if (w[1] != 0)
        return cbt_error(TOOL, CBT_EXIT_CONN, "server %s refused the test (code %llu)", peer, (unsigned long long)w[1]);
    for (int i = 0; i < p->nconn; i++) {
        fds[i] = cbt_sock_connect(o->host, o->port, o->connect_timeout, 0, err, sizeof err);
        if (fds[i] < 0)
            return cbt_error(TOOL, CBT_EXIT_CONN, "data connection %d: %s", i, err);
        cbt_sock_tune(fds[i], 60);
        uint64_t d[3] = {CBT_NET_MAGIC, session, (uint64_t)i};
        coll_auth_bind_t db = cbt_net_bind(session, 1, i, p->nconn);
        if (cbt_words_send(fds[i], d, 3) || cbt_net_auth_connect(fds[i], o->key, &db) != 0)
            return cbt_error(TOOL, CBT_EXIT_CONN, "data connection %d to %s: handshake failed", i, peer);
    }
    if (cbt_words_recv(fd, w, 2) || w[0] != CBT_NET_MAGIC)
        return cbt_error(TOOL, CBT_EXIT_CONN, "server %s did not accept the data connections", peer);
    cbt_sock_tune(fd, 0); /* control waits as long as the test runs */
    return 0;
}

/* The client's handshake on the control connection fd: its parameters,
 * acknowledged (or refused when invalid), drive the test (o->p); *session
 * is the id its data connections carry. */
static int server_handshake(net_opts_t *o, int fd, const char *peer, uint64_t *session)
{
    uint64_t w[10];
    cbt_net_params_t c;
    if (cbt_words_recv(fd, w, 10) || cbt_net_hello_parse(w, &c, session))
        return cbt_error(TOOL, CBT_EXIT_CONN, "%s is not a collbench net client (bad handshake)", peer);
    coll_auth_bind_t b = cbt_net_bind(*session, 0, 0, c.nconn);
    int auth = cbt_net_auth_accept(fd, o->key, &b);
    if (auth != 0)
        return cbt_error(TOOL, CBT_EXIT_CONN, "%s %s", peer,
                         auth == 1 ? "did not prove it knows our secret (COLL_SECRET / COLL_SECRET_FILE): refused"
                                   : "left during the handshake");
    int bad = !cbt_net_params_ok(&c); /* M7: bounded, net_auth.c */
    uint64_t ack[2] = {CBT_NET_MAGIC, (uint64_t)bad};
    cbt_words_send(fd, ack, 2);
    if (bad)
        return cbt_error(TOOL, CBT_EXIT_CONN, "client %s sent invalid parameters", peer);
    /* The client's flags drive the test; say so if ours differed. */
    const cbt_net_params_t *s = &o->p;
    if (((o->set_mask & SET_S) && s->size != c.size) || ((o->set_mask & SET_N) && s->iters != c.iters)
        || ((o->set_mask & SET_A) && !c.all) || ((o->set_mask & SET_B) && !c.bidir)
        || ((o->set_mask & SET_Q) && s->nconn != c.nconn) || ((o->set_mask & SET_LAT) && !c.lat)
        || ((o->set_mask & SET_D) && s->duration != c.duration))
        fprintf(stderr,
                "collbench net: note: the client's parameters differ from this command line; using the client's\n");
    o->p = c;
    return 0;
}

/* The client's nconn data connections on lfd, each in fds[] at the index it
 * sends (with the session id). */
static int accept_data(const net_opts_t *o, int lfd, int nconn, uint64_t session, int *fds, const char *peer)
{
    char err[512];
    for (int i = 0; i < nconn; i++)
        fds[i] = -1;
    for (int k = 0; k < nconn; k++) {
        int d = cbt_sock_accept(lfd, 10, err, sizeof err);
        uint64_t h[3];
        if (d < 0)
            return cbt_error(TOOL, d == -2 ? CBT_EXIT_TIMEOUT : CBT_EXIT_CONN, "data connection %d of %d from %s: %s",
                             k, nconn, peer, err);
        cbt_sock_tune(d, 10);
        coll_auth_bind_t b = {0};
        int ok = !cbt_words_recv(d, h, 3) && cbt_net_data_hello_ok(h, session, nconn, fds);
        if (ok)
            b = cbt_net_bind(session, 1, (int)h[2], nconn);
        if (!ok || cbt_net_auth_accept(d, o->key, &b) != 0) {
            close(d);
            return cbt_error(TOOL, CBT_EXIT_CONN, "unexpected data connection (not from client %s)", peer);
        }
        cbt_sock_tune(d, 60);
        fds[h[2]] = d;
    }
    return 0;
}

static int server_accept(net_opts_t *o, int *ctrl, int *fds, char *peer, size_t pn)
{
    char err[512];
    int lfd = cbt_sock_listen(o->bind_addr, o->port, err, sizeof err);
    if (lfd < 0)
        return cbt_error(TOOL, CBT_EXIT_CONN, "%s", err);
    FILE *info = o->json ? stderr : stdout;
    fprintf(info,
            "************************************\n* Waiting for client to connect... *\n"
            "************************************\n(collbench net server on port %d%s%s)\n",
            o->port, o->bind_addr ? ", address " : "", o->bind_addr ? o->bind_addr : "");
    fflush(info);
    int fd = cbt_sock_accept(lfd, o->timeout, err, sizeof err);
    if (fd == -2) {
        close(lfd);
        return cbt_error(TOOL, CBT_EXIT_TIMEOUT, "no client connected to port %d within %g s (--timeout)", o->port,
                         o->timeout);
    }
    if (fd < 0) {
        close(lfd);
        return cbt_error(TOOL, CBT_EXIT_CONN, "%s", err);
    }
    *ctrl = fd;
    cbt_sock_peer(fd, peer, pn);
    cbt_sock_tune(fd, 10);
    uint64_t session = 0;
    int rc = server_handshake(o, fd, peer, &session);
    if (rc == 0)
        rc = accept_data(o, lfd, o->p.nconn, session, fds, peer);
    close(lfd);
    if (rc)
        return rc;
    uint64_t ready[2] = {CBT_NET_MAGIC, 0};
    if (cbt_words_send(fd, ready, 2))
        return cbt_error(TOOL, CBT_EXIT_CONN, "control connection to %s lost", peer);
    cbt_sock_tune(fd, 0);
    return 0;
}

/* --calibration-out: the sim's NIC keys. The bandwidth is one direction's
 * (-b adds both); the latency test's one-way time already holds both ends'
 * per-message costs, so net_overhead_us is 0. */
static int write_calibration(const net_opts_t *o, const char *peer, const row_t *rows, int n)
{
    char by[256];
    if (o->p.lat) {
        snprintf(by, sizeof by, "collbench net %s --lat -s %llu (peer %s)", o->host, rows[0].bytes, peer);
        cbt_calib_kv_t kv[2] = {{"net_us", rows[0].lat.typical}, {"net_overhead_us", 0}};
        return cbt_calib_write(TOOL, o->calib_out, by, kv, 2);
    }
    const row_t *r = &rows[n - 1];
    snprintf(by, sizeof by, "collbench net %s -s %llu -q %d%s%s (peer %s)", o->host, r->bytes, o->p.nconn,
             o->p.bidir ? " -b" : "", o->calib_cpu ? " --calibration-cpu" : "", peer);
    if (o->calib_cpu) {
        /* both directions at once: every byte costs a send and a receive, on the cores of this machine */
        int cpus[CBT_MAX_CPUS], ncores = 0;
        if (cbt_cpu_list(cpus, CBT_MAX_CPUS, &ncores) < 1 || ncores < 1)
            ncores = 1;
        cbt_calib_kv_t kc[1] = {{"net_cpu_gbps", r->avg * 8 / ncores}};
        return cbt_calib_write(TOOL, o->calib_out, by, kc, 1);
    }
    cbt_calib_kv_t kv[1] = {{"net_gbps", r->avg * 8 / (o->p.bidir ? 2 : 1)}};
    return cbt_calib_write(TOOL, o->calib_out, by, kv, 1);
}

/* The client's buffers (-q connections of -s bytes, both ways with -b) must
 * fit in half the memory available: else a usage error (exit 2). */
static int check_memory(const net_opts_t *o)
{
    if (!o->host)
        return CBT_EXIT_OK;
    unsigned long long per = o->p.all ? CBT_NET_SWEEP_MAX : o->p.size;
    unsigned long long need = (unsigned long long)o->p.nconn * (per + (1u << 20)) * (o->p.bidir ? 2 : 1);
    unsigned long long avail = cbt_mem_available();
    if (avail && need > avail / 2)
        return cbt_usage_error(TOOL,
                               "-s %llu x -q %d needs %llu bytes of buffers, more than half of the %llu "
                               "bytes available; use a smaller -s or -q",
                               per, o->p.nconn, need, avail);
    return CBT_EXIT_OK;
}

/* One row of the table: the latency test, or the bandwidth test with the
 * directions this end reports (the server what it received, the client what
 * the server received, both with -b). */
static int measure_row(const net_opts_t *o, int ctrl, const int *fds, const char *peer, row_t *r)
{
    const int server = !o->host;
    char err[512] = "";
    if (o->p.lat) {
        if (cbt_net_run_lat(&o->p, server, ctrl, fds[0], r->bytes, &r->lat, err, sizeof err))
            return cbt_error(TOOL, CBT_EXIT_CONN, "%s bytes, peer %s: %s", "latency test", peer, err);
        return CBT_EXIT_OK;
    }
    cbt_net_rx_t mine, other;
    if (cbt_net_run_bw(&o->p, server, ctrl, fds, r->bytes, &mine, &other, err, sizeof err))
        return cbt_error(TOOL, CBT_EXIT_CONN, "bandwidth test, %llu-byte messages, peer %s: %s", r->bytes, peer, err);
    const cbt_net_rx_t *rx[2];
    int nrx = 0;
    if (server || o->p.bidir)
        rx[nrx++] = &mine;
    if (!server || o->p.bidir)
        rx[nrx++] = &other;
    unsigned long long msgs = 0;
    for (int k = 0; k < nrx; k++) {
        r->avg += (double)rx[k]->bytes / rx[k]->seconds / 1e9;
        r->rate += (double)rx[k]->msgs / rx[k]->seconds / 1e6;
        r->peak += rx[k]->peak_gbs;
        msgs += rx[k]->msgs;
    }
    r->iters = msgs / (unsigned long long)(nrx * o->p.nconn);
    return CBT_EXIT_OK;
}

int cbt_net_main(int argc, char **argv)
{
    net_opts_t o = {.port = CBT_NET_PORT, .connect_timeout = 10, .p = {.nconn = 1, .size = 65536, .iters = 1000}};
    if (parse_args(argc, argv, &o))
        return CBT_EXIT_USAGE;
    if (check_memory(&o))
        return CBT_EXIT_USAGE;
    if (cbt_net_key(o.key, &o.open, !o.host))
        return CBT_EXIT_USAGE;
    int ctrl = -1, fds[CBT_NET_MAXQ];
    char peer[128] = "?";
    for (int i = 0; i < CBT_NET_MAXQ; i++)
        fds[i] = -1;
    int rc = o.host ? client_connect(&o, &ctrl, fds, peer, sizeof peer)
                    : server_accept(&o, &ctrl, fds, peer, sizeof peer);
    if (rc)
        goto out;
    unsigned long long sizes[64];
    int nsizes = sweep(&o.p, sizes);
    row_t rows[64];
    if (!o.json)
        banner(&o, peer);
    for (int i = 0; i < nsizes; i++) {
        row_t *r = &rows[i];
        memset(r, 0, sizeof *r);
        r->bytes = sizes[i];
        if ((rc = measure_row(&o, ctrl, fds, peer, r)))
            goto out;
        if (!o.json)
            print_row(&o.p, r);
    }
    if (o.json)
        print_json(&o, peer, rows, nsizes);
    else
        printf("%s\n", LINE);
    if (o.calib_out)
        rc = write_calibration(&o, peer, rows, nsizes);
out:
    for (int i = 0; i < CBT_NET_MAXQ; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (ctrl >= 0)
        close(ctrl);
    return rc;
}
