/*
 * tcp.c - TCP transport data path: non-blocking send / recv progress over the
 * striped sockets of a peer's direction, poll descriptors. Lazy connections are
 * in tcp_setup.c (a send first opens this rank's sockets to the peer, a receive
 * first waits for the peer's on the listener), the wire layout and striping
 * rule in tcp_internal.h.
 *
 * Semantics of the progress calls (one send and one recv in flight per peer):
 *   - the first call for a message (no message in flight to / from that peer)
 *     starts it (framing in tcp_internal.h: raw on socket 0, or chunks dealt
 *     to whichever socket takes data, closed by an end header per socket);
 *   - later calls must pass the same buf / len until *done == len (anything
 *     else is COLL_ERR_INTERNAL); *done = bytes completed over all chunks
 *     (sent to the kernel, or handed to the sink), not a contiguous prefix,
 *     and reaches len only when every socket's end header has gone through;
 *   - each call moves what the kernel takes / has now, never blocks, never
 *     reads past the end of the current message on any socket;
 *   - a reducing sink gets whole elements only: bytes go through a 256 KiB
 *     bounce buffer per socket and a partial element waits there for its rest;
 *     a copying sink is read straight into the destination;
 *   - EOF, ECONNRESET, EPIPE (MSG_NOSIGNAL: never SIGPIPE) or the peer's FIN
 *     while sending -> COLL_ERR_ABORTED if a rank's abort notice arrives
 *     through the bootstrap within 200 ms (coll_bootstrap_check_abort), or this
 *     communicator is aborted, else COLL_ERR_NETWORK, with a message naming the
 *     peer, its host and address; the error sticks to that peer.
 */
#include "transport/tcp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/log.h"

int coll_tcp_chunked(size_t len, int nsocks) { return nsocks > 1 && len >= COLL_TCP_STRIPE_MIN; }

size_t coll_tcp_chunk_size(size_t len, int nsocks, size_t cfg)
{
    size_t per = len / (size_t)(nsocks > 0 ? nsocks : 1);
    size_t c = cfg && cfg < per ? cfg : per;
    c = (c + COLL_TCP_STRIPE_ALIGN - 1) & ~(COLL_TCP_STRIPE_ALIGN - 1);
    return c ? c : COLL_TCP_STRIPE_ALIGN;
}

/* A message over the n sockets of one direction. */
static void xfer_start(coll_tcp_xfer_t *x, int n, size_t len, size_t chunk_cfg, int sealed)
{
    x->sealed = sealed;
    x->chunked = sealed || coll_tcp_chunked(len, n);
    for (int i = 0; i < n; i++)
        x->st[i] = (coll_tcp_stripe_t){.state = x->chunked ? COLL_TCP_SX_IDLE : COLL_TCP_SX_ENDED};
    if (!x->chunked) /* raw on socket 0: one headerless chunk */
        x->st[0]
            = (coll_tcp_stripe_t){.state = COLL_TCP_SX_CHUNK, .len = len, .wlen = len, .hdr_pos = COLL_TCP_CHUNK_HDR};
    x->len = len;
    x->done = 0;
    x->next = 0;
    x->chunk = x->chunked ? coll_tcp_chunk_size(len, n, chunk_cfg) : len;
    if (sealed && x->chunk > COLL_TCP_SEAL_MAX)
        x->chunk = COLL_TCP_SEAL_MAX;
    x->active = 1;
}

/* All sockets through their end: the message is complete. */
static int xfer_ended(const coll_tcp_xfer_t *x, int nsocks)
{
    for (int i = 0; i < nsocks; i++)
        if (x->st[i].state != COLL_TCP_SX_ENDED)
            return 0;
    return 1;
}

/* What the caller sees: len only once complete. */
static size_t xfer_report(coll_tcp_xfer_t *x, int nsocks)
{
    if (x->done == x->len && xfer_ended(x, nsocks)) {
        x->active = 0;
        return x->len;
    }
    return x->done < x->len ? x->done : x->len - 1;
}

/* The connection to peer broke (err: errno, 0 = EOF / peer closed). */
coll_status_t coll_tcp_fail(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int is_send, int sock, int err)
{
    char d[160], why[256];
    const coll_tcp_xfer_t *x = is_send ? &pc->tx : &pc->rx;
    const char *what = is_send ? "send" : "receive";
    int a;
    coll_tcp_peer_desc(comm, peer, d, sizeof d);
    if (atomic_load(&comm->aborted))
        pc->failed = coll_error(COLL_ERR_ABORTED, COLL_SUB_TCP, "communicator aborted during a %zu-byte tcp %s %s %s",
                                x->len, what, is_send ? "to" : "from", d);
    else if ((a = coll_bootstrap_check_abort(comm->bs, 200, why, sizeof why)) >= 0 && !strcmp(why, COLL_BOOT_DIED))
        pc->failed = coll_error(COLL_ERR_ABORTED, COLL_SUB_TCP,
                                "%s died during %s of %zu bytes (a %zu-byte tcp %s %s %d, %zu bytes done; its "
                                "bootstrap connection closed)",
                                coll_peer_desc(comm, a, d, sizeof d), coll_kind_name(comm->cur_kind), comm->cur_bytes,
                                x->len, what, is_send ? "to rank" : "from rank", peer, x->done);
    else if (a >= 0)
        pc->failed = coll_error(COLL_ERR_ABORTED, COLL_SUB_TCP,
                                "%s aborted during %s of %zu bytes (a %zu-byte tcp %s %s %d, %zu bytes done)%s%s",
                                coll_peer_desc(comm, a, d, sizeof d), coll_kind_name(comm->cur_kind), comm->cur_bytes,
                                x->len, what, is_send ? "to rank" : "from rank", peer, x->done, *why ? ": " : "", why);
    else
        pc->failed = coll_error(COLL_ERR_NETWORK, COLL_SUB_TCP,
                                "connection to %s lost during %s of %zu bytes (a %zu-byte tcp %s, after %zu "
                                "bytes, socket %d of %d): %s",
                                d, coll_kind_name(comm->cur_kind), comm->cur_bytes, x->len, what, x->done, sock + 1,
                                is_send ? pc->nsend : pc->nrecv,
                                err ? strerror(err) : "closed by the peer (it exited or crashed)");
    return pc->failed;
}

/* Peer record (allocated on first use); its sticky error, if any. */
static coll_status_t tcp_peer(coll_comm *comm, int peer, coll_tcp_peer_t **out)
{
    struct coll_tcp *t = comm->tcp;
    if (t && t->peers && peer >= 0 && peer < comm->nranks && t->peers[peer])
        *out = t->peers[peer];
    else
        COLL_CHECK(coll_tcp_peer(comm, peer, out));
    return (*out)->failed;
}

static int would_block(void) { return errno == EAGAIN || errno == EWOULDBLOCK; }

/* Nothing moved: did the peer shut its end (FIN, error)? A genuine peer never
 * half-closes while we still send, so that means it aborted or died. */
static int peer_hung_up(const coll_tcp_peer_t *pc, const coll_tcp_xfer_t *x, int *sock)
{
    struct pollfd pf[COLL_TCP_MAX_SOCKS];
    int idx[COLL_TCP_MAX_SOCKS], n = 0;
    for (int i = 0; i < pc->nsend; i++)
        if (x->st[i].state != COLL_TCP_SX_ENDED) {
            pf[n] = (struct pollfd){pc->sfd[i], POLLRDHUP, 0};
            idx[n++] = i;
        }
    if (n == 0 || poll(pf, (nfds_t)n, 0) <= 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
            *sock = idx[i];
            return 1;
        }
    return 0;
}

/* Deal the next chunk (or, the message all dealt, the end header) to socket s. */
static void send_next(coll_tcp_xfer_t *x, coll_tcp_stripe_t *s)
{
    size_t k = 0;
    if (x->next < x->len) {
        k = x->len - x->next < x->chunk ? x->len - x->next : x->chunk;
        coll_tcp_chunk_encode(x->next, k, s->hdr);
        s->off = x->next;
        s->is_end = 0;
        x->next += k;
    } else {
        coll_tcp_chunk_encode(COLL_TCP_CHUNK_END, 0, s->hdr);
        s->off = 0;
        s->is_end = 1;
    }
    s->len = k;
    s->wlen = k;
    s->pos = 0;
    s->hdr_pos = 0;
    s->state = COLL_TCP_SX_CHUNK;
}

/* COLL_ENCRYPT=1: seal the record just dealt to socket i into its staging
 * (COLL_FAULT_TCP: then spoil one byte of it). */
static coll_status_t send_seal(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int i)
{
    coll_tcp_xfer_t *x = &pc->tx;
    coll_tcp_stripe_t *s = &x->st[i];
    struct coll_tcp *t = comm->tcp;
    if (!pc->seal[i] && !(pc->seal[i] = malloc(COLL_TCP_BOUNCE)))
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
    if (coll_aead_seal(&pc->stx[i], s->hdr, COLL_TCP_CHUNK_HDR, (const uint8_t *)x->buf + s->off, s->len, pc->seal[i]))
        return pc->failed = coll_error(COLL_ERR_SYSTEM, COLL_SUB_TCP,
                                       "cannot seal a %zu-byte chunk to rank %d on socket %d (its record counter is "
                                       "spent or OpenSSL failed): the connection cannot go on",
                                       s->len, peer, i + 1);
    s->wlen = s->len + COLL_AEAD_TAG_BYTES;
    if (t->fault_left > 0 && --t->fault_left == 0) {
        pc->seal[i][0] ^= 0x20;
        COLL_WARN(COLL_SUB_TCP, "COLL_FAULT_TCP: spoiled a sealed %zu-byte chunk to rank %d on socket %d", s->len, peer,
                  i + 1);
    }
    return COLL_SUCCESS;
}

/* Message bytes of a record whose body moved from pos0 to pos1. */
static size_t body_bytes(const coll_tcp_stripe_t *s, size_t pos0, size_t pos1)
{
    size_t a = pos0 < s->len ? pos0 : s->len, b = pos1 < s->len ? pos1 : s->len;
    return b - a;
}

/* Push what socket i takes now: header and chunk bytes in one sendmsg. */
static coll_status_t send_sock(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int i)
{
    coll_tcp_xfer_t *x = &pc->tx;
    coll_tcp_stripe_t *s = &x->st[i];
    for (;;) {
        if (s->state == COLL_TCP_SX_ENDED)
            return COLL_SUCCESS;
        if (s->state == COLL_TCP_SX_IDLE) {
            send_next(x, s);
            if (x->sealed)
                COLL_CHECK(send_seal(comm, peer, pc, i));
        }
        struct iovec iov[2];
        int k = 0;
        if (s->hdr_pos < COLL_TCP_CHUNK_HDR)
            iov[k++] = (struct iovec){s->hdr + s->hdr_pos, COLL_TCP_CHUNK_HDR - s->hdr_pos};
        if (s->pos < s->wlen)
            iov[k++] = (struct iovec){x->sealed ? (char *)pc->seal[i] + s->pos : (char *)x->buf + s->off + s->pos,
                                      s->wlen - s->pos};
        if (k == 0) { /* chunk through */
            s->state = !x->chunked || s->is_end ? COLL_TCP_SX_ENDED : COLL_TCP_SX_IDLE;
            continue;
        }
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t n = sendmsg(pc->sfd[i], &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            size_t h = COLL_TCP_CHUNK_HDR - s->hdr_pos;
            if (h > (size_t)n)
                h = (size_t)n;
            s->hdr_pos += h;
            x->done += body_bytes(s, s->pos, s->pos + (size_t)n - h);
            s->pos += (size_t)n - h;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && would_block()) {
            /* a chunk just dealt to a full socket goes back to the pool: the
             * next socket with room takes it */
            if (x->chunked && !x->sealed && !s->is_end && s->hdr_pos == 0 && s->off + s->len == x->next) {
                x->next = s->off;
                s->state = COLL_TCP_SX_IDLE;
            }
            return COLL_SUCCESS;
        } else {
            return coll_tcp_fail(comm, peer, pc, 1, i, n < 0 ? errno : 0);
        }
    }
}

static coll_status_t tcp_send(coll_comm *comm, int peer, const void *buf, size_t len, size_t *done)
{
    coll_tcp_peer_t *pc;
    COLL_CHECK(tcp_peer(comm, peer, &pc));
    coll_tcp_xfer_t *x = &pc->tx;
    if (!x->active && *done >= len)
        return COLL_SUCCESS;
    /* peers connecting to us wait in the backlog; while our own handshakes
     * run, a peer may wait for our answer to its own: answer at once */
    COLL_CHECK(coll_tcp_accept(comm, !pc->nsend || pc->sready < pc->nsend));
    if (!pc->nsend || pc->sready < pc->nsend) {
        int ready;
        COLL_CHECK(coll_tcp_connect(comm, peer, pc, &ready));
        if (!ready)
            return COLL_SUCCESS;
    }
    if (!x->active) {
        xfer_start(x, pc->nsend, len, comm->tcp->chunk, comm->tcp->encrypt);
        x->buf = buf;
    } else if (x->buf != buf || x->len != len) {
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP,
                          "tcp send of %zu bytes to rank %d posted while one of %zu bytes is in "
                          "flight",
                          len, peer, x->len);
    }
    size_t before = *done;
    for (int i = 0; i < pc->nsend; i++)
        COLL_CHECK(send_sock(comm, peer, pc, i));
    *done = xfer_report(x, pc->nsend);
    int sock;
    if (*done == before && *done < len && peer_hung_up(pc, x, &sock))
        return coll_tcp_fail(comm, peer, pc, 1, sock, 0);
    return COLL_SUCCESS;
}

/* A chunk header from socket i is complete: check it and start the chunk. */
static coll_status_t recv_header(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int i)
{
    coll_tcp_xfer_t *x = &pc->rx;
    coll_tcp_stripe_t *s = &x->st[i];
    uint64_t off, len;
    coll_tcp_chunk_decode(s->hdr, &off, &len);
    if (off == COLL_TCP_CHUNK_END && len == 0) {
        s->state = COLL_TCP_SX_ENDED;
        if (xfer_ended(x, pc->nrecv) && x->done != x->len)
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP,
                              "message from rank %d ended after %zu of %zu bytes: ranks called "
                              "different collectives or counts",
                              peer, x->done, x->len);
        return COLL_SUCCESS;
    }
    if (!coll_tcp_chunk_fits(x, off, len))
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP,
                          "bad chunk [%llu, +%llu) from rank %d in a %zu-byte message: ranks called "
                          "different collectives or counts",
                          (unsigned long long)off, (unsigned long long)len, peer, x->len);
    s->off = (size_t)off;
    s->len = (size_t)len;
    s->pos = s->given = 0;
    s->state = COLL_TCP_SX_CHUNK;
    return COLL_SUCCESS;
}

/* Read what socket i has of the message; hand whole elements to the sink. */
static coll_status_t recv_sock(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int i)
{
    coll_tcp_xfer_t *x = &pc->rx;
    coll_tcp_stripe_t *s = &x->st[i];
    const coll_sink_t *sk = &x->sink;
    for (;;) {
        ssize_t n;
        if (s->state == COLL_TCP_SX_ENDED)
            return COLL_SUCCESS;
        if (s->state == COLL_TCP_SX_IDLE) {
            n = recv(pc->rfd[i], s->hdr + s->hdr_pos, COLL_TCP_CHUNK_HDR - s->hdr_pos, MSG_DONTWAIT);
            if (n > 0) {
                s->hdr_pos += (size_t)n;
                if (s->hdr_pos == COLL_TCP_CHUNK_HDR)
                    COLL_CHECK(recv_header(comm, peer, pc, i));
                continue;
            }
        } else if (s->given >= s->len) { /* chunk through */
            s->state = x->chunked ? COLL_TCP_SX_IDLE : COLL_TCP_SX_ENDED;
            s->hdr_pos = 0;
            continue;
        } else if (!sk->fn) {
            n = recv(pc->rfd[i], (char *)sk->dst + s->off + s->pos, s->len - s->pos, MSG_DONTWAIT);
            if (n > 0) {
                s->pos += (size_t)n;
                s->given = s->pos;
                x->done += (size_t)n;
                continue;
            }
        } else {
            if (!pc->bounce[i]) {
                if (!(pc->bounce[i] = malloc(COLL_TCP_BOUNCE)))
                    return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
                memset(pc->bounce[i], 0, COLL_TCP_BOUNCE); /* every page now, not one per later call */
                comm->first_use++;
            }
            size_t want = COLL_TCP_BOUNCE - pc->fill[i];
            if (want > s->len - s->pos)
                want = s->len - s->pos;
            n = recv(pc->rfd[i], pc->bounce[i] + pc->fill[i], want, MSG_DONTWAIT);
            if (n > 0) {
                s->pos += (size_t)n;
                pc->fill[i] += (size_t)n;
                size_t whole = pc->fill[i] - pc->fill[i] % sk->esize;
                if (whole) {
                    size_t o = s->off + s->given;
                    sk->fn((char *)sk->dst + o, (const char *)sk->src2 + o, pc->bounce[i], whole / sk->esize);
                    s->given += whole;
                    x->done += whole;
                    pc->fill[i] -= whole;
                    if (pc->fill[i])
                        memmove(pc->bounce[i], pc->bounce[i] + whole, pc->fill[i]);
                }
                continue;
            }
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && would_block())
            return COLL_SUCCESS;
        return coll_tcp_fail(comm, peer, pc, 0, i, n < 0 ? errno : 0);
    }
}

static coll_status_t tcp_recv(coll_comm *comm, int peer, const coll_sink_t *sink, size_t len, size_t *done)
{
    coll_tcp_peer_t *pc;
    COLL_CHECK(tcp_peer(comm, peer, &pc));
    coll_tcp_xfer_t *x = &pc->rx;
    if (!x->active && *done >= len)
        return COLL_SUCCESS;
    int missing = !pc->nrecv || pc->rgot < pc->nrecv;
    COLL_CHECK(coll_tcp_accept(comm, missing)); /* the peer's sockets: accept and file them */
    if (!pc->nrecv || pc->rgot < pc->nrecv)
        return COLL_SUCCESS;
    if (!x->active) {
        if (sink->fn && (sink->esize == 0 || len % sink->esize || COLL_TCP_STRIPE_ALIGN % sink->esize))
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP,
                              "tcp recv-reduce of %zu bytes from rank %d: not whole %zu-byte "
                              "elements",
                              len, peer, sink->esize);
        xfer_start(x, pc->nrecv, len, 0, comm->tcp->encrypt);
        x->sink = *sink;
        for (int i = 0; i < pc->nrecv; i++)
            pc->fill[i] = 0;
    } else if (x->len != len || x->sink.dst != sink->dst || x->sink.fn != sink->fn) {
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP,
                          "tcp recv of %zu bytes from rank %d posted while one of %zu bytes is "
                          "in flight",
                          len, peer, x->len);
    }
    for (int i = 0; i < pc->nrecv; i++)
        COLL_CHECK(x->sealed ? coll_tcp_recv_sealed(comm, peer, pc, i) : recv_sock(comm, peer, pc, i));
    *done = xfer_report(x, pc->nrecv);
    return COLL_SUCCESS;
}

/* Pending send: this rank's sockets to the peer (POLLOUT, or those still
 * connecting; the listener as a timed sleep while all wait to retry). Pending
 * receive: the peer's sockets, or, before they are all in, the listener and a
 * few connections owing their hello. */
static int tcp_pollfds(coll_comm *comm, int peer, int for_send, struct pollfd *fds, int max)
{
    if (!comm->tcp || !comm->tcp->peers || peer < 0 || peer >= comm->nranks || max < 1)
        return 0;
    const coll_tcp_peer_t *pc = comm->tcp->peers[peer];
    int n = 0;
    if (for_send && (!pc || !pc->nsend || pc->sready < pc->nsend)) {
        for (int i = 0; pc && i < pc->nsend && n < max; i++) {
            int st = pc->conn[i].state;
            if (st == COLL_TCP_C_CONNECTING || st == COLL_TCP_C_HELLO || st == COLL_TCP_C_PROOF)
                fds[n++] = (struct pollfd){pc->sfd[i], POLLOUT, 0};
            else if (st == COLL_TCP_C_CHALLENGE)
                fds[n++] = (struct pollfd){pc->sfd[i], POLLIN, 0};
        }
        /* the peer may be waiting for our answer to its own first send meanwhile */
        return n + coll_tcp_accept_pollfds(comm, fds + n, max - n < 9 ? max - n : 9);
    }
    if (!for_send && (!pc || !pc->nrecv || pc->rgot < pc->nrecv))
        return coll_tcp_accept_pollfds(comm, fds, max < 9 ? max : 9);
    const coll_tcp_xfer_t *x = for_send ? &pc->tx : &pc->rx;
    const int *fd = for_send ? pc->sfd : pc->rfd;
    int ns = for_send ? pc->nsend : pc->nrecv;
    short ev = for_send ? (short)(POLLOUT | POLLRDHUP) : (short)POLLIN;
    for (int i = 0; i < ns && n < max; i++) {
        if (x->active && x->st[i].state == COLL_TCP_SX_ENDED)
            continue;
        fds[n++] = (struct pollfd){fd[i], ev, 0};
    }
    return n;
}

static int tcp_in_use(const coll_comm *comm) { return comm->tcp != NULL; }

static void tcp_abort(coll_comm *comm, const char *why)
{
    coll_tcp_abort(comm); /* the reason travels through the bootstrap notice, sent first */
}

const coll_transport_ops_t coll_tcp_ops = {
    .name = "tcp",
    .send = tcp_send,
    .recv = tcp_recv,
    .pollfds = tcp_pollfds,
    .caps = COLL_TP_WAITS_ON_FDS | COLL_TP_ABORT_AFTER_NOTICE,
    .prepare = coll_tcp_listen,
    .agree = coll_tcp_check_listener,
    .setup = coll_tcp_setup,
    .in_use = tcp_in_use,
    .teardown = coll_tcp_teardown,
    .abort = tcp_abort,
};
