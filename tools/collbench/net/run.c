/*
 * run.c - one message size of `collbench net`.
 *
 * Bandwidth: per connection a sender thread (client; both sides with -b) sends
 * -n messages of SIZE bytes (or for -D seconds) and a receiver thread (server;
 * both with -b) reads them. Receivers time from the GO exchange to the last
 * byte: average = bytes / that time; peak = best rate over any window of
 * W = max(1, n/16) consecutive messages (64 with -D), from the times messages
 * completed at the receiver; MsgRate = messages / time. Connections add up; with
 * -b both directions add up (as ib_send_bw -b reports).
 *
 * Latency: ping-pong of SIZE bytes on connection 0; t = round trip / 2, after 16
 * warm-up round trips; typical = median; percentiles of the sorted samples.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cb.h"
#include "net.h"

enum { OP_GO = 1, OP_GOACK, OP_COUNT, OP_RESULT, OP_LATRES };
#define RBUF (1u << 20)
#define UNKNOWN (~0ULL)
#define WARMUP 16

typedef struct {
    int fd;
    const cbt_net_params_t *p;
    unsigned long long size;
    unsigned char *sbuf, *rbuf;
    double t_start;
    unsigned long long sent;      /* sender: messages sent */
    unsigned long long target;    /* receiver: messages to expect (atomic; UNKNOWN until COUNT) */
    unsigned long long got, msgs; /* receiver */
    double t_end, peak;
    int err;
} stream_t;

static void *sender(void *arg)
{
    stream_t *s = arg;
    const cbt_net_params_t *p = s->p;
    if (p->duration > 0) {
        double end = cbt_now() + p->duration;
        while (cbt_now() < end) {
            if (cbt_sock_send(s->fd, s->sbuf, s->size)) {
                s->err = errno ? errno : EIO;
                return NULL;
            }
            s->sent++;
        }
    } else {
        for (unsigned long long i = 0; i < p->iters; i++) {
            if (cbt_sock_send(s->fd, s->sbuf, s->size)) {
                s->err = errno ? errno : EIO;
                return NULL;
            }
            s->sent++;
        }
    }
    return NULL;
}

static void *receiver(void *arg)
{
    stream_t *s = arg;
    const unsigned long long size = s->size;
    const int dur = s->p->duration > 0;
    const unsigned long long W = dur ? 64 : (s->p->iters / 16 ? s->p->iters / 16 : 1);
    double *ring = malloc((size_t)(W + 1) * sizeof *ring);
    if (!ring) {
        s->err = ENOMEM;
        return NULL;
    }
    double now = s->t_start;
    for (;;) {
        unsigned long long tgt = __atomic_load_n(&s->target, __ATOMIC_ACQUIRE);
        if (tgt != UNKNOWN && s->got >= tgt * size)
            break;
        if (tgt == UNKNOWN) {
            int r = cbt_sock_wait_readable(s->fd, 20);
            if (r < 0) {
                s->err = errno;
                break;
            }
            if (r == 0)
                continue;
        }
        size_t want = RBUF;
        if (tgt != UNKNOWN && tgt * size - s->got < want)
            want = (size_t)(tgt * size - s->got);
        long r = cbt_sock_recv_some(s->fd, s->rbuf, want);
        if (r <= 0) {
            s->err = r == 0 ? ECONNRESET : errno;
            break;
        }
        s->got += (unsigned long long)r;
        now = cbt_now();
        while ((s->msgs + 1) * size <= s->got) {
            ring[s->msgs % (W + 1)] = now;
            if (s->msgs >= W) {
                double dt = now - ring[(s->msgs - W) % (W + 1)];
                if (dt > 0 && (double)(W * size) / dt > s->peak)
                    s->peak = (double)(W * size) / dt;
            }
            s->msgs++;
        }
    }
    s->t_end = now;
    free(ring);
    return NULL;
}

/* GO / GO_ACK: both sides leave with the same size, *t0 = start of timing. */
static int go(int server, int ctrl, unsigned long long size, double *t0, char *err, size_t n)
{
    uint64_t w[2];
    if (server) {
        if (cbt_words_recv(ctrl, w, 2) || w[0] != OP_GO || w[1] != size) {
            snprintf(err, n, "protocol error: expected GO %llu from the client", size);
            return -1;
        }
        *t0 = cbt_now();
        w[0] = OP_GOACK;
        return cbt_words_send(ctrl, w, 2) ? (snprintf(err, n, "control connection: %s", strerror(errno)), -1) : 0;
    }
    w[0] = OP_GO, w[1] = size;
    if (cbt_words_send(ctrl, w, 2) || cbt_words_recv(ctrl, w, 2) || w[0] != OP_GOACK) {
        snprintf(err, n, "control connection: no GO acknowledgement from the server");
        return -1;
    }
    *t0 = cbt_now();
    return 0;
}

/* The q streams' buffers: a filled send buffer, a receive buffer. */
static int alloc_streams(stream_t *s, const cbt_net_params_t *p, const int *fds, unsigned long long size, int do_send,
                         int do_recv, char *err, size_t n)
{
    for (int i = 0; i < p->nconn; i++) {
        s[i] = (stream_t){.fd = fds[i], .p = p, .size = size, .target = p->duration > 0 ? UNKNOWN : p->iters};
        if ((do_send && !(s[i].sbuf = malloc(size))) || (do_recv && !(s[i].rbuf = malloc(RBUF)))) {
            snprintf(err, n, "out of memory for %llu-byte buffers", size);
            return -1;
        }
        if (do_send)
            memset(s[i].sbuf, 0xA5, size);
    }
    return 0;
}

/* -D: the senders say how many messages each stream sent; the receivers
 * learn how many to wait for. */
static int exchange_counts(stream_t *s, int q, int ctrl, int do_send, int do_recv, char *err, size_t n)
{
    uint64_t w[1 + CBT_NET_MAXQ];
    int rc = 0;
    if (do_send) {
        w[0] = OP_COUNT;
        for (int i = 0; i < q; i++)
            w[1 + i] = s[i].sent;
        if (cbt_words_send(ctrl, w, 1 + q))
            rc = -1;
    }
    if (do_recv && rc == 0) {
        if (cbt_words_recv(ctrl, w, 1 + q) || w[0] != OP_COUNT)
            rc = -1;
        else
            for (int i = 0; i < q; i++)
                __atomic_store_n(&s[i].target, w[1 + i], __ATOMIC_RELEASE);
    }
    if (rc)
        snprintf(err, n, "control connection lost while exchanging message counts");
    return rc;
}

/* What the q receivers got, from t0: bytes, messages, time, summed peaks. */
static void sum_received(const stream_t *s, int q, double t0, cbt_net_rx_t *mine)
{
    double tend = t0;
    for (int i = 0; i < q; i++) {
        mine->bytes += s[i].got;
        mine->msgs += s[i].msgs;
        if (s[i].t_end > tend)
            tend = s[i].t_end;
    }
    mine->seconds = tend > t0 ? tend - t0 : 1e-9;
    for (int i = 0; i < q; i++) {
        double el = s[i].t_end > t0 ? s[i].t_end - t0 : 1e-9, avg = (double)s[i].got / el;
        mine->peak_gbs += (s[i].peak > avg ? s[i].peak : avg) / 1e9;
    }
}

/* RESULT: the server always received; the client only with -b. */
static int exchange_results(const cbt_net_params_t *p, int server, int ctrl, int do_recv, const cbt_net_rx_t *mine,
                            cbt_net_rx_t *peer, char *err, size_t n)
{
    uint64_t w[5];
    if (do_recv) {
        w[0] = OP_RESULT, w[1] = mine->bytes, w[2] = mine->msgs, w[3] = cbt_dbits(mine->seconds),
        w[4] = cbt_dbits(mine->peak_gbs);
        if (cbt_words_send(ctrl, w, 5)) {
            snprintf(err, n, "control connection: %s", strerror(errno));
            return -1;
        }
    }
    if (!server || p->bidir) {
        if (cbt_words_recv(ctrl, w, 5) || w[0] != OP_RESULT) {
            snprintf(err, n, "control connection: no result from the peer");
            return -1;
        }
        peer->bytes = w[1], peer->msgs = w[2], peer->seconds = cbt_bitsd(w[3]), peer->peak_gbs = cbt_bitsd(w[4]);
    }
    return 0;
}

int cbt_net_run_bw(const cbt_net_params_t *p, int server, int ctrl, const int *fds, unsigned long long size,
                   cbt_net_rx_t *mine, cbt_net_rx_t *peer, char *err, size_t n)
{
    const int q = p->nconn, do_send = !server || p->bidir, do_recv = server || p->bidir;
    stream_t *s = calloc((size_t)q, sizeof *s);
    pthread_t *ts = calloc((size_t)q, sizeof *ts), *tr = calloc((size_t)q, sizeof *tr);
    int rc = -1, started_s = 0, started_r = 0;
    double t0;
    memset(mine, 0, sizeof *mine);
    memset(peer, 0, sizeof *peer);
    if (!s || !ts || !tr) {
        snprintf(err, n, "out of memory");
        goto out;
    }
    if (alloc_streams(s, p, fds, size, do_send, do_recv, err, n) || go(server, ctrl, size, &t0, err, n))
        goto out;
    for (int i = 0; i < q; i++) {
        s[i].t_start = t0;
        if (do_recv && pthread_create(&tr[i], NULL, receiver, &s[i]) == 0)
            started_r++;
        if (do_send && pthread_create(&ts[i], NULL, sender, &s[i]) == 0)
            started_s++;
    }
    if ((do_recv && started_r != q) || (do_send && started_s != q))
        snprintf(err, n, "cannot start %d threads", 2 * q);
    else
        rc = 0;
    for (int i = 0; i < (do_send ? started_s : 0); i++)
        pthread_join(ts[i], NULL);
    if (rc == 0 && p->duration > 0)
        rc = exchange_counts(s, q, ctrl, do_send, do_recv, err, n);
    for (int i = 0; i < (do_recv ? started_r : 0); i++) {
        if (rc) /* unblock receivers waiting for a count that will not come */
            __atomic_store_n(&s[i].target, 0, __ATOMIC_RELEASE);
        pthread_join(tr[i], NULL);
    }
    if (rc)
        goto out;
    for (int i = 0; i < q; i++)
        if (s[i].err) {
            snprintf(err, n, "data connection %d: %s", i, strerror(s[i].err));
            rc = -1;
            goto out;
        }
    if (do_recv)
        sum_received(s, q, t0, mine);
    rc = exchange_results(p, server, ctrl, do_recv, mine, peer, err, n);
out:
    for (int i = 0; s && i < q; i++) {
        free(s[i].sbuf);
        free(s[i].rbuf);
    }
    free(s);
    free(ts);
    free(tr);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double f)
{
    size_t i = (size_t)ceil(f * (double)n);
    return v[i ? (i > n ? n : i) - 1 : 0];
}

/* Server: echo until the ping marked last, then read the client's statistics. */
static int lat_echo(int ctrl, int fd, unsigned char *buf, unsigned long long size, cbt_net_lat_t *out, char *err,
                    size_t n)
{
    uint64_t w[9];
    for (;;) {
        if (cbt_sock_recv(fd, buf, size) || cbt_sock_send(fd, buf, size)) {
            snprintf(err, n, "data connection: %s", strerror(errno));
            return -1;
        }
        if (buf[0] == 2)
            break;
    }
    if (cbt_words_recv(ctrl, w, 9) || w[0] != OP_LATRES) {
        snprintf(err, n, "control connection: no latency result from the client");
        return -1;
    }
    *out = (cbt_net_lat_t){.iters = w[1],
                           .min = cbt_bitsd(w[2]),
                           .max = cbt_bitsd(w[3]),
                           .typical = cbt_bitsd(w[4]),
                           .avg = cbt_bitsd(w[5]),
                           .stdev = cbt_bitsd(w[6]),
                           .p99 = cbt_bitsd(w[7]),
                           .p999 = cbt_bitsd(w[8])};
    return 0;
}

/* Client: WARMUP pings, then -n of them (or -D seconds' worth), the last
 * marked; *v (grown as needed) gets *cnt one-way times in us. */
static int lat_ping(const cbt_net_params_t *p, int fd, unsigned char *buf, unsigned long long size, double **v,
                    size_t *cnt, char *err, size_t n)
{
    size_t cap = p->duration > 0 ? 4096 : (size_t)p->iters;
    if (!(*v = malloc(cap * sizeof **v))) {
        snprintf(err, n, "out of memory for %zu samples", cap);
        return -1;
    }
    double end = 0;
    for (unsigned long long i = 0;; i++) {
        int warm = i < WARMUP;
        if (i == WARMUP)
            end = cbt_now() + p->duration;
        int last = !warm && (p->duration > 0 ? cbt_now() >= end : i - WARMUP + 1 == p->iters);
        buf[0] = last ? 2 : 1;
        double a = cbt_now();
        if (cbt_sock_send(fd, buf, size) || cbt_sock_recv(fd, buf, size)) {
            snprintf(err, n, "data connection: %s", strerror(errno));
            return -1;
        }
        double b = cbt_now();
        if (!warm) {
            if (*cnt == cap) {
                double *nv = realloc(*v, 2 * cap * sizeof **v);
                if (!nv) {
                    snprintf(err, n, "out of memory for %zu samples", 2 * cap);
                    return -1;
                }
                *v = nv, cap *= 2;
            }
            (*v)[(*cnt)++] = (b - a) * 1e6 / 2;
        }
        if (last)
            return 0;
    }
}

/* The statistics of cnt samples (v sorted here). */
static void lat_stats(double *v, size_t cnt, cbt_net_lat_t *out)
{
    qsort(v, cnt, sizeof *v, cmp_double);
    double sum = 0, sq = 0;
    for (size_t i = 0; i < cnt; i++)
        sum += v[i];
    double avg = sum / (double)cnt;
    for (size_t i = 0; i < cnt; i++)
        sq += (v[i] - avg) * (v[i] - avg);
    *out = (cbt_net_lat_t){.iters = cnt,
                           .min = v[0],
                           .max = v[cnt - 1],
                           .typical = v[cnt / 2],
                           .avg = avg,
                           .stdev = sqrt(sq / (double)cnt),
                           .p99 = pct(v, cnt, 0.99),
                           .p999 = pct(v, cnt, 0.999)};
}

int cbt_net_run_lat(const cbt_net_params_t *p, int server, int ctrl, int fd, unsigned long long size,
                    cbt_net_lat_t *out, char *err, size_t n)
{
    unsigned char *buf = malloc(size);
    double t0, *v = NULL;
    size_t cnt = 0;
    uint64_t w[9];
    int rc = -1;
    if (!buf) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    memset(buf, 0x5A, size);
    if (go(server, ctrl, size, &t0, err, n))
        goto out;
    if (server) {
        rc = lat_echo(ctrl, fd, buf, size, out, err, n);
        goto out;
    }
    if (lat_ping(p, fd, buf, size, &v, &cnt, err, n))
        goto out;
    lat_stats(v, cnt, out);
    w[0] = OP_LATRES, w[1] = cnt, w[2] = cbt_dbits(out->min), w[3] = cbt_dbits(out->max),
    w[4] = cbt_dbits(out->typical), w[5] = cbt_dbits(out->avg), w[6] = cbt_dbits(out->stdev),
    w[7] = cbt_dbits(out->p99), w[8] = cbt_dbits(out->p999);
    if (cbt_words_send(ctrl, w, 9)) {
        snprintf(err, n, "control connection: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    free(buf);
    free(v);
    return rc;
}
