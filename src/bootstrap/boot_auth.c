/*
 * boot_auth.c - the handshake of a bootstrap-tree connection (parent connects
 * to child, boot_internal.h) and the child's listener side: many accepted
 * connections served at once, each under its own short fixed deadline, so
 * strangers cannot hold up the parent's connection.
 *
 * Connector (parent): hello {magic "CBBH", version 2, u64 job, u32 from, u32
 * to, Nc} (56 bytes), then reads Na | MAC_A (64 bytes), checks MAC_A (a child
 * that does not know the communicator's secret is refused: COLL_ERR_AUTH, no
 * retry), sends MAC_C (32 bytes). A connection the child dropped before the
 * handshake ended (EOF, reset, silence past BOOT_HELLO_WAIT_S: its pending
 * set was full of strangers, say) is tried again until the deadline.
 * Acceptor (child): at most BOOT_MAX_PENDING accepted connections owe their
 * hello or proof at once (beyond, the oldest is dropped); each has
 * BOOT_HELLO_WAIT_S from its accept. The first one that proves to be the
 * expected parent wins; the others are closed.
 */
#include "bootstrap/boot_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/netif.h"

#define SLICE_MS 100

struct boot_pend {
    int fd;
    int proof; /* 0: reading the hello, 1: challenge sent, reading MAC_C */
    size_t got;
    double deadline;
    uint8_t in[BOOT_HELLO_BYTES];
    uint8_t nc[COLL_AUTH_NONCE_BYTES], na[COLL_AUTH_NONCE_BYTES];
    uint64_t auth_t0; /* coll_auth_now_ns when the challenge went out */
    char addr[COLL_SOCKADDR_STRLEN];
};

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static coll_auth_bind_t tree_bind(const coll_bootstrap_t *bs, int from, int to)
{
    return (coll_auth_bind_t){.role = COLL_AUTH_TREE, .job = bs->id.nonce, .from = (uint32_t)from, .to = (uint32_t)to};
}

void boot_hello_encode(const coll_bootstrap_t *bs, int to, const uint8_t nc[COLL_AUTH_NONCE_BYTES],
                       uint8_t out[BOOT_HELLO_BYTES])
{
    put32(out, BOOT_HELLO_MAGIC);
    put32(out + 4, BOOT_VERSION);
    put32(out + 8, (uint32_t)bs->id.nonce);
    put32(out + 12, (uint32_t)(bs->id.nonce >> 32));
    put32(out + 16, (uint32_t)bs->rank);
    put32(out + 20, (uint32_t)to);
    memcpy(out + 24, nc, COLL_AUTH_NONCE_BYTES);
}

const char *boot_hello_check(const coll_bootstrap_t *bs, const uint8_t in[BOOT_HELLO_BYTES], int from)
{
    if (get32(in) != BOOT_HELLO_MAGIC)
        return "not a collbench bootstrap hello (bad magic)";
    if (get32(in + 4) != BOOT_VERSION)
        return "bootstrap version mismatch";
    if (((uint64_t)get32(in + 12) << 32 | get32(in + 8)) != bs->id.nonce)
        return "another communicator's hello";
    if (get32(in + 20) != (uint32_t)bs->rank || get32(in + 16) != (uint32_t)from)
        return "unexpected ranks in the hello";
    return NULL;
}

/* ---- connector ------------------------------------------------------------ */

/* Bytes in or out on a non-blocking fd until done or the deadline: 0, or
 * -1 with errno (0: EOF; ETIMEDOUT: the deadline). */
static int move_all(int fd, int out, uint8_t *p, size_t len, double deadline)
{
    while (len) {
        ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0) {
            errno = 0;
            return -1;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        if (boot_now() >= deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd pf = {fd, out ? POLLOUT : POLLIN, 0};
        poll(&pf, 1, boot_wait_ms(deadline, SLICE_MS));
    }
    return 0;
}

coll_status_t boot_handshake(coll_bootstrap_t *bs, int fd, int to, double deadline, int *err)
{
    double d = boot_now() + BOOT_HELLO_WAIT_S;
    if (deadline > 0 && deadline < d)
        d = deadline;
    uint8_t nc[COLL_AUTH_NONCE_BYTES], h[BOOT_HELLO_BYTES], ch[COLL_AUTH_CHALLENGE_BYTES], proof[COLL_AUTH_MAC_BYTES];
    uint64_t t0 = coll_auth_now_ns();
    COLL_CHECK(coll_auth_random(nc, sizeof nc));
    boot_hello_encode(bs, to, nc, h);
    if (move_all(fd, 1, h, sizeof h, d) != 0 || move_all(fd, 0, ch, sizeof ch, d) != 0) {
        *err = errno ? errno : ECONNRESET;
        return COLL_ERR_NETWORK;
    }
    coll_auth_bind_t b = tree_bind(bs, bs->rank, to);
    if (!coll_auth_respond(bs->id.secret, &b, nc, ch, proof))
        return coll_error(COLL_ERR_AUTH, COLL_SUB_BOOTSTRAP,
                          "bootstrap: the listener of rank %d did not prove it knows the communicator's "
                          "secret (a stranger on its address?)",
                          to);
    coll_auth_done(COLL_AUTH_CONNECTOR, COLL_AUTH_TREE, t0);
    if (move_all(fd, 1, proof, sizeof proof, d) != 0) {
        *err = errno ? errno : ECONNRESET;
        return COLL_ERR_NETWORK;
    }
    return COLL_SUCCESS;
}

/* ---- acceptor ------------------------------------------------------------- */

static void pend_close(coll_bootstrap_t *bs, int i, const char *why)
{
    struct boot_pend *p = &bs->pend[i];
    if (why)
        COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rank %d: dropping bootstrap connection from %s: %s", bs->rank, p->addr, why);
    close(p->fd);
    bs->pend[i] = bs->pend[--bs->npend];
}

void boot_pend_free(coll_bootstrap_t *bs)
{
    while (bs->npend > 0)
        pend_close(bs, bs->npend - 1, NULL);
    free(bs->pend);
    bs->pend = NULL;
}

/* Progress pending connection i: 1 = it proved to be 'from' (fd handed over),
 * -1 = dropped, 0 = still waiting. */
static int pend_step(coll_bootstrap_t *bs, int i, int from, double now)
{
    struct boot_pend *p = &bs->pend[i];
    size_t want = p->proof ? COLL_AUTH_MAC_BYTES : BOOT_HELLO_BYTES;
    ssize_t n = 0;
    while (p->got < want && (n = recv(p->fd, p->in + p->got, want - p->got, MSG_DONTWAIT)) > 0)
        p->got += (size_t)n;
    if (p->got < want) {
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            pend_close(bs, i, "closed before the handshake ended");
            return -1;
        }
        if (now >= p->deadline) {
            pend_close(bs, i, p->got || p->proof ? "handshake incomplete, then silence" : "no hello (silent)");
            return -1;
        }
        return 0;
    }
    coll_auth_bind_t b = tree_bind(bs, from, bs->rank);
    if (!p->proof) {
        const char *why = boot_hello_check(bs, p->in, from);
        uint8_t ch[COLL_AUTH_CHALLENGE_BYTES];
        memcpy(p->nc, p->in + 24, COLL_AUTH_NONCE_BYTES);
        p->auth_t0 = coll_auth_now_ns();
        if (!why && coll_auth_challenge(bs->id.secret, &b, p->nc, p->na, ch) != COLL_SUCCESS)
            why = "no random bytes for the challenge";
        if (!why && send(p->fd, ch, sizeof ch, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof ch)
            why = "cannot send the challenge";
        if (why) {
            pend_close(bs, i, why);
            return -1;
        }
        p->proof = 1;
        p->got = 0;
        return pend_step(bs, i, from, now); /* the proof may be there already */
    }
    if (!coll_auth_verify(bs->id.secret, COLL_AUTH_CONNECTOR, &b, p->nc, p->na, p->in)) {
        pend_close(bs, i, "wrong proof of the communicator's secret");
        return -1;
    }
    coll_auth_done(COLL_AUTH_ACCEPTOR, COLL_AUTH_TREE, p->auth_t0);
    return 1;
}

static coll_status_t pend_add(coll_bootstrap_t *bs, int fd, const struct sockaddr_storage *ss, double now)
{
    if (!bs->pend && !(bs->pend = calloc(BOOT_MAX_PENDING, sizeof *bs->pend))) {
        close(fd);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_BOOTSTRAP, "out of memory");
    }
    if (bs->npend == BOOT_MAX_PENDING) { /* drop the oldest: the one whose deadline comes first */
        int old = 0;
        for (int i = 1; i < bs->npend; i++)
            if (bs->pend[i].deadline < bs->pend[old].deadline)
                old = i;
        pend_close(bs, old, "too many connections owe a hello");
    }
    struct boot_pend *p = &bs->pend[bs->npend++];
    memset(p, 0, sizeof *p);
    p->fd = fd;
    p->deadline = now + BOOT_HELLO_WAIT_S;
    coll_sockaddr_str(ss, p->addr, sizeof p->addr);
    return COLL_SUCCESS;
}

/* Accept what waits on the listener into the pending set. */
static coll_status_t accept_waiting(coll_bootstrap_t *bs, int from, double now)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(bs->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
            continue;
        if (fd < 0 && (errno == EMFILE || errno == ENFILE))
            return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP,
                                    "bootstrap: cannot accept the connection of rank %d (raise `ulimit -n`)", from);
        if (fd < 0)
            return COLL_SUCCESS;
        COLL_CHECK(pend_add(bs, fd, &ss, now));
    }
}

coll_status_t boot_accept_from(coll_bootstrap_t *bs, int from, double deadline, int *fd_out)
{
    if (bs->abort_flag && atomic_load(bs->abort_flag))
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_BOOTSTRAP, "communicator aborted during bootstrap");
    if (deadline > 0 && boot_now() >= deadline)
        return coll_error(COLL_ERR_TIMEOUT, COLL_SUB_BOOTSTRAP,
                          "bootstrap: timed out after %.1f s (COLL_CONNECT_TIMEOUT) waiting for the bootstrap "
                          "connection of its parent, rank %d",
                          bs->timeout_s, from);
    struct pollfd fds[1 + BOOT_MAX_PENDING];
    int nf = 0;
    fds[nf++] = (struct pollfd){bs->listen_fd, POLLIN, 0};
    for (int i = 0; i < bs->npend; i++)
        fds[nf++] = (struct pollfd){bs->pend[i].fd, POLLIN, 0};
    double now = boot_now(), next = deadline;
    for (int i = 0; i < bs->npend; i++)
        if (next <= 0 || bs->pend[i].deadline < next)
            next = bs->pend[i].deadline;
    int ready = poll(fds, (nfds_t)nf, boot_wait_ms(next, SLICE_MS));
    now = boot_now();
    if (ready > 0 && (fds[0].revents & POLLIN))
        COLL_CHECK(accept_waiting(bs, from, now));
    for (int i = 0; i < bs->npend;) {
        int r = pend_step(bs, i, from, now);
        if (r == 1) {
            int fd = bs->pend[i].fd;
            bs->pend[i] = bs->pend[--bs->npend];
            boot_pend_free(bs); /* the parent is here: the rest are strangers */
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            *fd_out = fd;
            return COLL_SUCCESS;
        }
        i += r == 0;
    }
    return BOOT_AGAIN; /* the caller probes the store now and then */
}
