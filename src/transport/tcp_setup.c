/*
 * tcp_setup.c - TCP transport: lazy connections (the rule is in tcp_internal.h).
 *
 * coll_tcp_setup, at init, opens nothing: it marks the peers reached over tcp
 * and budgets the descriptors held anyway. Connections open on use:
 *  - sender (coll_tcp_connect, from the first send to p): COLL_NSOCKS
 *    non-blocking connects to p's listener, each followed by the 64-byte
 *    hello. Refused means p's listener is gone (it exited, crashed or
 *    destroyed its communicator: the listener lives as long as the
 *    communicator and exists before anyone knows its address): fails at once
 *    naming p. EMFILE / ENFILE fail at once with the budget (tcp_fds.c).
 *    Anything else (unreachable, reset, no answer, no local port) retries with
 *    backoff 10 ms .. 0.5 s until COLL_CONNECT_TIMEOUT from the first attempt.
 *    A connection that failed before its hello was all out cannot have been
 *    filed by p, so retrying never duplicates a socket.
 *  - receiver (coll_tcp_accept): accepts what waits on the listener, reads
 *    each hello without reading past it and files the socket as p's socket
 *    idx. A bad magic / version / secret / nonce / ranks / index, a duplicate
 *    index, an early EOF or silence longer than COLL_TCP_HELLO_TIMEOUT_S drops
 *    the connection (logged at DEBUG); at most COLL_TCP_MAX_PENDING owe a
 *    hello at once (beyond, the oldest is dropped).
 */
#include "transport/tcp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"

/* Monotonic seconds (local, so the transport links without comm.c in tests). */
static double tcp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int secret_eq(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (int i = 0; i < 32; i++)
        d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}

coll_status_t coll_tcp_setup(coll_comm *comm)
{
    COLL_CHECK(coll_tcp_state(comm));
    struct coll_tcp *t = comm->tcp;
    t->ntcp = 0;
    for (int p = 0; p < comm->nranks; p++)
        t->ntcp += coll_tcp_is_peer(comm, p);
    if (t->ntcp == 0) {
        coll_tcp_teardown(comm); /* every peer is local: comm->tcp = NULL, listener closed */
        return COLL_SUCCESS;
    }
    if (t->listen_fd < 0) /* a listener failure matters only now that tcp is used */
        return coll_error(t->listen_st != COLL_SUCCESS ? t->listen_st : COLL_ERR_INTERNAL, COLL_SUB_TCP, "%s",
                          *t->listen_err ? t->listen_err : "coll_tcp_setup before coll_tcp_listen");
    t->peers = calloc((size_t)comm->nranks, sizeof *t->peers);
    if (!t->peers)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
    for (int p = 0; p < comm->nranks; p++)
        if (comm->tp && coll_tcp_is_peer(comm, p))
            comm->tp[p] = &coll_tcp_ops;
    if (t->nsocks == 0) /* COLL_NSOCKS auto: tcp_internal.h */
        t->nsocks = comm->machine_fits ? COLL_TCP_AUTO_SOCKS : 1;
    coll_tcp_fd_reserve(comm, 0);
    COLL_INFO(COLL_SUB_TCP,
              "%d rank(s) reached over tcp, connected on first use (%d socket(s) each way; %d rank(s) on this "
              "machine%s)",
              t->ntcp, t->nsocks, comm->machine_ranks,
              comm->machine_fits ? ", within its cores" : ", more than its cores");
    return COLL_SUCCESS;
}

coll_status_t coll_tcp_check_listener(coll_comm *comm)
{
    struct coll_tcp *t = comm->tcp;
    if (!t || t->listen_fd >= 0 || !comm->rank_host)
        return COLL_SUCCESS;
    int shm_off = coll_cfg_bool(COLL_CFG_SHM_DISABLE);
    for (int p = 0; p < comm->nranks; p++)
        if (p != comm->rank && (shm_off || comm->rank_host[p] != comm->host))
            return coll_error(t->listen_st != COLL_SUCCESS ? t->listen_st : COLL_ERR_INTERNAL, COLL_SUB_TCP, "%s",
                              t->listen_err);
    return COLL_SUCCESS;
}

coll_status_t coll_tcp_peer(coll_comm *comm, int p, coll_tcp_peer_t **out)
{
    struct coll_tcp *t = comm->tcp;
    if (!t || !t->peers || p < 0 || p >= comm->nranks || !coll_tcp_is_peer(comm, p))
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP, "rank %d is not a tcp peer", p);
    coll_tcp_peer_t *pc = t->peers[p];
    if (!pc) {
        pc = calloc(1, sizeof *pc);
        if (!pc)
            return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
        for (int i = 0; i < COLL_TCP_MAX_SOCKS; i++)
            pc->sfd[i] = pc->rfd[i] = -1;
        t->peers[p] = pc;
        t->npeers++;
        coll_tcp_fd_reserve(comm, t->npeers); /* before its sockets open */
    }
    *out = pc;
    return COLL_SUCCESS;
}

/* ---- sender: this rank's sockets to p ---- */

static coll_status_t conn_failed(coll_comm *comm, int p, coll_tcp_peer_t *pc, int i, int err, double now)
{
    coll_tcp_conn_t *c = &pc->conn[i];
    if (pc->sfd[i] >= 0)
        close(pc->sfd[i]);
    pc->sfd[i] = -1;
    c->last_err = err;
    if (err == ECONNREFUSED) {
        char d[160];
        pc->failed = coll_error(COLL_ERR_NETWORK, COLL_SUB_TCP,
                                "cannot connect to %s: connection refused: that rank is gone (it exited, "
                                "crashed or destroyed its communicator)",
                                coll_tcp_peer_desc(comm, p, d, sizeof d));
        return pc->failed;
    }
    c->state = COLL_TCP_C_RETRY;
    c->backoff = c->backoff <= 0 ? 0.01 : c->backoff * 2 > 0.5 ? 0.5 : c->backoff * 2;
    c->timer = now + c->backoff;
    COLL_DEBUG(COLL_SUB_TCP, "connection %d to rank %d failed (%s), retrying in %.0f ms", i, p,
               err ? strerror(err) : "closed", c->backoff * 1e3);
    return COLL_SUCCESS;
}

static coll_status_t conn_open(coll_comm *comm, int p, coll_tcp_peer_t *pc, int i, double now)
{
    struct coll_tcp *t = comm->tcp;
    coll_tcp_conn_t *c = &pc->conn[i];
    struct sockaddr_storage ss;
    if (comm->peers[p].port == 0) {
        char d[160];
        pc->failed = coll_error(COLL_ERR_NETWORK, COLL_SUB_TCP,
                                "cannot connect to %s: it has no tcp listener "
                                "(it could not open one: see its log)",
                                coll_tcp_peer_desc(comm, p, d, sizeof d));
        return pc->failed;
    }
    coll_tcp_peer_sockaddr(comm, p, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
        char d[160], w[200];
        snprintf(w, sizeof w, "cannot open a socket to %s", coll_tcp_peer_desc(comm, p, d, sizeof d));
        pc->failed = coll_tcp_fd_error(comm, errno, w);
        return pc->failed;
    }
    if (fd < 0)
        return conn_failed(comm, p, pc, i, errno, now);
    coll_tcp_sockopts(fd, t->sockbuf, t->notsent); /* before connect: window scale */
    pc->sfd[i] = fd;
    comm->first_use++; /* connected on first use, by design (O(peers used) sockets) */
    c->pos = 0;
    if (connect(fd, (struct sockaddr *)&ss, coll_sockaddr_len(&ss)) == 0)
        c->state = COLL_TCP_C_HELLO;
    else if (errno == EINPROGRESS || errno == EINTR)
        c->state = COLL_TCP_C_CONNECTING;
    else
        return conn_failed(comm, p, pc, i, errno, now);
    return COLL_SUCCESS;
}

static coll_status_t conn_step(coll_comm *comm, int p, coll_tcp_peer_t *pc, int i, double now)
{
    coll_tcp_conn_t *c = &pc->conn[i];
    for (;;) {
        switch (c->state) {
        case COLL_TCP_C_READY: return COLL_SUCCESS;
        case COLL_TCP_C_RETRY:
            if (now < c->timer)
                return COLL_SUCCESS;
            COLL_CHECK(conn_open(comm, p, pc, i, now));
            if (c->state == COLL_TCP_C_RETRY)
                return COLL_SUCCESS;
            continue;
        case COLL_TCP_C_CONNECTING: {
            int err = 0;
            socklen_t el = sizeof err;
            struct pollfd pf = {pc->sfd[i], POLLOUT, 0};
            if (poll(&pf, 1, 0) <= 0)
                return COLL_SUCCESS;
            if (getsockopt(pc->sfd[i], SOL_SOCKET, SO_ERROR, &err, &el) != 0)
                err = errno;
            if (err)
                return conn_failed(comm, p, pc, i, err, now);
            c->state = COLL_TCP_C_HELLO;
            continue;
        }
        case COLL_TCP_C_HELLO: {
            coll_tcp_hdr_t hd = {COLL_TCP_MAGIC,  COLL_TCP_VERSION,     {0},
                                 comm->id->nonce, (uint32_t)comm->rank, (uint32_t)p,
                                 (uint16_t)i,     (uint16_t)pc->nsend,  0};
            uint8_t h[COLL_TCP_HDR_BYTES];
            memcpy(hd.secret, comm->id->secret, 32);
            coll_tcp_hdr_encode(&hd, h);
            ssize_t n = send(pc->sfd[i], h + c->pos, COLL_TCP_HDR_BYTES - c->pos, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                return COLL_SUCCESS;
            if (n <= 0)
                return conn_failed(comm, p, pc, i, n < 0 ? errno : 0, now);
            c->pos += (size_t)n;
            if (c->pos < COLL_TCP_HDR_BYTES)
                continue;
            c->state = COLL_TCP_C_READY;
            pc->sready++;
            return COLL_SUCCESS;
        }
        }
    }
}

coll_status_t coll_tcp_connect(coll_comm *comm, int p, coll_tcp_peer_t *pc, int *ready)
{
    double now = tcp_now();
    *ready = 0;
    if (pc->failed != COLL_SUCCESS)
        return pc->failed;
    if (pc->nsend == 0) {
        pc->nsend = comm->tcp->nsocks;
        pc->connect_start = now;
        for (int i = 0; i < pc->nsend; i++)
            pc->conn[i] = (coll_tcp_conn_t){.state = COLL_TCP_C_RETRY};
        COLL_DEBUG(COLL_SUB_TCP, "first send to rank %d: opening %d socket(s)", p, pc->nsend);
    }
    for (int i = 0; i < pc->nsend && pc->sready < pc->nsend; i++)
        COLL_CHECK(conn_step(comm, p, pc, i, now));
    if (pc->sready == pc->nsend) {
        COLL_DEBUG(COLL_SUB_TCP, "connected to rank %d in %.3f s (%d socket(s))", p, now - pc->connect_start,
                   pc->nsend);
        *ready = 1;
        return COLL_SUCCESS;
    }
    double el = now - pc->connect_start;
    if (comm->connect_timeout_s > 0 && el > comm->connect_timeout_s) {
        char d[160];
        int err = 0;
        for (int i = 0; i < pc->nsend && !err; i++)
            if (pc->conn[i].state != COLL_TCP_C_READY)
                err = pc->conn[i].last_err;
        pc->failed = coll_error(COLL_ERR_TIMEOUT, COLL_SUB_TCP,
                                "cannot connect to %s: %s after %.1f s (COLL_CONNECT_TIMEOUT)",
                                coll_tcp_peer_desc(comm, p, d, sizeof d), err ? strerror(err) : "no answer", el);
        return pc->failed;
    }
    return COLL_SUCCESS;
}

/* ---- receiver: connections on our listener ---- */

static void pend_drop(struct coll_tcp *t, int i, const char *why)
{
    COLL_DEBUG(COLL_SUB_TCP, "dropping connection from %s: %s", t->pend[i].addr, why);
    close(t->pend[i].fd);
    memmove(&t->pend[i], &t->pend[i + 1], sizeof t->pend[0] * (size_t)(t->npend - i - 1));
    t->npend--;
}

/* A whole hello arrived on pending connection i: file it or drop it. */
static coll_status_t pend_file(coll_comm *comm, int i)
{
    struct coll_tcp *t = comm->tcp;
    coll_tcp_hdr_t hd;
    coll_tcp_hdr_decode(t->pend[i].in, &hd);
    const char *why = NULL;
    int p = (int)hd.from;
    coll_tcp_peer_t *pc = hd.from < (uint32_t)comm->nranks ? t->peers[p] : NULL;
    if (hd.magic != COLL_TCP_MAGIC)
        why = "not a collbench handshake (bad magic)";
    else if (hd.version != COLL_TCP_VERSION)
        why = "handshake version mismatch";
    else if (!secret_eq(hd.secret, comm->id->secret) || hd.nonce != comm->id->nonce)
        why = "wrong communicator secret";
    else if (hd.ack || hd.to != (uint32_t)comm->rank || hd.from >= (uint32_t)comm->nranks || !coll_tcp_is_peer(comm, p))
        why = "unexpected ranks in handshake";
    else if (hd.nsocks < 1 || hd.nsocks > COLL_TCP_MAX_SOCKS || hd.idx >= hd.nsocks)
        why = "bad socket index in handshake";
    else if (pc && pc->nrecv && hd.nsocks != pc->nrecv)
        why = "socket count differs from the peer's other connections";
    else if (pc && pc->nrecv && pc->rfd[hd.idx] >= 0)
        why = "duplicate socket index";
    if (why) {
        pend_drop(t, i, why);
        return COLL_SUCCESS;
    }
    COLL_CHECK(coll_tcp_peer(comm, p, &pc));
    if (!pc->nrecv) {
        pc->nrecv = hd.nsocks;
        if (hd.nsocks != t->nsocks)
            COLL_INFO(COLL_SUB_TCP, "rank %d uses COLL_NSOCKS=%d (mine %d): it sends to me on %d socket(s)", p,
                      hd.nsocks, t->nsocks, hd.nsocks);
    }
    pc->rfd[hd.idx] = t->pend[i].fd;
    pc->rgot++;
    COLL_TRACE(COLL_SUB_TCP, "filed socket %d of %d from rank %d (%s)", hd.idx, pc->nrecv, p, t->pend[i].addr);
    t->pend[i].fd = -1;
    memmove(&t->pend[i], &t->pend[i + 1], sizeof t->pend[0] * (size_t)(t->npend - i - 1));
    t->npend--;
    return COLL_SUCCESS;
}

/* Read what pending connection i has of its hello; *gone = 1 when it left the list. */
static coll_status_t pend_step(coll_comm *comm, int i, double now, int *gone)
{
    struct coll_tcp *t = comm->tcp;
    coll_tcp_pending_t *c = &t->pend[i];
    int n0 = t->npend;
    for (;;) {
        ssize_t n = recv(c->fd, c->in + c->pos, COLL_TCP_HDR_BYTES - c->pos, MSG_DONTWAIT);
        if (n > 0) {
            c->pos += (size_t)n;
            if (c->pos < COLL_TCP_HDR_BYTES)
                continue;
            COLL_CHECK(pend_file(comm, i));
            break;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (now > c->deadline)
                pend_drop(t, i, c->pos ? "partial handshake, then silence" : "no handshake (silent)");
            break;
        }
        pend_drop(t, i,
                  n == 0 && c->pos ? "closed after a partial handshake" : "closed or failed before the handshake");
        break;
    }
    *gone = t->npend != n0;
    return COLL_SUCCESS;
}

coll_status_t coll_tcp_accept(coll_comm *comm, int force)
{
    struct coll_tcp *t = comm->tcp;
    double now = tcp_now();
    if (!force && now < t->next_accept)
        return COLL_SUCCESS;
    t->next_accept = now + COLL_TCP_ACCEPT_EVERY_S;
    double hto = COLL_TCP_HELLO_TIMEOUT_S;
    if (comm->connect_timeout_s > 0 && comm->connect_timeout_s < hto)
        hto = comm->connect_timeout_s;
    for (int i = 0; i < t->npend;) { /* the ones already waiting first: they are oldest */
        int gone;
        COLL_CHECK(pend_step(comm, i, now, &gone));
        i += !gone;
    }
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(t->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
            continue;
        if (fd < 0 && (errno == EMFILE || errno == ENFILE))
            return coll_tcp_fd_error(comm, errno, "cannot accept a tcp connection");
        if (fd < 0)
            return COLL_SUCCESS; /* EAGAIN: nothing (more) waiting */
        if (t->npend == COLL_TCP_MAX_PENDING)
            pend_drop(t, 0, "too many pending handshakes");
        coll_tcp_pending_t *c = &t->pend[t->npend++];
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->deadline = now + hto;
        coll_sockaddr_str(&ss, c->addr, sizeof c->addr);
        coll_tcp_sockopts(fd, 0, t->notsent); /* buffers: inherited from the listener */
        int gone;
        COLL_CHECK(pend_step(comm, t->npend - 1, now, &gone)); /* the hello is usually there */
    }
}

int coll_tcp_accept_pollfds(coll_comm *comm, struct pollfd *fds, int max)
{
    struct coll_tcp *t = comm->tcp;
    int n = 0;
    if (!t || t->listen_fd < 0 || max < 1)
        return 0;
    fds[n++] = (struct pollfd){t->listen_fd, POLLIN, 0};
    for (int i = 0; i < t->npend && n < max; i++)
        fds[n++] = (struct pollfd){t->pend[i].fd, POLLIN, 0};
    return n;
}
