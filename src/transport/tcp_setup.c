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

/* enc: the sender's COLL_ENCRYPT (the hello's flag, bound by the MACs: a
 * man in the middle cannot strip it) in bit 16 of the count. */
static coll_auth_bind_t data_bind(const coll_comm *comm, uint32_t from, uint32_t to, uint32_t idx, uint32_t n,
                                  uint32_t enc)
{
    return (coll_auth_bind_t){.role = COLL_AUTH_DATA,
                              .job = comm->id->nonce,
                              .from = from,
                              .to = to,
                              .idx = idx,
                              .count = n | (enc & COLL_TCP_HELLO_ENCRYPT) << 16};
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
    static const uint8_t open_key[COLL_SECRET_BYTES];
    if (t->encrypt && coll_auth_equal(comm->id->secret, open_key, sizeof open_key))
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_TCP,
                          "COLL_ENCRYPT=1 needs a shared secret, and this job runs open: set COLL_SECRET or "
                          "COLL_SECRET_FILE on every rank (mpirun makes one itself), or unset COLL_ENCRYPT");
    COLL_CHECK(coll_tcp_fault_parse(comm, t));
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

coll_status_t coll_tcp_key(coll_comm *comm, int p, coll_tcp_peer_t *pc, int send, int i, const uint8_t nc[32],
                           const uint8_t na[32])
{
    if (!comm->tcp->encrypt)
        return COLL_SUCCESS;
    int from = send ? comm->rank : p, to = send ? p : comm->rank;
    int n = send ? pc->nsend : pc->nrecv;
    coll_auth_bind_t b = data_bind(comm, (uint32_t)from, (uint32_t)to, (uint32_t)i, (uint32_t)n, 1);
    uint8_t key[COLL_AUTH_KEY_BYTES];
    coll_aead_t *a = send ? &pc->stx[i] : &pc->srx[i];
    coll_aead_free(a); /* a connection opened again gets a new key */
    if (coll_auth_data_key(comm->id->secret, &b, nc, na, key))
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_TCP, "COLL_ENCRYPT=1 without a shared secret (open run)");
    coll_status_t st = coll_aead_init(a, key);
    coll_auth_wipe(key, sizeof key);
    return st;
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

/* Handshake steps of connection i to p (tcp_internal.h): each moves what the
 * socket takes now and sets *blocked when it would block. */
static int would_block_now(void) { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

/* Move bytes [c->pos, len) of buf; 1 = all moved, 0 = blocked, -1 = failed (errno; 0: EOF). */
static int conn_move(int fd, coll_tcp_conn_t *c, int out, uint8_t *buf, size_t len)
{
    while (c->pos < len) {
        ssize_t n = out ? send(fd, buf + c->pos, len - c->pos, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(fd, buf + c->pos, len - c->pos, MSG_DONTWAIT);
        if (n > 0) {
            c->pos += (size_t)n;
            continue;
        }
        if (n < 0 && would_block_now())
            return 0;
        if (n == 0)
            errno = 0;
        return -1;
    }
    return 1;
}

static coll_status_t conn_hello(coll_comm *comm, int p, coll_tcp_peer_t *pc, int i, double now, int *blocked)
{
    coll_tcp_conn_t *c = &pc->conn[i];
    if (c->pos == 0) {
        c->auth_t0 = coll_auth_now_ns();
        COLL_CHECK(coll_auth_random(c->nc, sizeof c->nc));
    }
    coll_tcp_hdr_t hd = {COLL_TCP_MAGIC,  COLL_TCP_VERSION,     {0},
                         comm->id->nonce, (uint32_t)comm->rank, (uint32_t)p,
                         (uint16_t)i,     (uint16_t)pc->nsend,  (uint32_t)comm->tcp->encrypt};
    uint8_t h[COLL_TCP_HDR_BYTES];
    memcpy(hd.nc, c->nc, 32);
    coll_tcp_hdr_encode(&hd, h);
    int r = conn_move(pc->sfd[i], c, 1, h, sizeof h);
    if (r < 0)
        return conn_failed(comm, p, pc, i, errno, now);
    *blocked = r == 0;
    if (r == 1) {
        c->state = COLL_TCP_C_CHALLENGE;
        c->pos = 0;
    }
    return COLL_SUCCESS;
}

static coll_status_t conn_challenge(coll_comm *comm, int p, coll_tcp_peer_t *pc, int i, double now, int *blocked)
{
    coll_tcp_conn_t *c = &pc->conn[i];
    int r = conn_move(pc->sfd[i], c, 0, c->buf, COLL_AUTH_CHALLENGE_BYTES);
    if (r < 0) /* p dropped it before filing it (a full pending set, say): open it again */
        return conn_failed(comm, p, pc, i, errno ? errno : ECONNRESET, now);
    *blocked = r == 0;
    if (r == 0)
        return COLL_SUCCESS;
    coll_auth_bind_t b = data_bind(comm, (uint32_t)comm->rank, (uint32_t)p, (uint32_t)i, (uint32_t)pc->nsend,
                                   (uint32_t)comm->tcp->encrypt);
    uint8_t proof[COLL_AUTH_MAC_BYTES];
    if (!coll_auth_respond(comm->id->secret, &b, c->nc, c->buf, proof)) {
        char d[160];
        pc->failed = coll_error(COLL_ERR_AUTH, COLL_SUB_TCP,
                                "the listener of %s did not prove it knows the communicator's secret (a "
                                "stranger on its address?)",
                                coll_tcp_peer_desc(comm, p, d, sizeof d));
        return pc->failed;
    }
    coll_auth_done(COLL_AUTH_CONNECTOR, COLL_AUTH_DATA, c->auth_t0);
    coll_status_t st = coll_tcp_key(comm, p, pc, 1, i, c->nc, c->buf);
    if (st != COLL_SUCCESS)
        return pc->failed = st;
    memcpy(c->buf, proof, sizeof proof);
    c->state = COLL_TCP_C_PROOF;
    c->pos = 0;
    return COLL_SUCCESS;
}

static coll_status_t conn_proof(coll_comm *comm, int p, coll_tcp_peer_t *pc, int i, double now, int *blocked)
{
    coll_tcp_conn_t *c = &pc->conn[i];
    int r = conn_move(pc->sfd[i], c, 1, c->buf, COLL_AUTH_MAC_BYTES);
    if (r < 0)
        return conn_failed(comm, p, pc, i, errno ? errno : ECONNRESET, now);
    *blocked = r == 0;
    if (r == 1) {
        c->state = COLL_TCP_C_READY;
        pc->sready++;
    }
    return COLL_SUCCESS;
}

static coll_status_t conn_step(coll_comm *comm, int p, coll_tcp_peer_t *pc, int i, double now)
{
    coll_tcp_conn_t *c = &pc->conn[i];
    for (int blocked = 0; !blocked;) {
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
        case COLL_TCP_C_HELLO: COLL_CHECK(conn_hello(comm, p, pc, i, now, &blocked)); break;
        case COLL_TCP_C_CHALLENGE: COLL_CHECK(conn_challenge(comm, p, pc, i, now, &blocked)); break;
        case COLL_TCP_C_PROOF: COLL_CHECK(conn_proof(comm, p, pc, i, now, &blocked)); break;
        }
    }
    return COLL_SUCCESS;
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

/* Why the hello in pending connection i is not one to answer (NULL: it is). */
static const char *hello_refusal(coll_comm *comm, const coll_tcp_hdr_t *hd)
{
    struct coll_tcp *t = comm->tcp;
    coll_tcp_peer_t *pc = hd->from < (uint32_t)comm->nranks ? t->peers[hd->from] : NULL;
    if (hd->magic != COLL_TCP_MAGIC)
        return "not a collbench handshake (bad magic)";
    if (hd->version != COLL_TCP_VERSION)
        return "handshake version mismatch";
    if (hd->nonce != comm->id->nonce)
        return "another communicator's handshake";
    if ((hd->ack & ~COLL_TCP_HELLO_ENCRYPT) || hd->to != (uint32_t)comm->rank || hd->from >= (uint32_t)comm->nranks
        || !coll_tcp_is_peer(comm, (int)hd->from))
        return "unexpected ranks in handshake";
    if (hd->nsocks < 1 || hd->nsocks > COLL_TCP_MAX_SOCKS || hd->idx >= hd->nsocks)
        return "bad socket index in handshake";
    if (pc && pc->nrecv && hd->nsocks != pc->nrecv)
        return "socket count differs from the peer's other connections";
    if (pc && pc->nrecv && pc->rfd[hd->idx] >= 0)
        return "duplicate socket index";
    return NULL;
}

/* A whole hello arrived on pending connection i: answer it (Na | MAC_A) or drop it. */
static void pend_answer(coll_comm *comm, int i)
{
    struct coll_tcp *t = comm->tcp;
    coll_tcp_pending_t *c = &t->pend[i];
    coll_tcp_hdr_t hd;
    coll_tcp_hdr_decode(c->hello, &hd);
    const char *why = hello_refusal(comm, &hd);
    uint8_t ch[COLL_AUTH_CHALLENGE_BYTES];
    coll_auth_bind_t b = data_bind(comm, hd.from, hd.to, hd.idx, hd.nsocks, hd.ack);
    memcpy(c->nc, hd.nc, 32);
    c->auth_t0 = coll_auth_now_ns();
    if (!why && coll_auth_challenge(comm->id->secret, &b, c->nc, c->na, ch) != COLL_SUCCESS)
        why = "no random bytes for the challenge";
    if (!why && send(c->fd, ch, sizeof ch, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof ch)
        why = "cannot send the challenge";
    if (why) {
        pend_drop(t, i, why);
        return;
    }
    c->proof = 1;
    c->pos = 0;
}

/* MAC_C arrived on pending connection i: file the socket or drop it. */
static coll_status_t pend_file(coll_comm *comm, int i)
{
    struct coll_tcp *t = comm->tcp;
    coll_tcp_pending_t *c = &t->pend[i];
    coll_tcp_hdr_t hd;
    coll_tcp_hdr_decode(c->hello, &hd);
    coll_auth_bind_t b = data_bind(comm, hd.from, hd.to, hd.idx, hd.nsocks, hd.ack);
    const char *why = hello_refusal(comm, &hd); /* again: another may have been filed meanwhile */
    if (!why && !coll_auth_verify(comm->id->secret, COLL_AUTH_CONNECTOR, &b, c->nc, c->na, c->in))
        why = "wrong proof of the communicator's secret";
    if (why) {
        pend_drop(t, i, why);
        return COLL_SUCCESS;
    }
    coll_auth_done(COLL_AUTH_ACCEPTOR, COLL_AUTH_DATA, c->auth_t0);
    int p = (int)hd.from;
    coll_tcp_peer_t *pc;
    COLL_CHECK(coll_tcp_peer(comm, p, &pc));
    if ((int)(hd.ack & COLL_TCP_HELLO_ENCRYPT) != t->encrypt) { /* a genuine peer (its MAC checked out) */
        pend_drop(t, i, "COLL_ENCRYPT differs");
        return pc->failed = coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_TCP,
                                       "rank %d sends with COLL_ENCRYPT=%d, this rank has COLL_ENCRYPT=%d: set the "
                                       "same on every rank",
                                       p, t->encrypt ? 0 : 1, t->encrypt);
    }
    if (!pc->nrecv) {
        pc->nrecv = hd.nsocks;
        if (hd.nsocks != t->nsocks)
            COLL_INFO(COLL_SUB_TCP, "rank %d uses COLL_NSOCKS=%d (mine %d): it sends to me on %d socket(s)", p,
                      hd.nsocks, t->nsocks, hd.nsocks);
    }
    COLL_CHECK(coll_tcp_key(comm, p, pc, 0, hd.idx, c->nc, c->na));
    pc->rfd[hd.idx] = c->fd;
    pc->rgot++;
    COLL_TRACE(COLL_SUB_TCP, "filed socket %d of %d from rank %d (%s)", hd.idx, pc->nrecv, p, c->addr);
    c->fd = -1;
    memmove(&t->pend[i], &t->pend[i + 1], sizeof t->pend[0] * (size_t)(t->npend - i - 1));
    t->npend--;
    return COLL_SUCCESS;
}

/* Read what pending connection i has of its hello or proof; *gone = 1 when it left the list. */
static coll_status_t pend_step(coll_comm *comm, int i, double now, int *gone)
{
    struct coll_tcp *t = comm->tcp;
    coll_tcp_pending_t *c = &t->pend[i];
    int n0 = t->npend;
    for (;;) {
        uint8_t *dst = c->proof ? c->in : c->hello;
        size_t want = c->proof ? COLL_AUTH_MAC_BYTES : COLL_TCP_HDR_BYTES;
        ssize_t n = recv(c->fd, dst + c->pos, want - c->pos, MSG_DONTWAIT);
        if (n > 0) {
            c->pos += (size_t)n;
            if (c->pos < want)
                continue;
            if (c->proof) {
                COLL_CHECK(pend_file(comm, i));
                break;
            }
            pend_answer(comm, i);
            if (t->npend != n0)
                break;
            continue; /* the proof may be there already */
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (now > c->deadline)
                pend_drop(t, i,
                          c->proof     ? "no proof after the challenge"
                              : c->pos ? "partial handshake, then silence"
                                       : "no handshake (silent)");
            break;
        }
        pend_drop(t, i,
                  n == 0 && (c->pos || c->proof) ? "closed in the middle of the handshake"
                                                 : "closed or failed before the handshake");
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
