/*
 * id.c - the unique id: encoding of the 128 opaque bytes, secrets (getrandom,
 * or SHA-256 of a caller string), and the process-global list of store servers
 * this process hosts (so release / last-communicator-destroy can stop them).
 *
 * Encoding (little-endian): 0 magic "CBID" | 4 family (4 or 6, u16) | 6 port |
 * 8 addr[16] | 24 secret[32] | 56 nonce (u64) | 64 first 4 bytes of
 * SHA-256(bytes 0..63) | 68..127 zero.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/config.h"
#include "core/log.h"
#include "core/netif.h"

#define ID_MAGIC 0x44494243u /* "CBID" */

/* ---- SHA-256 (FIPS 180-4) ---------------------------------------------- */

static const uint32_t sha_k[64] = {0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
                                   0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
                                   0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
                                   0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
                                   0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
                                   0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
                                   0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
                                   0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
                                   0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
                                   0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void coll_sha256(const void *data, size_t len, uint8_t out[32])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const uint8_t *p = data;
    size_t left = len;
    for (; left >= 64; left -= 64, p += 64)
        sha_block(h, p);
    uint8_t tail[128] = {0};
    memcpy(tail, p, left);
    tail[left] = 0x80;
    size_t tl = left < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
    sha_block(h, tail);
    if (tl == 128)
        sha_block(h, tail + 64);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(h[i] >> 8);
        out[4 * i + 3] = (uint8_t)h[i];
    }
}

/* ---- encoding ---------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

coll_status_t coll_id_encode(const coll_id_info_t *info, coll_unique_id_t *id)
{
    if (!info || !id || (info->family != AF_INET && info->family != AF_INET6))
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_id_encode: invalid arguments");
    uint8_t b[COLL_UNIQUE_ID_BYTES] = {0};
    put_le(b, ID_MAGIC, 4);
    put_le(b + 4, info->family == AF_INET6 ? 6 : 4, 2);
    put_le(b + 6, info->port, 2);
    memcpy(b + 8, info->addr, 16);
    memcpy(b + 24, info->secret, COLL_SECRET_BYTES);
    put_le(b + 56, info->nonce, 8);
    uint8_t sum[32];
    coll_sha256(b, 64, sum);
    memcpy(b + 64, sum, 4);
    memcpy(id->internal, b, sizeof b);
    return COLL_SUCCESS;
}

coll_status_t coll_id_decode(const coll_unique_id_t *id, coll_id_info_t *info)
{
    if (!id || !info)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_id_decode: invalid arguments");
    const uint8_t *b = (const uint8_t *)id->internal;
    uint8_t sum[32];
    coll_sha256(b, 64, sum);
    unsigned fam = (unsigned)get_le(b + 4, 2);
    if (get_le(b, 4) != ID_MAGIC || memcmp(sum, b + 64, 4) != 0 || (fam != 4 && fam != 6) || get_le(b + 6, 2) == 0)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "invalid unique id (not made by coll_get_unique_id, or corrupted "
                          "while passed between processes)");
    coll_id_info_t in;
    memset(&in, 0, sizeof in);
    in.magic = ID_MAGIC;
    in.family = fam == 6 ? AF_INET6 : AF_INET;
    in.port = (uint16_t)get_le(b + 6, 2);
    memcpy(in.addr, b + 8, 16);
    memcpy(in.secret, b + 24, COLL_SECRET_BYTES);
    in.nonce = get_le(b + 56, 8);
    *info = in;
    return COLL_SUCCESS;
}

/* ---- secrets ----------------------------------------------------------- */

static coll_status_t random_bytes(void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP,
                                    "getrandom failed making the rendezvous secret");
        }
        p += n;
        len -= (size_t)n;
    }
    return COLL_SUCCESS;
}

/* Secret and nonce from a string: both sides derive the same ones. */
static void secret_from_string(const char *s, uint8_t secret[COLL_SECRET_BYTES], uint64_t *nonce)
{
    coll_sha256(s, strlen(s), secret);
    uint8_t buf[6 + COLL_SECRET_BYTES], n[32];
    memcpy(buf, "nonce:", 6);
    memcpy(buf + 6, secret, COLL_SECRET_BYTES);
    coll_sha256(buf, sizeof buf, n);
    *nonce = get_le(n, 8);
}

/* ---- servers hosted by this process ------------------------------------ */

typedef struct srv_entry {
    struct srv_entry *next;
    coll_store_server_t *srv;
    coll_id_info_t info;
    pid_t pid; /* a forked child inherits the list, not the thread */
    int holds;
} srv_entry_t;

static pthread_mutex_t srv_lock = PTHREAD_MUTEX_INITIALIZER;
static srv_entry_t *srv_list;

static int same_store(const coll_id_info_t *a, const coll_id_info_t *b)
{
    return a->family == b->family && a->port == b->port && !memcmp(a->addr, b->addr, 16)
        && !memcmp(a->secret, b->secret, COLL_SECRET_BYTES);
}

/* Unlinks and returns the entry of info hosted by this very process. */
static srv_entry_t **find_locked(const coll_id_info_t *info)
{
    pid_t me = getpid();
    for (srv_entry_t **pp = &srv_list; *pp; pp = &(*pp)->next)
        if ((*pp)->pid == me && same_store(&(*pp)->info, info))
            return pp;
    return NULL;
}

static coll_status_t register_server(coll_store_server_t *srv, const coll_id_info_t *info)
{
    srv_entry_t *e = calloc(1, sizeof *e);
    if (!e) {
        coll_store_server_stop(srv);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_BOOTSTRAP, "out of memory");
    }
    e->srv = srv;
    e->info = *info;
    e->pid = getpid();
    pthread_mutex_lock(&srv_lock);
    e->next = srv_list;
    srv_list = e;
    pthread_mutex_unlock(&srv_lock);
    return COLL_SUCCESS;
}

static void stop_entry(srv_entry_t **pp)
{
    srv_entry_t *e = *pp;
    *pp = e->next;
    pthread_mutex_unlock(&srv_lock);
    coll_store_server_stop(e->srv);
    free(e);
}

int coll_id_server_hold(const coll_id_info_t *info)
{
    pthread_mutex_lock(&srv_lock);
    srv_entry_t **pp = find_locked(info);
    if (pp)
        (*pp)->holds++;
    pthread_mutex_unlock(&srv_lock);
    return pp != NULL;
}

void coll_id_server_drop(const coll_id_info_t *info)
{
    pthread_mutex_lock(&srv_lock);
    srv_entry_t **pp = find_locked(info);
    if (pp && --(*pp)->holds <= 0) {
        stop_entry(pp); /* unlocks */
        return;
    }
    pthread_mutex_unlock(&srv_lock);
}

void coll_unique_id_release(const coll_unique_id_t *id)
{
    coll_id_info_t info;
    if (coll_id_decode(id, &info) != COLL_SUCCESS)
        return;
    pthread_mutex_lock(&srv_lock);
    srv_entry_t **pp = find_locked(&info);
    if (pp) {
        stop_entry(pp); /* unlocks */
        return;
    }
    pthread_mutex_unlock(&srv_lock);
}

/* ---- public constructors ----------------------------------------------- */

static coll_status_t host_store(const char *addr, int port, const uint8_t *secret, uint64_t nonce, coll_unique_id_t *id)
{
    coll_store_server_t *srv = NULL;
    coll_id_info_t info;
    memset(&info, 0, sizeof info);
    COLL_CHECK(coll_store_server_start(addr, port, secret, &srv, &info));
    info.magic = ID_MAGIC;
    info.nonce = nonce;
    coll_unique_id_t tmp;
    coll_status_t st = coll_id_encode(&info, &tmp);
    if (st != COLL_SUCCESS) {
        coll_store_server_stop(srv);
        return st;
    }
    COLL_CHECK(register_server(srv, &info));
    *id = tmp;
    return COLL_SUCCESS;
}

coll_status_t coll_get_unique_id(coll_unique_id_t *id)
{
    if (!id)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_get_unique_id: id is NULL");
    uint8_t secret[COLL_SECRET_BYTES];
    uint64_t nonce;
    COLL_CHECK(random_bytes(secret, sizeof secret));
    COLL_CHECK(random_bytes(&nonce, sizeof nonce));
    return host_store(NULL, 0, secret, nonce, id);
}

coll_status_t coll_unique_id_listen(const char *addr, int port, const char *secret, coll_unique_id_t *id)
{
    if (!id || port < 0 || port > 65535)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "coll_unique_id_listen: invalid arguments (port %d)", port);
    uint8_t key[COLL_SECRET_BYTES];
    uint64_t nonce;
    if (!secret && coll_cfg_str(COLL_CFG_SECRET)[0])
        secret = coll_cfg_str(COLL_CFG_SECRET);
    if (secret) {
        secret_from_string(secret, key, &nonce);
    } else {
        COLL_CHECK(random_bytes(key, sizeof key));
        COLL_CHECK(random_bytes(&nonce, sizeof nonce));
    }
    return host_store(addr, port, key, nonce, id);
}

coll_status_t coll_unique_id_from_addr(const char *addr, int port, const char *secret, coll_unique_id_t *id)
{
    if (!id || !addr || !addr[0] || port <= 0 || port > 65535)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "coll_unique_id_from_addr: need a host and a port 1..65535 "
                          "(got '%s', %d)",
                          addr ? addr : "(null)", port);
    if (!secret && coll_cfg_str(COLL_CFG_SECRET)[0])
        secret = coll_cfg_str(COLL_CFG_SECRET);
    if (!secret)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "coll_unique_id_from_addr: no secret given and COLL_SECRET is unset; "
                          "the store at %s:%d only admits clients that know its secret",
                          addr, port);
    int family;
    COLL_CHECK(coll_netif_family(&family));
    struct sockaddr_storage ss;
    COLL_CHECK(coll_sockaddr_parse(addr, port, family, &ss));
    coll_id_info_t info;
    memset(&info, 0, sizeof info);
    info.magic = ID_MAGIC;
    info.family = ss.ss_family;
    info.port = (uint16_t)port;
    if (ss.ss_family == AF_INET6)
        memcpy(info.addr, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
    else
        memcpy(info.addr, &((struct sockaddr_in *)&ss)->sin_addr, 4);
    secret_from_string(secret, info.secret, &info.nonce);
    return coll_id_encode(&info, id);
}
