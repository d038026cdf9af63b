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
    int peer;         /* global rank */
    const void *src;  /* SEND: data */
    void *dst;        /* RECV*: destination */
    const void *src2; /* RECV_REDUCE: dst = src2 OP incoming (src2 may be dst) */
    size_t bytes;
    size_t done; /* progress (executor) */
} coll_prim_t;

/* Progress all ops until every one completes. dt/op are used by RECV_REDUCE. */
coll_status_t coll_prim_run(coll_comm *comm, coll_prim_t *ops, int nops, coll_dtype_t dt, coll_op_t op);

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
coll_status_t coll_prim_sendrecv(coll_comm *comm, const void *sbuf, size_t sbytes, int dst, void *rbuf, size_t rbytes,
                                 int src);
/* Send sbuf to dst while receiving from src and reducing: rdst = rsrc2 OP in. */
coll_status_t coll_prim_send_recv_reduce(coll_comm *comm, const void *sbuf, size_t sbytes, int dst, void *rdst,
                                         const void *rsrc2, size_t rbytes, int src, coll_dtype_t dt, coll_op_t op);

/* Pairwise exchange over the members of g: step s = 1..p-1 sends to member
 * me+s and receives from me-s (mod p), COLL_ALLTOALL_WINDOW steps posted at
 * once so that a link does not idle while the last bytes of a step drain
 * (steps of one window go to distinct peers, so order per peer is kept).
 * Across hosts each block moves in COLL_NET_CHUNK pieces, the window's pieces
 * in lockstep, as the ring does: one 16 MiB block a step left the links of 4
 * namespace hosts at 5 Gbit/s two thirds busy (AlltoAll 64M 122 ms, the ring
 * AllGather of the same bytes 88-106 ms; in pieces 91-95 ms).
 * blk(ctx, j) names the block for member j: what to send it and where its
 * block lands; the caller handles its own block. O(window) state; per call
 * p-1 steps and one O(p) look at the group (coll_group_is_local). */
typedef struct {
    const void *sbuf;
    size_t sbytes;
    void *rbuf;
    size_t rbytes;
} coll_pair_blk_t;
typedef coll_pair_blk_t (*coll_pair_fn)(const void *ctx, int member);
coll_status_t coll_prim_pairwise(coll_comm *comm, const coll_group_t *g, coll_pair_fn blk, const void *ctx);

#endif
