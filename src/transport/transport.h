/*
 * transport.h - how bytes move between two ranks. A transport is a small table
 * of non-blocking progress functions (NCCL style). Messages between a directed
 * pair are FIFO and keep their boundaries; both sides know each length.
 *
 * Algorithms never call transports directly: they post primitives (prim.h),
 * and the executor progresses them over whichever transport serves each peer
 * (shm within a host, tcp across hosts).
 */
#ifndef COLL_TRANSPORT_H
#define COLL_TRANSPORT_H

#include <poll.h>
#include <stddef.h>
#include "coll.h"
#include "core/comm.h"
#include "core/reduce.h"

/* Where received bytes go. Piece [off, off+len) of the message:
 *   fn == NULL: memcpy(dst + off, piece, len)
 *   fn != NULL: fn(dst + off, src2 + off, piece, len / esize)   (dst may equal src2)
 * Transports always hand over whole elements (len multiple of esize). */
typedef struct {
    void *dst;
    const void *src2;
    coll_reduce_fn fn;
    size_t esize;
} coll_sink_t;

void coll_sink_apply(const coll_sink_t *s, size_t off, const void *piece, size_t len);

typedef struct coll_transport_ops {
    const char *name;
    /* Push as much of buf[*done, len) as the channel takes now; advance *done. */
    coll_status_t (*send)(coll_comm *comm, int peer, const void *buf, size_t len, size_t *done);
    /* Deliver as much of the message as has arrived to the sink; advance *done. */
    coll_status_t (*recv)(coll_comm *comm, int peer, const coll_sink_t *sink, size_t len,
                          size_t *done);
    /* Fill fds to poll while this send/recv is pending (POLLOUT / POLLIN);
     * returns how many (0 when the transport signals through the shm doorbell). */
    int (*pollfds)(coll_comm *comm, int peer, int for_send, struct pollfd *fds, int max);
} coll_transport_ops_t;

extern const coll_transport_ops_t coll_shm_ops;
extern const coll_transport_ops_t coll_tcp_ops;

/* Setup and teardown, called by comm init/destroy. coll_tcp_setup opens no
 * connection: tcp peers connect lazily on their first send (tcp_internal.h). */
coll_status_t coll_shm_setup(coll_comm *comm);
void coll_shm_teardown(coll_comm *comm);
coll_status_t coll_tcp_setup(coll_comm *comm);
void coll_tcp_teardown(coll_comm *comm);
/* This rank aborts: shut its tcp sockets so peers blocked on it see EOF now
 * (the reason travels through the bootstrap: coll_bootstrap_abort). */
void coll_tcp_abort(coll_comm *comm);
/* Create the tcp listener before the init allgather (fills me's addr/port);
 * every rank does, so every peer record carries an address. */
coll_status_t coll_tcp_listen(coll_comm *comm, coll_peer_info_t *me);
/* Right after the exchange: fail with the listener's error if this rank
 * could not listen and has peers on other hosts (or shm is off), so every such
 * rank fails at the same point, with its own reason, before using the store again. */
coll_status_t coll_tcp_check_listener(coll_comm *comm);

#endif
