/*
 * fuzz_store_client.c - the store CLIENT's parsing of what a store answers
 * (src/bootstrap/store_client.c): a fake store on 127.0.0.1 (a thread of the
 * harness) that does the genuine handshake (it knows the secret, as a store
 * would) and then answers the client's requests with the input's bytes. The
 * client runs GET, ADD, GATHER and SET; every call must return (short
 * timeouts), and a value handed back must have the length the client says.
 * Input: byte 0 bit 0 = the fake store answers the hello with the input
 * instead (a stranger posing as the store: the client must refuse it).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include "fuzz_common.h"
#include "bootstrap/bootstrap.h"
#include "core/config.h"

static const uint8_t k_secret[COLL_SECRET_BYTES] = "collbench-fuzz-client-secret-000";

typedef struct {
    int lfd;
    const uint8_t *data;
    size_t size;
    int raw;
} fake_t;

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void *fake_store(void *arg)
{
    fake_t *f = arg;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    uint8_t hello[COLL_STORE_HELLO_BYTES], rep[COLL_STORE_REP_HDR + COLL_AUTH_CHALLENGE_BYTES],
        na[COLL_AUTH_NONCE_BYTES], proof[COLL_AUTH_MAC_BYTES];
    if (!f->raw && recv(fd, hello, sizeof hello, MSG_WAITALL) == (ssize_t)sizeof hello) {
        put32(rep, COLL_STORE_MAGIC);
        put32(rep + 4, COLL_SUCCESS);
        put32(rep + 8, COLL_AUTH_CHALLENGE_BYTES);
        uint32_t claim = (uint32_t)hello[8] | (uint32_t)hello[9] << 8 | (uint32_t)hello[10] << 16
            | (uint32_t)hello[11] << 24;
        coll_auth_bind_t b = {.role = COLL_AUTH_STORE, .from = claim};
        if (coll_auth_challenge(k_secret, &b, hello + 16, na, rep + COLL_STORE_REP_HDR) == COLL_SUCCESS
            && send(fd, rep, sizeof rep, MSG_NOSIGNAL) == (ssize_t)sizeof rep)
            FZ_ASSERT(recv(fd, proof, sizeof proof, MSG_WAITALL) == (ssize_t)sizeof proof
                      && coll_auth_verify(k_secret, COLL_AUTH_CONNECTOR, &b, hello + 16, na, proof));
    }
    size_t off = 0;
    while (off < f->size) {
        ssize_t w = send(fd, f->data + off, f->size - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    char sink[4096];
    while (recv(fd, sink, sizeof sink, 0) > 0) /* until the client closes */
        ;
    close(fd);
    return NULL;
}

static void requests(coll_store_t *st)
{
    void *v = NULL;
    size_t len = 0;
    if (coll_store_get(st, "fz/key", 0.05, &v, &len) == COLL_SUCCESS)
        FZ_ASSERT(len <= COLL_STORE_MAX_VALUE && (len == 0 || v != NULL));
    free(v);
    int64_t nv;
    (void)coll_store_add(st, "fz/n", 1, &nv);
    (void)coll_store_gather(st, "fz/join", 2, 0, "abcd", 4);
    (void)coll_store_set(st, "fz/s", "x", 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_setup(size, 1, 65536, NULL))
        return 0;
    fake_t f = {.data = data + 1, .size = size - 1, .raw = data[0] & 1};
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    f.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (f.lfd < 0 || bind(f.lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(f.lfd, 4) != 0
        || getsockname(f.lfd, (struct sockaddr *)&a, &al) != 0)
        abort();
    pthread_t t;
    if (pthread_create(&t, NULL, fake_store, &f) != 0)
        abort();
    coll_id_info_t info = {.family = AF_INET, .port = ntohs(a.sin_port)};
    memcpy(info.addr, &a.sin_addr, 4);
    memcpy(info.secret, k_secret, COLL_SECRET_BYTES);
    coll_store_t *st = NULL;
    coll_status_t s = coll_store_connect(&info, 0.2, &st);
    if (f.raw)
        FZ_ASSERT(s != COLL_SUCCESS); /* a store that cannot prove the secret is refused */
    if (s == COLL_SUCCESS) {
        requests(st);
        coll_store_close(st);
    } else {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); /* unblock the fake's accept if never reached */
        if (fd >= 0) {
            (void)!connect(fd, (struct sockaddr *)&a, sizeof a);
            close(fd);
        }
    }
    pthread_join(t, NULL);
    close(f.lfd);
    return 0;
}
