/*
 * sock.c - socket helpers of `collbench net`: listen (dual-stack IPv6 when
 * possible), accept and connect with timeouts, full send/recv loops, and the
 * control words exchanged by the two sides (64-bit big endian).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../cb.h"
#include "net.h"

static void addr_str(const struct sockaddr *sa, char *buf, size_t n)
{
    char h[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s = (const void *)sa;
        inet_ntop(AF_INET, &s->sin_addr, h, sizeof h);
        port = ntohs(s->sin_port);
        snprintf(buf, n, "%s:%d", h, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const void *)sa;
        port = ntohs(s->sin6_port);
        if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr)) { /* dual-stack listener: show the IPv4 form */
            inet_ntop(AF_INET, &s->sin6_addr.s6_addr[12], h, sizeof h);
            snprintf(buf, n, "%s:%d", h, port);
        } else {
            inet_ntop(AF_INET6, &s->sin6_addr, h, sizeof h);
            snprintf(buf, n, "[%s]:%d", h, port);
        }
    } else {
        snprintf(buf, n, "?");
    }
}

void cbt_sock_peer(int fd, char *buf, size_t n)
{
    struct sockaddr_storage ss;
    socklen_t l = sizeof ss;
    if (getpeername(fd, (struct sockaddr *)&ss, &l) == 0)
        addr_str((struct sockaddr *)&ss, buf, n);
    else
        snprintf(buf, n, "?");
}

static const char *hostport(const char *host, int port, char *buf, size_t n)
{
    if (strchr(host, ':'))
        snprintf(buf, n, "[%s]:%d", host, port);
    else
        snprintf(buf, n, "%s:%d", host, port);
    return buf;
}

int cbt_sock_listen(const char *bind_addr, int port, char *err, size_t n)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *res = NULL;
    char ps[16], hp[300];
    snprintf(ps, sizeof ps, "%d", port);
    const char *node = bind_addr;
    if (!node)
        hints.ai_family = AF_INET6; /* dual stack "::" first, then 0.0.0.0 */
    int gai = getaddrinfo(node, ps, &hints, &res);
    if (gai != 0 && !node) {
        hints.ai_family = AF_INET;
        gai = getaddrinfo(NULL, ps, &hints, &res);
    }
    if (gai != 0) {
        snprintf(err, n, "cannot listen on %s: %s", hostport(node ? node : "*", port, hp, sizeof hp),
                 gai_strerror(gai));
        return -1;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1, zero = 0;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (a->ai_family == AF_INET6 && !node)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0)
            break;
        e = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0 && !node) { /* no IPv6 at all: plain IPv4 */
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        int one = 1;
        if (fd >= 0)
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(fd, 64) != 0) {
            e = errno;
            if (fd >= 0)
                close(fd);
            fd = -1;
        }
    }
    if (fd < 0)
        snprintf(err, n, "cannot listen on %s: %s", hostport(node ? node : "*", port, hp, sizeof hp), strerror(e));
    return fd;
}

int cbt_sock_accept(int lfd, double timeout_s, char *err, size_t n)
{
    struct pollfd pf = {.fd = lfd, .events = POLLIN};
    double end = cbt_now() + timeout_s;
    for (;;) {
        int ms = -1;
        if (timeout_s > 0) {
            double left = end - cbt_now();
            if (left <= 0) {
                snprintf(err, n, "timed out");
                return -2;
            }
            ms = (int)(left * 1000) + 1;
        }
        int r = poll(&pf, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, n, "poll: %s", strerror(errno));
            return -1;
        }
        if (r == 0)
            continue;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0)
            return fd;
        if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN) {
            snprintf(err, n, "accept: %s", strerror(errno));
            return -1;
        }
    }
}

/* One non-blocking connect attempt bounded by `ms`; returns fd or -1 with errno. */
static int connect_one(const struct addrinfo *a, int ms)
{
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0)
        return -1;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int r;
        do
            r = poll(&pf, 1, ms);
        while (r < 0 && errno == EINTR);
        int soerr = 0;
        socklen_t l = sizeof soerr;
        if (r == 0)
            soerr = ETIMEDOUT;
        else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l) != 0)
            soerr = errno;
        if (soerr) {
            close(fd);
            errno = soerr;
            return -1;
        }
    }
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

int cbt_sock_connect(const char *host, int port, double timeout_s, double retry_s, char *err, size_t n)
{
    char ps[16], hp[300];
    snprintf(ps, sizeof ps, "%d", port);
    hostport(host, port, hp, sizeof hp);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, ps, &hints, &res);
    if (gai != 0) {
        snprintf(err, n, "cannot connect to %s: %s", hp, gai_strerror(gai));
        return -1;
    }
    double end_retry = cbt_now() + retry_s;
    int fd = -1, e = 0;
    for (;;) {
        for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
            fd = connect_one(a, (int)(timeout_s * 1000));
            e = errno;
        }
        if (fd >= 0 || e != ECONNREFUSED || cbt_now() >= end_retry)
            break;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    freeaddrinfo(res);
    if (fd < 0) {
        const char *why = e == ECONNREFUSED ? "connection refused" : e == ETIMEDOUT ? "timed out" : strerror(e);
        if (e == ETIMEDOUT)
            snprintf(err, n, "cannot connect to %s: %s after %g s (--connect-timeout)", hp, why, timeout_s);
        else
            snprintf(err, n, "cannot connect to %s: %s", hp, why);
    }
    return fd;
}

void cbt_sock_tune(int fd, double io_timeout_s)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = {.tv_sec = (time_t)io_timeout_s,
                         .tv_usec = (suseconds_t)((io_timeout_s - (double)(time_t)io_timeout_s) * 1e6)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

int cbt_sock_send(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

long cbt_sock_recv_some(int fd, void *buf, size_t n)
{
    for (;;) {
        ssize_t r = recv(fd, buf, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        return (long)r;
    }
}

int cbt_sock_recv(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n) {
        long r = cbt_sock_recv_some(fd, p, n);
        if (r == 0)
            errno = ECONNRESET;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int cbt_sock_wait_readable(int fd, int ms)
{
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int r;
    do
        r = poll(&pf, 1, ms);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -1 : r > 0;
}

int cbt_words_send(int fd, const uint64_t *w, int n)
{
    unsigned char buf[64 * 8];
    if (n > 64)
        return -1;
    for (int i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            buf[i * 8 + b] = (unsigned char)(w[i] >> (56 - 8 * b));
    return cbt_sock_send(fd, buf, (size_t)n * 8);
}

int cbt_words_recv(int fd, uint64_t *w, int n)
{
    unsigned char buf[64 * 8];
    if (n > 64 || cbt_sock_recv(fd, buf, (size_t)n * 8))
        return -1;
    for (int i = 0; i < n; i++) {
        w[i] = 0;
        for (int b = 0; b < 8; b++)
            w[i] = w[i] << 8 | buf[i * 8 + b];
    }
    return 0;
}

uint64_t cbt_dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

double cbt_bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}
