/*
 * tcp_internal.h - private state of the TCP transport. tcp_listen.c: state,
 * listener, teardown, helpers; tcp_setup.c: connections and handshakes;
 * tcp.c: data path, aborts.
 *
 * Per remote peer: nsocks data sockets plus one control socket. nsocks is
 * twice COLL_NSOCKS: each connection carries data one way only, the lower
 * rank's messages on sockets [0, nsocks/2), the higher rank's on the rest.
 * With both directions on one connection, the receiving side's kernel work
 * (run on the other rank's core) and the sending rank's system calls contend
 * for the same socket lock: AllReduce 64 MiB between two namespace hosts
 * median 1.3x -> 1.85x MPICH's (bench/results/allreduce-hosts-ab-20261202.md). Socket index
 * nsocks of the handshake is the control socket; the only thing ever sent on it
 * is an abort notice (coll_tcp_send_abort): COLL_TCP_ABORT_BYTE, one length
 * byte and that many bytes of the reason, so a peer's EOF on a data socket can
 * be told apart from an abort, and the abort explained.
 *
 * Message framing. Both sides know every message's length, so:
 *   len <  COLL_TCP_STRIPE_MIN, or one socket: the raw bytes on the
 *   direction's first socket;
 *   len >= COLL_TCP_STRIPE_MIN: chunks dealt to whichever socket takes data
 *   (TCP streams of one link are not fair: with fixed stripes one socket
 *   often finished in half the time of the other and idled). A chunk is a
 *   16-byte header {u64 offset, u64 length, little-endian} and its bytes;
 *   chunk offsets and lengths are multiples of COLL_TCP_STRIPE_ALIGN (but the
 *   last), so a reducing sink is fed whole elements. When the message is all
 *   dealt, every socket gets an end header {COLL_TCP_CHUNK_END, 0}; a receive
 *   completes when each socket delivered its end header and the bytes add up.
 * Only one send and one receive per peer are in flight at a time (the executor
 * posts the next message to a peer only after the previous one completed), and
 * the end headers keep consecutive messages apart on every socket, so a
 * receive never reads into the next message.
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
#define COLL_TCP_CHUNK_HDR 16
#define COLL_TCP_CHUNK_END UINT64_MAX

/* Handshake: every connection starts with one header from each side
 * (connector: hello, acceptor: ack), all integers little-endian. */
#define COLL_TCP_MAGIC 0x31544243u             /* "CBT1" */
#define COLL_TCP_VERSION 3u                    /* 2: chunk headers in striped messages; 3: a connection per direction */
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

/* Per socket state of the message in flight: the current chunk and its header. */
enum { COLL_TCP_SX_IDLE, COLL_TCP_SX_CHUNK, COLL_TCP_SX_ENDED };
typedef struct {
    int state;                  /* IDLE: next header due; CHUNK: header/bytes moving; ENDED */
    int is_end;                 /* send: the header in hdr is the end header */
    size_t off, len;            /* current chunk: [off, off + len) of the message */
    size_t pos;                 /* chunk bytes through the socket */
    size_t given;               /* recv: chunk bytes handed to the sink (<= pos) */
    size_t hdr_pos;             /* header bytes through the socket (COLL_TCP_CHUNK_HDR: all) */
    uint8_t hdr[COLL_TCP_CHUNK_HDR];
} coll_tcp_stripe_t;

/* Chunk headers (pure; unit-tested). */
void coll_tcp_chunk_encode(uint64_t off, uint64_t len, uint8_t out[COLL_TCP_CHUNK_HDR]);
void coll_tcp_chunk_decode(const uint8_t in[COLL_TCP_CHUNK_HDR], uint64_t *off, uint64_t *len);
/* Whether a message of len bytes is chunked over nsocks sockets, and the
 * chunk size then: min(cfg, len / nsocks) rounded up to COLL_TCP_STRIPE_ALIGN. */
int coll_tcp_chunked(size_t len, int nsocks);
size_t coll_tcp_chunk_size(size_t len, int nsocks, size_t cfg);

typedef struct {
    int active;
    int chunked;
    const void *buf;            /* send */
    coll_sink_t sink;           /* recv */
    size_t len, done;           /* done: message bytes through (send) / handed to the sink (recv) */
    size_t next;                /* send: first byte not yet dealt to a socket */
    size_t chunk;               /* send: chunk size */
    coll_tcp_stripe_t st[COLL_TCP_MAX_SOCKS];
} coll_tcp_xfer_t;

typedef struct {
    int nsocks;                 /* 0: not a tcp peer */
    int fd[COLL_TCP_MAX_SOCKS];
    int ctrl;                   /* control socket (abort notices) */
    int ctrl_closed;            /* EOF seen on ctrl: peer closed (not an error by itself) */
    int aborted;                /* peer sent the abort byte */
    char abort_why[256];        /* the reason it sent with it ("" if none arrived) */
    coll_status_t failed;       /* sticky error of this peer's connection */
    coll_tcp_xfer_t tx, rx;
    uint8_t *bounce[COLL_TCP_MAX_SOCKS];   /* recv-reduce staging, allocated on first use */
    size_t fill[COLL_TCP_MAX_SOCKS];       /* bytes waiting in bounce (a partial element) */
} coll_tcp_peer_t;

struct coll_tcp {
    int listen_fd;
    struct sockaddr_storage addr;           /* where we listen (published) */
    char ifname[32];
    int nsocks;                             /* data sockets per peer: 2 x COLL_NSOCKS of this rank */
    int sockbuf;                            /* COLL_SOCK_BUF (0 = kernel default) */
    int notsent;                            /* COLL_SOCK_NOTSENT (TCP_NOTSENT_LOWAT, 0 = unset) */
    size_t chunk;                           /* COLL_SOCK_CHUNK */
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
void coll_tcp_sockopts(int fd, int sockbuf, int notsent);

#endif
