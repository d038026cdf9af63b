/*
 * fuzz_net.c - `collbench net`'s handshake as a client could send it
 * (tools/collbench/net_auth.c, net.c): the 10 hello words the server parses
 * (cbt_net_hello_parse) and the bounds on what they ask (cbt_net_params_ok,
 * M7), a data connection's 3 hello words (cbt_net_data_hello_ok), and the
 * server's challenge-response (cbt_net_auth_accept) fed the rest of the
 * input on a socketpair standing for the client's connection, then the
 * client's side (cbt_net_auth_connect) fed it as the server's answer.
 * Input: 80 bytes of hello words (big-endian, as on the wire), 24 of a data
 * hello, then the bytes of the peer. Accepted parameters must be within the
 * bounds (connections 1..64, size 1..1 GiB, buffers <= 4 GiB, iterations and
 * seconds bounded); no forged handshake may pass (the key is secret); every
 * call must return.
 */
#include <math.h>
#include <sys/socket.h>
#include <unistd.h>
#include "fuzz_common.h"
#include "collbench/cb.h"
#include "collbench/net/net.h"
#include "core/config.h"

static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* Run one side of the handshake with the peer's bytes already queued (then EOF). */
static int side(const uint8_t *peer, size_t n, int accept)
{
    static const uint8_t key[32] = {7, 1, 2, 3};
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
        abort();
    if (n && send(sp[1], peer, n, MSG_NOSIGNAL) != (ssize_t)n)
        abort();
    shutdown(sp[1], SHUT_WR);
    cbt_sock_tune(sp[0], 0.05);
    coll_auth_bind_t b = cbt_net_bind(0x1234, 0, 0, 1);
    int rc = accept ? cbt_net_auth_accept(sp[0], key, &b) : cbt_net_auth_connect(sp[0], key, &b);
    close(sp[0]);
    close(sp[1]);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_setup(size, 104, 104 + 4096, NULL))
        return 0;
    uint64_t w[10], h[3], session = 0;
    for (int i = 0; i < 10; i++)
        w[i] = be64(data + 8 * i);
    for (int i = 0; i < 3; i++)
        h[i] = be64(data + 80 + 8 * i);
    cbt_net_params_t c;
    if (cbt_net_hello_parse(w, &c, &session) == 0) {
        FZ_ASSERT(session == w[2]);
        if (cbt_net_params_ok(&c)) {
            FZ_ASSERT(c.nconn >= 1 && c.nconn <= CBT_NET_MAXQ && (uint64_t)c.nconn == w[5]);
            FZ_ASSERT(c.size >= 1 && c.size <= CBT_GIB);
            unsigned long long per = c.all ? CBT_NET_SWEEP_MAX : c.size;
            FZ_ASSERT((unsigned long long)c.nconn * (per + (1u << 20)) * (c.bidir ? 2 : 1) <= CBT_NET_SERVER_MAX_BYTES);
            FZ_ASSERT(c.iters <= CBT_NET_MAX_ITERS && !isnan(c.duration) && c.duration <= CBT_NET_MAX_SECONDS);
            FZ_ASSERT(c.iters >= 1 || c.duration > 0);
            int fds[CBT_NET_MAXQ];
            for (int i = 0; i < CBT_NET_MAXQ; i++)
                fds[i] = (data[80] >> (i % 8)) & 1 ? 3 : -1;
            if (cbt_net_data_hello_ok(h, session, c.nconn, fds))
                FZ_ASSERT(h[0] == CBT_NET_MAGIC && h[1] == session && h[2] < (uint64_t)c.nconn && fds[h[2]] < 0);
        }
    } else {
        FZ_ASSERT(w[0] != CBT_NET_MAGIC || w[1] != CBT_NET_VERSION);
    }
    const uint8_t *peer = data + 104;
    size_t n = size - 104;
    FZ_ASSERT(side(peer, n, 1) != 0); /* a forged proof never passes */
    FZ_ASSERT(side(peer, n, 0) != 0); /* nor a forged server answer */
    return 0;
}
