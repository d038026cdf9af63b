/*
 * tcp_setup.c - TCP transport: connection setup (coll_tcp_setup).
 *
 * Setup, for every tcp peer p (comm->tp[p] not taken by shm, or tp[p] == tcp):
 * the lower rank connects 2 x COLL_NSOCKS data sockets (one set per direction) plus one control socket to
 * the higher rank's listener; the higher rank accepts. Each connection starts
 * with a 64-byte hello {magic, version, secret, id nonce, from, to, socket
 * index, nsocks} answered by an ack of the same shape. The connector's nsocks
 * decides for the pair (a rank with another COLL_NSOCKS adapts, logged at INFO).
 *
 * One poll loop drives every connect, accept and handshake at once, so the
 * order ranks enter setup does not matter. An accepted connection with a bad
 * magic, version, secret, nonce or rank, a duplicate socket index, an early EOF
 * or silence longer than COLL_TCP_HELLO_TIMEOUT_S is dropped (logged at DEBUG)
 * and the loop keeps waiting for the genuine peer. A refused / reset / rejected
 * outgoing connection is retried with backoff until COLL_CONNECT_TIMEOUT.
 */
#include "transport/tcp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/netif.h"

/* Monotonic seconds (local, so the transport links without comm.c in tests). */
static double tcp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- setup: one poll loop over every handshake ---- */

typedef enum { HS_RETRY, HS_CONNECTING, HS_SEND, HS_RECV, HS_DONE } hs_state_t;

typedef struct {
    int fd;
    int peer, idx;          /* accepted: -1 until the hello authenticates */
    int outgoing;
    hs_state_t state;
    uint8_t out[COLL_TCP_HDR_BYTES], in[COLL_TCP_HDR_BYTES];
    size_t out_pos, in_pos;
    double timer;           /* HS_RETRY: when to retry; accepted HS_RECV: silence deadline */
    double backoff;
    int last_err;           /* outgoing: errno of the last failure (0 = handshake rejected) */
    char peer_addr[COLL_SOCKADDR_STRLEN];   /* accepted: who connected (for logs) */
} hs_conn_t;

typedef struct {
    coll_comm *comm;
    hs_conn_t *c;
    int n, cap;
    int *want;              /* [nranks] connections still missing per peer (-1 = unknown nsocks) */
    int *got;               /* [nranks] */
    double start;
} hs_t;

static hs_conn_t *hs_add(hs_t *h)
{
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 64;
        hs_conn_t *c = realloc(h->c, sizeof *c * (size_t)cap);
        if (!c)
            return NULL;
        h->c = c;
        h->cap = cap;
    }
    hs_conn_t *c = &h->c[h->n++];
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->peer = -1;
    return c;
}

static void hs_header(const hs_t *h, int to, int idx, int nsocks, int ack, uint8_t *out)
{
    coll_tcp_hdr_t hd = {COLL_TCP_MAGIC, COLL_TCP_VERSION, {0}, h->comm->id.nonce,
                         (uint32_t)h->comm->rank, (uint32_t)to, (uint16_t)idx,
                         (uint16_t)nsocks, (uint32_t)ack};
    memcpy(hd.secret, h->comm->id.secret, 32);
    coll_tcp_hdr_encode(&hd, out);
}

static int secret_eq(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (int i = 0; i < 32; i++)
        d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}

static void hs_close(hs_conn_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

/* Outgoing connection failed (err = errno, 0 = rejected handshake): retry later. */
static void hs_retry(hs_conn_t *c, int err, double now)
{
    hs_close(c);
    c->state = HS_RETRY;
    c->last_err = err;
    c->backoff = c->backoff <= 0 ? 0.01 : c->backoff * 2 > 0.5 ? 0.5 : c->backoff * 2;
    c->timer = now + c->backoff;
}

static void hs_connect(hs_t *h, hs_conn_t *c, double now)
{
    struct coll_tcp *t = h->comm->tcp;
    struct sockaddr_storage ss;
    coll_tcp_peer_sockaddr(h->comm, c->peer, &ss);
    c->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        hs_retry(c, errno, now);
        return;
    }
    coll_tcp_sockopts(c->fd, t->sockbuf, t->notsent);   /* before connect: window scale */
    hs_header(h, c->peer, c->idx, t->nsocks, 0, c->out);
    c->out_pos = c->in_pos = 0;
    if (connect(c->fd, (struct sockaddr *)&ss, coll_sockaddr_len(&ss)) == 0)
        c->state = HS_SEND;
    else if (errno == EINPROGRESS || errno == EINTR)
        c->state = HS_CONNECTING;
    else
        hs_retry(c, errno, now);
}

static void hs_drop(hs_t *h, hs_conn_t *c, const char *why)
{
    COLL_DEBUG(COLL_SUB_TCP, "rank %d: dropping connection from %s: %s", h->comm->rank,
               c->peer_addr, why);
    hs_close(c);
    c->state = HS_DONE;
    c->peer = -1;
}

/* An accepted socket (peer, idx) authenticated: is that slot still free? */
static int hs_slot_taken(const hs_t *h, const hs_conn_t *self, int peer, int idx)
{
    const coll_tcp_peer_t *pc = &h->comm->tcp->peers[peer];
    if (pc->nsocks && (idx == pc->nsocks ? pc->ctrl >= 0 : pc->fd[idx] >= 0))
        return 1;
    for (int i = 0; i < h->n; i++) {
        const hs_conn_t *o = &h->c[i];
        if (o != self && !o->outgoing && o->peer == peer && o->idx == idx && o->fd >= 0)
            return 1;
    }
    return 0;
}

static void hs_install(hs_t *h, hs_conn_t *c)
{
    coll_tcp_peer_t *pc = &h->comm->tcp->peers[c->peer];
    if (c->idx == pc->nsocks)
        pc->ctrl = c->fd;
    else
        pc->fd[c->idx] = c->fd;
    c->fd = -1;   /* owned by the peer now */
    c->state = HS_DONE;
    h->got[c->peer]++;
}

/* A full header arrived on c. */
static void hs_check_header(hs_t *h, hs_conn_t *c, double now)
{
    coll_comm *comm = h->comm;
    coll_tcp_hdr_t hd;
    coll_tcp_hdr_decode(c->in, &hd);
    int ok_common = hd.magic == COLL_TCP_MAGIC && hd.version == COLL_TCP_VERSION &&
                    secret_eq(hd.secret, comm->id.secret) && hd.nonce == comm->id.nonce &&
                    hd.to == (uint32_t)comm->rank;
    if (c->outgoing) {
        coll_tcp_peer_t *pc = &comm->tcp->peers[c->peer];
        if (!ok_common || !hd.ack || hd.from != (uint32_t)c->peer || hd.idx != c->idx ||
            hd.nsocks != pc->nsocks) {
            char d[160];
            COLL_DEBUG(COLL_SUB_TCP, "bad handshake reply from %s (socket %d), retrying",
                       coll_tcp_peer_desc(comm, c->peer, d, sizeof d), c->idx);
            hs_retry(c, 0, now);
            return;
        }
        hs_install(h, c);
        return;
    }
    const char *why = NULL;
    int p = (int)hd.from;
    if (hd.magic != COLL_TCP_MAGIC)
        why = "not a collbench handshake (bad magic)";
    else if (hd.version != COLL_TCP_VERSION)
        why = "handshake version mismatch";
    else if (!secret_eq(hd.secret, comm->id.secret) || hd.nonce != comm->id.nonce)
        why = "wrong communicator secret";
    else if (hd.ack || hd.to != (uint32_t)comm->rank || hd.from >= (uint32_t)comm->nranks ||
             p >= comm->rank || !coll_tcp_is_peer(comm, p))
        why = "unexpected ranks in handshake";
    else if (hd.nsocks < 1 || hd.nsocks > COLL_TCP_MAX_SOCKS || hd.idx > hd.nsocks)
        why = "bad socket index in handshake";
    else if (comm->tcp->peers[p].nsocks && hd.nsocks != comm->tcp->peers[p].nsocks)
        why = "socket count differs from the peer's other connections";
    else if (hs_slot_taken(h, c, p, hd.idx))
        why = "duplicate socket index";
    if (why) {
        hs_drop(h, c, why);
        return;
    }
    coll_tcp_peer_t *pc = &comm->tcp->peers[p];
    if (pc->nsocks == 0) {
        pc->nsocks = hd.nsocks;
        h->want[p] = hd.nsocks + 1;
        if (hd.nsocks != comm->tcp->nsocks)
            COLL_INFO(COLL_SUB_TCP, "rank %d uses COLL_NSOCKS=%d (mine %d): %d socket(s) each way with it",
                      p, hd.nsocks / 2, comm->tcp->nsocks / 2, hd.nsocks / 2);
    }
    c->peer = p;
    c->idx = hd.idx;
    hs_header(h, p, hd.idx, hd.nsocks, 1, c->out);
    c->out_pos = 0;
    c->state = HS_SEND;
}

/* Progress one connection (whatever poll said: every call is non-blocking). */
static void hs_step(hs_t *h, hs_conn_t *c, double now)
{
    for (;;) {
        switch (c->state) {
        case HS_DONE:
            return;
        case HS_RETRY:
            if (now < c->timer)
                return;
            hs_connect(h, c, now);
            if (c->state == HS_RETRY)
                return;
            continue;
        case HS_CONNECTING: {
            int err = 0;
            socklen_t el = sizeof err;
            struct pollfd pf = {c->fd, POLLOUT, 0};
            if (poll(&pf, 1, 0) <= 0)
                return;
            if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
                err = errno;
            if (err) {
                hs_retry(c, err, now);
                return;
            }
            c->state = HS_SEND;
            continue;
        }
        case HS_SEND: {
            ssize_t n = send(c->fd, c->out + c->out_pos, COLL_TCP_HDR_BYTES - c->out_pos,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                return;
            if (n <= 0) {
                if (c->outgoing)
                    hs_retry(c, errno, now);
                else
                    hs_drop(h, c, "send failed during the handshake");
                return;
            }
            c->out_pos += (size_t)n;
            if (c->out_pos < COLL_TCP_HDR_BYTES)
                continue;
            if (c->outgoing) {
                c->state = HS_RECV;
                continue;
            }
            hs_install(h, c);
            return;
        }
        case HS_RECV: {
            ssize_t n = recv(c->fd, c->in + c->in_pos, COLL_TCP_HDR_BYTES - c->in_pos,
                             MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                if (!c->outgoing && now > c->timer)
                    hs_drop(h, c, c->in_pos ? "partial handshake, then silence"
                                            : "no handshake (silent)");
                return;
            }
            if (n <= 0) {
                if (c->outgoing)
                    hs_retry(c, n == 0 ? ECONNRESET : errno, now);
                else
                    hs_drop(h, c, n == 0 && c->in_pos ? "closed after a partial handshake"
                                                      : "closed or failed before the handshake");
                return;
            }
            c->in_pos += (size_t)n;
            if (c->in_pos < COLL_TCP_HDR_BYTES)
                continue;
            hs_check_header(h, c, now);
            if (c->state == HS_SEND)
                continue;
            return;
        }
        }
    }
}

static void hs_accept(hs_t *h, double now)
{
    struct coll_tcp *t = h->comm->tcp;
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(t->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;   /* EAGAIN, or a transient error (ECONNABORTED, EMFILE): poll again */
        /* too many unauthenticated connections: drop the oldest */
        int pending = 0, oldest = -1;
        for (int i = 0; i < h->n; i++)
            if (!h->c[i].outgoing && h->c[i].state == HS_RECV) {
                pending++;
                if (oldest < 0)
                    oldest = i;
            }
        if (pending >= 256)
            hs_drop(h, &h->c[oldest], "too many pending handshakes");
        hs_conn_t *c = hs_add(h);
        if (!c) {
            close(fd);
            return;
        }
        coll_tcp_sockopts(fd, 0, t->notsent);   /* buffers: inherited from the listener */
        c->fd = fd;
        c->state = HS_RECV;
        double hto = COLL_TCP_HELLO_TIMEOUT_S;
        if (h->comm->connect_timeout_s > 0 && h->comm->connect_timeout_s < hto)
            hto = h->comm->connect_timeout_s;
        c->timer = now + hto;
        coll_sockaddr_str(&ss, c->peer_addr, sizeof c->peer_addr);
        COLL_TRACE(COLL_SUB_TCP, "accepted a connection from %s", c->peer_addr);
    }
}

/* Compact the connection list (finished / dropped entries). */
static void hs_compact(hs_t *h)
{
    int j = 0;
    for (int i = 0; i < h->n; i++)
        if (h->c[i].state != HS_DONE || h->c[i].fd >= 0)
            h->c[j++] = h->c[i];
    h->n = j;
}

static coll_status_t hs_timeout(hs_t *h)
{
    coll_comm *comm = h->comm;
    double el = tcp_now() - h->start;
    char d[160];
    for (int i = 0; i < h->n; i++) {
        hs_conn_t *c = &h->c[i];
        if (!c->outgoing || c->state == HS_DONE)
            continue;
        coll_tcp_peer_desc(comm, c->peer, d, sizeof d);
        if (c->state == HS_RECV || (c->state == HS_RETRY && c->last_err == 0))
            return coll_error(COLL_ERR_TIMEOUT, COLL_SUB_TCP,
                              "cannot connect to %s: it accepted but did not complete the "
                              "handshake within %.1f s (another communicator on that port, or "
                              "it has not started setup?)", d, el);
        return coll_error(COLL_ERR_TIMEOUT, COLL_SUB_TCP, "cannot connect to %s: %s after %.1f s",
                          d, c->last_err ? strerror(c->last_err) : "no answer", el);
    }
    for (int p = 0; p < comm->nranks; p++)
        if (h->want[p] != 0 && h->got[p] != h->want[p] && p < comm->rank)
            return coll_error(COLL_ERR_TIMEOUT, COLL_SUB_TCP,
                              "timed out after %.1f s waiting for %s to connect (%d of %s "
                              "connections made)", el, coll_tcp_peer_desc(comm, p, d, sizeof d),
                              h->got[p], h->want[p] > 0 ? "its" : "all");
    return coll_error(COLL_ERR_TIMEOUT, COLL_SUB_TCP, "tcp setup timed out after %.1f s", el);
}

static int hs_complete(const hs_t *h)
{
    for (int p = 0; p < h->comm->nranks; p++)
        if (h->want[p] != 0 && h->got[p] != h->want[p])
            return 0;
    return 1;
}

static coll_status_t hs_run(hs_t *h)
{
    coll_comm *comm = h->comm;
    struct coll_tcp *t = comm->tcp;
    double deadline = comm->connect_timeout_s > 0 ? h->start + comm->connect_timeout_s : 0;
    struct pollfd *pf = NULL;
    coll_status_t st = COLL_SUCCESS;
    int any_incoming = 0;
    for (int p = 0; p < comm->rank; p++)
        any_incoming |= h->want[p] != 0;
    for (;;) {
        double now = tcp_now();
        for (int i = 0; i < h->n; i++)
            hs_step(h, &h->c[i], now);
        hs_compact(h);
        if (hs_complete(h))
            break;
        if (atomic_load(&comm->aborted)) {
            st = coll_error(COLL_ERR_ABORTED, COLL_SUB_TCP, "communicator aborted during tcp setup");
            break;
        }
        if (deadline > 0 && now > deadline) {
            st = hs_timeout(h);
            break;
        }
        struct pollfd *np = realloc(pf, sizeof *pf * (size_t)(h->n + 1));
        if (!np) {
            st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
            break;
        }
        pf = np;
        int nfds = 0;
        double wake = now + 0.2;
        if (any_incoming)
            pf[nfds++] = (struct pollfd){t->listen_fd, POLLIN, 0};
        for (int i = 0; i < h->n; i++) {
            hs_conn_t *c = &h->c[i];
            if (c->state == HS_RETRY || (!c->outgoing && c->state == HS_RECV)) {
                if (c->timer < wake)
                    wake = c->timer;
            }
            if (c->fd < 0)
                continue;
            short ev = c->state == HS_RECV ? POLLIN : POLLOUT;
            pf[nfds++] = (struct pollfd){c->fd, ev, 0};
        }
        if (deadline > 0 && deadline < wake)
            wake = deadline;
        int ms = (int)((wake - now) * 1000.0) + 1;
        poll(pf, (nfds_t)nfds, ms < 1 ? 1 : ms);
        if (any_incoming)
            hs_accept(h, tcp_now());
    }
    free(pf);
    return st;
}

/* Every tcp peer takes nsocks data sockets and a control socket. Raise the
 * soft descriptor limit towards the hard one when that is not enough (as MPI
 * launchers do); fail with the numbers when even the hard limit is short. */
static coll_status_t fd_budget(int npeers, int nsocks)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)npeers * (rlim_t)(nsocks + 1) + 64;   /* + store, shm, listener, stdio */
    if (npeers == 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= need)
        return COLL_SUCCESS;
    rlim_t old = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= need) {
        COLL_INFO(COLL_SUB_TCP, "raised the open-file limit from %llu to %llu for %d tcp peer(s)",
                  (unsigned long long)old, (unsigned long long)need, npeers);
        return COLL_SUCCESS;
    }
    return coll_error(COLL_ERR_SYSTEM, COLL_SUB_TCP,
                      "%d tcp peers need about %llu file descriptors (%d sockets each: 2 x COLL_NSOCKS=%d "
                      "data + 1 control) but the limit is %llu (hard %llu): raise `ulimit -n` or lower "
                      "COLL_NSOCKS", npeers, (unsigned long long)need, nsocks + 1, nsocks / 2,
                      (unsigned long long)old,
                      rl.rlim_max == RLIM_INFINITY ? 0ull : (unsigned long long)rl.rlim_max);
}

coll_status_t coll_tcp_setup(coll_comm *comm)
{
    COLL_CHECK(coll_tcp_state(comm));
    struct coll_tcp *t = comm->tcp;
    if (t->listen_fd < 0)
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP, "coll_tcp_setup before coll_tcp_listen");
    int n = comm->nranks;
    hs_t h = {comm, NULL, 0, 0, calloc((size_t)n, sizeof(int)), calloc((size_t)n, sizeof(int)),
              tcp_now()};
    t->peers = calloc((size_t)n, sizeof *t->peers);
    coll_status_t st = COLL_SUCCESS;
    if (!h.want || !h.got || !t->peers) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
        goto out;
    }
    for (int p = 0; p < n; p++) {
        coll_tcp_peer_t *pc = &t->peers[p];
        pc->ctrl = -1;
        for (int i = 0; i < COLL_TCP_MAX_SOCKS; i++)
            pc->fd[i] = -1;
        if (!coll_tcp_is_peer(comm, p))
            continue;
        t->npeers++;
        if (p < comm->rank) {
            h.want[p] = -1;   /* unknown until its first hello tells its nsocks */
            continue;
        }
        pc->nsocks = t->nsocks;
        h.want[p] = t->nsocks + 1;
        for (int i = 0; i <= t->nsocks; i++) {
            hs_conn_t *c = hs_add(&h);
            if (!c) {
                st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
                goto out;
            }
            c->outgoing = 1;
            c->peer = p;
            c->idx = i;
            c->state = HS_RETRY;
            c->timer = 0;
        }
    }
    COLL_CHECK_GOTO(fd_budget(t->npeers, t->nsocks), st, out);   /* before any socket is opened */
    COLL_CHECK_GOTO(hs_run(&h), st, out);
    /* control-socket poll set for coll_tcp_poll_abort */
    t->ctrl_pfd = calloc((size_t)t->npeers + 1, sizeof *t->ctrl_pfd);
    t->ctrl_rank = calloc((size_t)t->npeers + 1, sizeof *t->ctrl_rank);
    if (!t->ctrl_pfd || !t->ctrl_rank) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
        goto out;
    }
    int k = 0;
    for (int p = 0; p < n; p++)
        if (t->peers[p].nsocks) {
            t->ctrl_pfd[k] = (struct pollfd){t->peers[p].ctrl, POLLIN, 0};
            t->ctrl_rank[k++] = p;
            if (comm->tp)
                comm->tp[p] = &coll_tcp_ops;
        }
    int sb = 0, rb = 0;
    socklen_t sl = sizeof sb;
    for (int p = 0; p < n && !sb; p++)
        if (t->peers[p].nsocks) {
            getsockopt(t->peers[p].fd[0], SOL_SOCKET, SO_SNDBUF, &sb, &sl);
            sl = sizeof rb;
            getsockopt(t->peers[p].fd[0], SOL_SOCKET, SO_RCVBUF, &rb, &sl);
        }
    if (t->npeers)
        COLL_INFO(COLL_SUB_TCP, "connected to %d tcp peer(s) in %.3f s (%d data socket(s) each way + 1 "
              "control each; kernel socket buffers snd %d rcv %d)", t->npeers, tcp_now() - h.start, t->nsocks / 2,
              sb, rb);
out:
    for (int i = 0; i < h.n; i++) {
        if (h.c[i].fd >= 0 && !h.c[i].outgoing)
            COLL_DEBUG(COLL_SUB_TCP, "rank %d: closing unauthenticated connection from %s at the "
                       "end of setup", comm->rank, h.c[i].peer_addr);
        hs_close(&h.c[i]);
    }
    free(h.c);
    free(h.want);
    free(h.got);
    if (t->listen_fd >= 0)
        close(t->listen_fd);   /* every expected connection is in (or setup failed) */
    t->listen_fd = -1;
    if (st == COLL_SUCCESS && t->npeers == 0)
        coll_tcp_teardown(comm);   /* every peer is local: comm->tcp = NULL */
    return st;
}
