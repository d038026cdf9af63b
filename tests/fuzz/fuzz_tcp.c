/*
 * fuzz_tcp.c - the TCP transport's listener end to end: a real listener of
 * rank 1 of 2 (src/transport/tcp_setup.c, tcp.c), a client socket of a fake
 * rank 0, and the input's bytes written into it.
 *
 * Input: byte 0 = mode. Bit 0 clear: the bytes after it are what a stranger
 * sends (a hello, then anything): the listener must never file the socket
 * (nobody without the secret can make the proof). Bit 0 set: the harness
 * makes both of rank 0's sockets genuinely (hello, the listener's challenge,
 * the proof), rank 1 posts a receive of 64 KiB + (byte 1 << 10) bytes
 * (chunked: every chunk has a 16-byte header), plain or reducing floats
 * (bit 1), and the input's bytes go to socket 0 (bit 2 clear) or are split
 * between both: the chunk headers are the fuzzer's. The receive must fail
 * cleanly or complete with every byte accounted for; never crash, hang or
 * write out of its buffer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "fuzz_common.h"
#include "core/config.h"
#include "core/log.h"
#include "core/reduce.h"
#include "transport/tcp_internal.h"
#include "../lib/tcp_comm.h"

static const uint8_t k_secret[32] = "collbench-fuzz-tcp-secret-000000";
#define NONCE 0x5151abcdull

static int connect_to(const coll_peer_info_t *pi)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(pi->port)};
    memcpy(&a.sin_addr, pi->addr, 4);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        abort();
    return fd;
}

/* Rank 0's genuine socket idx of 2 to rank 1: hello, challenge, proof. */
static int genuine(coll_comm *c, int idx)
{
    int fd = connect_to(&c->peers[1]);
    coll_tcp_hdr_t h = {COLL_TCP_MAGIC, COLL_TCP_VERSION, {0}, NONCE, 0, 1, (uint16_t)idx, 2, 0};
    memset(h.nc, 0x40 + idx, 32);
    uint8_t b[COLL_TCP_HDR_BYTES], ch[COLL_AUTH_CHALLENGE_BYTES], proof[COLL_AUTH_MAC_BYTES];
    coll_tcp_hdr_encode(&h, b);
    FZ_ASSERT(send(fd, b, sizeof b, MSG_NOSIGNAL) == (ssize_t)sizeof b);
    size_t got = 0;
    for (int k = 0; k < 2000 && got < sizeof ch; k++) {
        FZ_ASSERT(coll_tcp_accept(c, 1) == COLL_SUCCESS);
        ssize_t n = recv(fd, ch + got, sizeof ch - got, MSG_DONTWAIT);
        if (n > 0)
            got += (size_t)n;
        else
            usleep(100);
    }
    FZ_ASSERT(got == sizeof ch);
    coll_auth_bind_t bd = {.role = COLL_AUTH_DATA, .job = NONCE, .from = 0, .to = 1, .idx = (uint32_t)idx, .count = 2};
    FZ_ASSERT(coll_auth_respond(k_secret, &bd, h.nc, ch, proof));
    FZ_ASSERT(send(fd, proof, sizeof proof, MSG_NOSIGNAL) == (ssize_t)sizeof proof);
    return fd;
}

static void send_some(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return; /* dropped: fine */
        p += w, n -= (size_t)w;
    }
}

static void stranger(coll_comm *c, const uint8_t *data, size_t size)
{
    int fd = connect_to(&c->peers[1]);
    send_some(fd, data, size);
    shutdown(fd, SHUT_WR);
    for (int k = 0; k < 20; k++) {
        FZ_ASSERT(coll_tcp_accept(c, 1) == COLL_SUCCESS);
        usleep(200);
    }
    const coll_tcp_peer_t *pc = c->tcp->peers ? c->tcp->peers[0] : NULL;
    FZ_ASSERT(!pc || pc->rgot == 0); /* no proof, no socket */
    close(fd);
}

static void receive(coll_comm *c, uint8_t mode, size_t len, const uint8_t *data, size_t size)
{
    int fd[2] = {genuine(c, 0), genuine(c, 1)};
    for (int k = 0; k < 200; k++) {
        const coll_tcp_peer_t *pc = c->tcp->peers[0];
        if (pc && pc->rgot == 2)
            break;
        FZ_ASSERT(coll_tcp_accept(c, 1) == COLL_SUCCESS);
        usleep(100);
    }
    FZ_ASSERT(c->tcp->peers[0] && c->tcp->peers[0]->rgot == 2);
    size_t half = mode & 4 ? size / 2 : size;
    send_some(fd[0], data, half);
    send_some(fd[1], data + half, size - half);
    shutdown(fd[0], SHUT_WR);
    shutdown(fd[1], SHUT_WR);
    float *dst = calloc(len / sizeof(float) + 1, sizeof(float));
    if (!dst)
        abort();
    coll_sink_t sk = {.dst = dst};
    if (mode & 2) {
        sk.src2 = dst;
        sk.fn = coll_reduce_kernel(COLL_SUM, COLL_FP32);
        sk.esize = 4;
    }
    size_t done = 0;
    coll_status_t st = COLL_SUCCESS;
    for (int k = 0; k < 200 && st == COLL_SUCCESS && done < len; k++)
        st = coll_tcp_ops.recv(c, 0, &sk, len, &done);
    FZ_ASSERT(done <= len);
    free(dst);
    close(fd[0]);
    close(fd[1]);
}

/* The listener on loopback, two sockets a peer. */
static void tcp_settings(void)
{
    coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
    coll_cfg_set(COLL_CFG_NSOCKS, "2");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_setup(size, 2, 8192, tcp_settings))
        return 0;
    coll_comm c;
    cbt_tcp_comm_build(&c, 1, 2, k_secret, NONCE, 1.0);
    if (coll_tcp_listen(&c, &c.peers[1]) != COLL_SUCCESS || coll_tcp_setup(&c) != COLL_SUCCESS)
        abort();
    if (data[0] & 1)
        receive(&c, data[0], (64u << 10) + ((size_t)data[1] << 10), data + 2, size - 2);
    else
        stranger(&c, data + 1, size - 1);
    cbt_tcp_comm_free(&c);
    return 0;
}
