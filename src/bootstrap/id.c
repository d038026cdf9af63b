/*
 * id.c - the unique id: encoding of the 128 opaque bytes, secrets (random,
 * or SHA-256 of a caller string; libcrypto, core/auth.h), and the process-global list of store servers
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
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/log.h"
#include "core/netif.h"

#define ID_MAGIC 0x44494243u /* "CBID" */

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

static coll_status_t random_bytes(void *buf, size_t len) { return coll_auth_random(buf, len); }

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
    char cfg[512];
    int found = 0;
    if (!secret) {
        COLL_CHECK(coll_cfg_secret(cfg, sizeof cfg, &found));
        secret = found ? cfg : NULL;
    }
    if (secret) {
        secret_from_string(secret, key, &nonce);
    } else {
        COLL_CHECK(random_bytes(key, sizeof key));
        COLL_CHECK(random_bytes(&nonce, sizeof nonce));
    }
    return host_store(addr, port, key, nonce, id);
}

static coll_status_t id_at(const char *addr, int port, const uint8_t *key, uint64_t nonce, coll_unique_id_t *id);

coll_status_t coll_unique_id_from_addr(const char *addr, int port, const char *secret, coll_unique_id_t *id)
{
    if (!id || !addr || !addr[0] || port <= 0 || port > 65535)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "coll_unique_id_from_addr: need a host and a port 1..65535 "
                          "(got '%s', %d)",
                          addr ? addr : "(null)", port);
    char cfg[512];
    int found = 0;
    if (!secret) {
        COLL_CHECK(coll_cfg_secret(cfg, sizeof cfg, &found));
        secret = found ? cfg : NULL;
    }
    if (!secret)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "coll_unique_id_from_addr: no secret given and neither COLL_SECRET nor "
                          "COLL_SECRET_FILE is set; the store at %s:%d only admits clients that know its secret",
                          addr, port);
    uint8_t key[COLL_SECRET_BYTES];
    uint64_t nonce;
    secret_from_string(secret, key, &nonce);
    coll_status_t st = id_at(addr, port, key, nonce, id);
    coll_auth_wipe(cfg, sizeof cfg);
    coll_auth_wipe(key, sizeof key);
    return st;
}

/* The id of the store at addr:port with this key and nonce (nothing listens). */
static coll_status_t id_at(const char *addr, int port, const uint8_t *key, uint64_t nonce, coll_unique_id_t *id)
{
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
    memcpy(info.secret, key, COLL_SECRET_BYTES);
    info.nonce = nonce;
    return coll_id_encode(&info, id);
}

coll_status_t coll_unique_id_open(const char *addr, int port, const char *tag, int host, coll_unique_id_t *id)
{
    if (!id || !addr || port <= 0 || port > 65535 || (!host && !addr[0]))
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "coll_unique_id_open: need a host and a port 1..65535 (got '%s', %d)", addr ? addr : "(null)",
                          port);
    uint8_t key[COLL_SECRET_BYTES] = {0}, n[32];
    char buf[600];
    snprintf(buf, sizeof buf, "collbench-open-job|%s", tag ? tag : "");
    coll_sha256(buf, strlen(buf), n);
    uint64_t nonce = get_le(n, 8);
    return host ? host_store(addr, port, key, nonce, id) : id_at(addr, port, key, nonce, id);
}
