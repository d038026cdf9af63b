/*
 * prim.h - the primitives every algorithm is written in: send, recv (copy),
 * recv-reduce, posted together as one step and progressed concurrently by the
 * executor until all complete. Waiting spins briefly, then blocks (futex
 * doorbell for shm, poll for tcp), and fails with COLL_ERR_TIMEOUT after
 * COLL_EXEC_TIMEOUT naming the peers still outstanding, or COLL_ERR_ABORTED.
 * Peers are global ranks; zero-length primitives complete at once.
 */
#ifndef COLL_PRIM_H
#define COLL_PRIM_H

#include <poll.h>
#include <stddef.h>
#include "coll.h"
#include "core/log.h"
#include "core/comm.h"
#include "core/reduce.h"

typedef enum { COLL_PRIM_SEND, COLL_PRIM_RECV, COLL_PRIM_RECV_REDUCE } coll_prim_type_t;

typedef struct {
    coll_prim_type_t type;
    int peer;                 /* global rank */
    const void *src;          /* SEND: data */
    void *dst;                /* RECV*: destination */
    const void *src2;         /* RECV_REDUCE: dst = src2 OP incoming (src2 may be dst) */
    size_t bytes;
    size_t done;              /* progress (executor) */
} coll_prim_t;

/* Progress all ops until every one completes. dt/op are used by RECV_REDUCE. */
coll_status_t coll_prim_run(coll_comm *comm, coll_prim_t *ops, int nops, coll_dtype_t dt,
                            coll_op_t op);

/* Shorthands building a step. */
static inline coll_prim_t coll_prim_send(int peer, const void *src, size_t bytes)
{
    coll_prim_t p = {COLL_PRIM_SEND, peer, src, NULL, NULL, bytes, 0};
    return p;
}
static inline coll_prim_t coll_prim_recv(int peer, void *dst, size_t bytes)
{
    coll_prim_t p = {COLL_PRIM_RECV, peer, NULL, dst, NULL, bytes, 0};
    return p;
}
static inline coll_prim_t coll_prim_recv_reduce(int peer, void *dst, const void *src2, size_t bytes)
{
    coll_prim_t p = {COLL_PRIM_RECV_REDUCE, peer, NULL, dst, src2, bytes, 0};
    return p;
}

/* One send and one receive at once (either peer may be -1 to skip). */
coll_status_t coll_prim_sendrecv(coll_comm *comm, const void *sbuf, size_t sbytes, int dst,
                                 void *rbuf, size_t rbytes, int src);
/* Send sbuf to dst while receiving from src and reducing: rdst = rsrc2 OP in. */
coll_status_t coll_prim_send_recv_reduce(coll_comm *comm, const void *sbuf, size_t sbytes,
                                         int dst, void *rdst, const void *rsrc2,
                                         size_t rbytes, int src, coll_dtype_t dt, coll_op_t op);

/* Wait helper used by the executor and by shm barriers: returns non-success
 * when the communicator is aborted, a local peer died or the deadline passed. */
typedef struct {
    double deadline;          /* coll_now() value, 0 = none */
    unsigned spins;
    unsigned yields;
    int suspect;              /* local peer seen dead once, confirmed on the next idle call */
    double tcp_idle_since;    /* sockets-only wait: when progress stopped (0 = progressing) */
    int short_poll;           /* the poll set misses some pending peer: poll 1 ms, not 100 */
} coll_waiter_t;
void coll_waiter_init(coll_waiter_t *w, const coll_comm *comm);
/* Called when nothing progressed. 'waiting_for' (global ranks, n) is used in
 * the timeout message. seen = doorbell value read before the progress attempt. */
coll_status_t coll_waiter_idle(coll_waiter_t *w, coll_comm *comm, uint32_t seen,
                               const int *waiting_for, int n, struct pollfd *fds, int nfds);

#endif
