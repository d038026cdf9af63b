/*
 * fuzz_store.c - the rendezvous store server end to end: a real server thread
 * on 127.0.0.1 (started and stopped for every input, so inputs are independent
 * and LeakSanitizer sees everything it allocated), two TCP clients, and the
 * input's bytes written into those connections.
 *
 * Input: byte 0 = flags (bit 0: client 0 sends its own hello from the input
 * instead of the genuine handshake (hello, the store's challenge, the proof)
 * the harness does; bit 1: client 1 says no hello at
 * all), then chunks [u8 who][u16 len LE][len bytes]: who bit 0 = client, bit 1
 * = wait up to 2 ms for (and read) that client's replies after the chunk. At
 * the end both clients half-close and their replies are drained until EOF
 * (parked requests must be dropped when the client goes), then the server is
 * stopped. Reply frames read back are checked: magic, status, bounded length.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "fuzz_common.h"
#include "bootstrap/bootstrap.h"

#define NCLIENTS 2

static const uint8_t secret[COLL_SECRET_BYTES] = "collbench-fuzz-secret-0123456789";

typedef struct {
    int fd;
    uint8_t rbuf[64]; /* reply parser: header bytes so far */
    size_t rgot;
    uint64_t skip; /* value bytes of the current reply still to read */
} client_t;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Reads what is there (waiting up to ms); returns 1 at EOF / error. */
static int drain(client_t *c, int ms)
{
    uint8_t buf[4096];
    for (;;) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int n = poll(&p, 1, ms);
        if (n <= 0)
            return 0;
        ssize_t r = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (r <= 0)
            return 1;
        for (ssize_t i = 0; i < r;) {
            if (c->skip) {
                size_t k = (size_t)r - (size_t)i < c->skip ? (size_t)r - (size_t)i : c->skip;
                c->skip -= k;
                i += (ssize_t)k;
                continue;
            }
            c->rbuf[c->rgot++] = buf[i++];
            if (c->rgot == COLL_STORE_REP_HDR) {
                FZ_ASSERT(le32(c->rbuf) == COLL_STORE_MAGIC);
                FZ_ASSERT(le32(c->rbuf + 8) <= COLL_STORE_MAX_VALUE);
                c->skip = le32(c->rbuf + 8);
                c->rgot = 0;
            }
        }
    }
}

static void send_all(client_t *c, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EAGAIN) {
            drain(c, 1); /* the server blocks on us only if we do not read */
            continue;
        }
        if (w <= 0)
            return; /* dropped by the server: fine */
        p += w, n -= (size_t)w;
    }
}

/* The genuine client's side of the handshake (bootstrap.h), blocking. */
static void handshake(client_t *c)
{
    uint8_t hello[COLL_STORE_HELLO_BYTES] = {0}, rep[COLL_STORE_REP_HDR + COLL_AUTH_CHALLENGE_BYTES];
    uint8_t proof[COLL_AUTH_MAC_BYTES];
    put32(hello, COLL_STORE_MAGIC);
    put32(hello + 4, COLL_STORE_VERSION);
    put32(hello + 8, COLL_STORE_NO_RANK);
    memset(hello + 16, 0x5a, COLL_AUTH_NONCE_BYTES);
    send_all(c, hello, sizeof hello);
    FZ_ASSERT(recv(c->fd, rep, sizeof rep, MSG_WAITALL) == (ssize_t)sizeof rep);
    coll_auth_bind_t b = {.role = COLL_AUTH_STORE, .from = COLL_STORE_NO_RANK};
    FZ_ASSERT(coll_auth_respond(secret, &b, hello + 16, rep + COLL_STORE_REP_HDR, proof));
    send_all(c, proof, sizeof proof);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    coll_store_server_t *srv = NULL;
    coll_id_info_t info;
    if (coll_store_server_start("127.0.0.1", 0, secret, &srv, &info) != COLL_SUCCESS)
        abort();
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(info.port)};
    memcpy(&sa.sin_addr, info.addr, 4);
    client_t cl[NCLIENTS];
    memset(cl, 0, sizeof cl);
    uint8_t flags = data[0];
    for (int i = 0; i < NCLIENTS; i++) {
        cl[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (cl[i].fd < 0 || connect(cl[i].fd, (struct sockaddr *)&sa, sizeof sa) != 0)
            abort();
        int raw = (i == 0 && (flags & 1)) || (i == 1 && (flags & 2));
        if (!raw)
            handshake(&cl[i]);
    }
    size_t off = 1;
    while (off + 3 <= size) {
        uint8_t who = data[off];
        size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
        off += 3;
        if (len > size - off)
            len = size - off;
        client_t *c = &cl[who & 1];
        send_all(c, data + off, len);
        off += len;
        if (who & 2)
            drain(c, 2);
    }
    for (int i = 0; i < NCLIENTS; i++)
        shutdown(cl[i].fd, SHUT_WR);
    /* A half-closed client gets every reply due, then EOF: never a hang. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < NCLIENTS; i++) {
        while (!drain(&cl[i], 50)) {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (t1.tv_sec - t0.tv_sec > 3) {
                fprintf(stdout, "store did not close client %d within 3 s of its half-close\n", i);
                abort();
            }
        }
        close(cl[i].fd);
    }
    coll_store_server_stop(srv);
    return 0;
}
