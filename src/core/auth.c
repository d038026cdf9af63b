/*
 * auth.c - challenge-response MACs on OpenSSL's libcrypto (auth.h).
 */
#include "core/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/log.h"

#define AUTH_LABEL "collbench-auth-1"
#define KEY_LABEL "collbench-data-key-1" /* a different PRF input from every MAC's */
#define LABEL_MAX 32
#define BIND_BYTES 28 /* role, job (8), from, to, idx, count */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void bind_bytes(const coll_auth_bind_t *b, uint8_t out[BIND_BYTES])
{
    put32(out, b->role);
    put32(out + 4, (uint32_t)b->job);
    put32(out + 8, (uint32_t)(b->job >> 32));
    put32(out + 12, b->from);
    put32(out + 16, b->to);
    put32(out + 20, b->idx);
    put32(out + 24, b->count);
}

/* Handshake accounting (auth.h): relaxed counters, read once per init. */
static atomic_ullong stat_n[2][COLL_AUTH_ROLES], stat_wall[2][COLL_AUTH_ROLES], stat_hmacs, stat_hmac_cpu;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t coll_auth_now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

void coll_auth_done(char side, coll_auth_role_t role, uint64_t t0)
{
    int s = side == COLL_AUTH_ACCEPTOR, r = role > 0 && role < COLL_AUTH_ROLES ? (int)role : 0;
    uint64_t now = coll_auth_now_ns();
    atomic_fetch_add_explicit(&stat_n[s][r], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&stat_wall[s][r], now > t0 ? now - t0 : 0, memory_order_relaxed);
}

void coll_auth_stats_get(coll_auth_stats_t *out)
{
    for (int s = 0; s < 2; s++) {
        out->n[s] = out->wall_ns[s] = 0;
        for (int r = 0; r < COLL_AUTH_ROLES; r++) {
            out->role_n[s][r] = atomic_load_explicit(&stat_n[s][r], memory_order_relaxed);
            out->role_ns[s][r] = atomic_load_explicit(&stat_wall[s][r], memory_order_relaxed);
            out->n[s] += out->role_n[s][r];
            out->wall_ns[s] += out->role_ns[s][r];
        }
    }
    out->hmacs = atomic_load_explicit(&stat_hmacs, memory_order_relaxed);
    out->hmac_cpu_ns = atomic_load_explicit(&stat_hmac_cpu, memory_order_relaxed);
}

coll_status_t coll_auth_random(void *buf, size_t len)
{
    if (len > (size_t)0x7fffffff || RAND_bytes(buf, (int)len) != 1)
        return coll_error(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "cannot draw %zu random bytes (OpenSSL RAND_bytes)",
                          len);
    return COLL_SUCCESS;
}

/* HMAC-SHA-256(key, label | side | binding | nc | na) into out (32 bytes). */
static void auth_hmac(const char *label, const uint8_t key[COLL_AUTH_KEY_BYTES], char side, const coll_auth_bind_t *b,
                      const uint8_t nc[COLL_AUTH_NONCE_BYTES], const uint8_t na[COLL_AUTH_NONCE_BYTES],
                      uint8_t out[COLL_AUTH_MAC_BYTES])
{
    uint8_t msg[LABEL_MAX + 1 + BIND_BYTES + 2 * COLL_AUTH_NONCE_BYTES];
    size_t n = strlen(label);
    memcpy(msg, label, n);
    msg[n++] = (uint8_t)side;
    bind_bytes(b, msg + n);
    n += BIND_BYTES;
    memcpy(msg + n, nc, COLL_AUTH_NONCE_BYTES);
    n += COLL_AUTH_NONCE_BYTES;
    memcpy(msg + n, na, COLL_AUTH_NONCE_BYTES);
    n += COLL_AUTH_NONCE_BYTES;
    unsigned int ml = 0;
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (!HMAC(EVP_sha256(), key, COLL_AUTH_KEY_BYTES, msg, n, out, &ml) || ml != COLL_AUTH_MAC_BYTES)
        memset(out, 0, COLL_AUTH_MAC_BYTES); /* cannot happen with a working libcrypto; verifies nothing */
    uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    atomic_fetch_add_explicit(&stat_hmacs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&stat_hmac_cpu, c1 > c0 ? c1 - c0 : 0, memory_order_relaxed);
    coll_auth_wipe(msg, sizeof msg);
}

void coll_auth_mac(const uint8_t key[COLL_AUTH_KEY_BYTES], char side, const coll_auth_bind_t *b,
                   const uint8_t nc[COLL_AUTH_NONCE_BYTES], const uint8_t na[COLL_AUTH_NONCE_BYTES],
                   uint8_t mac[COLL_AUTH_MAC_BYTES])
{
    auth_hmac(AUTH_LABEL, key, side, b, nc, na, mac);
}

int coll_auth_data_key(const uint8_t key[COLL_AUTH_KEY_BYTES], const coll_auth_bind_t *b,
                       const uint8_t nc[COLL_AUTH_NONCE_BYTES], const uint8_t na[COLL_AUTH_NONCE_BYTES],
                       uint8_t out[COLL_AUTH_KEY_BYTES])
{
    static const uint8_t zero[COLL_AUTH_KEY_BYTES];
    if (coll_auth_equal(key, zero, sizeof zero))
        return -1; /* an open run: anyone can compute the key */
    auth_hmac(KEY_LABEL, key, COLL_AUTH_CONNECTOR, b, nc, na, out);
    return coll_auth_equal(out, zero, sizeof zero) ? -1 : 0;
}

int coll_auth_equal(const void *a, const void *b, size_t n) { return CRYPTO_memcmp(a, b, n) == 0; }

int coll_auth_verify(const uint8_t key[COLL_AUTH_KEY_BYTES], char side, const coll_auth_bind_t *b,
                     const uint8_t nc[COLL_AUTH_NONCE_BYTES], const uint8_t na[COLL_AUTH_NONCE_BYTES],
                     const uint8_t mac[COLL_AUTH_MAC_BYTES])
{
    uint8_t want[COLL_AUTH_MAC_BYTES];
    coll_auth_mac(key, side, b, nc, na, want);
    static const uint8_t zero[COLL_AUTH_MAC_BYTES];
    int ok = coll_auth_equal(want, mac, COLL_AUTH_MAC_BYTES) && !coll_auth_equal(want, zero, sizeof zero);
    coll_auth_wipe(want, sizeof want);
    return ok;
}

coll_status_t coll_auth_challenge(const uint8_t key[COLL_AUTH_KEY_BYTES], const coll_auth_bind_t *b,
                                  const uint8_t nc[COLL_AUTH_NONCE_BYTES], uint8_t na[COLL_AUTH_NONCE_BYTES],
                                  uint8_t out[COLL_AUTH_CHALLENGE_BYTES])
{
    COLL_CHECK(coll_auth_random(na, COLL_AUTH_NONCE_BYTES));
    memcpy(out, na, COLL_AUTH_NONCE_BYTES);
    coll_auth_mac(key, COLL_AUTH_ACCEPTOR, b, nc, na, out + COLL_AUTH_NONCE_BYTES);
    return COLL_SUCCESS;
}

int coll_auth_respond(const uint8_t key[COLL_AUTH_KEY_BYTES], const coll_auth_bind_t *b,
                      const uint8_t nc[COLL_AUTH_NONCE_BYTES], const uint8_t ch[COLL_AUTH_CHALLENGE_BYTES],
                      uint8_t proof[COLL_AUTH_MAC_BYTES])
{
    const uint8_t *na = ch;
    if (coll_auth_equal(na, nc, COLL_AUTH_NONCE_BYTES)) /* a reflected nonce: not a fresh challenge */
        return 0;
    if (!coll_auth_verify(key, COLL_AUTH_ACCEPTOR, b, nc, na, ch + COLL_AUTH_NONCE_BYTES))
        return 0;
    coll_auth_mac(key, COLL_AUTH_CONNECTOR, b, nc, na, proof);
    return 1;
}

void coll_sha256(const void *data, size_t len, uint8_t out[32])
{
    if (!SHA256(data, len, out))
        memset(out, 0, 32);
}

void coll_auth_wipe(void *p, size_t n) { OPENSSL_cleanse(p, n); }
