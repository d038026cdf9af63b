/*
 * store_client.c - blocking client of the rendezvous store. Every wait is a
 * poll() with a deadline (and a look at the abort flag every 100 ms), so no
 * call can hang past its timeout. connect retries until the timeout, since
 * ranks may start before the root's store listens. After an I/O error, a
 * timeout or an abort in the middle of a request the connection is unusable
 * (a reply may still be on its way) and every later call says so.
 */
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/log.h"
#include "core/netif.h"

#define ABORT_POLL_MS 100
#define GET_GRACE_S 10.0 /* client waits this much longer than the server-side wait */

struct coll_store {
    int fd;
    int broken;
    double op_timeout_s; /* SET/ADD/DEL; <= 0 = none */
    const atomic_int *abort_flag;
    pthread_mutex_t lock;
    struct sockaddr_storage ss;
    char addr[COLL_SOCKADDR_STRLEN];
    char why[640]; /* why it broke */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double deadline_of(double timeout_s) { return timeout_s > 0 ? now_s() + timeout_s : 0; }

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* strerror, first letter lowered, for "(connection refused)". */
static const char *err_text(int err, char *buf, size_t len)
{
    snprintf(buf, len, "%s", strerror(err));
    buf[0] = (char)tolower((unsigned char)buf[0]);
    return buf;
}

/* Wait for ev on fd until deadline (0 = never). SUCCESS, TIMEOUT, ABORTED or
 * SYSTEM (errno set). */
static coll_status_t wait_fd(const coll_store_t *st, int fd, short ev, double deadline)
{
    for (;;) {
        if (st->abort_flag && atomic_load(st->abort_flag))
            return COLL_ERR_ABORTED;
        int ms = st->abort_flag ? ABORT_POLL_MS : -1, last = 0;
        if (deadline > 0) {
            double left = deadline - now_s();
            int lm = left > 0 ? (int)(left * 1000.0) + 1 : 0;
            last = lm == 0; /* one look even when the time is up */
            if (ms < 0 || lm < ms)
                ms = lm;
        }
        struct pollfd p = {.fd = fd, .events = ev};
        int n = poll(&p, 1, ms);
        if (n > 0)
            return COLL_SUCCESS;
        if (n < 0 && errno != EINTR)
            return COLL_ERR_SYSTEM;
        if (last)
            return COLL_ERR_TIMEOUT;
    }
}

/* Move len bytes (send when out, else recv). On failure returns the status and
 * leaves the cause in err (0 = peer closed, or the status says timeout/abort). */
static coll_status_t xfer(const coll_store_t *st, int fd, int out, void *buf, size_t len, double deadline, int *err)
{
    uint8_t *p = buf;
    *err = 0;
    while (len > 0) {
        ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return COLL_ERR_NETWORK;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            *err = errno;
            return COLL_ERR_NETWORK;
        }
        coll_status_t s = wait_fd(st, fd, out ? POLLOUT : POLLIN, deadline);
        if (s == COLL_ERR_SYSTEM) {
            *err = errno;
            return COLL_ERR_NETWORK;
        }
        if (s != COLL_SUCCESS)
            return s;
    }
    return COLL_SUCCESS;
}

/* ---- connect ------------------------------------------------------------ */

/* The handshake on a connected fd (bootstrap.h): hello with Nc, the store's
 * Na | MAC_A, our MAC_C. AUTH when the store does not prove the secret. */
static coll_status_t handshake(coll_store_t *st, int fd, const uint8_t *secret, uint32_t claim, double deadline,
                               int *err)
{
    uint8_t hello[COLL_STORE_HELLO_BYTES], rep[COLL_STORE_REP_HDR], ch[COLL_AUTH_CHALLENGE_BYTES];
    wr32(hello, COLL_STORE_MAGIC);
    wr32(hello + 4, COLL_STORE_VERSION);
    wr32(hello + 8, claim);
    wr32(hello + 12, 0);
    uint64_t t0 = coll_auth_now_ns();
    COLL_CHECK(coll_auth_random(hello + 16, COLL_AUTH_NONCE_BYTES));
    coll_status_t s = xfer(st, fd, 1, hello, sizeof hello, deadline, err);
    if (s == COLL_SUCCESS)
        s = xfer(st, fd, 0, rep, sizeof rep, deadline, err);
    if (s != COLL_SUCCESS)
        return s;
    if (rd32(rep) != COLL_STORE_MAGIC)
        return COLL_ERR_INTERNAL;
    if (rd32(rep + 4) != COLL_SUCCESS) /* a store of another version refuses the hello */
        return rd32(rep + 4) == COLL_ERR_AUTH ? COLL_ERR_AUTH : COLL_ERR_UNSUPPORTED;
    if (rd32(rep + 8) != COLL_AUTH_CHALLENGE_BYTES)
        return COLL_ERR_INTERNAL;
    if ((s = xfer(st, fd, 0, ch, sizeof ch, deadline, err)) != COLL_SUCCESS)
        return s;
    coll_auth_bind_t b = {.role = COLL_AUTH_STORE, .from = claim};
    uint8_t proof[COLL_AUTH_MAC_BYTES];
    if (!coll_auth_respond(secret, &b, hello + 16, ch, proof))
        return COLL_ERR_AUTH;
    coll_auth_done(COLL_AUTH_CONNECTOR, COLL_AUTH_STORE, t0);
    return xfer(st, fd, 1, proof, sizeof proof, deadline, err);
}

/* One attempt: TCP connect + handshake. A retryable failure returns NETWORK
 * with the reason in why; AUTH / UNSUPPORTED are final. */
static coll_status_t try_connect(coll_store_t *st, const uint8_t *secret, uint32_t claim, double deadline, char *why,
                                 size_t wl)
{
    char e[96];
    int fd = socket(st->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, wl, "socket: %s", err_text(errno, e, sizeof e));
        return COLL_ERR_SYSTEM;
    }
    int err = 0;
    coll_status_t s = COLL_SUCCESS;
    if (connect(fd, (struct sockaddr *)&st->ss, coll_sockaddr_len(&st->ss)) != 0) {
        if (errno != EINPROGRESS) {
            err = errno;
        } else if ((s = wait_fd(st, fd, POLLOUT, deadline)) == COLL_SUCCESS) {
            socklen_t el = sizeof err;
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
                err = errno;
        }
    }
    if (s == COLL_SUCCESS && err) {
        snprintf(why, wl, "%s", err_text(err, e, sizeof e));
        s = COLL_ERR_NETWORK;
    }
    if (s == COLL_SUCCESS) {
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* best effort */
        s = handshake(st, fd, secret, claim, deadline, &err);
        if (s == COLL_ERR_NETWORK)
            snprintf(why, wl, "%s during the handshake", err ? err_text(err, e, sizeof e) : "connection closed");
    }
    if (s == COLL_ERR_INTERNAL) {
        snprintf(why, wl, "not a collbench rendezvous store (bad handshake reply)");
        s = COLL_ERR_NETWORK;
    }
    if (s != COLL_SUCCESS) {
        close(fd);
        return s;
    }
    st->fd = fd;
    return COLL_SUCCESS;
}

coll_status_t coll_store_connect(const coll_id_info_t *info, double timeout_s, coll_store_t **out)
{
    return coll_store_connect_as(info, COLL_STORE_NO_RANK, timeout_s, out);
}

coll_status_t coll_store_connect_as(const coll_id_info_t *info, uint32_t rank, double timeout_s, coll_store_t **out)
{
    if (!info || !out || (info->family != AF_INET && info->family != AF_INET6))
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_store_connect: invalid arguments");
    coll_log_init();
    coll_store_t *st = calloc(1, sizeof *st);
    if (!st)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_BOOTSTRAP, "out of memory");
    st->fd = -1;
    st->op_timeout_s = timeout_s;
    pthread_mutex_init(&st->lock, NULL);
    st->ss.ss_family = info->family;
    if (info->family == AF_INET6)
        memcpy(&((struct sockaddr_in6 *)&st->ss)->sin6_addr, info->addr, 16);
    else
        memcpy(&((struct sockaddr_in *)&st->ss)->sin_addr, info->addr, 4);
    coll_sockaddr_set_port(&st->ss, info->port);
    coll_sockaddr_str(&st->ss, st->addr, sizeof st->addr);

    double start = now_s(), deadline = deadline_of(timeout_s), backoff = 0.01;
    char why[160] = "no attempt made";
    coll_status_t s;
    for (int attempt = 1;; attempt++) {
        s = try_connect(st, info->secret, rank, deadline, why, sizeof why);
        if (s == COLL_SUCCESS || s == COLL_ERR_AUTH || s == COLL_ERR_UNSUPPORTED || s == COLL_ERR_ABORTED
            || s == COLL_ERR_SYSTEM)
            break;
        if (s == COLL_ERR_TIMEOUT && attempt == 1)
            snprintf(why, sizeof why, "no answer"); /* else keep the last real reason */
        double left = deadline > 0 ? deadline - now_s() : 1e9;
        if (left <= 0) {
            s = COLL_ERR_TIMEOUT;
            break;
        }
        if (attempt == 1 || attempt % 50 == 0)
            COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store %s not reachable yet (%s), retrying", st->addr, why);
        double nap = backoff < left ? backoff : left;
        usleep((useconds_t)(nap * 1e6));
        backoff = backoff * 2 > 0.5 ? 0.5 : backoff * 2;
    }
    if (s != COLL_SUCCESS) {
        if (s == COLL_ERR_AUTH)
            coll_error(s, COLL_SUB_BOOTSTRAP,
                       "rendezvous store %s did not prove it knows our secret (wrong unique id or "
                       "COLL_SECRET, or not our store)",
                       st->addr);
        else if (s == COLL_ERR_UNSUPPORTED)
            coll_error(s, COLL_SUB_BOOTSTRAP,
                       "rendezvous store %s speaks another protocol version (mixed collbench "
                       "versions?)",
                       st->addr);
        else if (s == COLL_ERR_ABORTED)
            coll_error(s, COLL_SUB_BOOTSTRAP, "aborted while connecting to rendezvous store %s", st->addr);
        else
            coll_error(s, COLL_SUB_BOOTSTRAP, "cannot reach rendezvous store %s after %.1f s (%s)", st->addr,
                       now_s() - start, why);
        pthread_mutex_destroy(&st->lock);
        free(st);
        return s;
    }
    COLL_DEBUG(COLL_SUB_BOOTSTRAP, "connected to rendezvous store %s", st->addr);
    *out = st;
    return COLL_SUCCESS;
}

void coll_store_close(coll_store_t *st)
{
    if (!st)
        return;
    if (st->fd >= 0)
        close(st->fd);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

void coll_store_set_abort_flag(coll_store_t *st, const atomic_int *flag)
{
    if (st)
        st->abort_flag = flag;
}

const char *coll_store_addr(const coll_store_t *st) { return st ? st->addr : ""; }

/* ---- requests ----------------------------------------------------------- */

static const char *op_name(uint32_t op)
{
    static const char *const n[] = {"?", "SET", "GET", "ADD", "DEL", "BARRIER", "FAIL", "GATHER"};
    return op < COLL_STORE_OP_END ? n[op] : "?";
}

static coll_status_t broken_error(coll_store_t *st, coll_status_t s, uint32_t op, const char *key, int err,
                                  double timeout_s)
{
    char e[96];
    const char *on = op_name(op);
    if (s == COLL_ERR_TIMEOUT)
        snprintf(st->why, sizeof st->why, "rendezvous store %s did not answer %s '%s' within %.1f s", st->addr, on, key,
                 timeout_s);
    else if (s == COLL_ERR_ABORTED)
        snprintf(st->why, sizeof st->why, "aborted while waiting for rendezvous store %s (%s '%s')", st->addr, on, key);
    else
        snprintf(st->why, sizeof st->why, "lost the connection to rendezvous store %s during %s '%s' (%s)", st->addr,
                 on, key, err ? err_text(err, e, sizeof e) : "closed by the store: did its process exit?");
    st->broken = 1;
    close(st->fd);
    st->fd = -1;
    return coll_error(s, COLL_SUB_BOOTSTRAP, "%s", st->why);
}

/* One request/reply. rval (may be NULL) receives the malloc'ed reply value
 * (NUL-terminated, so a text can be printed) whenever a reply came, whatever
 * its status: the caller frees it. */
static coll_status_t request(coll_store_t *st, uint32_t op, const char *key, const void *v1, size_t l1, const void *v2,
                             size_t l2, double timeout_s, void **rval, size_t *rlen)
{
    size_t klen = key ? strlen(key) : 0;
    if (!st || klen == 0 || klen > COLL_STORE_MAX_KEY || l1 + l2 > COLL_STORE_MAX_VALUE)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "rendezvous store %s '%.40s': key must be 1..%d bytes (got %zu), "
                          "value at most %u bytes (got %zu)",
                          op_name(op), key ? key : "", COLL_STORE_MAX_KEY, klen, COLL_STORE_MAX_VALUE, l1 + l2);
    pthread_mutex_lock(&st->lock);
    coll_status_t s;
    if (st->broken) {
        s = coll_error(COLL_ERR_NETWORK, COLL_SUB_BOOTSTRAP,
                       "rendezvous store connection unusable after an earlier error: %s", st->why);
        goto out;
    }
    uint8_t hdr[COLL_STORE_REQ_HDR + COLL_STORE_MAX_KEY], rep[COLL_STORE_REP_HDR];
    wr32(hdr, COLL_STORE_MAGIC);
    wr32(hdr + 4, op);
    wr32(hdr + 8, (uint32_t)klen);
    wr32(hdr + 12, (uint32_t)(l1 + l2));
    memcpy(hdr + COLL_STORE_REQ_HDR, key, klen);
    double deadline = deadline_of(timeout_s);
    int err = 0;
    s = xfer(st, st->fd, 1, hdr, COLL_STORE_REQ_HDR + klen, deadline, &err);
    if (s == COLL_SUCCESS && l1)
        s = xfer(st, st->fd, 1, (void *)v1, l1, deadline, &err);
    if (s == COLL_SUCCESS && l2)
        s = xfer(st, st->fd, 1, (void *)v2, l2, deadline, &err);
    if (s == COLL_SUCCESS)
        s = xfer(st, st->fd, 0, rep, sizeof rep, deadline, &err);
    if (s != COLL_SUCCESS) {
        s = broken_error(st, s, op, key, err, timeout_s);
        goto out;
    }
    uint32_t status = rd32(rep + 4), vlen = rd32(rep + 8);
    if (rd32(rep) != COLL_STORE_MAGIC || vlen > COLL_STORE_MAX_VALUE || status >= COLL_STATUS_COUNT) {
        s = broken_error(st, COLL_ERR_NETWORK, op, key, EPROTO, timeout_s);
        goto out;
    }
    char *val = malloc((size_t)vlen + 1);
    if (!val) {
        s = broken_error(st, COLL_ERR_NO_MEMORY, op, key, ENOMEM, timeout_s);
        goto out;
    }
    s = xfer(st, st->fd, 0, val, vlen, deadline, &err);
    if (s != COLL_SUCCESS) {
        free(val);
        s = broken_error(st, s, op, key, err, timeout_s);
        goto out;
    }
    val[vlen] = '\0';
    s = (coll_status_t)status;
    if (s == COLL_ERR_ABORTED && vlen) /* the job failed: the reason its rank gave */
        coll_error(s, COLL_SUB_BOOTSTRAP, "%.*s (while waiting for '%s' in rendezvous store %s)", (int)vlen,
                   (const char *)val, key, st->addr);
    if (rval) {
        *rval = val;
        *rlen = vlen;
    } else {
        free(val);
    }
out:
    pthread_mutex_unlock(&st->lock);
    return s;
}

coll_status_t coll_store_set(coll_store_t *st, const char *key, const void *val, size_t len)
{
    if (len && !val)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_store_set: NULL value");
    coll_status_t s = request(st, COLL_STORE_SET, key, val, len, NULL, 0, st ? st->op_timeout_s : 0, NULL, NULL);
    if (s == COLL_ERR_NO_MEMORY)
        return coll_error(s, COLL_SUB_BOOTSTRAP, "rendezvous store %s is full (SET '%s' of %zu bytes refused)",
                          st->addr, key, len);
    return s;
}

coll_status_t coll_store_get(coll_store_t *st, const char *key, double timeout_s, void **val, size_t *len)
{
    if (!val || !len)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_store_get: NULL output");
    uint8_t w[4];
    double ms = timeout_s > 0 ? timeout_s * 1000.0 : 0;
    wr32(w, timeout_s <= 0 ? COLL_STORE_WAIT_FOREVER : ms >= 4294967294.0 ? 4294967294u : (uint32_t)(ms < 1 ? 1 : ms));
    void *v = NULL;
    size_t l = 0;
    coll_status_t s = request(st, COLL_STORE_GET, key, w, 4, NULL, 0, timeout_s > 0 ? timeout_s + GET_GRACE_S : 0, &v,
                              &l);
    if (s == COLL_ERR_TIMEOUT && v) /* the store's wait ran out: its text says who is missing */
        coll_error(s, COLL_SUB_BOOTSTRAP,
                   "key '%s' did not appear in rendezvous store %s within %.1f s "
                   "(a rank missing or late?)%s%s",
                   key, st->addr, timeout_s, l ? ": " : "", l ? (const char *)v : "");
    if (s == COLL_SUCCESS) {
        *val = v;
        *len = l;
    } else {
        free(v);
    }
    return s;
}

coll_status_t coll_store_try_get(coll_store_t *st, const char *key, void **val, size_t *len)
{
    if (!val || !len)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_store_try_get: NULL output");
    uint8_t w[4] = {0, 0, 0, 0}; /* wait 0: answered at once */
    void *v = NULL;
    size_t l = 0;
    coll_status_t s = request(st, COLL_STORE_GET, key, w, 4, NULL, 0, st ? st->op_timeout_s : 0, &v, &l);
    if (s == COLL_SUCCESS || (s == COLL_ERR_TIMEOUT && v && l)) {
        if (s == COLL_ERR_TIMEOUT) { /* the store's text about the key: NUL-terminated */
            char *t = realloc(v, l + 1);
            if (t)
                t[l] = '\0';
            else
                free(v);
            v = t;
        }
        *val = v;
        *len = v ? l : 0;
    } else {
        free(v);
    }
    return s;
}

coll_status_t coll_store_gather(coll_store_t *st, const char *key, uint32_t n, uint32_t idx, const void *val,
                                size_t len)
{
    if (len && !val)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_store_gather: NULL value");
    uint8_t h[8];
    wr32(h, n);
    wr32(h + 4, idx);
    void *v = NULL;
    size_t l = 0;
    coll_status_t s = request(st, COLL_STORE_GATHER, key, h, 8, val, len, st ? st->op_timeout_s : 0, &v, &l);
    if (v && (s == COLL_ERR_INVALID_ARG || s == COLL_ERR_NO_MEMORY))
        coll_error(s, COLL_SUB_BOOTSTRAP, "rendezvous store %s refused GATHER '%s' (slot %u of %u, %zu bytes): %s",
                   st->addr, key, idx, n, len, l ? (const char *)v : "no reason given");
    free(v);
    return s;
}

coll_status_t coll_store_add(coll_store_t *st, const char *key, int64_t delta, int64_t *newval)
{
    uint8_t d[8];
    for (int i = 0; i < 8; i++)
        d[i] = (uint8_t)((uint64_t)delta >> (8 * i));
    void *v = NULL;
    size_t l = 0;
    coll_status_t s = request(st, COLL_STORE_ADD, key, d, 8, NULL, 0, st ? st->op_timeout_s : 0, &v, &l);
    if (s != COLL_SUCCESS)
        free(v);
    if (s == COLL_ERR_INVALID_ARG)
        return coll_error(s, COLL_SUB_BOOTSTRAP, "rendezvous store %s: ADD on key '%s' that does not hold a counter",
                          st->addr, key);
    if (s != COLL_SUCCESS)
        return s;
    uint64_t r = 0;
    for (int i = 0; i < 8 && (size_t)i < l; i++)
        r |= (uint64_t)((uint8_t *)v)[i] << (8 * i);
    free(v);
    if (l != 8)
        return coll_error(COLL_ERR_NETWORK, COLL_SUB_BOOTSTRAP, "rendezvous store %s: malformed ADD reply", st->addr);
    if (newval)
        *newval = (int64_t)r;
    return COLL_SUCCESS;
}

coll_status_t coll_store_del(coll_store_t *st, const char *key)
{
    return request(st, COLL_STORE_DEL, key, NULL, 0, NULL, 0, st ? st->op_timeout_s : 0, NULL, NULL);
}

coll_status_t coll_store_barrier(coll_store_t *st, const char *key, int n, double timeout_s)
{
    if (n < 1)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_store_barrier: n = %d", n);
    uint8_t p[8];
    double ms = timeout_s > 0 ? timeout_s * 1000.0 : 0;
    wr32(p, (uint32_t)n);
    wr32(p + 4,
         timeout_s <= 0           ? COLL_STORE_WAIT_FOREVER
             : ms >= 4294967294.0 ? 4294967294u
                                  : (uint32_t)(ms < 1 ? 1 : ms));
    coll_status_t s = request(st, COLL_STORE_BARRIER, key, p, 8, NULL, 0, timeout_s > 0 ? timeout_s + GET_GRACE_S : 0,
                              NULL, NULL);
    if (s == COLL_ERR_TIMEOUT && st && !st->broken)
        return coll_error(s, COLL_SUB_BOOTSTRAP,
                          "barrier '%s' of %d ranks on rendezvous store %s not complete after "
                          "%.1f s (a rank missing or late?)",
                          key, n, st->addr, timeout_s);
    return s;
}

coll_status_t coll_store_fail(coll_store_t *st, const char *job, const char *why)
{
    size_t wl = why ? strlen(why) : 0;
    if (wl > 1024)
        wl = 1024;
    return request(st, COLL_STORE_FAIL, job, why, wl, NULL, 0, 2.0, NULL, NULL);
}
