/*
 * auth.h - mutual challenge-response between the two ends of a connection
 * (rendezvous store, bootstrap tree, TCP data, collbench net), on OpenSSL's
 * libcrypto (HMAC-SHA-256, SHA-256, RAND_bytes, CRYPTO_memcmp).
 *
 * Every connection runs the same three messages, the connector first:
 *   C -> A  hello: what it claims (role, job, from, to, index, count) and a
 *           fresh 32-byte nonce Nc
 *   A -> C  a fresh nonce Na and MAC_A = HMAC(secret, "A" | binding | Nc | Na)
 *   C -> A  MAC_C = HMAC(secret, "C" | binding | Nc | Na)
 * Each side checks the other's MAC in constant time before it trusts anything
 * the other sends, so the secret never crosses the wire, a recorded exchange is
 * worthless (the other end's nonce is new on every connection), a MAC made for
 * one role, job, rank or index is no use for another, and the acceptor's MAC
 * never serves as a connector's (the side letter differs). A connector can
 * send its first request right after MAC_C: the acceptor reads nothing else
 * until MAC_C checks out.
 *
 * The binding is hashed in a fixed layout (auth.c: bind_bytes), so both sides
 * must fill every field the same way; unused fields are 0.
 */
#ifndef COLL_AUTH_H
#define COLL_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include "coll.h"

#define COLL_AUTH_KEY_BYTES 32
#define COLL_AUTH_NONCE_BYTES 32
#define COLL_AUTH_MAC_BYTES 32
/* The acceptor's answer: Na then MAC_A. */
#define COLL_AUTH_CHALLENGE_BYTES (COLL_AUTH_NONCE_BYTES + COLL_AUTH_MAC_BYTES)

typedef enum {
    COLL_AUTH_STORE = 1, /* a client of the rendezvous store */
    COLL_AUTH_TREE,      /* a bootstrap-tree parent connecting to its child */
    COLL_AUTH_DATA,      /* a TCP data connection of the tcp transport */
    COLL_AUTH_NET        /* collbench net's control connection */
} coll_auth_role_t;

typedef struct {
    uint32_t role; /* coll_auth_role_t */
    uint64_t job;  /* the communicator's nonce (0 where the key alone names the job) */
    uint32_t from, to, idx, count;
} coll_auth_bind_t;

/* Side letters of the two MACs. */
#define COLL_AUTH_ACCEPTOR 'A'
#define COLL_AUTH_CONNECTOR 'C'

/* Handshake accounting, process-wide (init's figures: coll_comm_init_rank logs
 * the difference over the call at COLL_DEBUG=INFO). Per side ([0] connector,
 * [1] acceptor): handshakes completed and their wall time, from the first
 * byte sent (the connector's hello; the acceptor's challenge) to the peer's
 * proof checked; and the thread CPU time of every HMAC (MACs and data keys). */
#define COLL_AUTH_ROLES 5 /* coll_auth_role_t values index it (0 unused) */
typedef struct {
    uint64_t n[2], wall_ns[2];                                        /* all roles */
    uint64_t role_n[2][COLL_AUTH_ROLES], role_ns[2][COLL_AUTH_ROLES]; /* by role */
    uint64_t hmacs, hmac_cpu_ns;
} coll_auth_stats_t;
/* CLOCK_MONOTONIC in ns (vDSO: no syscall). */
uint64_t coll_auth_now_ns(void);
/* A handshake of side (COLL_AUTH_CONNECTOR / _ACCEPTOR) and role begun at t0 checked out. */
void coll_auth_done(char side, coll_auth_role_t role, uint64_t t0);
void coll_auth_stats_get(coll_auth_stats_t *out);

/* len bytes from the kernel's CSPRNG (OpenSSL's RAND_bytes): SUCCESS or SYSTEM. */
coll_status_t coll_auth_random(void *buf, size_t len);
/* mac = HMAC-SHA-256(key, "collbench-auth-1" | side | binding | nc | na). */
void coll_auth_mac(const uint8_t key[COLL_AUTH_KEY_BYTES], char side, const coll_auth_bind_t *b,
                   const uint8_t nc[COLL_AUTH_NONCE_BYTES], const uint8_t na[COLL_AUTH_NONCE_BYTES],
                   uint8_t mac[COLL_AUTH_MAC_BYTES]);
/* 1 when mac is the right one (constant-time comparison), else 0. */
int coll_auth_verify(const uint8_t key[COLL_AUTH_KEY_BYTES], char side, const coll_auth_bind_t *b,
                     const uint8_t nc[COLL_AUTH_NONCE_BYTES], const uint8_t na[COLL_AUTH_NONCE_BYTES],
                     const uint8_t mac[COLL_AUTH_MAC_BYTES]);
/* The acceptor's answer to a hello with nonce nc: draws Na, writes Na | MAC_A
 * into out and keeps Na in na (for checking MAC_C later). */
coll_status_t coll_auth_challenge(const uint8_t key[COLL_AUTH_KEY_BYTES], const coll_auth_bind_t *b,
                                  const uint8_t nc[COLL_AUTH_NONCE_BYTES], uint8_t na[COLL_AUTH_NONCE_BYTES],
                                  uint8_t out[COLL_AUTH_CHALLENGE_BYTES]);
/* The connector's side: checks the acceptor's answer ch to its nonce nc and,
 * when it is right, writes MAC_C into proof and returns 1; 0 when the acceptor
 * does not know the key (a stranger, or another job's). */
int coll_auth_respond(const uint8_t key[COLL_AUTH_KEY_BYTES], const coll_auth_bind_t *b,
                      const uint8_t nc[COLL_AUTH_NONCE_BYTES], const uint8_t ch[COLL_AUTH_CHALLENGE_BYTES],
                      uint8_t proof[COLL_AUTH_MAC_BYTES]);
/* The data key of one connection (COLL_ENCRYPT=1, core/aead.h): HMAC-SHA-256
 * keyed by the secret over "collbench-data-key-1" | 'C' | binding | nc | na,
 * the handshake's binding and both fresh nonces, so every connection (and so
 * every direction: one per connection) gets its own key, and it differs from
 * every MAC of the handshake (another label). 0, or -1 when key is the open
 * run's all-zero key (encrypting with a key anyone can compute protects nothing). */
int coll_auth_data_key(const uint8_t key[COLL_AUTH_KEY_BYTES], const coll_auth_bind_t *b,
                       const uint8_t nc[COLL_AUTH_NONCE_BYTES], const uint8_t na[COLL_AUTH_NONCE_BYTES],
                       uint8_t out[COLL_AUTH_KEY_BYTES]);
/* Constant-time equality of n bytes (1 = equal). */
int coll_auth_equal(const void *a, const void *b, size_t n);
/* SHA-256 (libcrypto). */
void coll_sha256(const void *data, size_t len, uint8_t out[32]);
/* Overwrite n bytes in a way the compiler keeps (OPENSSL_cleanse). */
void coll_auth_wipe(void *p, size_t n);

#endif
