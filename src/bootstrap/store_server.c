/*
 * store_server.c - the rendezvous key-value store: one background thread, one
 * epoll loop, non-blocking sockets with a per-connection state machine, so no
 * client can block the others. The ops themselves are in store_ops.c, keys
 * and values in store_kv.c.
 *
 * Connection life: HELLO (48 bytes) -> challenge sent -> PROOF (the client's
 * MAC, checked in constant time; hello and proof within
 * COLL_STORE_HELLO_TIMEOUT_S of the accept, bootstrap.h) -> HDR (16-byte request header, validated before
 * anything is allocated) -> KEY (<= 256 B) -> VAL (<= 16 MiB) -> request
 * processed -> PARKED (GET of a missing key or an incomplete gather table,
 * BARRIER not yet complete) or WRITE (reply: a 12-byte header and a shared
 * reference to the value) -> HDR ... A client has one request in flight:
 * nothing more is read from it until its reply is out, which bounds its memory
 * to one frame. Anything hostile (bad magic, bad op or length, wrong secret,
 * silence during the hello, a half-sent frame that stalls) drops that
 * connection only, logged at DEBUG.
 *
 * Scale: clients are bounded by file descriptors only. An event costs O(1)
 * plus the work of its request (see store_ops.c); no step walks all clients.
 * Timeouts: the hello and stall timeouts are constants, so a list in the order
 * the deadlines were set is sorted: the loop looks at the list heads, O(1) per
 * turn; parked waits sit in a heap. When accept runs out of descriptors the
 * store raises its soft RLIMIT_NOFILE to the hard limit once (INFO), then, at
 * the hard limit, stops accepting for 10 ms at a time (WARN once) while the
 * clients connected are served and new ones wait in the listen backlog.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/store_internal.h"
#include "core/log.h"

#define ACCEPT_BURST 64
#define EPOLL_BATCH 256
#define LISTEN_BACKLOG 4096 /* the kernel caps it at net.core.somaxconn */
#define ACCEPT_PAUSE_S 0.010

static char listener_tag, wake_tag; /* epoll data of the listener and the stop eventfd */

double coll_store_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint32_t coll_store_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void coll_store_wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

#define rd32 coll_store_rd32
#define wr32 coll_store_wr32
#define now_s coll_store_now

static void add_stat(_Atomic uint64_t *c, uint64_t v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v, memory_order_relaxed);
}

/* ---- timers and epoll interest ------------------------------------------ */

static clist_t *timer_list(coll_store_server_t *s, int which)
{
    return which == T_HELLO ? &s->hello_list : &s->stall_list;
}

/* Put c on timer list which (T_NONE: none) with that deadline, at the tail:
 * the lists stay sorted since each list's timeout is one constant. */
static void timer_set(coll_store_server_t *s, conn_t *c, int which, double deadline)
{
    if (c->tlist != T_NONE)
        clist_del(timer_list(s, c->tlist), c, lk_timer);
    c->tlist = which;
    if (which == T_NONE)
        return;
    c->deadline = deadline;
    clist_push(timer_list(s, which), c, lk_timer);
}

static uint32_t events_of(const conn_t *c)
{
    switch (c->state) {
    case C_PARKED: return EPOLLRDHUP;
    case C_WRITE: return EPOLLOUT;
    default: return EPOLLIN;
    }
}

static void set_events(coll_store_server_t *s, conn_t *c)
{
    uint32_t ev = events_of(c);
    if (c->dead || ev == c->events)
        return;
    struct epoll_event e = {.events = ev, .data.ptr = c};
    if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &e) != 0) {
        conn_kill(s, c, "epoll_ctl failed");
        return;
    }
    c->events = ev;
}

/* ---- connections -------------------------------------------------------- */

void conn_kill(coll_store_server_t *s, conn_t *c, const char *why)
{
    if (c->dead)
        return;
    if (c->state == C_HELLO || c->state == C_PROOF)
        s->npreauth--;
    if (why)
        COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store: dropping client %s: %s", c->peer, why);
    store_unpark(s, c);
    timer_set(s, c, T_NONE, 0);
    /* Leave the epoll set first: close() alone does not when a forked child
     * still holds a copy of the socket, and its events would name a freed c. */
    (void)epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->dead = 1;
    clist_del(&s->all, c, lk_all);
    s->nconns--;
    c->next_dead = s->dead; /* freed at the end of the loop turn: events may name it */
    s->dead = c;
}

static void free_dead(coll_store_server_t *s)
{
    while (s->dead) {
        conn_t *c = s->dead;
        s->dead = c->next_dead;
        sval_put(s, c->val);
        sval_put(s, c->rval);
        free(c);
    }
}

static void conn_reset(coll_store_server_t *s, conn_t *c)
{
    sval_put(s, c->val);
    sval_put(s, c->rval);
    c->val = c->rval = NULL;
    c->got = c->out_done = 0;
    c->state = C_HDR;
    timer_set(s, c, T_NONE, 0);
    set_events(s, c);
}

static void conn_flush(coll_store_server_t *s, conn_t *c)
{
    size_t vlen = c->rval ? c->rval->len : 0, total = COLL_STORE_REP_HDR + vlen;
    while (c->out_done < total) {
        struct iovec iov[2];
        int niov = 0;
        if (c->out_done < COLL_STORE_REP_HDR)
            iov[niov++] = (struct iovec){c->rhdr + c->out_done, COLL_STORE_REP_HDR - c->out_done};
        size_t voff = c->out_done > COLL_STORE_REP_HDR ? c->out_done - COLL_STORE_REP_HDR : 0;
        if (vlen > voff)
            iov[niov++] = (struct iovec){c->rval->data + voff, vlen - voff};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
        ssize_t n = sendmsg(c->fd, &m, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                conn_kill(s, c, strerror(errno));
            else
                set_events(s, c);
            return;
        }
        c->out_done += (size_t)n;
        add_stat(&s->bytes_out, (uint64_t)n);
        if (c->out_done < total)
            timer_set(s, c, T_STALL, now_s() + COLL_STORE_STALL_TIMEOUT_S);
    }
    if (c->close_after) {
        conn_kill(s, c, c->close_after);
        return;
    }
    conn_reset(s, c);
}

void conn_reply(coll_store_server_t *s, conn_t *c, coll_status_t st, sval_t *val)
{
    if (c->dead) {
        sval_put(s, val);
        return;
    }
    if (c->state == C_HELLO || c->state == C_PROOF) /* a refused handshake */
        s->npreauth--;
    wr32(c->rhdr, COLL_STORE_MAGIC);
    wr32(c->rhdr + 4, (uint32_t)st);
    wr32(c->rhdr + 8, val ? val->len : 0);
    sval_put(s, c->rval);
    c->rval = val;
    c->out_done = 0;
    c->state = C_WRITE;
    timer_set(s, c, T_STALL, now_s() + COLL_STORE_STALL_TIMEOUT_S);
    conn_flush(s, c);
}

void conn_reply_text(coll_store_server_t *s, conn_t *c, coll_status_t st, const char *text)
{
    size_t l = text ? strlen(text) : 0;
    sval_t *v = l ? sval_new(s, (uint32_t)l) : NULL;
    if (v)
        memcpy(v->data, text, l);
    conn_reply(s, c, st, v);
}

void conn_park(coll_store_server_t *s, conn_t *c)
{
    c->state = C_PARKED;
    timer_set(s, c, T_NONE, 0);
    set_events(s, c);
}

/* ---- reading ------------------------------------------------------------ */

static coll_auth_bind_t store_bind(uint32_t claim)
{
    return (coll_auth_bind_t){.role = COLL_AUTH_STORE, .from = claim};
}

/* The hello (magic, version, claim, 0, Nc): answer Na | MAC_A at once (76
 * bytes into a fresh socket's empty send buffer: one send) and wait for MAC_C,
 * still under the fixed hello deadline. */
static void on_hello(coll_store_server_t *s, conn_t *c)
{
    if (rd32(c->hdr) != COLL_STORE_MAGIC) {
        conn_kill(s, c, "bad magic in hello (not a collbench client)");
        return;
    }
    if (rd32(c->hdr + 4) != COLL_STORE_VERSION) {
        c->close_after = "speaks another protocol version";
        conn_reply(s, c, COLL_ERR_UNSUPPORTED, NULL);
        return;
    }
    c->claim = rd32(c->hdr + 8);
    memcpy(c->nc, c->hdr + 16, COLL_AUTH_NONCE_BYTES);
    uint8_t rep[COLL_STORE_REP_HDR + COLL_AUTH_CHALLENGE_BYTES];
    wr32(rep, COLL_STORE_MAGIC);
    wr32(rep + 4, COLL_SUCCESS);
    wr32(rep + 8, COLL_AUTH_CHALLENGE_BYTES);
    coll_auth_bind_t b = store_bind(c->claim);
    c->auth_t0 = coll_auth_now_ns();
    if (coll_auth_challenge(s->secret, &b, c->nc, c->na, rep + COLL_STORE_REP_HDR) != COLL_SUCCESS) {
        conn_kill(s, c, "no random bytes for the challenge");
        return;
    }
    ssize_t n = send(c->fd, rep, sizeof rep, MSG_NOSIGNAL);
    if (n != (ssize_t)sizeof rep) {
        conn_kill(s, c, "cannot send the challenge at once");
        return;
    }
    add_stat(&s->bytes_out, (uint64_t)n);
    c->got = 0;
    c->state = C_PROOF;
}

static void on_proof(coll_store_server_t *s, conn_t *c)
{
    coll_auth_bind_t b = store_bind(c->claim);
    if (!coll_auth_verify(s->secret, COLL_AUTH_CONNECTOR, &b, c->nc, c->na, c->hdr)) {
        c->close_after = "wrong proof of the secret (a stranger, or a rank with another unique id)";
        conn_reply(s, c, COLL_ERR_AUTH, NULL);
        return;
    }
    coll_auth_done(COLL_AUTH_ACCEPTOR, COLL_AUTH_STORE, c->auth_t0);
    COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store: client %s joined", c->peer);
    c->got = 0;
    c->state = C_HDR;
    s->npreauth--;
    timer_set(s, c, T_NONE, 0);
}

static void on_header(coll_store_server_t *s, conn_t *c)
{
    const char *why = "";
    if (store_check_header(c->hdr, &c->op, &c->klen, &c->vlen, &why) != COLL_SUCCESS) {
        conn_kill(s, c, why);
        return;
    }
    if (c->vlen && store_held(s) + c->vlen > COLL_STORE_MAX_TOTAL) { /* M3: bodies in flight count */
        conn_kill(s, c, "the store is full: no room for this request's value");
        return;
    }
    if (c->vlen && !(c->val = sval_new(s, c->vlen))) { /* bounded by the header check */
        conn_kill(s, c, "out of memory for a request");
        return;
    }
    c->got = 0;
    c->state = C_KEY;
}

static void on_request(coll_store_server_t *s, conn_t *c)
{
    const char *why = "";
    if (store_check_payload(c->op, c->val ? c->val->data : NULL, c->vlen, &why) != COLL_SUCCESS)
        conn_kill(s, c, why);
    else
        store_process(s, c);
}

static void conn_read(coll_store_server_t *s, conn_t *c)
{
    while (!c->dead) {
        uint8_t *dst;
        size_t total;
        if (c->state == C_HELLO)
            dst = c->hdr, total = c->got < 8 ? 8 : COLL_STORE_HELLO_BYTES; /* magic and version first */
        else if (c->state == C_PROOF)
            dst = c->hdr, total = COLL_AUTH_MAC_BYTES;
        else if (c->state == C_HDR)
            dst = c->hdr, total = COLL_STORE_REQ_HDR;
        else if (c->state == C_KEY)
            dst = c->key, total = c->klen;
        else if (c->state == C_VAL)
            dst = c->val->data, total = c->vlen;
        else
            return;
        ssize_t n = recv(c->fd, dst + c->got, total - c->got, 0);
        if (n == 0 && c->state == C_HDR && c->got == 0) {
            COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store: client %s left", c->peer);
            conn_kill(s, c, NULL);
            return;
        }
        if (n == 0) {
            conn_kill(s, c,
                      c->state == C_HELLO || c->state == C_PROOF ? "closed the connection during the hello"
                                                                 : "closed the connection in the middle of a request");
            return;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                conn_kill(s, c, strerror(errno));
            return;
        }
        add_stat(&s->bytes_in, (uint64_t)n);
        c->got += (size_t)n;
        /* deadlines are fixed, never extended by a slow drip: the hello's from
         * the accept, a request frame's from its first byte */
        if (c->state != C_HELLO && c->state != C_PROOF && c->tlist != T_STALL)
            timer_set(s, c, T_STALL, now_s() + COLL_STORE_STALL_TIMEOUT_S);
        if (c->got < total)
            continue;
        if (c->state == C_HELLO && total == 8) {
            if (rd32(c->hdr) != COLL_STORE_MAGIC || rd32(c->hdr + 4) != COLL_STORE_VERSION)
                on_hello(s, c); /* refuses it */
        } else if (c->state == C_HELLO) {
            on_hello(s, c);
        } else if (c->state == C_PROOF) {
            on_proof(s, c);
        } else if (c->state == C_HDR) {
            on_header(s, c);
        } else if (c->state == C_KEY && c->vlen) {
            c->got = 0;
            c->state = C_VAL;
        } else {
            on_request(s, c);
        }
    }
}

/* ---- accepting ---------------------------------------------------------- */

/* The first time descriptors run out: soft RLIMIT_NOFILE up to the hard one. */
static int raise_nofile(coll_store_server_t *s)
{
    struct rlimit rl;
    if (s->fd_raised || getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
        return 0;
    s->fd_raised = 1;
    rlim_t old = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    COLL_INFO(COLL_SUB_BOOTSTRAP, "rendezvous store: raised the open-file limit from %llu to %llu at %zu clients",
              (unsigned long long)old, (unsigned long long)rl.rlim_max, s->nconns);
    return 1;
}

static void pause_accepting(coll_store_server_t *s, int err)
{
    struct epoll_event e = {.events = 0, .data.ptr = &listener_tag};
    (void)epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->lfd, &e); /* level-triggered: mute it */
    s->accept_pause_until = now_s() + ACCEPT_PAUSE_S;
    if (s->fd_warned)
        return;
    s->fd_warned = 1;
    struct rlimit rl = {0, 0};
    (void)getrlimit(RLIMIT_NOFILE, &rl);
    COLL_WARN(COLL_SUB_BOOTSTRAP,
              "rendezvous store: accept: %s with %zu clients connected (open-file limit %llu, "
              "hard %llu): new clients wait in the listen backlog until some leave",
              strerror(err), s->nconns, (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
}

static void resume_accepting(coll_store_server_t *s)
{
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &listener_tag};
    (void)epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->lfd, &e);
    s->accept_pause_until = 0;
}

static void accept_burst(coll_store_server_t *s)
{
    for (int k = 0; k < ACCEPT_BURST; k++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            if (err == EINTR || err == ECONNABORTED || err == EPROTO)
                continue;
            if (err == EMFILE && raise_nofile(s))
                continue;
            if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM)
                pause_accepting(s, err);
            return;
        }
        conn_t *c = calloc(1, sizeof *c);
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (!c || epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
            free(c);
            close(fd);
            continue;
        }
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* best effort */
        if (s->npreauth >= COLL_STORE_MAX_PREAUTH) /* M4: the oldest stranger goes (the list is in accept order) */
            conn_kill(s, s->hello_list.head, "too many connections owe a hello");
        c->fd = fd;
        c->state = C_HELLO;
        s->npreauth++;
        c->events = EPOLLIN;
        coll_sockaddr_str(&ss, c->peer, sizeof c->peer);
        timer_set(s, c, T_HELLO, now_s() + COLL_STORE_HELLO_TIMEOUT_S);
        clist_push(&s->all, c, lk_all);
        if (++s->nconns > atomic_load_explicit(&s->peak_conns, memory_order_relaxed))
            atomic_store_explicit(&s->peak_conns, s->nconns, memory_order_relaxed);
    }
}

/* ---- the loop ----------------------------------------------------------- */

static void run_timers(coll_store_server_t *s)
{
    double now = now_s();
    conn_t *c;
    while ((c = s->hello_list.head) && c->deadline <= now)
        conn_kill(s, c, "no valid hello within the handshake timeout");
    while ((c = s->stall_list.head) && c->deadline <= now)
        conn_kill(s, c, c->state == C_WRITE ? "does not read its reply" : "stalled in the middle of a request");
    while ((c = heap_top(s)) && c->deadline <= now)
        store_expire_parked(s, c);
    if (s->accept_pause_until > 0 && now >= s->accept_pause_until)
        resume_accepting(s);
}

/* Milliseconds to the next deadline (-1: none): list heads, heap top, pause. */
static int next_timeout_ms(coll_store_server_t *s)
{
    double next = s->accept_pause_until;
    conn_t *c[3] = {s->hello_list.head, s->stall_list.head, heap_top(s)};
    for (int i = 0; i < 3; i++)
        if (c[i] && (next == 0 || c[i]->deadline < next))
            next = c[i]->deadline;
    if (next == 0)
        return -1;
    double ms = (next - now_s()) * 1000.0 + 1.0;
    return ms < 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
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

static void fork_prepare(void) { pthread_mutex_lock(&fork_lock); }

static void fork_release(void) { pthread_mutex_unlock(&fork_lock); /* parent, and the child's only thread */ }

static void fork_register(void) { pthread_atfork(fork_prepare, fork_release, fork_release); }

static void *server_main(void *arg)
{
    coll_store_server_t *s = arg;
    struct epoll_event evs[EPOLL_BATCH];
    pthread_mutex_lock(&fork_lock);
    s->started = 1;
    pthread_cond_broadcast(&started_cond);
    for (int stop = 0; !stop;) {
        int timeout_ms = next_timeout_ms(s);
        pthread_mutex_unlock(&fork_lock);
        int n = epoll_wait(s->epfd, evs, EPOLL_BATCH, timeout_ms);
        pthread_mutex_lock(&fork_lock);
        if (n < 0) {
            if (errno != EINTR) {
                COLL_WARN(COLL_SUB_BOOTSTRAP, "rendezvous store: epoll_wait: %s", strerror(errno));
                usleep(10000);
            }
            continue;
        }
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &wake_tag) {
                stop = 1;
            } else if (p == &listener_tag) {
                if (s->accept_pause_until == 0)
                    accept_burst(s);
            } else {
                conn_t *c = p;
                if (c->dead)
                    continue;
                if (c->state == C_PARKED)
                    conn_kill(s, c, "closed the connection while waiting");
                else if (c->state == C_WRITE)
                    conn_flush(s, c);
                else
                    conn_read(s, c);
            }
        }
        run_timers(s);
        free_dead(s);
        atomic_store_explicit(&s->held_pub, store_held(s), memory_order_relaxed);
    }
    pthread_mutex_unlock(&fork_lock);
    return NULL;
}

uint64_t coll_store_server_held(coll_store_server_t *s)
{
    return atomic_load_explicit(&s->held_pub, memory_order_relaxed);
}

void coll_store_server_stats(coll_store_server_t *s, uint64_t *bytes_in, uint64_t *bytes_out, uint64_t *peak_conns,
                             uint64_t *peak_value_bytes)
{
    if (!s)
        return;
    if (bytes_in)
        *bytes_in = atomic_load_explicit(&s->bytes_in, memory_order_relaxed);
    if (bytes_out)
        *bytes_out = atomic_load_explicit(&s->bytes_out, memory_order_relaxed);
    if (peak_conns)
        *peak_conns = atomic_load_explicit(&s->peak_conns, memory_order_relaxed);
    if (peak_value_bytes)
        *peak_value_bytes = atomic_load_explicit(&s->peak_live, memory_order_relaxed);
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
    if (is_loopback(adv)) { /* single-host jobs: never listen beyond this machine */
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
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "cannot create the rendezvous store socket for %s",
                                a);
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
        || bind(fd, (const struct sockaddr *)ss, coll_sockaddr_len(ss)) != 0
        || listen(fd, LISTEN_BACKLOG > SOMAXCONN ? LISTEN_BACKLOG : SOMAXCONN) != 0) {
        coll_status_t st = coll_error_errno(errno == EADDRINUSE ? COLL_ERR_NETWORK : COLL_ERR_SYSTEM,
                                            COLL_SUB_BOOTSTRAP, "cannot listen for the rendezvous store on %s", a);
        close(fd);
        return st;
    }
    *out = fd;
    return COLL_SUCCESS;
}

static void server_free(coll_store_server_t *s)
{
    while (s->all.head)
        conn_kill(s, s->all.head, NULL);
    free_dead(s);
    kv_free_all(s);
    free(s->heap);
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->efd >= 0)
        close(s->efd);
    if (s->epfd >= 0)
        close(s->epfd);
    free(s);
}

/* The epoll set: the stop eventfd and the listener, then every client. */
static coll_status_t open_epoll(coll_store_server_t *s)
{
    s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->efd < 0)
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "eventfd for the store");
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s->epfd < 0)
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "epoll_create1 for the store");
    struct epoll_event w = {.events = EPOLLIN, .data.ptr = &wake_tag};
    struct epoll_event l = {.events = EPOLLIN, .data.ptr = &listener_tag};
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->efd, &w) != 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &l) != 0)
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "epoll_ctl for the store");
    return COLL_SUCCESS;
}

coll_status_t coll_store_server_start(const char *addr, int port, const uint8_t secret[COLL_SECRET_BYTES],
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
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_BOOTSTRAP, "out of memory for the rendezvous store");
    s->lfd = s->efd = s->epfd = -1;
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
    st = open_epoll(s);
    if (st != COLL_SUCCESS) {
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
        st = coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "cannot start the rendezvous store thread");
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
