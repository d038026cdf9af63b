/*
 * net.h - `collbench net`: TCP bandwidth and latency between two hosts in the
 * style of perftest's ib_send_bw / ib_send_lat, over plain sockets.
 *
 * Files: net.c (command line, handshake, report), run.c (one size: the
 * timed streams and ping-pong), sock.c (sockets, framing of control words).
 *
 * Protocol (all integers 64-bit big endian, doubles as their IEEE bits):
 *   client -> server  control connection, HELLO {magic, version, session, params}
 *   server -> client  ACK {magic, status}
 *   client -> server  q data connections, each DHELLO {magic, session, index}
 *   server -> client  READY
 *   per size:  client GO {size}  ->  server GO_ACK; then the streams run
 *              (-D: each sender side then sends COUNT {messages per stream})
 *              receivers send RESULT {bytes, messages, ns, peak bits} to the peer
 *   latency:   client pings on data connection 0, byte 0 of each ping is 1 (more)
 *              or 2 (last); the client sends its statistics as RESULT.
 */
#ifndef CBT_NET_H
#define CBT_NET_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/coll_internal.h" /* core/auth.h */

#define CBT_NET_MAGIC 0x43424e4554303031ULL /* "CBNET001" */
#define CBT_NET_VERSION 2                   /* 2: challenge-response (auth.c) */
#define CBT_NET_PORT 18515
#define CBT_NET_MAXQ 64
#define CBT_NET_SWEEP_MIN 2ULL
#define CBT_NET_SWEEP_MAX (8ULL << 20)
/* What a client may ask of a server: buffers (nconn x size, x2 with -b) up to
 * this many bytes and half of the memory available, at most this many
 * iterations or seconds. */
#define CBT_NET_SERVER_MAX_BYTES (4ULL << 30)
#define CBT_NET_MAX_ITERS 1000000000ULL
#define CBT_NET_MAX_SECONDS 3600.0

typedef struct {
    int lat;                  /* --lat: ping-pong */
    int bidir;                /* -b */
    int nconn;                /* -q */
    int all;                  /* -a: sweep 2 B .. 8 MiB */
    unsigned long long size;  /* -s */
    unsigned long long iters; /* -n */
    double duration;          /* -D seconds, 0 = count mode */
} cbt_net_params_t;

/* Results of one size. */
typedef struct {
    unsigned long long bytes; /* received */
    unsigned long long msgs;
    double seconds;
    double peak_gbs;
} cbt_net_rx_t;

typedef struct {
    unsigned long long iters;
    double min, max, typical, avg, stdev, p99, p999; /* usec, one way = RTT / 2 */
} cbt_net_lat_t;

/* sock.c: sockets. Error text in err; return -1 (connect), -2 (timeout). */
int cbt_sock_listen(const char *bind_addr, int port, char *err, size_t n);
int cbt_sock_accept(int lfd, double timeout_s, char *err, size_t n);
int cbt_sock_connect(const char *host, int port, double timeout_s, double retry_s, char *err, size_t n);
void cbt_sock_tune(int fd, double io_timeout_s);
int cbt_sock_send(int fd, const void *buf, size_t n);
int cbt_sock_recv(int fd, void *buf, size_t n);       /* all n bytes; -1 on error or EOF */
long cbt_sock_recv_some(int fd, void *buf, size_t n); /* > 0 bytes, 0 EOF, -1 error */
int cbt_sock_wait_readable(int fd, int ms);           /* 1 readable, 0 timeout, -1 error */
int cbt_words_send(int fd, const uint64_t *w, int n);
int cbt_words_recv(int fd, uint64_t *w, int n);
uint64_t cbt_dbits(double d);
double cbt_bitsd(uint64_t u);
void cbt_sock_peer(int fd, char *buf, size_t n); /* "addr:port" or "[v6]:port" */

/* auth.c: the key of COLL_SECRET / COLL_SECRET_FILE (*open = 1: none
 * set, the all-zero key), 0 or an exit code; the handshake after the hello
 * words (connector / acceptor): 0 = proven, 1 = the other end does not know
 * the key, -1 = I/O error. */
int cbt_net_key(uint8_t key[32], int *open, int server); /* server: warn when open */
int cbt_net_auth_connect(int fd, const uint8_t key[32], const coll_auth_bind_t *b);
int cbt_net_auth_accept(int fd, const uint8_t key[32], const coll_auth_bind_t *b);
/* data = 0: the control connection, 1: data connection idx of nconn. */
coll_auth_bind_t cbt_net_bind(uint64_t session, int data, int idx, int nconn);
/* The server's reading of a client's 10 hello words (magic, version, session,
 * lat, bidir, nconn, all, size, iters, duration bits): -1 not a client of this
 * version, else the parameters in *c and *session; then (after the
 * handshake) cbt_net_params_ok: 1 when this server may hold and run what c
 * asks (M7: nconn 1..CBT_NET_MAXQ, size 1..1 GiB, buffers within
 * CBT_NET_SERVER_MAX_BYTES and half the memory available, iterations and
 * seconds bounded). Fuzzed: tests/fuzz/fuzz_net.c. */
int cbt_net_hello_parse(const uint64_t w[10], cbt_net_params_t *c, uint64_t *session);
int cbt_net_params_ok(const cbt_net_params_t *c);
/* A data connection's 3 hello words: 1 when they name this session and a
 * free index below nconn (fds[i] < 0). */
int cbt_net_data_hello_ok(const uint64_t h[3], uint64_t session, int nconn, const int *fds);

/* run.c: one size. `server` = 1 on the server. fds[0..nconn-1] data, ctrl control.
 * Returns 0 or -1 with err filled. */
int cbt_net_run_bw(const cbt_net_params_t *p, int server, int ctrl, const int *fds, unsigned long long size,
                   cbt_net_rx_t *mine, cbt_net_rx_t *peer, char *err, size_t n);
int cbt_net_run_lat(const cbt_net_params_t *p, int server, int ctrl, int fd, unsigned long long size,
                    cbt_net_lat_t *out, char *err, size_t n);

#endif
