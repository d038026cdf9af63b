/*
 * tcp.c - TCP transport data path: non-blocking send / recv progress over the
 * striped sockets of a peer, poll descriptors, aborts. Setup is in tcp_setup.c,
 * the wire layout and striping rule in tcp_internal.h.
 *
 * Semantics of the progress calls (one send and one recv in flight per peer):
 *   - the first call for a message (no message in flight to / from that peer)
 *     starts it: the stripes are computed from len and the socket count;
 *   - later calls must pass the same buf / len until *done == len (anything
 *     else is COLL_ERR_INTERNAL); *done = bytes completed over all stripes
 *     (sent to the kernel, or handed to the sink), not a contiguous prefix;
 *   - each call moves what the kernel takes / has now, never blocks, never
 *     reads past the end of the current message on any socket;
 *   - a reducing sink gets whole elements only: bytes go through a 256 KiB
 *     bounce buffer per socket and a partial element waits there for its rest;
 *     a copying sink is read straight into the destination;
 *   - EOF, ECONNRESET, EPIPE (MSG_NOSIGNAL: never SIGPIPE) or the peer's FIN
 *     while sending -> COLL_ERR_ABORTED if the peer sent the abort byte on the
 *     control socket (or this communicator is aborted), else COLL_ERR_NETWORK,
 *     with a message naming the peer, its host and address; the error sticks
 *     to that peer.
 */
#include "transport/tcp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"

void coll_tcp_partition(size_t len, int nsocks, size_t off[], size_t slen[])
{
    if (nsocks < 1)
        nsocks = 1;
    if (len < COLL_TCP_STRIPE_MIN || nsocks == 1) {
        for (int i = 0; i < nsocks; i++) {
            off[i] = i ? len : 0;   /* empty stripes sit at the end */
            slen[i] = i ? 0 : len;
        }
        return;
    }
    size_t per = len / (size_t)nsocks + (len % (size_t)nsocks != 0);
    per = (per + COLL_TCP_STRIPE_ALIGN - 1) & ~(COLL_TCP_STRIPE_ALIGN - 1);
    for (int i = 0; i < nsocks; i++) {
        size_t o = (size_t)i * per;
        off[i] = o < len ? o : len;
        slen[i] = len - off[i] < per ? len - off[i] : per;
    }
}

static void xfer_start(coll_tcp_xfer_t *x, int nsocks, size_t len)
{
    size_t off[COLL_TCP_MAX_SOCKS], sl[COLL_TCP_MAX_SOCKS];
    coll_tcp_partition(len, nsocks, off, sl);
    for (int i = 0; i < nsocks; i++)
        x->st[i] = (coll_tcp_stripe_t){off[i], sl[i], 0, 0};
    x->len = len;
    x->done = 0;
    x->active = 1;
}

/* Abort byte on the control socket? wait_ms > 0: give it that long to arrive
 * (a data-socket EOF may overtake it). Marks ctrl_closed on EOF. */
static int ctrl_aborted(coll_tcp_peer_t *pc, int wait_ms)
{
    if (pc->aborted)
        return 1;
    if (pc->ctrl < 0 || pc->ctrl_closed)
        return 0;
    struct pollfd pf = {pc->ctrl, POLLIN, 0};
    if (poll(&pf, 1, wait_ms) <= 0)
        return 0;
    char c;
    ssize_t n = recv(pc->ctrl, &c, 1, MSG_DONTWAIT);
    if (n == 1 && c == COLL_TCP_ABORT_BYTE)
        pc->aborted = 1;
    else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        pc->ctrl_closed = 1;
    return pc->aborted;
}

/* The connection to peer broke (err: errno, 0 = EOF / peer closed). */
static coll_status_t tcp_fail(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int is_send, int sock,
                              int err)
{
    char d[160];
    const coll_tcp_xfer_t *x = is_send ? &pc->tx : &pc->rx;
    const char *what = is_send ? "send" : "receive";
    coll_tcp_peer_desc(comm, peer, d, sizeof d);
    if (atomic_load(&comm->aborted))
        pc->failed = coll_error(COLL_ERR_ABORTED, COLL_SUB_TCP,
                                "communicator aborted during a %zu-byte tcp %s %s %s", x->len, what,
                                is_send ? "to" : "from", d);
    else if (ctrl_aborted(pc, 200))
        pc->failed = coll_error(COLL_ERR_ABORTED, COLL_SUB_TCP,
                                "%s aborted during a %zu-byte %s (%zu bytes done)", d, x->len,
                                what, x->done);
    else
        pc->failed = coll_error(COLL_ERR_NETWORK, COLL_SUB_TCP,
                                "connection to %s lost during a %zu-byte %s after %zu bytes "
                                "(socket %d of %d): %s", d, x->len, what, x->done, sock + 1,
                                pc->nsocks,
                                err ? strerror(err) : "closed by the peer (it exited or crashed)");
    return pc->failed;
}

static coll_status_t tcp_peer(coll_comm *comm, int peer, coll_tcp_peer_t **out)
{
    if (!comm->tcp || !comm->tcp->peers || peer < 0 || peer >= comm->nranks ||
        !comm->tcp->peers[peer].nsocks)
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP, "no tcp connection to rank %d", peer);
    *out = &comm->tcp->peers[peer];
    return comm->tcp->peers[peer].failed;
}

static int would_block(void)
{
    return errno == EAGAIN || errno == EWOULDBLOCK;
}

/* Nothing moved: did the peer shut its end (FIN, error)? A genuine peer never
 * half-closes while we still send, so that means it aborted or died. */
static int peer_hung_up(const coll_tcp_peer_t *pc, const coll_tcp_xfer_t *x, int *sock)
{
    struct pollfd pf[COLL_TCP_MAX_SOCKS];
    int idx[COLL_TCP_MAX_SOCKS], n = 0;
    for (int i = 0; i < pc->nsocks; i++)
        if (x->st[i].pos < x->st[i].len) {
            pf[n] = (struct pollfd){pc->fd[i], POLLRDHUP, 0};
            idx[n++] = i;
        }
    if (poll(pf, (nfds_t)n, 0) <= 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
            *sock = idx[i];
            return 1;
        }
    return 0;
}

static coll_status_t tcp_send(coll_comm *comm, int peer, const void *buf, size_t len, size_t *done)
{
    coll_tcp_peer_t *pc;
    COLL_CHECK(tcp_peer(comm, peer, &pc));
    coll_tcp_xfer_t *x = &pc->tx;
    if (!x->active) {
        if (*done >= len)
            return COLL_SUCCESS;
        xfer_start(x, pc->nsocks, len);
        x->buf = buf;
    } else if (x->buf != buf || x->len != len) {
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP,
                          "tcp send of %zu bytes to rank %d posted while one of %zu bytes is in "
                          "flight", len, peer, x->len);
    }
    size_t before = x->done;
    for (int i = 0; i < pc->nsocks; i++) {
        coll_tcp_stripe_t *s = &x->st[i];
        while (s->pos < s->len) {
            ssize_t n = send(pc->fd[i], (const char *)buf + s->off + s->pos, s->len - s->pos,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                s->pos += (size_t)n;
                x->done += (size_t)n;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && would_block()) {
                break;
            } else {
                return tcp_fail(comm, peer, pc, 1, i, n < 0 ? errno : 0);
            }
        }
    }
    int sock;
    if (x->done == before && x->done < len && peer_hung_up(pc, x, &sock))
        return tcp_fail(comm, peer, pc, 1, sock, 0);
    *done = x->done;
    if (x->done == len)
        x->active = 0;
    return COLL_SUCCESS;
}

/* Read what socket i has of its stripe; hand whole elements to the sink. */
static coll_status_t recv_stripe(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int i)
{
    coll_tcp_xfer_t *x = &pc->rx;
    coll_tcp_stripe_t *s = &x->st[i];
    const coll_sink_t *sk = &x->sink;
    while (s->given < s->len) {
        ssize_t n;
        if (!sk->fn) {
            n = recv(pc->fd[i], (char *)sk->dst + s->off + s->pos, s->len - s->pos, MSG_DONTWAIT);
            if (n > 0) {
                s->pos += (size_t)n;
                s->given = s->pos;
                x->done += (size_t)n;
                continue;
            }
        } else {
            if (!pc->bounce[i] && !(pc->bounce[i] = malloc(COLL_TCP_BOUNCE)))
                return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
            size_t want = COLL_TCP_BOUNCE - pc->fill[i];
            if (want > s->len - s->pos)
                want = s->len - s->pos;
            n = recv(pc->fd[i], pc->bounce[i] + pc->fill[i], want, MSG_DONTWAIT);
            if (n > 0) {
                s->pos += (size_t)n;
                pc->fill[i] += (size_t)n;
                size_t whole = pc->fill[i] - pc->fill[i] % sk->esize;
                if (whole) {
                    size_t o = s->off + s->given;
                    sk->fn((char *)sk->dst + o, (const char *)sk->src2 + o, pc->bounce[i],
                           whole / sk->esize);
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
        return tcp_fail(comm, peer, pc, 0, i, n < 0 ? errno : 0);
    }
    return COLL_SUCCESS;
}

static coll_status_t tcp_recv(coll_comm *comm, int peer, const coll_sink_t *sink, size_t len,
                              size_t *done)
{
    coll_tcp_peer_t *pc;
    COLL_CHECK(tcp_peer(comm, peer, &pc));
    coll_tcp_xfer_t *x = &pc->rx;
    if (!x->active) {
        if (*done >= len)
            return COLL_SUCCESS;
        if (sink->fn && (sink->esize == 0 || len % sink->esize || COLL_TCP_STRIPE_ALIGN % sink->esize))
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP,
                              "tcp recv-reduce of %zu bytes from rank %d: not whole %zu-byte "
                              "elements", len, peer, sink->esize);
        xfer_start(x, pc->nsocks, len);
        x->sink = *sink;
        for (int i = 0; i < pc->nsocks; i++)
            pc->fill[i] = 0;
    } else if (x->len != len || x->sink.dst != sink->dst || x->sink.fn != sink->fn) {
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP,
                          "tcp recv of %zu bytes from rank %d posted while one of %zu bytes is "
                          "in flight", len, peer, x->len);
    }
    for (int i = 0; i < pc->nsocks; i++)
        COLL_CHECK(recv_stripe(comm, peer, pc, i));
    *done = x->done;
    if (x->done == len)
        x->active = 0;
    return COLL_SUCCESS;
}

static int tcp_pollfds(coll_comm *comm, int peer, int for_send, struct pollfd *fds, int max)
{
    if (!comm->tcp || !comm->tcp->peers || peer < 0 || peer >= comm->nranks)
        return 0;
    const coll_tcp_peer_t *pc = &comm->tcp->peers[peer];
    const coll_tcp_xfer_t *x = for_send ? &pc->tx : &pc->rx;
    short ev = for_send ? (short)(POLLOUT | POLLRDHUP) : (short)POLLIN;
    int n = 0;
    for (int i = 0; i < pc->nsocks && n < max; i++) {
        if (x->active && (for_send ? x->st[i].pos >= x->st[i].len : x->st[i].given >= x->st[i].len))
            continue;
        fds[n++] = (struct pollfd){pc->fd[i], ev, 0};
    }
    return n;
}

const coll_transport_ops_t coll_tcp_ops = {"tcp", tcp_send, tcp_recv, tcp_pollfds};

void coll_tcp_send_abort(coll_comm *comm)
{
    struct coll_tcp *t = comm->tcp;
    if (!t || !t->peers || atomic_exchange(&t->abort_sent, 1))
        return;
    char a = COLL_TCP_ABORT_BYTE;
    for (int p = 0; p < comm->nranks; p++) {
        coll_tcp_peer_t *pc = &t->peers[p];
        if (!pc->nsocks)
            continue;
        if (pc->ctrl >= 0) {
            ssize_t n = send(pc->ctrl, &a, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)n;
            shutdown(pc->ctrl, SHUT_WR);
        }
    }
    /* after every abort byte is out: data sockets EOF at the peers */
    for (int p = 0; p < comm->nranks; p++)
        for (int i = 0; i < t->peers[p].nsocks; i++)
            if (t->peers[p].fd[i] >= 0)
                shutdown(t->peers[p].fd[i], SHUT_RDWR);
    COLL_INFO(COLL_SUB_TCP, "sent abort to %d tcp peer(s)", t->npeers);
}

coll_status_t coll_tcp_poll_abort(coll_comm *comm)
{
    struct coll_tcp *t = comm->tcp;
    if (!t || !t->ctrl_pfd || t->npeers == 0)
        return COLL_SUCCESS;
    int n = poll(t->ctrl_pfd, (nfds_t)t->npeers, 0);
    for (int k = 0; k < t->npeers && n > 0; k++) {
        if (!t->ctrl_pfd[k].revents)
            continue;
        int p = t->ctrl_rank[k];
        coll_tcp_peer_t *pc = &t->peers[p];
        ctrl_aborted(pc, 0);
        if (pc->ctrl_closed || pc->aborted)
            t->ctrl_pfd[k].fd = -1;   /* poll ignores it from now on */
        if (pc->aborted && !t->aborted_by)
            t->aborted_by = p + 1;
        else if (pc->ctrl_closed)
            COLL_DEBUG(COLL_SUB_TCP, "rank %d closed its tcp connections", p);
    }
    if (t->aborted_by) {
        char d[160];
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_TCP, "%s aborted",
                          coll_tcp_peer_desc(comm, t->aborted_by - 1, d, sizeof d));
    }
    return COLL_SUCCESS;
}
