/*
 * boot_net.c - the wire of the bootstrap tree (boot_internal.h): listener,
 * hello, frames with deadlines, abort notices and deaths of neighbours.
 * Every wait is a poll of at most K + 2 descriptors in slices of 100 ms, so
 * the abort flag and the deadline are looked at often and nothing hangs.
 */
#include "bootstrap/boot_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/netif.h"

#define SLICE_MS 100

double boot_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int boot_wait_ms(double deadline, int slice_ms)
{
    if (deadline <= 0)
        return slice_ms;
    double left = deadline - boot_now();
    int ms = left > 0 ? (int)(left * 1000.0) + 1 : 0;
    return ms < slice_ms ? ms : slice_ms;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

void boot_addr_encode(const struct sockaddr_storage *ss, uint8_t out[BOOT_ADDR_BYTES])
{
    memset(out, 0, BOOT_ADDR_BYTES);
    out[0] = (uint8_t)ss->ss_family;
    out[1] = (uint8_t)(ss->ss_family >> 8);
    uint16_t port = (uint16_t)coll_sockaddr_port(ss);
    out[2] = (uint8_t)port;
    out[3] = (uint8_t)(port >> 8);
    if (ss->ss_family == AF_INET)
        memcpy(out + 4, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    else if (ss->ss_family == AF_INET6)
        memcpy(out + 4, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

void boot_addr_decode(const uint8_t in[BOOT_ADDR_BYTES], struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    int fam = in[0] | in[1] << 8;
    int port = in[2] | in[3] << 8;
    if (fam == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        a->sin_family = AF_INET;
        memcpy(&a->sin_addr, in + 4, 4);
    } else if (fam == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        memcpy(&a->sin6_addr, in + 4, 16);
    }
    coll_sockaddr_set_port(ss, port);
}

coll_status_t boot_listen(coll_bootstrap_t *bs)
{
    struct sockaddr_storage ss;
    COLL_CHECK(coll_netif_select(bs->id.family, &ss, NULL, 0));
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return coll_error_errno(errno == EMFILE || errno == ENFILE ? COLL_ERR_SYSTEM : COLL_ERR_NETWORK,
                                COLL_SUB_BOOTSTRAP, "cannot create the bootstrap listener");
    coll_sockaddr_set_port(&ss, 0);
    socklen_t sl = sizeof ss;
    if (bind(fd, (struct sockaddr *)&ss, coll_sockaddr_len(&ss)) != 0 || listen(fd, 1024) != 0
        || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
        char a[COLL_SOCKADDR_STRLEN];
        coll_status_t st = coll_error_errno(COLL_ERR_NETWORK, COLL_SUB_BOOTSTRAP,
                                            "cannot listen for bootstrap connections on %s",
                                            coll_sockaddr_str(&ss, a, sizeof a));
        close(fd);
        return st;
    }
    bs->listen_fd = fd;
    bs->addr = ss;
    return COLL_SUCCESS;
}

static coll_status_t check_abort_flag(const coll_bootstrap_t *bs)
{
    if (bs->abort_flag && atomic_load(bs->abort_flag))
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_BOOTSTRAP, "communicator aborted during bootstrap");
    return COLL_SUCCESS;
}

static coll_status_t timed_out(const coll_bootstrap_t *bs, const char *what, int peer)
{
    return coll_error(COLL_ERR_TIMEOUT, COLL_SUB_BOOTSTRAP,
                      "bootstrap: timed out after %.1f s (COLL_CONNECT_TIMEOUT) %s rank %d", bs->timeout_s, what, peer);
}

coll_status_t boot_connect(coll_bootstrap_t *bs, int to, const struct sockaddr_storage *ss, double deadline,
                           int *fd_out)
{
    char a[COLL_SOCKADDR_STRLEN];
    double backoff = 0.01;
    for (;;) {
        COLL_CHECK(check_abort_flag(bs));
        int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "cannot create a bootstrap socket to rank %d",
                                    to);
        int err = 0;
        if (connect(fd, (const struct sockaddr *)ss, coll_sockaddr_len(ss)) != 0) {
            err = errno;
            if (err == EINPROGRESS || err == EINTR) {
                struct pollfd pf = {fd, POLLOUT, 0};
                err = 0;
                for (;;) {
                    int ms = boot_wait_ms(deadline, SLICE_MS);
                    int r = poll(&pf, 1, ms);
                    if (r > 0)
                        break;
                    if (deadline > 0 && boot_now() >= deadline) {
                        close(fd);
                        return timed_out(bs, "connecting to", to);
                    }
                    coll_status_t st = check_abort_flag(bs);
                    if (st != COLL_SUCCESS) {
                        close(fd);
                        return st;
                    }
                }
                socklen_t el = sizeof err;
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
                    err = errno;
            }
        }
        int shaken = 0; /* connected, but the handshake failed: retried */
        if (!err) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            coll_status_t st = boot_handshake(bs, fd, to, deadline, &err);
            if (st == COLL_SUCCESS) {
                *fd_out = fd;
                return COLL_SUCCESS;
            }
            if (st != COLL_ERR_NETWORK) {
                close(fd);
                return st;
            }
            shaken = 1;
            COLL_DEBUG(COLL_SUB_BOOTSTRAP, "bootstrap: handshake with rank %d failed (%s): trying again", to,
                       strerror(err));
        }
        close(fd);
        if (shaken && err == ECONNREFUSED)
            err = ECONNRESET; /* its listener answered: not gone */
        /* The peer's listener exists before its address is published, so a
         * refusal means it is gone; a full backlog or a lost SYN is transient. */
        if (err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH)
            return coll_error(COLL_ERR_NETWORK, COLL_SUB_BOOTSTRAP,
                              "bootstrap: rank %d at %s refused the connection (%s): it has exited or died", to,
                              coll_sockaddr_str(ss, a, sizeof a), strerror(err));
        if (deadline > 0 && boot_now() + backoff >= deadline)
            return coll_error(COLL_ERR_TIMEOUT, COLL_SUB_BOOTSTRAP, "bootstrap: cannot connect to rank %d at %s: %s",
                              to, coll_sockaddr_str(ss, a, sizeof a), strerror(err));
        struct timespec ts = {0, (long)(backoff * 1e9)};
        nanosleep(&ts, NULL);
        backoff = backoff * 2 > 0.5 ? 0.5 : backoff * 2;
    }
}

static coll_status_t io_error(coll_bootstrap_t *bs, int fd, int peer, int err)
{
    if (err == 0 || err == ECONNRESET || err == EPIPE) {
        boot_neighbour_gone(bs, fd);
        return boot_abort_error(bs);
    }
    return coll_error(COLL_ERR_NETWORK, COLL_SUB_BOOTSTRAP, "bootstrap connection to rank %d failed: %s", peer,
                      strerror(err));
}

coll_status_t boot_send_all(coll_bootstrap_t *bs, int fd, int peer, const void *buf, size_t len, double deadline)
{
    const char *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return io_error(bs, fd, peer, errno);
        COLL_CHECK(check_abort_flag(bs));
        if (deadline > 0 && boot_now() >= deadline)
            return timed_out(bs, "sending to", peer);
        struct pollfd pf = {fd, POLLOUT, 0};
        poll(&pf, 1, boot_wait_ms(deadline, SLICE_MS));
    }
    return COLL_SUCCESS;
}

void boot_frame_hdr(const coll_bootstrap_t *bs, uint32_t type, uint32_t epoch, uint64_t len,
                    uint8_t out[BOOT_FRAME_HDR])
{
    put32(out, BOOT_FRAME_MAGIC);
    put32(out + 4, type);
    put32(out + 8, epoch);
    put32(out + 12, (uint32_t)bs->rank);
    put64(out + 16, len);
}

coll_status_t boot_send_frame(coll_bootstrap_t *bs, int fd, int peer, uint32_t type, const void *buf, size_t len,
                              double deadline)
{
    uint8_t h[BOOT_FRAME_HDR];
    boot_frame_hdr(bs, type, (uint32_t)bs->epoch, len, h);
    COLL_CHECK(boot_send_all(bs, fd, peer, h, sizeof h, deadline));
    return len ? boot_send_all(bs, fd, peer, buf, len, deadline) : COLL_SUCCESS;
}

/* Read exactly len bytes from fd (blocking with the deadline). */
static coll_status_t recv_all(coll_bootstrap_t *bs, int fd, int peer, void *buf, size_t len, double deadline)
{
    char *p = buf;
    while (len) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return io_error(bs, fd, peer, n == 0 ? 0 : errno);
        COLL_CHECK(check_abort_flag(bs));
        if (deadline > 0 && boot_now() >= deadline)
            return timed_out(bs, "receiving from", peer);
        struct pollfd pf = {fd, POLLIN, 0};
        poll(&pf, 1, boot_wait_ms(deadline, SLICE_MS));
    }
    return COLL_SUCCESS;
}

static int neighbour_rank(const coll_bootstrap_t *bs, int fd)
{
    if (fd == bs->parent_fd)
        return bs->parent;
    for (int i = 0; i < bs->nchild; i++)
        if (fd == bs->child_fd[i])
            return bs->child[i];
    return -1;
}

static void forget_fd(coll_bootstrap_t *bs, int fd)
{
    if (fd < 0)
        return;
    if (fd == bs->parent_fd)
        bs->parent_fd = -1;
    for (int i = 0; i < bs->nchild; i++)
        if (fd == bs->child_fd[i])
            bs->child_fd[i] = -1;
    close(fd);
}

/* Send an ABORT frame (origin, why) to every neighbour but via_fd, once. */
static void flood(coll_bootstrap_t *bs, int origin, const char *why, int via_fd)
{
    if (bs->abort_fwd)
        return;
    bs->abort_fwd = 1;
    size_t wl = strnlen(why, 319);
    uint8_t msg[BOOT_FRAME_HDR + 4 + 320];
    boot_frame_hdr(bs, BOOT_T_ABORT, 0, 4 + wl, msg);
    put32(msg + BOOT_FRAME_HDR, (uint32_t)origin);
    memcpy(msg + BOOT_FRAME_HDR + 4, why, wl);
    int fds[COLL_BOOT_K + 1], n = 0;
    fds[n++] = bs->parent_fd;
    for (int i = 0; i < bs->nchild; i++)
        fds[n++] = bs->child_fd[i];
    for (int i = 0; i < n; i++) /* one small frame: the socket buffer takes it */
        if (fds[i] >= 0 && fds[i] != via_fd)
            (void)!send(fds[i], msg, BOOT_FRAME_HDR + 4 + wl, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void boot_heard_abort(coll_bootstrap_t *bs, int origin, const char *why, int via_fd)
{
    if (bs->aborted_by < 0) {
        bs->aborted_by = origin;
        snprintf(bs->abort_why, sizeof bs->abort_why, "%s", why ? why : "");
    }
    flood(bs, bs->aborted_by, bs->abort_why, via_fd);
}

coll_status_t boot_abort_error(const coll_bootstrap_t *bs)
{
    return coll_error(COLL_ERR_ABORTED, COLL_SUB_BOOTSTRAP, "rank %d aborted%s%s", bs->aborted_by,
                      *bs->abort_why ? ": " : "", bs->abort_why);
}

/* The neighbour on fd is gone without a word. */
static void died(coll_bootstrap_t *bs, int fd)
{
    int r = neighbour_rank(bs, fd);
    forget_fd(bs, fd);
    boot_heard_abort(bs, r, COLL_BOOT_DIED, -1);
}

static int handle_control(coll_bootstrap_t *bs, int fd);

void boot_neighbour_gone(coll_bootstrap_t *bs, int fd)
{
    /* A send failed or a read saw EOF: an abort notice or a goodbye may still
     * wait in the receive buffer (the neighbour aborted, then closed). */
    int r = neighbour_rank(bs, fd);
    for (int i = 0; i < 4 && bs->aborted_by < 0 && neighbour_rank(bs, fd) >= 0; i++)
        if (!handle_control(bs, fd))
            break;
    if (bs->aborted_by >= 0) {
        if (neighbour_rank(bs, fd) >= 0)
            forget_fd(bs, fd);
        return;
    }
    if (neighbour_rank(bs, fd) < 0) { /* it said goodbye: it left before this call ended */
        boot_heard_abort(bs, r, "left (closed its communicator) before the others finished", -1);
        return;
    }
    died(bs, fd);
}

/* A frame header waits on neighbour fd: consume it when it is an ABORT or a
 * BYE (or the neighbour is gone). Returns 1 when it was handled (abort
 * recorded or the fd closed), 0 when it is another frame (left unread). */
static int handle_control(coll_bootstrap_t *bs, int fd)
{
    uint8_t h[BOOT_FRAME_HDR];
    ssize_t n = recv(fd, h, sizeof h, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        died(bs, fd);
        return 1;
    }
    if (n < (ssize_t)sizeof h)
        return 0;
    uint32_t type = get32(h + 4);
    uint64_t len = get64(h + 16);
    if (get32(h) != BOOT_FRAME_MAGIC) {
        died(bs, fd);
        return 1;
    }
    if (type == BOOT_T_BYE) {
        (void)!recv(fd, h, sizeof h, MSG_DONTWAIT);
        forget_fd(bs, fd);
        return 1;
    }
    if (type != BOOT_T_ABORT)
        return 0;
    uint8_t body[BOOT_FRAME_HDR + 4 + 320];
    if (len < 4 || len > sizeof body - BOOT_FRAME_HDR - 1) {
        died(bs, fd);
        return 1;
    }
    /* the frame was sent in one piece: wait briefly for all of it */
    size_t want = BOOT_FRAME_HDR + (size_t)len;
    double d = boot_now() + 0.2;
    for (;;) {
        n = recv(fd, body, want, MSG_PEEK | MSG_DONTWAIT);
        if (n == (ssize_t)want || boot_now() > d)
            break;
        struct pollfd pf = {fd, POLLIN, 0};
        poll(&pf, 1, 10);
    }
    if (n != (ssize_t)want) {
        died(bs, fd);
        return 1;
    }
    (void)!recv(fd, body, want, MSG_DONTWAIT);
    body[want] = '\0';
    uint32_t origin = get32(body + BOOT_FRAME_HDR); /* a rank, else the neighbour itself speaks */
    boot_heard_abort(bs, origin < (uint32_t)bs->nranks ? (int)origin : neighbour_rank(bs, fd),
                     (const char *)body + BOOT_FRAME_HDR + 4, fd);
    return 1;
}

coll_status_t boot_recv_frame(coll_bootstrap_t *bs, int fd, int peer, uint32_t type, void *buf, size_t len, size_t *got,
                              double deadline)
{
    int skip[COLL_BOOT_K + 1] = {0}; /* neighbours with a data frame already waiting */
    for (;;) {
        if (bs->aborted_by >= 0)
            return boot_abort_error(bs);
        if (fd < 0)
            return coll_error(COLL_ERR_NETWORK, COLL_SUB_BOOTSTRAP, "bootstrap: rank %d has left", peer);
        COLL_CHECK(check_abort_flag(bs));
        struct pollfd pf[COLL_BOOT_K + 2];
        int slot[COLL_BOOT_K + 2], n = 0;
        pf[n] = (struct pollfd){fd, POLLIN, 0};
        slot[n++] = -1;
        int all[COLL_BOOT_K + 1];
        all[0] = bs->parent_fd;
        for (int i = 0; i < bs->nchild; i++)
            all[i + 1] = bs->child_fd[i];
        for (int i = 0; i <= bs->nchild; i++)
            if (all[i] >= 0 && all[i] != fd && !skip[i]) {
                pf[n] = (struct pollfd){all[i], POLLIN, 0};
                slot[n++] = i;
            }
        int r = poll(pf, (nfds_t)n, boot_wait_ms(deadline, SLICE_MS));
        if (r <= 0) {
            if (deadline > 0 && boot_now() >= deadline)
                return timed_out(bs, "waiting for", peer);
            continue;
        }
        for (int i = 1; i < n; i++)
            if (pf[i].revents && !handle_control(bs, pf[i].fd))
                skip[slot[i]] = 1;
        if (bs->aborted_by >= 0 || !pf[0].revents)
            continue;
        if (handle_control(bs, fd)) {
            /* an abort (the loop reports it) or a goodbye: fd is closed then, and
             * polling it again spun for ever (POLLNVAL) past the deadline */
            if (bs->aborted_by < 0 && neighbour_rank(bs, fd) < 0)
                return coll_error(COLL_ERR_NETWORK, COLL_SUB_BOOTSTRAP, "bootstrap: rank %d has left", peer);
            continue;
        }
        uint8_t h[BOOT_FRAME_HDR];
        COLL_CHECK(recv_all(bs, fd, peer, h, sizeof h, deadline));
        uint64_t flen = get64(h + 16);
        if (get32(h) != BOOT_FRAME_MAGIC || get32(h + 4) != type || get32(h + 8) != (uint32_t)bs->epoch || flen > len
            || (!got && flen != len))
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_BOOTSTRAP,
                              "bootstrap: unexpected frame from rank %d (type %u epoch %u, %llu bytes; expected "
                              "type %u epoch %u, %zu bytes): do all ranks make the same calls?",
                              peer, get32(h + 4), get32(h + 8), (unsigned long long)flen, type, (unsigned)bs->epoch,
                              len);
        if (got)
            *got = (size_t)flen;
        return recv_all(bs, fd, peer, buf, (size_t)flen, deadline);
    }
}

coll_status_t boot_store_probe(coll_bootstrap_t *bs)
{
    coll_store_t *st = NULL;
    if (coll_store_connect(&bs->id, 2.0, &st) != COLL_SUCCESS) {
        /* A store that does not answer in time is busy (a thousand joins at
         * once on a loaded host): ask again at the next probe; the deadline
         * still bounds the wait. One that refuses has exited with its job. */
        if (!strstr(coll_last_error(), "refused")) {
            COLL_DEBUG(COLL_SUB_BOOTSTRAP, "failure probe: %s (will ask again)", coll_last_error());
            coll_error_clear();
            return COLL_SUCCESS;
        }
        bs->store_lost = 1;
        char why[512];
        snprintf(why, sizeof why, "%s", coll_last_error());
        return coll_error(
            COLL_ERR_NETWORK, COLL_SUB_BOOTSTRAP,
            "lost the connection to rendezvous store while waiting to join (its host has exited, so the job "
            "failed): %s",
            why);
    }
    char key[COLL_STORE_MAX_KEY];
    snprintf(key, sizeof key, "%s/!probe", bs->prefix);
    void *v = NULL;
    size_t l = 0;
    coll_status_t s = coll_store_try_get(st, key, &v, &l);
    free(v);
    coll_store_close(st);
    if (s == COLL_ERR_ABORTED)
        return s; /* the job failed: coll_store_get said why */
    coll_error_clear();
    return COLL_SUCCESS;
}

void boot_store_join_status(coll_bootstrap_t *bs, char *out, size_t len)
{
    out[0] = '\0';
    coll_store_t *st = NULL;
    if (bs->store_lost || coll_store_connect(&bs->id, 1.0, &st) != COLL_SUCCESS) {
        coll_error_clear();
        return;
    }
    char key[COLL_STORE_MAX_KEY];
    snprintf(key, sizeof key, "%s/join", bs->prefix);
    void *v = NULL;
    size_t l = 0;
    coll_status_t s = coll_store_try_get(st, key, &v, &l);
    if (s == COLL_SUCCESS)
        snprintf(out, len, "every rank joined");
    else if (s == COLL_ERR_TIMEOUT && v)
        snprintf(out, len, "%s", (const char *)v);
    free(v);
    coll_store_close(st);
    coll_error_clear();
}

int coll_bootstrap_pollfds(const coll_bootstrap_t *bs, struct pollfd *fds, int max)
{
    int n = 0;
    if (bs->parent_fd >= 0 && n < max)
        fds[n++] = (struct pollfd){bs->parent_fd, POLLIN, 0};
    for (int i = 0; i < bs->nchild && n < max; i++)
        if (bs->child_fd[i] >= 0)
            fds[n++] = (struct pollfd){bs->child_fd[i], POLLIN, 0};
    return n;
}

int coll_bootstrap_check_abort(coll_bootstrap_t *bs, int wait_ms, char *why, size_t len)
{
    if (why && len)
        why[0] = '\0';
    if (!bs || !bs->ready) /* not joined (or a communicator built by hand in tests) */
        return -1;
    if (bs->aborted_by < 0 && bs->ready) {
        double until = boot_now() + wait_ms * 1e-3;
        for (;;) {
            struct pollfd pf[COLL_BOOT_K + 1];
            int n = coll_bootstrap_pollfds(bs, pf, COLL_BOOT_K + 1);
            int left = (int)((until - boot_now()) * 1000.0);
            if (n == 0 || poll(pf, (nfds_t)n, left > 0 ? left : 0) <= 0)
                break;
            int handled = 0;
            for (int i = 0; i < n; i++)
                if (pf[i].revents)
                    handled |= handle_control(bs, pf[i].fd);
            if (bs->aborted_by >= 0 || !handled || boot_now() >= until)
                break;
        }
    }
    if (why && len)
        snprintf(why, len, "%s", bs->aborted_by >= 0 ? bs->abort_why : "");
    return bs->aborted_by;
}

void coll_bootstrap_abort(coll_bootstrap_t *bs, const char *why)
{
    if (!bs)
        return;
    if (bs->ready) /* before the join the caller marks the job failed in the store */
        flood(bs, bs->rank, why ? why : "", -1);
}
