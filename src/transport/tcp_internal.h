/*
 * tcp_internal.h - private state of the TCP transport. tcp_listen.c: state,
 * listener, teardown, helpers; tcp_setup.c: connections and handshakes;
 * tcp.c: data path, aborts.
 *
 * Per remote peer: nsocks data sockets plus one control socket. Socket index
 * nsocks of the handshake is the control socket; the only byte ever sent on it
 * is COLL_TCP_ABORT_BYTE (coll_tcp_send_abort), so a peer's EOF on a data
 * socket can be told apart from an abort.
 *
 * Message striping (both sides compute it; no per-message header):
 *   len <  COLL_TCP_STRIPE_MIN: the whole message on socket 0;
 *   len >= COLL_TCP_STRIPE_MIN: k contiguous stripes of ceil(len/k) rounded up
 *   to COLL_TCP_STRIPE_ALIGN bytes, stripe i on socket i (the last one shorter,
 *   possibly empty). Every stripe boundary is a multiple of 64, so of any
 *   element size, and a reducing sink can be fed whole elements per stripe.
 * Only one send and one receive per peer are in flight at a time (the executor
 * posts the next message to a peer only after the previous one completed), so
 * every socket carries the stripes of consecutive messages in the same order on
 * both ends, and a receive never reads past the end of its own stripe.
 */
#ifndef COLL_TCP_INTERNAL_H
#define COLL_TCP_INTERNAL_H

#include <poll.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "transport/transport.h"

#define COLL_TCP_MAX_SOCKS 16
#define COLL_TCP_STRIPE_MIN ((size_t)64 << 10)
#define COLL_TCP_STRIPE_ALIGN ((size_t)64)
#define COLL_TCP_BOUNCE ((size_t)256 << 10)    /* recv-reduce staging per socket */
#define COLL_TCP_ABORT_BYTE 'A'

/* Handshake: every connection starts with one header from each side
 * (connector: hello, acceptor: ack), all integers little-endian. */
#define COLL_TCP_MAGIC 0x31544243u             /* "CBT1" */
#define COLL_TCP_VERSION 1u
#define COLL_TCP_HDR_BYTES 64
#define COLL_TCP_HELLO_TIMEOUT_S 10.0          /* silence allowed to an accepted connection */

typedef struct {
    uint32_t magic, version;
    uint8_t secret[32];
    uint64_t nonce;
    uint32_t from, to;          /* sender / intended receiver rank */
    uint16_t idx, nsocks;       /* socket index (nsocks = control socket), data sockets */
    uint32_t ack;               /* 0 hello, 1 ack */
} coll_tcp_hdr_t;

void coll_tcp_hdr_encode(const coll_tcp_hdr_t *h, uint8_t out[COLL_TCP_HDR_BYTES]);
void coll_tcp_hdr_decode(const uint8_t in[COLL_TCP_HDR_BYTES], coll_tcp_hdr_t *h);

/* Stripe i of a message: [off, off + len) of it goes over socket i. */
typedef struct {
    size_t off, len;
    size_t pos;                 /* bytes through the socket */
    size_t given;               /* recv: bytes handed to the sink (<= pos) */
} coll_tcp_stripe_t;

/* Deterministic split of len bytes over nsocks sockets (pure; unit-tested). */
void coll_tcp_partition(size_t len, int nsocks, size_t off[], size_t slen[]);

typedef struct {
    int active;
    const void *buf;            /* send */
    coll_sink_t sink;           /* recv */
    size_t len, done;
    coll_tcp_stripe_t st[COLL_TCP_MAX_SOCKS];
} coll_tcp_xfer_t;

typedef struct {
    int nsocks;                 /* 0: not a tcp peer */
    int fd[COLL_TCP_MAX_SOCKS];
    int ctrl;                   /* control socket (abort notices) */
    int ctrl_closed;            /* EOF seen on ctrl: peer closed (not an error by itself) */
    int aborted;                /* peer sent the abort byte */
    coll_status_t failed;       /* sticky error of this peer's connection */
    coll_tcp_xfer_t tx, rx;
    uint8_t *bounce[COLL_TCP_MAX_SOCKS];   /* recv-reduce staging, allocated on first use */
    size_t fill[COLL_TCP_MAX_SOCKS];       /* bytes waiting in bounce (a partial element) */
} coll_tcp_peer_t;

struct coll_tcp {
    int listen_fd;
    struct sockaddr_storage addr;           /* where we listen (published) */
    char ifname[32];
    int nsocks;                             /* COLL_NSOCKS of this rank */
    int sockbuf;                            /* COLL_SOCK_BUF (0 = kernel default) */
    coll_tcp_peer_t *peers;                 /* [nranks], NULL before setup */
    int npeers;                             /* tcp peers */
    struct pollfd *ctrl_pfd;                /* [npeers] for coll_tcp_poll_abort */
    int *ctrl_rank;                         /* [npeers] */
    int aborted_by;                         /* rank + 1 of the first peer that aborted */
    atomic_int abort_sent;
};

/* comm->tcp allocated with this rank's knobs (idempotent). */
coll_status_t coll_tcp_state(coll_comm *comm);
/* Whether peer p is reached over tcp (the peers shm did not take). */
int coll_tcp_is_peer(const coll_comm *comm, int p);
/* Peer p's published listener address. */
void coll_tcp_peer_sockaddr(const coll_comm *comm, int p, struct sockaddr_storage *ss);
/* "rank 3 (host node2, 10.0.0.2:40123)" */
const char *coll_tcp_peer_desc(const coll_comm *comm, int p, char *buf, size_t len);
/* Socket options of data/control sockets: non-blocking is set by the caller. */
void coll_tcp_sockopts(int fd, int sockbuf);

#endif
