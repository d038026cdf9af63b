/*
 * tcp_listen.c - TCP transport: per-communicator state, the data listener
 * (coll_tcp_listen, before the peer-information exchange on every rank; open
 * for the communicator's life: peers connect lazily), teardown, and helpers
 * shared with tcp_setup.c / tcp.c
 * (handshake header encoding, peer descriptions, socket options).
 */
#include "transport/tcp_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/netif.h"

/* ---- small helpers ---- */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void coll_tcp_hdr_encode(const coll_tcp_hdr_t *h, uint8_t out[COLL_TCP_HDR_BYTES])
{
    memset(out, 0, COLL_TCP_HDR_BYTES);
    put32(out + 0, h->magic);
    put32(out + 4, h->version);
    memcpy(out + 8, h->nc, 32);
    put32(out + 40, (uint32_t)h->nonce);
    put32(out + 44, (uint32_t)(h->nonce >> 32));
    put32(out + 48, h->from);
    put32(out + 52, h->to);
    put32(out + 56, (uint32_t)h->idx | (uint32_t)h->nsocks << 16);
    put32(out + 60, h->ack);
}

void coll_tcp_hdr_decode(const uint8_t in[COLL_TCP_HDR_BYTES], coll_tcp_hdr_t *h)
{
    h->magic = get32(in);
    h->version = get32(in + 4);
    memcpy(h->nc, in + 8, 32);
    h->nonce = (uint64_t)get32(in + 40) | (uint64_t)get32(in + 44) << 32;
    h->from = get32(in + 48);
    h->to = get32(in + 52);
    uint32_t v = get32(in + 56);
    h->idx = (uint16_t)(v & 0xffff);
    h->nsocks = (uint16_t)(v >> 16);
    h->ack = get32(in + 60);
}

void coll_tcp_chunk_encode(uint64_t off, uint64_t len, uint8_t out[COLL_TCP_CHUNK_HDR])
{
    put32(out + 0, (uint32_t)off);
    put32(out + 4, (uint32_t)(off >> 32));
    put32(out + 8, (uint32_t)len);
    put32(out + 12, (uint32_t)(len >> 32));
}

void coll_tcp_chunk_decode(const uint8_t in[COLL_TCP_CHUNK_HDR], uint64_t *off, uint64_t *len)
{
    *off = (uint64_t)get32(in) | (uint64_t)get32(in + 4) << 32;
    *len = (uint64_t)get32(in + 8) | (uint64_t)get32(in + 12) << 32;
}

void coll_tcp_peer_sockaddr(const coll_comm *comm, int p, struct sockaddr_storage *ss)
{
    const coll_peer_info_t *pi = &comm->peers[p];
    memset(ss, 0, sizeof *ss);
    if (pi->family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(pi->port);
        memcpy(&a->sin6_addr, pi->addr, 16);
        if (IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr) && comm->tcp && comm->tcp->ifname[0])
            a->sin6_scope_id = if_nametoindex(comm->tcp->ifname);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        a->sin_family = AF_INET;
        a->sin_port = htons(pi->port);
        memcpy(&a->sin_addr, pi->addr, 4);
    }
}

const char *coll_tcp_peer_desc(const coll_comm *comm, int p, char *buf, size_t len)
{
    if (!comm->peers || p < 0 || p >= comm->nranks) {
        snprintf(buf, len, "rank %d", p);
        return buf;
    }
    struct sockaddr_storage ss;
    char a[COLL_SOCKADDR_STRLEN];
    coll_tcp_peer_sockaddr(comm, p, &ss);
    snprintf(buf, len, "rank %d (host %s, %s)", p, comm->peers[p].hostname, coll_sockaddr_str(&ss, a, sizeof a));
    return buf;
}

/* Best effort: a kernel without an option still carries the data. */
void coll_tcp_sockopts(int fd, int sockbuf, int notsent)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        COLL_DEBUG(COLL_SUB_TCP, "TCP_NODELAY: %s", strerror(errno));
    if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) < 0)
        COLL_DEBUG(COLL_SUB_TCP, "SO_KEEPALIVE: %s", strerror(errno));
    if (sockbuf > 0
        && (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sockbuf, sizeof sockbuf) < 0
            || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sockbuf, sizeof sockbuf) < 0))
        COLL_DEBUG(COLL_SUB_TCP, "SO_SNDBUF/SO_RCVBUF %d: %s", sockbuf, strerror(errno));
    if (notsent > 0 && setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &notsent, sizeof notsent) < 0)
        COLL_DEBUG(COLL_SUB_TCP, "TCP_NOTSENT_LOWAT %d: %s", notsent, strerror(errno));
}

/* Which peers this rank reaches over tcp: those shm did not take. */
int coll_tcp_is_peer(const coll_comm *comm, int p)
{
    if (p == comm->rank)
        return 0;
    if (comm->tp)
        return !comm->tp[p] || comm->tp[p] == &coll_tcp_ops;
    return !comm->rank_host || comm->rank_host[p] != comm->host || coll_cfg_bool(COLL_CFG_SHM_DISABLE);
}

/* ---- listener ---- */

/* COLL_FAULT_TCP=RANK[:N] (fault tests): this rank spoils its N-th sealed record. */
coll_status_t coll_tcp_fault_parse(coll_comm *comm, struct coll_tcp *t)
{
    const char *v = coll_cfg_str(COLL_CFG_FAULT_TCP);
    char *e, *e2;
    if (!v[0])
        return COLL_SUCCESS;
    long rank = strtol(v, &e, 10), n = 1;
    int bad = e == v || rank < 0 || rank > INT_MAX;
    if (!bad && *e == ':') {
        n = strtol(e + 1, &e2, 10);
        bad = e2 == e + 1 || *e2 || n < 1 || n > INT_MAX;
    } else if (*e) {
        bad = 1;
    }
    if (bad)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_TCP,
                          "invalid COLL_FAULT_TCP '%s': allowed RANK[:N] (a rank >= 0, then N >= 1)", v);
    if (rank == comm->rank) {
        t->fault_left = (int)n;
        COLL_WARN(COLL_SUB_TCP, "COLL_FAULT_TCP: rank %ld will spoil tcp chunk %ld it seals", rank, n);
    }
    return COLL_SUCCESS;
}

coll_status_t coll_tcp_state(coll_comm *comm)
{
    if (comm->tcp)
        return COLL_SUCCESS;
    struct coll_tcp *t = calloc(1, sizeof *t);
    if (!t)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory");
    t->listen_fd = -1;
    long long ns = coll_cfg_int(COLL_CFG_NSOCKS);
    if (ns != -1 && (ns < 1 || ns > COLL_TCP_MAX_SOCKS)) {
        COLL_WARN(COLL_SUB_TCP, "COLL_NSOCKS=%lld out of range (allowed: -1 = auto, 1..%d), using %d", ns,
                  COLL_TCP_MAX_SOCKS, ns < 1 ? 1 : COLL_TCP_MAX_SOCKS);
        ns = ns < 1 ? 1 : COLL_TCP_MAX_SOCKS;
    }
    /* this rank's sending direction to each peer (tcp_internal.h); 0 = auto,
     * decided in coll_tcp_setup once the ranks of this machine are known */
    t->nsocks = ns == -1 ? 0 : (int)ns;
    size_t sb = coll_cfg_size(COLL_CFG_SOCK_BUF);
    t->sockbuf = sb > INT_MAX ? INT_MAX : (int)sb;
    size_t ns2 = coll_cfg_size(COLL_CFG_SOCK_NOTSENT);
    t->notsent = ns2 > INT_MAX ? INT_MAX : (int)ns2;
    t->chunk = coll_cfg_size(COLL_CFG_SOCK_CHUNK);
    if (t->chunk < COLL_TCP_STRIPE_ALIGN)
        t->chunk = COLL_TCP_STRIPE_ALIGN;
    t->encrypt = coll_cfg_bool(COLL_CFG_ENCRYPT);
    comm->tcp = t;
    return COLL_SUCCESS;
}

static coll_status_t listen_open(coll_comm *comm, coll_peer_info_t *me)
{
    struct coll_tcp *t = comm->tcp;
    char s[COLL_SOCKADDR_STRLEN];
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    t->listen_fd = -1;
    COLL_CHECK(coll_netif_select(AF_UNSPEC, &t->addr, t->ifname, sizeof t->ifname));
    long long base = coll_cfg_int(COLL_CFG_IF_BASE_PORT);
    long long range = coll_cfg_int(COLL_CFG_PORT_RANGE);
    if (base < 0 || base > 65535)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_TCP, "COLL_IF_BASE_PORT=%lld is not a port (0..65535)", base);
    if (base == 0 || range < 1)
        range = 1;
    if (base + range - 1 > 65535)
        range = 65536 - base;
    /* Two sockets with SO_REUSEADDR may both bind a port nobody listens on
     * yet; the second listen() then fails with EADDRINUSE: a port taken by
     * another rank between our bind and listen. Either failure moves on to the
     * next port of the range with a fresh socket. */
    int fd = -1, err = 0;
    const char *what = "bind";
    for (long long i = 0; i < range; i++) {
        fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_TCP, "cannot create the tcp listener");
        int one = 1;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
            COLL_DEBUG(COLL_SUB_TCP, "SO_REUSEADDR: %s", strerror(errno));
        coll_tcp_sockopts(fd, t->sockbuf, t->notsent); /* inherited by accepted sockets (window scale) */
        coll_sockaddr_set_port(&t->addr, (int)(base + i));
        what = "bind";
        if (bind(fd, (struct sockaddr *)&t->addr, coll_sockaddr_len(&t->addr)) == 0) {
            what = "listen";
            if (listen(fd, COLL_TCP_BACKLOG) == 0) {
                err = 0;
                break;
            }
        }
        err = errno;
        close(fd);
        fd = -1;
        if (err != EADDRINUSE)
            break;
        COLL_DEBUG(COLL_SUB_TCP, "%s on port %lld: address in use, trying the next", what, base + i);
    }
    if (err) {
        errno = err;
        if (!base)
            coll_sockaddr_set_port(&t->addr, 0);
        if (base && range > 1)
            return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_TCP,
                                    "cannot %s the tcp listener on %s (%s) on ports %lld..%lld "
                                    "(COLL_IF_BASE_PORT, COLL_PORT_RANGE)",
                                    what, coll_sockaddr_str(&t->addr, s, sizeof s), t->ifname, base, base + range - 1);
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_TCP, "cannot %s the tcp listener on %s (%s)", what,
                                coll_sockaddr_str(&t->addr, s, sizeof s), t->ifname);
    }
    socklen_t sl = sizeof t->addr;
    getsockname(fd, (struct sockaddr *)&t->addr, &sl);
    t->listen_fd = fd;
    me->family = (uint16_t)t->addr.ss_family;
    me->port = (uint16_t)coll_sockaddr_port(&t->addr);
    memset(me->addr, 0, sizeof me->addr);
    if (t->addr.ss_family == AF_INET6)
        memcpy(me->addr, &((struct sockaddr_in6 *)&t->addr)->sin6_addr, 16);
    else
        memcpy(me->addr, &((struct sockaddr_in *)&t->addr)->sin_addr, 4);
    snprintf(me->ifname, sizeof me->ifname, "%s", t->ifname);
    COLL_INFO(COLL_SUB_TCP,
              "data listener on %s (interface %s), %d socket(s) per peer and direction (0: auto), "
              "socket buffers %d, chunks %zu, notsent lowat %d",
              coll_sockaddr_str(&t->addr, s, sizeof s), t->ifname, t->nsocks, t->sockbuf, t->chunk, t->notsent);
    return COLL_SUCCESS;
}

coll_status_t coll_tcp_listen(coll_comm *comm, coll_peer_info_t *me)
{
    COLL_CHECK(coll_tcp_state(comm));
    struct coll_tcp *t = comm->tcp;
    coll_status_t st = listen_open(comm, me);
    t->listen_st = st;
    snprintf(t->listen_err, sizeof t->listen_err, "%s", st == COLL_SUCCESS ? "" : coll_last_error());
    if (st != COLL_SUCCESS) { /* publish "no listener": peers fail at once if they need it */
        me->family = 0;
        me->port = 0;
        memset(me->addr, 0, sizeof me->addr);
    }
    return st;
}

void coll_tcp_teardown(coll_comm *comm)
{
    struct coll_tcp *t = comm->tcp;
    if (!t)
        return;
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    for (int i = 0; i < t->npend; i++)
        close(t->pend[i].fd);
    if (t->peers)
        for (int p = 0; p < comm->nranks; p++) {
            coll_tcp_peer_t *pc = t->peers[p];
            if (!pc)
                continue;
            for (int i = 0; i < COLL_TCP_MAX_SOCKS; i++) {
                if (pc->sfd[i] >= 0)
                    close(pc->sfd[i]);
                if (pc->rfd[i] >= 0)
                    close(pc->rfd[i]);
                free(pc->bounce[i]);
                free(pc->seal[i]);
                coll_aead_free(&pc->stx[i]);
                coll_aead_free(&pc->srx[i]);
            }
            free(pc);
        }
    free(t->peers);
    free(t);
    comm->tcp = NULL;
}

void coll_tcp_abort(coll_comm *comm)
{
    struct coll_tcp *t = comm->tcp;
    int n = 0;
    if (!t || !t->peers)
        return;
    for (int p = 0; p < comm->nranks; p++) {
        coll_tcp_peer_t *pc = t->peers[p];
        for (int i = 0; pc && i < COLL_TCP_MAX_SOCKS; i++) {
            if (pc->sfd[i] >= 0)
                shutdown(pc->sfd[i], SHUT_RDWR);
            if (pc->rfd[i] >= 0)
                shutdown(pc->rfd[i], SHUT_RDWR);
        }
        n += pc != NULL;
    }
    COLL_INFO(COLL_SUB_TCP, "aborting: shut the sockets to %d tcp peer(s)", n);
}
