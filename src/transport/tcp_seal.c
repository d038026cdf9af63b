/*
 * tcp_seal.c - TCP transport, COLL_ENCRYPT=1: receiving sealed records (the
 * framing is in tcp_internal.h; sealing is in tcp.c's send path).
 *
 * A record is read whole into the socket's bounce buffer: its 16-byte header,
 * checked against the message's bounds before a byte of the body is read (so
 * the read is bounded by COLL_TCP_SEAL_MAX), then the body (ciphertext and
 * tag). Only once the tag checks out are the header's offset and length acted
 * on and the plaintext handed to the sink (a copy, or a reduction of whole
 * elements: records are whole elements). A failed tag is COLL_ERR_AUTH naming
 * the peer and the connection, sticky to the peer: the collective fails and
 * the communicator aborts like on any transport error.
 */
#include "transport/tcp_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/log.h"

/* A record's header from socket i is in: check its bounds (acting on nothing). */
static coll_status_t sealed_header(int peer, coll_tcp_peer_t *pc, int i)
{
    coll_tcp_xfer_t *x = &pc->rx;
    coll_tcp_stripe_t *s = &x->st[i];
    uint64_t off, len;
    coll_tcp_chunk_decode(s->hdr, &off, &len);
    s->is_end = off == COLL_TCP_CHUNK_END && len == 0;
    if (!s->is_end && (len > COLL_TCP_SEAL_MAX || !coll_tcp_chunk_fits(x, off, len)))
        return pc->failed = coll_error(COLL_ERR_AUTH, COLL_SUB_TCP,
                                       "bad sealed chunk header [%llu, +%llu) from rank %d on socket %d in a %zu-byte "
                                       "message (COLL_ENCRYPT=1): altered on the way, or ranks called different "
                                       "collectives or counts",
                                       (unsigned long long)off, (unsigned long long)len, peer, i + 1, x->len);
    s->off = s->is_end ? 0 : (size_t)off;
    s->len = s->is_end ? 0 : (size_t)len;
    s->wlen = s->len + COLL_AEAD_TAG_BYTES;
    s->pos = s->given = 0;
    s->state = COLL_TCP_SX_CHUNK;
    return COLL_SUCCESS;
}

/* The record on socket i is all in its bounce buffer: open it, then act on it. */
static coll_status_t sealed_open(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int i)
{
    coll_tcp_xfer_t *x = &pc->rx;
    coll_tcp_stripe_t *s = &x->st[i];
    const coll_sink_t *sk = &x->sink;
    uint8_t *b = pc->bounce[i];
    uint64_t rec = pc->srx[i].ctr;
    if (!coll_aead_open(&pc->srx[i], s->hdr, COLL_TCP_CHUNK_HDR, b, s->len, b)) {
        char d[160];
        return pc->failed = coll_error(
                   COLL_ERR_AUTH, COLL_SUB_TCP,
                   "authentication failed on data from %s: record %llu on connection %d of %d (%s [%zu, +%zu) of a "
                   "%zu-byte message) does not carry its tag (COLL_ENCRYPT=1): altered on the way or not sent by "
                   "that rank; its bytes were not used",
                   coll_tcp_peer_desc(comm, peer, d, sizeof d), (unsigned long long)rec, i + 1, pc->nrecv,
                   s->is_end ? "end of" : "chunk", s->off, s->len, x->len);
    }
    s->hdr_pos = 0;
    if (s->is_end) {
        s->state = COLL_TCP_SX_ENDED;
        for (int j = 0; j < pc->nrecv; j++)
            if (x->st[j].state != COLL_TCP_SX_ENDED)
                return COLL_SUCCESS;
        if (x->done != x->len)
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_TCP,
                              "message from rank %d ended after %zu of %zu bytes: ranks called different "
                              "collectives or counts",
                              peer, x->done, x->len);
        return COLL_SUCCESS;
    }
    if (sk->fn)
        sk->fn((char *)sk->dst + s->off, (const char *)sk->src2 + s->off, b, s->len / sk->esize);
    else
        memcpy((char *)sk->dst + s->off, b, s->len);
    s->given = s->len;
    x->done += s->len;
    s->state = COLL_TCP_SX_IDLE;
    return COLL_SUCCESS;
}

coll_status_t coll_tcp_recv_sealed(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int i)
{
    coll_tcp_stripe_t *s = &pc->rx.st[i];
    if (!pc->bounce[i]) {
        if (!(pc->bounce[i] = malloc(COLL_TCP_BOUNCE)))
            return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
        memset(pc->bounce[i], 0, COLL_TCP_BOUNCE); /* every page now, not one per later call */
        comm->first_use++;
    }
    for (;;) {
        ssize_t n;
        if (s->state == COLL_TCP_SX_ENDED)
            return COLL_SUCCESS;
        if (s->state == COLL_TCP_SX_IDLE) {
            n = recv(pc->rfd[i], s->hdr + s->hdr_pos, COLL_TCP_CHUNK_HDR - s->hdr_pos, MSG_DONTWAIT);
            if (n > 0 && (s->hdr_pos += (size_t)n) == COLL_TCP_CHUNK_HDR)
                COLL_CHECK(sealed_header(peer, pc, i));
        } else {
            n = recv(pc->rfd[i], pc->bounce[i] + s->pos, s->wlen - s->pos, MSG_DONTWAIT);
            if (n > 0 && (s->pos += (size_t)n) == s->wlen)
                COLL_CHECK(sealed_open(comm, peer, pc, i));
        }
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return COLL_SUCCESS;
        return coll_tcp_fail(comm, peer, pc, 0, i, n < 0 ? errno : 0);
    }
}
