/*
 * store_server.c - the rendezvous key-value store: one background thread, one
 * poll() loop, non-blocking sockets with a per-connection state machine, so no
 * client can block the others.
 *
 * Connection life: HELLO (40 bytes within COLL_STORE_HELLO_TIMEOUT_S, secret
 * compared in constant time) -> HDR (16-byte request header, validated before
 * anything is allocated) -> BODY (key + value, at most 256 B + 16 MiB) ->
 * request processed -> PARKED (GET of a missing key, BARRIER not yet complete)
 * or WRITE (reply) -> HDR ... A client has one request in flight: nothing more
 * is read from it until its reply is out, which bounds its memory to one frame.
 * Anything hostile (bad magic, bad op or length, wrong secret, silence during
 * the hello, a half-sent frame that stalls) drops that connection only, logged
 * at DEBUG. Connections are capped at COLL_STORE_MAX_CLIENTS; when full, the
 * oldest one still in its hello is evicted to make room.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/log.h"
#include "core/netif.h"

#define NBUCKETS 4096
#define ACCEPT_BURST 64

typedef enum { C_HELLO, C_HDR, C_BODY, C_PARKED, C_WRITE } cstate_t;

typedef struct {
    int fd;
    int dead;
    cstate_t state;
    const char *close_after;              /* set: close after the reply, logging this */
    char peer[COLL_SOCKADDR_STRLEN];
    uint8_t hdr[COLL_STORE_HELLO_BYTES];  /* hello, then each request header */
    size_t got;                           /* bytes of hdr / body received */
    uint32_t op, klen, vlen;
    uint8_t *body;                        /* key then value of the current request */
    uint8_t *out;
    size_t out_len, out_done;
    double deadline;                      /* 0 = none */
    int64_t target;                       /* BARRIER: answer when counter >= target */
} conn_t;

typedef struct kv {
    struct kv *next;
    uint32_t hash, klen, vlen;
    uint8_t *buf;                         /* key then value (the request body, kept) */
} kv_t;

struct coll_store_server {
    int lfd, efd;
    pthread_t thr;
    uint8_t secret[COLL_SECRET_BYTES];
    char addr[COLL_SOCKADDR_STRLEN];
    conn_t *conns[COLL_STORE_MAX_CLIENTS];
    int nconns;
    struct pollfd pfds[COLL_STORE_MAX_CLIENTS + 2];
    kv_t *buckets[NBUCKETS];
    uint64_t total;                       /* bytes of values held */
    double accept_pause_until;
    int started;                          /* the thread runs (under fork_lock) */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static int64_t rd64(const uint8_t *p)
{
    return (int64_t)((uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32);
}

static void wr64(uint8_t *p, int64_t v)
{
    wr32(p, (uint32_t)(uint64_t)v);
    wr32(p + 4, (uint32_t)((uint64_t)v >> 32));
}

/* ---- frame validation (shared with coll_store_decode_frame) ------------ */

static coll_status_t check_header(const uint8_t *h, uint32_t *op, uint32_t *klen,
                                  uint32_t *vlen, const char **why)
{
    *op = rd32(h + 4), *klen = rd32(h + 8), *vlen = rd32(h + 12);
    if (rd32(h) != COLL_STORE_MAGIC)
        return *why = "bad magic", COLL_ERR_INVALID_ARG;
    if (*op < COLL_STORE_SET || *op >= COLL_STORE_OP_END)
        return *why = "unknown op", COLL_ERR_INVALID_ARG;
    if (*klen == 0 || *klen > COLL_STORE_MAX_KEY)
        return *why = "bad key length", COLL_ERR_INVALID_ARG;
    if (*vlen > COLL_STORE_MAX_VALUE)
        return *why = "value too large", COLL_ERR_INVALID_ARG;
    int ok = *op == COLL_STORE_SET ||
             (*op == COLL_STORE_GET && (*vlen == 0 || *vlen == 4)) ||
             (*op == COLL_STORE_ADD && *vlen == 8) || (*op == COLL_STORE_DEL && *vlen == 0) ||
             (*op == COLL_STORE_BARRIER && *vlen == 8) || *op == COLL_STORE_FAIL;
    if (!ok)
        return *why = "bad value length for op", COLL_ERR_INVALID_ARG;
    return COLL_SUCCESS;
}

static coll_status_t check_payload(uint32_t op, const uint8_t *val, const char **why)
{
    if (op == COLL_STORE_BARRIER && rd32(val) == 0)
        return *why = "barrier of 0 clients", COLL_ERR_INVALID_ARG;
    return COLL_SUCCESS;
}

coll_status_t coll_store_decode_frame(const uint8_t *buf, size_t len, size_t *consumed)
{
    const char *why = "";
    uint32_t op, klen, vlen;
    *consumed = 0;
    if (len < COLL_STORE_REQ_HDR)
        return COLL_SUCCESS;
    coll_status_t st = check_header(buf, &op, &klen, &vlen, &why);
    if (st != COLL_SUCCESS)
        return st;
    size_t need = COLL_STORE_REQ_HDR + (size_t)klen + vlen;
    if (len < need)
        return COLL_SUCCESS;
    st = check_payload(op, buf + COLL_STORE_REQ_HDR + klen, &why);
    if (st != COLL_SUCCESS)
        return st;
    *consumed = need;
    return COLL_SUCCESS;
}

/* ---- key-value table --------------------------------------------------- */

static uint32_t hash_key(const uint8_t *k, uint32_t len)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < len; i++)
        h = (h ^ k[i]) * 16777619u;
    return h;
}

static kv_t **kv_find(coll_store_server_t *s, const uint8_t *key, uint32_t klen)
{
    uint32_t h = hash_key(key, klen);
    kv_t **pp = &s->buckets[h % NBUCKETS];
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->hash == h && (*pp)->klen == klen && !memcmp((*pp)->buf, key, klen))
            return pp;
    return pp; /* points at the NULL tail */
}

static void kv_free(coll_store_server_t *s, kv_t **pp)
{
    kv_t *e = *pp;
    *pp = e->next;
    s->total -= e->vlen;
    free(e->buf);
    free(e);
}

/* Takes ownership of buf (key then value) on success. */
static coll_status_t kv_put(coll_store_server_t *s, uint8_t *buf, uint32_t klen, uint32_t vlen)
{
    kv_t **pp = kv_find(s, buf, klen);
    uint64_t old = *pp ? (*pp)->vlen : 0;
    if (s->total - old + vlen > COLL_STORE_MAX_TOTAL)
        return COLL_ERR_NO_MEMORY;
    if (*pp) {
        free((*pp)->buf);
    } else {
        kv_t *e = calloc(1, sizeof *e);
        if (!e)
            return COLL_ERR_NO_MEMORY;
        e->hash = hash_key(buf, klen);
        e->klen = klen;
        *pp = e;
    }
    (*pp)->buf = buf;
    (*pp)->vlen = vlen;
    s->total = s->total - old + vlen;
    return COLL_SUCCESS;
}

/* ---- connections -------------------------------------------------------- */

static void conn_kill(conn_t *c, const char *why)
{
    if (c->dead)
        return;
    COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store: dropping client %s: %s", c->peer, why);
    close(c->fd);
    c->fd = -1;
    c->dead = 1;
}

static void conn_reset(conn_t *c)
{
    free(c->body);
    free(c->out);
    c->body = c->out = NULL;
    c->got = c->out_len = c->out_done = 0;
    c->deadline = 0;
    c->state = C_HDR;
}

static void conn_flush(conn_t *c)
{
    while (c->out_done < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_done, c->out_len - c->out_done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                conn_kill(c, strerror(errno));
            return;
        }
        c->out_done += (size_t)n;
        c->deadline = now_s() + COLL_STORE_STALL_TIMEOUT_S;
    }
    if (c->close_after) {
        conn_kill(c, c->close_after);
        return;
    }
    conn_reset(c);
}

/* Queue a reply (value may be NULL when vlen is 0) and start sending it. */
static void conn_reply(conn_t *c, coll_status_t st, const void *val, uint32_t vlen)
{
    free(c->out);
    c->out = malloc(COLL_STORE_REP_HDR + (size_t)vlen);
    if (!c->out) {
        conn_kill(c, "out of memory for a reply");
        return;
    }
    wr32(c->out, COLL_STORE_MAGIC);
    wr32(c->out + 4, (uint32_t)st);
    wr32(c->out + 8, vlen);
    if (vlen)
        memcpy(c->out + COLL_STORE_REP_HDR, val, vlen);
    c->out_len = COLL_STORE_REP_HDR + (size_t)vlen;
    c->out_done = 0;
    c->state = C_WRITE;
    c->deadline = now_s() + COLL_STORE_STALL_TIMEOUT_S;
    conn_flush(c);
}

static int kv_counter(const kv_t *e, int64_t *v)
{
    if (!e || e->vlen != 8)
        return 0;
    *v = rd64(e->buf + e->klen);
    return 1;
}

/* Answer the parked requests that key now satisfies. */
static void wake_waiters(coll_store_server_t *s, const uint8_t *key, uint32_t klen)
{
    kv_t *e = *kv_find(s, key, klen);
    if (!e)
        return;
    for (int i = 0; i < s->nconns; i++) {
        conn_t *c = s->conns[i];
        if (c->dead || c->state != C_PARKED || c->klen != klen || memcmp(c->body, key, klen))
            continue;
        int64_t v;
        if (c->op == COLL_STORE_GET)
            conn_reply(c, COLL_SUCCESS, e->buf + e->klen, e->vlen);
        else if (kv_counter(e, &v) && v >= c->target) {
            uint8_t b[8];
            wr64(b, v);
            conn_reply(c, COLL_SUCCESS, b, 8);
        }
    }
}

/* The "<job>/!failed" entry of the job of key (its text before the first
 * '/'), or NULL when that job has not failed. */
static kv_t *job_failed(coll_store_server_t *s, const uint8_t *key, uint32_t klen)
{
    uint32_t j = 0;
    while (j < klen && key[j] != '/')
        j++;
    size_t sl = sizeof COLL_STORE_FAILED_SUFFIX - 1;
    if (j + sl > COLL_STORE_MAX_KEY)
        return NULL;
    uint8_t k[COLL_STORE_MAX_KEY];
    memcpy(k, key, j);
    memcpy(k + j, COLL_STORE_FAILED_SUFFIX, sl);
    return *kv_find(s, k, j + (uint32_t)sl);
}

/* Answer every parked request of the job that just failed. */
static void wake_failed(coll_store_server_t *s, const uint8_t *job, uint32_t jlen, const kv_t *e)
{
    for (int i = 0; i < s->nconns; i++) {
        conn_t *c = s->conns[i];
        if (c->dead || c->state != C_PARKED || c->klen <= jlen || memcmp(c->body, job, jlen) ||
            c->body[jlen] != '/')
            continue;
        conn_reply(c, COLL_ERR_ABORTED, e->buf + e->klen, e->vlen);
    }
}

static void park(conn_t *c, uint32_t wait_ms)
{
    c->state = C_PARKED;
    c->deadline = wait_ms == COLL_STORE_WAIT_FOREVER ? 0 : now_s() + wait_ms / 1000.0;
}

/* i64 add with wrap-around (no signed-overflow UB). */
static coll_status_t counter_add(coll_store_server_t *s, conn_t *c, int64_t delta, int64_t *out)
{
    kv_t **pp = kv_find(s, c->body, c->klen);
    int64_t v = 0;
    if (*pp && !kv_counter(*pp, &v))
        return COLL_ERR_INVALID_ARG;
    v = (int64_t)((uint64_t)v + (uint64_t)delta);
    if (*pp) {
        wr64((*pp)->buf + (*pp)->klen, v);
    } else {
        uint8_t *buf = malloc((size_t)c->klen + 8);
        if (!buf)
            return COLL_ERR_NO_MEMORY;
        memcpy(buf, c->body, c->klen);
        wr64(buf + c->klen, v);
        coll_status_t st = kv_put(s, buf, c->klen, 8);
        if (st != COLL_SUCCESS) {
            free(buf);
            return st;
        }
    }
    *out = v;
    return COLL_SUCCESS;
}

static void process(coll_store_server_t *s, conn_t *c)
{
    const uint8_t *val = c->body + c->klen;
    uint8_t b[8];
    int64_t v;
    coll_status_t st;
    kv_t **pp;
    switch (c->op) {
    case COLL_STORE_SET:
        st = kv_put(s, c->body, c->klen, c->vlen);
        if (st == COLL_SUCCESS) {
            uint8_t *key = c->body;
            c->body = NULL; /* now owned by the table */
            conn_reply(c, st, NULL, 0);
            wake_waiters(s, key, c->klen);
        } else {
            conn_reply(c, st, NULL, 0);
        }
        return;
    case COLL_STORE_GET: {
        kv_t *f;
        pp = kv_find(s, c->body, c->klen);
        if (*pp)
            conn_reply(c, COLL_SUCCESS, (*pp)->buf + (*pp)->klen, (*pp)->vlen);
        else if ((f = job_failed(s, c->body, c->klen)) != NULL)
            conn_reply(c, COLL_ERR_ABORTED, f->buf + f->klen, f->vlen);
        else if (c->vlen == 4 && rd32(val) == 0)
            conn_reply(c, COLL_ERR_TIMEOUT, NULL, 0);
        else
            park(c, c->vlen == 4 ? rd32(val) : COLL_STORE_WAIT_FOREVER);
        return;
    }
    case COLL_STORE_FAIL: {
        if (memchr(c->body, '/', c->klen) || c->klen + sizeof COLL_STORE_FAILED_SUFFIX - 1 > COLL_STORE_MAX_KEY) {
            conn_reply(c, COLL_ERR_INVALID_ARG, NULL, 0);
            return;
        }
        if (job_failed(s, c->body, c->klen)) {   /* the first reason stays */
            conn_reply(c, COLL_SUCCESS, NULL, 0);
            return;
        }
        uint32_t jlen = c->klen, sl = (uint32_t)sizeof COLL_STORE_FAILED_SUFFIX - 1;
        uint8_t *buf = malloc((size_t)jlen + sl + c->vlen);
        if (!buf) {
            conn_reply(c, COLL_ERR_NO_MEMORY, NULL, 0);
            return;
        }
        memcpy(buf, c->body, jlen);
        memcpy(buf + jlen, COLL_STORE_FAILED_SUFFIX, sl);
        memcpy(buf + jlen + sl, val, c->vlen);
        st = kv_put(s, buf, jlen + sl, c->vlen);
        if (st != COLL_SUCCESS) {
            free(buf);
            conn_reply(c, st, NULL, 0);
            return;
        }
        conn_reply(c, COLL_SUCCESS, NULL, 0);
        wake_failed(s, buf, jlen, job_failed(s, buf, jlen));
        return;
    }
    case COLL_STORE_ADD: {
        uint8_t key[COLL_STORE_MAX_KEY];
        uint32_t klen = c->klen;
        memcpy(key, c->body, klen); /* the reply may free the body */
        st = counter_add(s, c, rd64(val), &v);
        wr64(b, v);
        conn_reply(c, st, st == COLL_SUCCESS ? b : NULL, st == COLL_SUCCESS ? 8 : 0);
        if (st == COLL_SUCCESS)
            wake_waiters(s, key, klen);
        return;
    }
    case COLL_STORE_DEL:
        pp = kv_find(s, c->body, c->klen);
        if (*pp)
            kv_free(s, pp);
        conn_reply(c, COLL_SUCCESS, NULL, 0);
        return;
    case COLL_STORE_BARRIER: {
        uint32_t n = rd32(val), wait_ms = rd32(val + 4);
        kv_t *f = job_failed(s, c->body, c->klen);
        if (f) {
            conn_reply(c, COLL_ERR_ABORTED, f->buf + f->klen, f->vlen);
            return;
        }
        st = counter_add(s, c, 1, &v);
        if (st != COLL_SUCCESS) {
            conn_reply(c, st, NULL, 0);
            return;
        }
        /* the next multiple of n at or above v */
        c->target = (int64_t)(((uint64_t)v + n - 1) / n * n);
        uint8_t key[COLL_STORE_MAX_KEY];
        uint32_t klen = c->klen;
        memcpy(key, c->body, klen);
        if (v >= c->target) {
            wr64(b, v);
            conn_reply(c, COLL_SUCCESS, b, 8);
        } else {
            park(c, wait_ms);
        }
        wake_waiters(s, key, klen);
        return;
    }
    default:
        conn_kill(c, "unknown op");
    }
}

/* ---- reading ------------------------------------------------------------ */

static int secret_ok(const uint8_t *a, const uint8_t *b)
{
    volatile uint8_t diff = 0;
    for (size_t i = 0; i < COLL_SECRET_BYTES; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

static void on_hello(coll_store_server_t *s, conn_t *c)
{
    if (rd32(c->hdr) != COLL_STORE_MAGIC) {
        conn_kill(c, "bad magic in hello (not a collbench client)");
        return;
    }
    if (rd32(c->hdr + 4) != COLL_STORE_VERSION) {
        c->close_after = "speaks another protocol version";
        conn_reply(c, COLL_ERR_UNSUPPORTED, NULL, 0);
        return;
    }
    if (!secret_ok(c->hdr + 8, s->secret)) {
        c->close_after = "wrong secret (a stranger, or a rank with another unique id)";
        conn_reply(c, COLL_ERR_AUTH, NULL, 0);
        return;
    }
    COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store: client %s joined", c->peer);
    conn_reply(c, COLL_SUCCESS, NULL, 0);
}

static void on_header(conn_t *c)
{
    const char *why = "";
    if (check_header(c->hdr, &c->op, &c->klen, &c->vlen, &why) != COLL_SUCCESS) {
        conn_kill(c, why);
        return;
    }
    c->body = malloc((size_t)c->klen + c->vlen); /* both bounded by check_header */
    if (!c->body) {
        conn_kill(c, "out of memory for a request");
        return;
    }
    c->got = 0;
    c->state = C_BODY;
}

static void conn_read(coll_store_server_t *s, conn_t *c)
{
    while (!c->dead) {
        uint8_t *dst;
        size_t total;
        if (c->state == C_HELLO)
            dst = c->hdr, total = COLL_STORE_HELLO_BYTES;
        else if (c->state == C_HDR)
            dst = c->hdr, total = COLL_STORE_REQ_HDR;
        else if (c->state == C_BODY)
            dst = c->body, total = (size_t)c->klen + c->vlen;
        else
            return;
        ssize_t n = recv(c->fd, dst + c->got, total - c->got, 0);
        if (n == 0 && c->state == C_HDR && c->got == 0) {
            COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store: client %s left", c->peer);
            close(c->fd);
            c->fd = -1;
            c->dead = 1;
            return;
        }
        if (n == 0) {
            conn_kill(c, c->state == C_HELLO ? "closed the connection during the hello"
                                             : "closed the connection in the middle of a request");
            return;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                conn_kill(c, strerror(errno));
            return;
        }
        c->got += (size_t)n;
        if (c->state != C_HELLO) /* the hello deadline is fixed: no slow-drip extension */
            c->deadline = now_s() + COLL_STORE_STALL_TIMEOUT_S;
        if (c->got < total)
            continue;
        if (c->state == C_HELLO) {
            on_hello(s, c);
        } else if (c->state == C_HDR) {
            on_header(c);
        } else {
            const char *why = "";
            if (check_payload(c->op, c->body + c->klen, &why) != COLL_SUCCESS)
                conn_kill(c, why);
            else
                process(s, c);
        }
    }
}

/* ---- accepting ---------------------------------------------------------- */

static void compact(coll_store_server_t *s)
{
    int j = 0;
    for (int i = 0; i < s->nconns; i++) {
        conn_t *c = s->conns[i];
        if (c->dead) {
            free(c->body);
            free(c->out);
            free(c);
        } else {
            s->conns[j++] = c;
        }
    }
    s->nconns = j;
}

/* Make room by dropping the oldest connection still in its hello. */
static int evict_one(coll_store_server_t *s)
{
    conn_t *old = NULL;
    for (int i = 0; i < s->nconns; i++)
        if (s->conns[i]->state == C_HELLO && (!old || s->conns[i]->deadline < old->deadline))
            old = s->conns[i];
    if (!old)
        return 0;
    conn_kill(old, "evicted: too many connections, and this one has not said hello");
    compact(s);
    return 1;
}

static void accept_burst(coll_store_server_t *s)
{
    for (int k = 0; k < ACCEPT_BURST; k++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store: accept: %s (pausing 100 ms)",
                           strerror(errno));
                s->accept_pause_until = now_s() + 0.1;
            }
            return;
        }
        char peer[COLL_SOCKADDR_STRLEN];
        coll_sockaddr_str(&ss, peer, sizeof peer);
        if (s->nconns >= COLL_STORE_MAX_CLIENTS && !evict_one(s)) {
            COLL_DEBUG(COLL_SUB_BOOTSTRAP,
                       "rendezvous store: refusing %s: %d clients connected already", peer,
                       s->nconns);
            close(fd);
            continue;
        }
        conn_t *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* best effort */
        c->fd = fd;
        c->state = C_HELLO;
        c->deadline = now_s() + COLL_STORE_HELLO_TIMEOUT_S;
        memcpy(c->peer, peer, sizeof peer);
        s->conns[s->nconns++] = c;
    }
}

/* ---- the loop ----------------------------------------------------------- */

static void expire(coll_store_server_t *s)
{
    double now = now_s();
    for (int i = 0; i < s->nconns; i++) {
        conn_t *c = s->conns[i];
        if (c->dead || c->deadline == 0 || now < c->deadline)
            continue;
        if (c->state == C_PARKED)
            conn_reply(c, COLL_ERR_TIMEOUT, NULL, 0);
        else if (c->state == C_HELLO)
            conn_kill(c, "no valid hello within the handshake timeout");
        else if (c->state == C_WRITE)
            conn_kill(c, "does not read its reply");
        else
            conn_kill(c, "stalled in the middle of a request");
    }
}

static int poll_timeout_ms(const coll_store_server_t *s, int accepting)
{
    double now = now_s(), next = accepting ? 0 : s->accept_pause_until;
    for (int i = 0; i < s->nconns; i++) {
        double d = s->conns[i]->deadline;
        if (d > 0 && (next == 0 || d < next))
            next = d;
    }
    if (next == 0)
        return -1;
    double ms = (next - now) * 1000.0 + 1.0;
    return ms < 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
}

static short conn_events(const conn_t *c)
{
    switch (c->state) {
    case C_PARKED:
        return POLLRDHUP;
    case C_WRITE:
        return POLLOUT;
    default:
        return POLLIN;
    }
}

/* fork() while a store thread is inside malloc (or holds any other lock) would
 * hand the child a lock no thread will ever release. glibc's malloc protects
 * itself with fork handlers; other allocators do not (the sanitizers' of gcc 12
 * / clang 14: forked ranks hung in malloc). So a store thread works holding
 * fork_lock and drops it only while it sleeps in poll(), and fork() takes it
 * first (pthread_atfork): a child is made only while every store thread sleeps.
 * The start waits until the thread holds the lock: a new thread's own start-up
 * (the sanitizer runtime's thread set-up allocates) must not overlap a fork either. */
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started_cond = PTHREAD_COND_INITIALIZER; /* with fork_lock */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&fork_lock);
}

static void fork_release(void)
{
    pthread_mutex_unlock(&fork_lock); /* parent, and the child's only thread */
}

static void fork_register(void)
{
    pthread_atfork(fork_prepare, fork_release, fork_release);
}

static void *server_main(void *arg)
{
    coll_store_server_t *s = arg;
    pthread_mutex_lock(&fork_lock);
    s->started = 1;
    pthread_cond_broadcast(&started_cond);
    for (;;) {
        int accepting = now_s() >= s->accept_pause_until;
        s->pfds[0] = (struct pollfd){.fd = s->efd, .events = POLLIN};
        s->pfds[1] = (struct pollfd){.fd = accepting ? s->lfd : -1, .events = POLLIN};
        int ncur = s->nconns;
        for (int i = 0; i < ncur; i++)
            s->pfds[2 + i] = (struct pollfd){.fd = s->conns[i]->fd,
                                             .events = conn_events(s->conns[i])};
        int timeout_ms = poll_timeout_ms(s, accepting);
        pthread_mutex_unlock(&fork_lock);
        int n = poll(s->pfds, (nfds_t)ncur + 2, timeout_ms);
        pthread_mutex_lock(&fork_lock);
        if (n < 0) {
            if (errno != EINTR) {
                COLL_WARN(COLL_SUB_BOOTSTRAP, "rendezvous store: poll: %s", strerror(errno));
                usleep(10000);
            }
            continue;
        }
        if (s->pfds[0].revents)
            break;
        for (int i = 0; i < ncur; i++) {
            conn_t *c = s->conns[i];
            if (c->dead || !s->pfds[2 + i].revents)
                continue;
            if (c->state == C_PARKED)
                conn_kill(c, "closed the connection while waiting");
            else if (c->state == C_WRITE)
                conn_flush(c);
            else
                conn_read(s, c);
        }
        expire(s);
        compact(s);
        if (s->pfds[1].revents & POLLIN)
            accept_burst(s);
    }
    pthread_mutex_unlock(&fork_lock);
    return NULL;
}

/* ---- start / stop -------------------------------------------------------- */

static int is_wildcard(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
    return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
}

static int is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
    return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
}

/* Where to bind and what to advertise. No address: the selected interface's
 * address for both. An address (torchrun's MASTER_ADDR): advertise it, bind the
 * wildcard of its family, since a host name may resolve locally to something
 * (127.0.1.1) that other hosts cannot reach. */
static coll_status_t store_addrs(const char *addr, int port, struct sockaddr_storage *bind_ss,
                                 struct sockaddr_storage *adv)
{
    if (!addr || !addr[0]) {
        COLL_CHECK(coll_netif_select(AF_UNSPEC, adv, NULL, 0));
        coll_sockaddr_set_port(adv, port);
        *bind_ss = *adv;
        return COLL_SUCCESS;
    }
    int family;
    COLL_CHECK(coll_netif_family(&family));
    COLL_CHECK(coll_sockaddr_parse(addr, port, family, adv));
    if (is_wildcard(adv)) {
        COLL_CHECK(coll_netif_select(adv->ss_family, adv, NULL, 0));
        coll_sockaddr_set_port(adv, port);
    }
    if (is_loopback(adv)) {   /* single-host jobs: never listen beyond this machine */
        *bind_ss = *adv;
        return COLL_SUCCESS;
    }
    COLL_CHECK(coll_sockaddr_parse(NULL, port, adv->ss_family, bind_ss));
    return COLL_SUCCESS;
}

static coll_status_t open_listener(const struct sockaddr_storage *ss, int *out)
{
    char a[COLL_SOCKADDR_STRLEN];
    coll_sockaddr_str(ss, a, sizeof a);
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP,
                                "cannot create the rendezvous store socket for %s", a);
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (const struct sockaddr *)ss, coll_sockaddr_len(ss)) != 0 ||
        listen(fd, SOMAXCONN) != 0) {
        coll_status_t st = coll_error_errno(
            errno == EADDRINUSE ? COLL_ERR_NETWORK : COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP,
            "cannot listen for the rendezvous store on %s", a);
        close(fd);
        return st;
    }
    *out = fd;
    return COLL_SUCCESS;
}

static void server_free(coll_store_server_t *s)
{
    for (int i = 0; i < s->nconns; i++) {
        if (!s->conns[i]->dead)
            close(s->conns[i]->fd);
        s->conns[i]->dead = 1;
    }
    compact(s);
    for (int b = 0; b < NBUCKETS; b++)
        while (s->buckets[b])
            kv_free(s, &s->buckets[b]);
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->efd >= 0)
        close(s->efd);
    free(s);
}

coll_status_t coll_store_server_start(const char *addr, int port,
                                      const uint8_t secret[COLL_SECRET_BYTES],
                                      coll_store_server_t **out, coll_id_info_t *info)
{
    if (!secret || !out || !info || port < 0 || port > 65535)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "coll_store_server_start: invalid arguments (port %d)", port);
    coll_log_init();
    struct sockaddr_storage bind_ss, adv;
    COLL_CHECK(store_addrs(addr, port, &bind_ss, &adv));
    coll_store_server_t *s = calloc(1, sizeof *s);
    if (!s)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_BOOTSTRAP,
                          "out of memory for the rendezvous store");
    s->lfd = s->efd = -1;
    memcpy(s->secret, secret, COLL_SECRET_BYTES);
    coll_status_t st = open_listener(&bind_ss, &s->lfd);
    if (st != COLL_SUCCESS) {
        server_free(s);
        return st;
    }
    struct sockaddr_storage got;
    socklen_t gl = sizeof got;
    if (getsockname(s->lfd, (struct sockaddr *)&got, &gl) != 0) {
        st = coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "getsockname of the store");
        server_free(s);
        return st;
    }
    coll_sockaddr_set_port(&adv, coll_sockaddr_port(&got));
    coll_sockaddr_str(&adv, s->addr, sizeof s->addr);
    s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->efd < 0) {
        st = coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "eventfd for the store");
        server_free(s);
        return st;
    }
    pthread_once(&fork_once, fork_register);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the store thread takes no signals */
    int rc = pthread_create(&s->thr, NULL, server_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        pthread_mutex_lock(&fork_lock);
        while (!s->started)
            pthread_cond_wait(&started_cond, &fork_lock);
        pthread_mutex_unlock(&fork_lock);
    }
    if (rc != 0) {
        errno = rc;
        st = coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP,
                              "cannot start the rendezvous store thread");
        server_free(s);
        return st;
    }
    memset(info, 0, sizeof *info);
    info->family = adv.ss_family;
    info->port = (uint16_t)coll_sockaddr_port(&adv);
    if (adv.ss_family == AF_INET6)
        memcpy(info->addr, &((struct sockaddr_in6 *)&adv)->sin6_addr, 16);
    else
        memcpy(info->addr, &((struct sockaddr_in *)&adv)->sin_addr, 4);
    memcpy(info->secret, secret, COLL_SECRET_BYTES);
    COLL_INFO(COLL_SUB_BOOTSTRAP, "rendezvous store listening on %s%s", s->addr,
              addr && addr[0] ? " (all interfaces)" : "");
    *out = s;
    return COLL_SUCCESS;
}

void coll_store_server_stop(coll_store_server_t *s)
{
    if (!s)
        return;
    uint64_t one = 1;
    while (write(s->efd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    pthread_join(s->thr, NULL);
    COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store %s stopped", s->addr);
    server_free(s);
}
