/*
 * tcp_internal.h - private state of the TCP transport. tcp_listen.c: state,
 * listener, teardown, helpers; tcp_setup.c: lazy connections and handshakes;
 * tcp_fds.c: the descriptor budget; tcp.c: data path.
 *
 * Connections are opened lazily, one set per direction (NCCL p2p / UCX wire-up
 * style): no socket exists after init but each rank's data listener, whose
 * address every peer record carries. On its first send to peer p, rank r opens
 * its COLL_NSOCKS sockets to p's listener (non-blocking connect, then the
 * handshake of core/auth.h: a 64-byte hello {magic, version, Nc, job nonce,
 * from, to, socket index, nsocks}, p's Na | MAC_A, r's MAC_C; then data).
 * p accepts on its listener while a receive from a peer without sockets is
 * pending, and (rate-limited) whenever it progresses; it answers the hello,
 * checks r's MAC and only then files the socket under r. r checks p's MAC
 * before it sends a byte of data, so neither end talks to a stranger, and
 * the secret never crosses the wire. A connection p dropped before the
 * handshake ended (its pending set full, say) shows up at r as an EOF during
 * the handshake and is opened again: nothing is lost silently. Deterministic rule:
 * the SENDER of a direction always connects it, so the two ends of a pair never
 * open the same connection and simultaneous first sends need no tie-break.
 * Each connection carries data one way only: with both directions on one
 * connection, the receiving side's kernel work (run on the other rank's core)
 * and the sending rank's system calls contend for the same socket lock:
 * AllReduce 64 MiB between two namespace hosts median 1.3x -> 1.85x MPICH's
 * (bench/results/allreduce-hosts-ab-20261202.md).
 *
 * Growth with N ranks: a pointer table of N entries (8 bytes each); a peer
 * record (1.7 KB) and its sockets (COLL_NSOCKS each way) only for peers this
 * rank actually sent to or received from; a fixed 39 KB per communicator
 * (accepted connections waiting for their hello: at most COLL_TCP_MAX_PENDING).
 * Aborts travel through the bootstrap (coll_bootstrap_abort / check_abort),
 * not through the sockets.
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
 * COLL_ENCRYPT=1 (docs/security.md): every message is chunked, even on one
 * socket, in chunks of at most COLL_TCP_SEAL_MAX bytes, and every chunk and
 * end header is a sealed record: the 16-byte header in clear (the AEAD's
 * associated data), then the chunk's ciphertext and a 16-byte tag (the end
 * header's record is the tag alone), sealed under the connection's key with
 * its record counter as nonce (core/aead.h). The receiver reads a record whole
 * into its bounce buffer, and acts on neither the header nor the bytes until
 * the tag checks out; a failed tag is COLL_ERR_AUTH naming the peer and the
 * socket. The sender seals a chunk into its own staging buffer when it deals
 * it, and a dealt chunk never goes back to the pool (its nonce is spent).
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
#include "bootstrap/bootstrap.h"
#include "core/aead.h"
#include "core/netif.h"
#include "transport/transport.h"

#define COLL_TCP_MAX_SOCKS 8 /* per direction: COLL_NSOCKS <= 8 */
#define COLL_TCP_STRIPE_MIN ((size_t)64 << 10)
/* COLL_NSOCKS auto (-1): this many sockets a direction while the ranks on
 * this machine (namespaces and containers of one kernel included) fit its
 * cores, else 1. A second stream lets a pair of ranks use two cores' TCP
 * processing (2 namespace hosts x 1 rank, AllReduce 1M without a rate limit:
 * 388 vs 439 us); with more ranks than cores every core already runs TCP for
 * several ranks, and striping only adds system calls and wake-ups per message:
 * 4 hosts x 4 ranks on 2 cores, AlltoAll 1M 9.4 vs 5.7 ms, 16M 85 vs 66 ms;
 * 4 x 1 at 5 Gbit/s, AllReduce 64M 1.12x and AlltoAll 1M 1.17x faster with one
 * (bench/results/nsocks-auto-20261204.md). */
#define COLL_TCP_AUTO_SOCKS 2
#define COLL_TCP_STRIPE_ALIGN ((size_t)64)
#define COLL_TCP_BOUNCE ((size_t)256 << 10) /* recv-reduce staging per socket */
#define COLL_TCP_CHUNK_HDR 16
/* COLL_ENCRYPT=1: the largest chunk (a record: it and its tag fit a bounce buffer) */
#define COLL_TCP_SEAL_MAX (COLL_TCP_BOUNCE - COLL_TCP_STRIPE_ALIGN)
#define COLL_TCP_CHUNK_END UINT64_MAX
#define COLL_TCP_MAX_PENDING 256 /* accepted connections still owing a hello */
#define COLL_TCP_BACKLOG \
    4096                             /* listen backlog (the kernel caps it at somaxconn):
                                                  lazy connects may arrive from many ranks at once */
#define COLL_TCP_ACCEPT_EVERY_S 0.01 /* hot-path accept check at most this often */

/* Handshake: the connector's hello opens every connection, all integers
 * little-endian; the acceptor answers Na | MAC_A, the connector MAC_C, then
 * data follows. */
#define COLL_TCP_MAGIC 0x31544243u /* "CBT1" */
#define COLL_TCP_VERSION 5u        /* 2: chunk headers; 3: a connection per direction; 4: lazy; 5: challenge-response */
#define COLL_TCP_HDR_BYTES 64
#define COLL_TCP_HELLO_ENCRYPT 1u     /* hello flag: the sender has COLL_ENCRYPT=1 */
#define COLL_TCP_HELLO_TIMEOUT_S 10.0 /* silence allowed to an accepted connection */

typedef struct {
    uint32_t magic, version;
    uint8_t nc[32];       /* the connector's fresh nonce */
    uint64_t nonce;       /* the communicator's (job) */
    uint32_t from, to;    /* sender / intended receiver rank */
    uint16_t idx, nsocks; /* socket index, the sender's sockets in this direction */
    uint32_t ack;         /* flags: COLL_TCP_HELLO_ENCRYPT (3 had an ack here) */
} coll_tcp_hdr_t;

void coll_tcp_hdr_encode(const coll_tcp_hdr_t *h, uint8_t out[COLL_TCP_HDR_BYTES]);
void coll_tcp_hdr_decode(const uint8_t in[COLL_TCP_HDR_BYTES], coll_tcp_hdr_t *h);

/* Per socket state of the message in flight: the current chunk and its header. */
enum { COLL_TCP_SX_IDLE, COLL_TCP_SX_CHUNK, COLL_TCP_SX_ENDED };
typedef struct {
    int state;       /* IDLE: next header due; CHUNK: header/bytes moving; ENDED */
    int is_end;      /* send: the header in hdr is the end header */
    size_t off, len; /* current chunk: [off, off + len) of the message */
    size_t pos;      /* chunk bytes through the socket */
    size_t given;    /* recv: chunk bytes handed to the sink (<= pos) */
    size_t hdr_pos;  /* header bytes through the socket (COLL_TCP_CHUNK_HDR: all) */
    size_t wlen;     /* COLL_ENCRYPT=1: the record's bytes after the header (len + tag) */
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
    int sealed;       /* COLL_ENCRYPT=1: records (tcp_internal.h) */
    const void *buf;  /* send */
    coll_sink_t sink; /* recv */
    size_t len, done; /* done: message bytes through (send) / handed to the sink (recv) */
    size_t next;      /* send: first byte not yet dealt to a socket */
    size_t chunk;     /* send: chunk size */
    coll_tcp_stripe_t st[COLL_TCP_MAX_SOCKS];
} coll_tcp_xfer_t;

/* 1 when a received chunk header [off, +len) fits the message x: non-empty,
 * inside it, aligned, whole elements, not past what is left to come. The
 * plain and the sealed receive paths check every header with it. */
static inline int coll_tcp_chunk_fits(const coll_tcp_xfer_t *x, uint64_t off, uint64_t len)
{
    size_t es = x->sink.fn ? x->sink.esize : 1;
    return len != 0 && off < x->len && len <= x->len - off && off % COLL_TCP_STRIPE_ALIGN == 0 && len % es == 0
        && x->done + len <= x->len;
}

/* One outgoing connection being opened (tcp_setup.c). */
enum {
    COLL_TCP_C_RETRY,
    COLL_TCP_C_CONNECTING,
    COLL_TCP_C_HELLO,
    COLL_TCP_C_CHALLENGE,
    COLL_TCP_C_PROOF,
    COLL_TCP_C_READY
};
typedef struct {
    int state;
    size_t pos;                      /* bytes of the hello / challenge / proof moved */
    uint8_t nc[32];                  /* our nonce on this connection */
    uint64_t auth_t0;                /* coll_auth_now_ns when the hello started */
    uint8_t buf[COLL_TCP_HDR_BYTES]; /* the challenge, then our proof */
    double timer, backoff;           /* C_RETRY: when to try again */
    int last_err;
} coll_tcp_conn_t;

typedef struct {
    /* this rank -> peer: sockets this rank connected (sfd), sending only */
    int nsend;  /* 0 until the first send */
    int sready; /* of nsend, connected with the hello out */
    int sfd[COLL_TCP_MAX_SOCKS];
    coll_tcp_conn_t conn[COLL_TCP_MAX_SOCKS];
    double connect_start;
    /* peer -> this rank: sockets it connected to our listener (rfd), receiving only */
    int nrecv; /* the peer's COLL_NSOCKS from its hello, 0 before */
    int rgot;  /* of nrecv, filed */
    int rfd[COLL_TCP_MAX_SOCKS];
    coll_status_t failed; /* sticky error of this peer's connections */
    coll_tcp_xfer_t tx, rx;
    uint8_t *bounce[COLL_TCP_MAX_SOCKS]; /* recv-reduce staging, allocated on first use */
    size_t fill[COLL_TCP_MAX_SOCKS];     /* bytes waiting in bounce (a partial element) */
    /* COLL_ENCRYPT=1: each connection's cipher (keyed when its handshake ends)
     * and the sender's staging of the record being sent */
    coll_aead_t stx[COLL_TCP_MAX_SOCKS], srx[COLL_TCP_MAX_SOCKS];
    uint8_t *seal[COLL_TCP_MAX_SOCKS];
} coll_tcp_peer_t;

/* An accepted connection whose handshake has not ended. */
typedef struct {
    int fd;
    int proof; /* 0: reading the hello; 1: challenge sent, reading MAC_C */
    size_t pos;
    double deadline;
    uint8_t hello[COLL_TCP_HDR_BYTES];
    uint8_t in[COLL_AUTH_MAC_BYTES]; /* MAC_C */
    uint8_t nc[32], na[32];
    uint64_t auth_t0;                /* coll_auth_now_ns when the challenge went out */
    char addr[COLL_SOCKADDR_STRLEN]; /* who connected (for logs) */
} coll_tcp_pending_t;

struct coll_tcp {
    int listen_fd;           /* open for the communicator's life */
    coll_status_t listen_st; /* why there is no listener (coll_tcp_setup reports it) */
    char listen_err[512];
    struct sockaddr_storage addr; /* where we listen (published) */
    char ifname[32];
    int nsocks;              /* sockets per direction: COLL_NSOCKS of this rank */
    int sockbuf;             /* COLL_SOCK_BUF (0 = kernel default) */
    int notsent;             /* COLL_SOCK_NOTSENT (TCP_NOTSENT_LOWAT, 0 = unset) */
    size_t chunk;            /* COLL_SOCK_CHUNK */
    int encrypt;             /* COLL_ENCRYPT */
    int fault_left;          /* COLL_FAULT_TCP: flip a byte of the record sealed when this reaches 0 */
    coll_tcp_peer_t **peers; /* [nranks], NULL entries until first use */
    int ntcp;                /* ranks reached over tcp (potential peers) */
    int npeers;              /* peer records allocated (peers in use) */
    coll_tcp_pending_t pend[COLL_TCP_MAX_PENDING];
    int npend;
    double next_accept;         /* hot-path accept rate limit (coll_tcp_accept) */
    unsigned long long fd_soft; /* soft RLIMIT_NOFILE as last raised / read */
};

/* Peer p's record, allocated on first use (budgeting its descriptors). */
coll_status_t coll_tcp_peer(coll_comm *comm, int p, coll_tcp_peer_t **out);
/* Open / progress this rank's sockets to p (non-blocking); *ready = 1 when all
 * are connected with their hello out. Refused (peer gone), out of descriptors
 * and COLL_CONNECT_TIMEOUT fail naming the peer; other errors retry. */
coll_status_t coll_tcp_connect(coll_comm *comm, int p, coll_tcp_peer_t *pc, int *ready);
/* Accept what waits on the listener and read hellos (non-blocking); force = 0:
 * at most every COLL_TCP_ACCEPT_EVERY_S. */
coll_status_t coll_tcp_accept(coll_comm *comm, int force);
/* The listener and connections owing a hello, for a receive without sockets. */
int coll_tcp_accept_pollfds(coll_comm *comm, struct pollfd *fds, int max);
/* Descriptors: raise the soft limit for npeers peers in use (never fails);
 * the error for an EMFILE / ENFILE (err) while doing 'what'. */
void coll_tcp_fd_reserve(coll_comm *comm, int npeers);
coll_status_t coll_tcp_fd_error(coll_comm *comm, int err, const char *what);

/* The table's entries (transport.h: prepare, agree, setup, teardown, abort).
 * coll_tcp_setup opens no connection: peers connect lazily on their first send. */
coll_status_t coll_tcp_listen(coll_comm *comm, coll_peer_info_t *me);
coll_status_t coll_tcp_check_listener(coll_comm *comm);
coll_status_t coll_tcp_setup(coll_comm *comm);
void coll_tcp_teardown(coll_comm *comm);
/* This rank aborts: shut its sockets so peers blocked on it see EOF now. */
void coll_tcp_abort(coll_comm *comm);

/* comm->tcp allocated with this rank's knobs (idempotent). */
coll_status_t coll_tcp_state(coll_comm *comm);
/* Whether peer p is reached over tcp (the peers shm did not take). */
int coll_tcp_is_peer(const coll_comm *comm, int p);
/* Peer p's published listener address. */
void coll_tcp_peer_sockaddr(const coll_comm *comm, int p, struct sockaddr_storage *ss);
/* "rank 3 (host node2, 10.0.0.2:40123)" */
const char *coll_tcp_peer_desc(const coll_comm *comm, int p, char *buf, size_t len);
/* The connection to peer broke (err: errno, 0 = EOF): the sticky error, naming
 * the peer (tcp.c). */
coll_status_t coll_tcp_fail(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int is_send, int sock, int err);
/* COLL_ENCRYPT=1: read what socket i has of the records of the message in
 * flight from peer; hand each to the sink once its tag checks out (tcp_seal.c). */
coll_status_t coll_tcp_recv_sealed(coll_comm *comm, int peer, coll_tcp_peer_t *pc, int i);
/* COLL_FAULT_TCP=RANK[:N] (fault tests), read at set-up: INVALID_ARG naming it. */
coll_status_t coll_tcp_fault_parse(coll_comm *comm, struct coll_tcp *t);
/* COLL_ENCRYPT=1: key the cipher of connection i of peer p's direction
 * (send: this rank connected it) from the handshake's nonces. */
coll_status_t coll_tcp_key(coll_comm *comm, int p, coll_tcp_peer_t *pc, int send, int i, const uint8_t nc[32],
                           const uint8_t na[32]);
/* Socket options of data sockets: non-blocking is set by the caller. */
void coll_tcp_sockopts(int fd, int sockbuf, int notsent);

#endif
