/*
 * test_tcp.c - the TCP transport on its own, without the rest of a communicator:
 * N forked ranks on 127.0.0.1, each pretending to be its own host, a minimal
 * coll_comm built by hand, listen addresses exchanged through pipes; the ops are
 * driven the way the executor does (send and recv progress, poll when idle).
 *
 * Covers: striping rule, message sizes 0..33 MiB both ways at once with copying
 * and reducing sinks, several messages in a row over 3 ranks, lazy connections
 * (no socket before the first message; only the directions used exist, each
 * carrying data one way), strangers on the listener, a peer dying or aborting
 * mid-message, a refused connect failing at once and an unanswered one timing
 * out naming the peer, and loopback throughput with 1, 2 and 4 sockets (data
 * intact, every socket used, a floor far below any machine: BW_FLOOR_GBPS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/tcp.h> /* struct tcp_info with tcpi_bytes_acked / _received */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* TCP_CLOSE_WAIT of the kernel (include/net/tcp_states.h): netinet/tcp.h,
 * which names it, cannot be included beside linux/tcp.h */
#define TEST_TCP_CLOSE_WAIT 8

#include "core/config.h"
#include "core/log.h"
#include "core/reduce.h"
#include "bootstrap/bootstrap.h"
#include "transport/tcp_internal.h"
#include "transport/transport.h"
#include "../lib/fork_ranks.h"
#include "../lib/tcp_comm.h"

static int g_rank = -1;

#define CHECK(c) \
    do { \
        if (!(c)) { \
            fprintf(stderr, "rank %d: %s:%d: CHECK(%s) failed (last error: %s)\n", g_rank, __FILE__, __LINE__, #c, \
                    coll_last_error()); \
            _exit(1); \
        } \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sockets this process holds (/proc/self/fd). */
static int count_sockets(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    CHECK(d);
    for (struct dirent *e; (e = readdir(d));) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, link, sizeof link - 1);
        if (k > 0) {
            link[k] = '\0';
            n += strncmp(link, "socket:", 7) == 0;
        }
    }
    closedir(d);
    return n;
}

/* ---- a hand-made communicator ---- */

static const uint8_t k_secret[32] = "collbench-tcp-test-secret-000000";

static void comm_build(coll_comm *c, int rank, int n, double timeout_s)
{
    cbt_tcp_comm_build(c, rank, n, k_secret, 0x1234abcdull, timeout_s);
}

/* ---- N ranks in forked processes ---- */

typedef void (*rank_fn)(coll_comm *comm, void *arg);
typedef void (*setup_hook)(const coll_peer_info_t *peers, int n);

static int g_nsocks = 2;

static void full_write(int fd, const void *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        CHECK(k > 0);
        p = (const char *)p + k;
        n -= (size_t)k;
    }
}

static void full_read(int fd, void *p, size_t n)
{
    while (n) {
        ssize_t k = read(fd, p, n);
        CHECK(k > 0);
        p = (char *)p + k;
        n -= (size_t)k;
    }
}

static void rank_main(int rank, int n, int up, int down, rank_fn fn, void *arg)
{
    g_rank = rank;
    alarm(120); /* a hang is a failure */
    char ns[16];
    snprintf(ns, sizeof ns, "%d", g_nsocks);
    coll_cfg_set(COLL_CFG_NSOCKS, ns);
    coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
    coll_log_set_rank(rank);
    coll_comm c;
    comm_build(&c, rank, n, 30.0);
    CHECK(coll_tcp_listen(&c, &c.peers[rank]) == COLL_SUCCESS);
    full_write(up, &c.peers[rank], sizeof c.peers[rank]);
    full_read(down, c.peers, sizeof *c.peers * (size_t)n);
    CHECK(coll_tcp_setup(&c) == COLL_SUCCESS);
    for (int p = 0; p < n; p++)
        CHECK(p == rank || c.tp[p] == &coll_tcp_ops);
    fn(&c, arg);
    cbt_tcp_comm_free(&c);
    _exit(0);
}

/* Forks n ranks; hook runs in the parent once every listener is up and before
 * any rank starts setup. Every rank must exit 0. */
typedef struct {
    int up[16][2], down[16][2]; /* pipes: rank -> parent, parent -> rank */
    rank_fn fn;
    void *arg;
    int n;
} ranks_arg_t;

static int pipe_rank(int r, void *arg)
{
    ranks_arg_t *ra = arg;
    for (int q = 0; q < ra->n; q++) { /* keep only this rank's own ends */
        close(ra->up[q][0]);
        close(ra->down[q][1]);
        if (q != r) {
            close(ra->up[q][1]);
            close(ra->down[q][0]);
        }
    }
    rank_main(r, ra->n, ra->up[r][1], ra->down[r][0], ra->fn, ra->arg);
    return 0; /* rank_main exits */
}

static void run_ranks(int n, rank_fn fn, void *arg, setup_hook hook)
{
    ranks_arg_t ra = {.fn = fn, .arg = arg, .n = n};
    assert_true(n <= 16);
    for (int r = 0; r < n; r++) {
        assert_int_equal(pipe(ra.up[r]), 0);
        assert_int_equal(pipe(ra.down[r]), 0);
    }
    cb_ranks_t rs;
    assert_int_equal(cb_ranks_start(&rs, n, pipe_rank, &ra, "test_tcp"), 0);
    for (int r = 0; r < n; r++) {
        close(ra.up[r][1]);
        close(ra.down[r][0]);
    }
    coll_peer_info_t peers[16];
    for (int r = 0; r < n; r++)
        assert_int_equal(read(ra.up[r][0], &peers[r], sizeof peers[r]), (ssize_t)sizeof peers[r]);
    if (hook)
        hook(peers, n);
    for (int r = 0; r < n; r++) {
        assert_int_equal(write(ra.down[r][1], peers, sizeof peers[0] * (size_t)n),
                         (ssize_t)(sizeof peers[0] * (size_t)n));
        close(ra.down[r][1]);
        close(ra.up[r][0]);
    }
    assert_int_equal(cb_ranks_wait(&rs), 0);
}

/* ---- the executor's loop, in small ---- */

typedef struct {
    int peer, is_send;
    const void *src;
    coll_sink_t sink;
    size_t len, done;
} op_t;

static op_t op_send(int peer, const void *src, size_t len)
{
    op_t o = {peer, 1, src, {NULL, NULL, NULL, 1}, len, 0};
    return o;
}

static op_t op_recv(int peer, void *dst, const void *src2, coll_reduce_fn fn, size_t esize, size_t len)
{
    op_t o = {peer, 0, NULL, {dst, src2, fn, esize}, len, 0};
    return o;
}

/* Progress until every op completes or one fails; stop_after: return success
 * once the ops moved that many bytes in total (for the mid-message tests). */
static coll_status_t drive(coll_comm *c, op_t *ops, int n, size_t stop_after)
{
    double deadline = now_s() + 60;
    size_t moved = 0;
    for (;;) {
        int pending = 0, progressed = 0;
        for (int i = 0; i < n; i++) {
            op_t *o = &ops[i];
            if (o->done >= o->len)
                continue;
            size_t before = o->done;
            coll_status_t st = o->is_send ? coll_tcp_ops.send(c, o->peer, o->src, o->len, &o->done)
                                          : coll_tcp_ops.recv(c, o->peer, &o->sink, o->len, &o->done);
            if (st != COLL_SUCCESS)
                return st;
            progressed |= o->done != before;
            moved += o->done - before;
            pending += o->done < o->len;
        }
        if (!pending || (stop_after && moved >= stop_after))
            return COLL_SUCCESS;
        if (progressed)
            continue;
        struct pollfd fds[64];
        int nfds = 0;
        for (int i = 0; i < n; i++)
            if (ops[i].done < ops[i].len)
                nfds += coll_tcp_ops.pollfds(c, ops[i].peer, ops[i].is_send, fds + nfds, 64 - nfds);
        CHECK(nfds > 0);
        poll(fds, (nfds_t)nfds, 100);
        CHECK(now_s() < deadline);
    }
}

/* Deterministic content of the message from rank 'from' with tag 'tag'. */
static void fill_pattern(void *buf, size_t len, int from, uint64_t tag)
{
    uint8_t *p = buf;
    uint64_t x = (uint64_t)from * 0x9E3779B97F4A7C15ull ^ tag * 0xBF58476D1CE4E5B9ull;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        x ^= x >> 31;
        x *= 0x94D049BB133111EBull;
        x += 0x2545F4914F6CDD1Dull;
        memcpy(p + i, &x, 8);
    }
    for (; i < len; i++)
        p[i] = (uint8_t)(x >> (8 * (i % 8))) ^ (uint8_t)i;
}

static const size_t k_sizes[] = {0,        1,        7, (64u << 10) - 1, 64u << 10, (64u << 10) + 1, (1u << 20) + 3,
                                 5u << 20, 33u << 20};
#define NSIZES (sizeof k_sizes / sizeof k_sizes[0])

/* ---- tests ---- */

static void test_chunk_plan(void **state)
{
    (void)state;
    const uint64_t vals[] = {0, 1, 64, 0x0102030405060708ull, COLL_TCP_CHUNK_END};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++) {
            uint8_t h[COLL_TCP_CHUNK_HDR];
            uint64_t o, l;
            coll_tcp_chunk_encode(vals[a], vals[b], h);
            coll_tcp_chunk_decode(h, &o, &l);
            assert_int_equal(o, vals[a]);
            assert_int_equal(l, vals[b]);
        }
    uint8_t h[COLL_TCP_CHUNK_HDR];
    coll_tcp_chunk_encode(0x0102030405060708ull, 9, h);
    assert_int_equal(h[0], 0x08); /* little-endian on the wire */
    assert_int_equal(h[8], 9);
    const size_t lens[] = {0, 1, 63, 65535, 65536, 65537, 100000, (1u << 20) + 7, 33u << 20};
    for (int k = 1; k <= COLL_TCP_MAX_SOCKS; k++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            size_t len = lens[li];
            assert_int_equal(coll_tcp_chunked(len, k), k > 1 && len >= COLL_TCP_STRIPE_MIN);
            if (!coll_tcp_chunked(len, k))
                continue;
            const size_t cfgs[] = {64, 100, 512u << 10, 0};
            for (size_t ci = 0; ci < 4; ci++) {
                size_t c = coll_tcp_chunk_size(len, k, cfgs[ci]);
                assert_int_equal(c % COLL_TCP_STRIPE_ALIGN, 0);
                assert_true(c > 0);
                /* every socket can get a share: no chunk above len / k (rounded up) */
                assert_true(c <= (len / (size_t)k + COLL_TCP_STRIPE_ALIGN - 1) / COLL_TCP_STRIPE_ALIGN
                                * COLL_TCP_STRIPE_ALIGN);
                if (cfgs[ci])
                    assert_true(c <= (cfgs[ci] + 63) / 64 * 64);
            }
        }
}

/* COLL_TCP_SPIN_US auto: spin only while the ranks sharing this kernel (same
 * boot id, whatever host identity they were given) fit its cores. */
static void test_spin_policy(void **state)
{
    (void)state;
    coll_peer_info_t p[6];
    memset(p, 0, sizeof p);
    for (int r = 0; r < 6; r++) {
        snprintf(p[r].boot_id, sizeof p[r].boot_id, "%s", r < 4 ? "boot-a" : "boot-b");
        p[r].ncpus = 2;
    }
    int mr = 0;
    /* two "hosts" of one rank each on one 2-core kernel: spin */
    assert_int_equal(coll_comm_tcp_spin_us(p, 2, &p[0], 1, -1, &mr), COLL_TCP_SPIN_AUTO_US);
    assert_int_equal(mr, 2);
    /* four ranks on that kernel (2 hosts x 2, namespaces): no spin */
    assert_int_equal(coll_comm_tcp_spin_us(p, 4, &p[0], 2, -1, &mr), 0);
    assert_int_equal(mr, 4);
    /* ranks 4-5 run on another machine: they fit its 2 cores */
    assert_int_equal(coll_comm_tcp_spin_us(p, 6, &p[4], 2, -1, &mr), COLL_TCP_SPIN_AUTO_US);
    assert_int_equal(mr, 2);
    /* a set value wins, in both directions */
    assert_int_equal(coll_comm_tcp_spin_us(p, 4, &p[0], 2, 300, &mr), 300);
    assert_int_equal(coll_comm_tcp_spin_us(p, 2, &p[0], 1, 0, &mr), 0);
    /* no boot id readable: the host's own ranks still count */
    p[0].boot_id[0] = '\0';
    assert_int_equal(coll_comm_tcp_spin_us(p, 4, &p[0], 3, -1, &mr), 0);
    assert_int_equal(mr, 3);
}

static void test_header_roundtrip(void **state)
{
    (void)state;
    coll_tcp_hdr_t h = {COLL_TCP_MAGIC, COLL_TCP_VERSION, {0}, 0x0102030405060708ull, 7, 9, 3, 4, 1}, g;
    memcpy(h.nc, k_secret, 32);
    uint8_t b[COLL_TCP_HDR_BYTES];
    coll_tcp_hdr_encode(&h, b);
    assert_memory_equal(b, "CBT1", 4);
    coll_tcp_hdr_decode(b, &g);
    assert_int_equal(g.magic, h.magic);
    assert_int_equal(g.nonce, h.nonce);
    assert_int_equal(g.from, 7);
    assert_int_equal(g.to, 9);
    assert_int_equal(g.idx, 3);
    assert_int_equal(g.nsocks, 4);
    assert_int_equal(g.ack, 1);
    assert_memory_equal(g.nc, k_secret, 32);
}

/* Deterministic partial elements: a 2-socket "peer" made of socketpairs feeds a
 * reducing recv 3 bytes at a time per socket; the sink must only ever see whole
 * 8-byte elements and the result must be exact. */
static void test_reduce_partial_elements(void **state)
{
    (void)state;
    coll_comm c;
    g_rank = 0;
    comm_build(&c, 0, 2, 1.0);
    c.tcp = calloc(1, sizeof *c.tcp);
    assert_non_null(c.tcp);
    c.tcp->listen_fd = -1;
    c.tcp->nsocks = 2;
    c.tcp->peers = calloc(2, sizeof *c.tcp->peers);
    assert_non_null(c.tcp->peers);
    int far[2];
    coll_tcp_peer_t *pc = calloc(1, sizeof *pc);
    assert_non_null(pc);
    c.tcp->peers[1] = pc;
    for (int i = 0; i < COLL_TCP_MAX_SOCKS; i++)
        pc->sfd[i] = pc->rfd[i] = -1;
    /* rank 1's 2 sockets to us, filed as if accepted (nothing of ours to it) */
    pc->nrecv = pc->rgot = 2;
    for (int i = 0; i < 2; i++) {
        int sp[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp), 0);
        pc->rfd[i] = sp[0];
        far[i] = sp[1];
    }
    size_t n = 40000, len = n * 8; /* >= 64 KiB: two stripes */
    int64_t *in = malloc(len), *s2 = malloc(len), *out = malloc(len), *exp = malloc(len);
    assert_true(in && s2 && out && exp);
    fill_pattern(in, len, 1, 5);
    fill_pattern(s2, len, 2, 5);
    for (size_t i = 0; i < n; i++)
        exp[i] = (int64_t)((uint64_t)in[i] + (uint64_t)s2[i]);
    /* the wire of each socket: 24 KiB chunks dealt alternately (a real sender
     * deals them to whichever socket takes data), then an end header each */
    size_t chunk = 24u << 10, wlen[2] = {0, 0}, sent[2] = {0, 0};
    uint8_t *wire[2] = {malloc(len + 64 * COLL_TCP_CHUNK_HDR), malloc(len + 64 * COLL_TCP_CHUNK_HDR)};
    assert_true(wire[0] && wire[1]);
    for (size_t o = 0, k = 0; o < len; o += chunk, k++) {
        size_t l = len - o < chunk ? len - o : chunk;
        int i = (int)(k % 2);
        coll_tcp_chunk_encode(o, l, wire[i] + wlen[i]);
        memcpy(wire[i] + wlen[i] + COLL_TCP_CHUNK_HDR, (char *)in + o, l);
        wlen[i] += COLL_TCP_CHUNK_HDR + l;
    }
    for (int i = 0; i < 2; i++) {
        coll_tcp_chunk_encode(COLL_TCP_CHUNK_END, 0, wire[i] + wlen[i]);
        wlen[i] += COLL_TCP_CHUNK_HDR;
    }
    coll_sink_t sink = {out, s2, coll_reduce_kernel(COLL_SUM, COLL_INT64), 8};
    size_t done = 0;
    while (done < len) {
        for (int i = 0; i < 2; i++) {
            size_t k = wlen[i] - sent[i] < 3 ? wlen[i] - sent[i] : 3;
            if (k) {
                assert_int_equal(write(far[i], wire[i] + sent[i], k), (ssize_t)k);
                sent[i] += k;
            }
        }
        size_t before = done;
        assert_int_equal(coll_tcp_ops.recv(&c, 1, &sink, len, &done), COLL_SUCCESS);
        assert_true(done % 8 == 0 || done == len - 1); /* only whole elements delivered */
        assert_true(done >= before);
        assert_true(done < len || (sent[0] == wlen[0] && sent[1] == wlen[1])); /* complete only after both ends */
    }
    free(wire[0]);
    free(wire[1]);
    assert_memory_equal(out, exp, len);
    /* the peer closing mid-message: COLL_ERR_NETWORK naming rank 1 */
    done = 0;
    assert_int_equal(write(far[0], in, 5), 5);
    assert_int_equal(coll_tcp_ops.recv(&c, 1, &sink, len, &done), COLL_SUCCESS);
    close(far[0]);
    close(far[1]);
    assert_int_equal(coll_tcp_ops.recv(&c, 1, &sink, len, &done), COLL_ERR_NETWORK);
    assert_non_null(strstr(coll_last_error(), "rank 1 (host node1"));
    free(in);
    free(s2);
    free(out);
    free(exp);
    cbt_tcp_comm_free(&c);
}

/* Both ranks exchange every size at once: copy sink, then reducing sinks of
 * 2-, 4- and 8-byte integer sums (separate src2, and in place). */
static void rank_exchange(coll_comm *c, void *arg)
{
    (void)arg;
    int other = 1 - c->rank;
    size_t maxb = 33u << 20;
    uint8_t *sb = malloc(maxb), *rb = malloc(maxb), *exp = malloc(maxb), *s2 = malloc(maxb);
    CHECK(sb && rb && exp && s2);
    CHECK(c->tcp->npeers == 0 && c->tcp->peers[other] == NULL); /* lazy: nothing before use */
    CHECK(count_sockets() == 1);                                /* the listener */
    for (size_t si = 0; si < NSIZES; si++) {
        size_t len = k_sizes[si];
        fill_pattern(sb, len, c->rank, len);
        fill_pattern(exp, len, other, len);
        memset(rb, 0xEE, len);
        op_t ops[2] = {op_send(other, sb, len), op_recv(other, rb, NULL, NULL, 1, len)};
        CHECK(drive(c, ops, 2, 0) == COLL_SUCCESS);
        CHECK(ops[0].done == len && ops[1].done == len);
        if (memcmp(rb, exp, len) != 0) {
            size_t i = 0;
            while (rb[i] == exp[i])
                i++;
            fprintf(stderr, "rank %d: copy of %zu bytes differs at byte %zu\n", c->rank, len, i);
            CHECK(0);
        }
    }
    const coll_dtype_t dts[] = {COLL_INT16, COLL_INT32, COLL_INT64};
    for (int di = 0; di < 3; di++) {
        size_t es = coll_dtype_size(dts[di]);
        coll_reduce_fn fn = coll_reduce_kernel(COLL_SUM, dts[di]);
        for (size_t si = 0; si < NSIZES; si++) {
            size_t len = k_sizes[si] / es * es;
            int inplace = si % 2;
            fill_pattern(sb, len, c->rank, len + 77);
            fill_pattern(s2, len, 100 + c->rank, len);
            fill_pattern(exp, len, other, len + 77); /* incoming */
            coll_reduce_kernel_ref(COLL_SUM, dts[di])(exp, s2, exp, len / es);
            uint8_t *dst = inplace ? s2 : rb;
            if (!inplace)
                memset(rb, 0xEE, len);
            op_t ops[2] = {op_send(other, sb, len), op_recv(other, dst, s2, fn, es, len)};
            CHECK(drive(c, ops, 2, 0) == COLL_SUCCESS);
            if (memcmp(dst, exp, len) != 0) {
                fprintf(stderr, "rank %d: reduce %s of %zu bytes (%s) wrong\n", c->rank, coll_dtype_name(dts[di]), len,
                        inplace ? "in place" : "out of place");
                CHECK(0);
            }
        }
    }
    /* each connection carried one direction: this rank's data on the sockets
     * it connected (sfd), the peer's on those it accepted (rfd); nothing went
     * the other way but the acceptor's answer to the handshake (Na | MAC_A;
     * +1 on the accepted side: its SYN
     * counts as acked; the peer's FIN, when it has closed, is taken off).
     * Chunks go to whichever socket has room, so one socket
     * may carry little: the data is checked per direction. And no other
     * socket exists: COLL_NSOCKS each way plus the listener. */
    const coll_tcp_peer_t *pc = c->tcp->peers[other];
    CHECK(pc && pc->nsend == g_nsocks && pc->sready == g_nsocks && pc->nrecv == g_nsocks && pc->rgot == g_nsocks);
    CHECK(count_sockets() == 1 + 2 * g_nsocks);
    uint64_t sent = 0, got = 0;
    for (int k = 0; k < 2 * g_nsocks; k++) {
        int mine = k < g_nsocks, i = mine ? k : k - g_nsocks;
        struct tcp_info ti;
        socklen_t tl = sizeof ti;
        memset(&ti, 0, sizeof ti);
        CHECK(getsockopt(mine ? pc->sfd[i] : pc->rfd[i], IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0);
        /* a peer that finished first and closed: its FIN counts as one byte
         * received (the socket is in CLOSE_WAIT); seen once in CI */
        uint64_t out_b = ti.tcpi_bytes_acked, in_b = ti.tcpi_bytes_received;
        if (ti.tcpi_state == TEST_TCP_CLOSE_WAIT && in_b > 0)
            in_b--;
        sent += mine ? out_b : 0;
        got += mine ? 0 : in_b;
        if (mine ? in_b > COLL_AUTH_CHALLENGE_BYTES : out_b > 1 + COLL_AUTH_CHALLENGE_BYTES) {
            fprintf(stderr, "rank %d socket %d of %d (%s): sent %llu, received %llu bytes\n", c->rank, i, g_nsocks,
                    mine ? "sending" : "receiving", (unsigned long long)out_b, (unsigned long long)in_b);
            CHECK(0);
        }
    }
    if (sent < (32u << 20) || got < (32u << 20)) {
        fprintf(stderr, "rank %d: %llu bytes sent on its sockets, %llu received on the peer's\n", c->rank,
                (unsigned long long)sent, (unsigned long long)got);
        CHECK(0);
    }
    free(sb);
    free(rb);
    free(exp);
    free(s2);
}

static void test_exchange_1sock(void **state)
{
    (void)state;
    g_nsocks = 1;
    run_ranks(2, rank_exchange, NULL, NULL);
}

static void test_exchange_3socks(void **state)
{
    (void)state;
    g_nsocks = 3;
    run_ranks(2, rank_exchange, NULL, NULL);
}

/* 3 ranks, each sending a series of messages to both others while receiving
 * from both: stripes of consecutive messages must stay in order per socket. */
static void rank_series(coll_comm *c, void *arg)
{
    (void)arg;
    static const size_t lens[] = {100000, 10, 200003, 1, 70000, 0, 65536, 5000000, 3, 65600};
    int a = (c->rank + 1) % 3, b = (c->rank + 2) % 3;
    size_t maxb = 5000000;
    uint8_t *sa = malloc(maxb), *sb2 = malloc(maxb), *ra = malloc(maxb), *rb = malloc(maxb), *e = malloc(maxb);
    CHECK(sa && sb2 && ra && rb && e);
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            size_t len = lens[i];
            uint64_t tag = (uint64_t)round * 1000 + i;
            fill_pattern(sa, len, c->rank * 16 + a, tag);
            fill_pattern(sb2, len, c->rank * 16 + b, tag);
            op_t ops[4] = {op_send(a, sa, len), op_send(b, sb2, len), op_recv(a, ra, NULL, NULL, 1, len),
                           op_recv(b, rb, NULL, NULL, 1, len)};
            CHECK(drive(c, ops, 4, 0) == COLL_SUCCESS);
            fill_pattern(e, len, a * 16 + c->rank, tag);
            CHECK(memcmp(ra, e, len) == 0);
            fill_pattern(e, len, b * 16 + c->rank, tag);
            CHECK(memcmp(rb, e, len) == 0);
        }
    free(sa);
    free(sb2);
    free(ra);
    free(rb);
    free(e);
}

static void test_three_ranks_series(void **state)
{
    (void)state;
    g_nsocks = 2;
    run_ranks(3, rank_series, NULL, NULL);
}

/* ---- strangers during setup ---- */

static int g_silent_fds[8], g_nsilent;

static int stranger_connect(const coll_peer_info_t *pi)
{
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(pi->port);
    memcpy(&a.sin_addr, pi->addr, 4);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void strangers_hook(const coll_peer_info_t *peers, int n)
{
    (void)n;
    const coll_peer_info_t *tgt = &peers[1]; /* rank 1 accepts from rank 0 */
    uint8_t b[COLL_TCP_HDR_BYTES];
    coll_tcp_hdr_t h = {COLL_TCP_MAGIC, COLL_TCP_VERSION, {0}, 0x1234abcdull, 0, 1, 0, 2, 0};
    /* 1. a stranger with every public value (job nonce, ranks, index): a
     * perfect hello, then a made-up proof (it cannot read the challenge's
     * answer without the secret); it claims rank 0's socket 0 first */
    h.nonce = 0x1234abcdull; /* the communicator's, as comm_build sets it */
    memset(h.nc, 'n', 32);
    coll_tcp_hdr_encode(&h, b);
    int fd = stranger_connect(tgt);
    assert_int_equal(write(fd, b, sizeof b), (ssize_t)sizeof b);
    memset(b, 'x', 32);
    assert_int_equal(write(fd, b, 32), 32);
    g_silent_fds[g_nsilent++] = fd;
    /* 2. wrong job nonce (another communicator) */
    h.nonce = 99;
    coll_tcp_hdr_encode(&h, b);
    fd = stranger_connect(tgt);
    assert_int_equal(write(fd, b, sizeof b), (ssize_t)sizeof b);
    g_silent_fds[g_nsilent++] = fd;
    /* 3. random bytes */
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (uint8_t)(rand() & 0xff);
    fd = stranger_connect(tgt);
    assert_int_equal(write(fd, b, sizeof b), (ssize_t)sizeof b);
    g_silent_fds[g_nsilent++] = fd;
    /* 4. a valid partial header, then silence (kept open) */
    h.nonce = 0x1234abcdull;
    coll_tcp_hdr_encode(&h, b);
    fd = stranger_connect(tgt);
    assert_int_equal(write(fd, b, 20), 20);
    g_silent_fds[g_nsilent++] = fd;
    /* 5. connect and say nothing (kept open); 6. connect and close */
    g_silent_fds[g_nsilent++] = stranger_connect(tgt);
    close(stranger_connect(tgt));
    /* 7. garbage to rank 0, which only connects (nobody accepts there) */
    g_silent_fds[g_nsilent++] = stranger_connect(&peers[0]);
}

static void rank_small_exchange(coll_comm *c, void *arg)
{
    (void)arg;
    int other = 1 - c->rank;
    size_t len = (1u << 20) + 5;
    uint8_t *s = malloc(len), *r = malloc(len), *e = malloc(len);
    CHECK(s && r && e);
    fill_pattern(s, len, c->rank, 1);
    fill_pattern(e, len, other, 1);
    op_t ops[2] = {op_send(other, s, len), op_recv(other, r, NULL, NULL, 1, len)};
    CHECK(drive(c, ops, 2, 0) == COLL_SUCCESS);
    CHECK(memcmp(r, e, len) == 0);
    free(s);
    free(r);
    free(e);
}

/* H2/H3 on the data path, in one process: a real listener of rank 1; the
 * test plays rank 0. A genuine connection (hello, the listener's challenge,
 * the proof) is recorded and filed. Replayed to a listener with nothing filed
 * yet (same secret, job and ranks: the rank restarted, say), the same hello and
 * proof are refused: its nonce is new. A second claim of the filed index is
 * refused at its hello. The secret's bytes are never sent. */
static int replay_conn(coll_comm *c, const uint8_t *hello, const uint8_t *proof, uint8_t *ch_out)
{
    int fd = stranger_connect(&c->peers[1]);
    assert_int_equal(write(fd, hello, COLL_TCP_HDR_BYTES), COLL_TCP_HDR_BYTES);
    uint8_t ch[COLL_AUTH_CHALLENGE_BYTES];
    size_t got = 0;
    for (int k = 0; k < 2000 && got < sizeof ch; k++) {
        assert_int_equal(coll_tcp_accept(c, 1), COLL_SUCCESS);
        ssize_t n = recv(fd, ch + got, sizeof ch - got, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN))
            return fd; /* refused at the hello */
        got += n > 0 ? (size_t)n : 0;
        if (n <= 0)
            usleep(200);
    }
    assert_int_equal(got, sizeof ch);
    if (ch_out)
        memcpy(ch_out, ch, sizeof ch);
    if (proof)
        assert_int_equal(write(fd, proof, COLL_AUTH_MAC_BYTES), COLL_AUTH_MAC_BYTES);
    for (int k = 0; k < 20; k++) {
        assert_int_equal(coll_tcp_accept(c, 1), COLL_SUCCESS);
        usleep(1000);
    }
    return fd;
}

static void listener_up(coll_comm *c)
{
    comm_build(c, 1, 2, 5.0);
    assert_int_equal(coll_tcp_listen(c, &c->peers[1]), COLL_SUCCESS);
    assert_int_equal(coll_tcp_setup(c), COLL_SUCCESS);
}

static void assert_closed(int fd)
{
    char x;
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&pf, 1, 2000), 1);
    assert_true(recv(fd, &x, 1, MSG_DONTWAIT) <= 0);
    close(fd);
}

static void test_replay_data(void **state)
{
    (void)state;
    coll_cfg_set(COLL_CFG_NSOCKS, "1");
    coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
    coll_comm c, c2;
    listener_up(&c);
    coll_tcp_hdr_t h = {COLL_TCP_MAGIC, COLL_TCP_VERSION, {0}, c.id->nonce, 0, 1, 0, 1, 0};
    assert_int_equal(coll_auth_random(h.nc, 32), COLL_SUCCESS);
    uint8_t hello[COLL_TCP_HDR_BYTES], ch[COLL_AUTH_CHALLENGE_BYTES], proof[COLL_AUTH_MAC_BYTES];
    coll_tcp_hdr_encode(&h, hello);
    int fd = replay_conn(&c, hello, NULL, ch);
    coll_auth_bind_t b = {.role = COLL_AUTH_DATA, .job = c.id->nonce, .from = 0, .to = 1, .idx = 0, .count = 1};
    assert_true(coll_auth_respond(k_secret, &b, h.nc, ch, proof));
    assert_int_equal(write(fd, proof, sizeof proof), (ssize_t)sizeof proof);
    for (int k = 0; k < 200 && !(c.tcp->peers[0] && c.tcp->peers[0]->rgot == 1); k++) {
        assert_int_equal(coll_tcp_accept(&c, 1), COLL_SUCCESS);
        usleep(1000);
    }
    assert_non_null(c.tcp->peers[0]);
    assert_int_equal(c.tcp->peers[0]->rgot, 1);
    assert_null(memmem(hello, sizeof hello, k_secret, 8));
    /* a second claim of index 0 on the same listener: refused */
    assert_closed(replay_conn(&c, hello, proof, NULL));
    assert_int_equal(c.tcp->peers[0]->rgot, 1);
    /* the recorded exchange replayed to a fresh listener: refused, nothing filed */
    listener_up(&c2);
    assert_closed(replay_conn(&c2, hello, proof, NULL));
    assert_true(!c2.tcp->peers[0] || c2.tcp->peers[0]->rgot == 0);
    close(fd);
    cbt_tcp_comm_free(&c2);
    cbt_tcp_comm_free(&c);
}

static void test_strangers(void **state)
{
    (void)state;
    g_nsocks = 2;
    g_nsilent = 0;
    run_ranks(2, rank_small_exchange, NULL, strangers_hook);
    for (int i = 0; i < g_nsilent; i++)
        close(g_silent_fds[i]);
}

/* ---- peers failing mid-message ---- */

typedef enum { DIE_SENDER, DIE_RECEIVER, ABORT_SENDER } fail_mode_t;

/* "Part of the message is out" (rank 0 -> rank 1), made before the fork: the
 * receiver starts reading (or dies) only after the sender's first partial send.
 * It was a usleep of 200-300 ms on both sides: a sender descheduled that long
 * (ASan, two tests at once on 2 cores) could find the receiver already reading
 * and send all 33 MiB in one pass, or (DIE_RECEIVER) connect to a rank already
 * gone: 'connection refused' passed the test without a death mid-message. */
static int g_inflight[2] = {-1, -1};

static void rank_fail(coll_comm *c, void *arg)
{
    fail_mode_t mode = *(fail_mode_t *)arg;
    size_t len = 33u << 20;
    uint8_t *buf = calloc(1, len);
    CHECK(buf);
    int failing = mode == DIE_RECEIVER ? 1 : 0; /* rank that goes away; rank 0 sends */
    op_t o = c->rank == 0 ? op_send(1, buf, len) : op_recv(0, buf, NULL, NULL, 1, len);
    char ev = 'x';
    if (c->rank == 0) {
        /* some bytes out, not all: nobody reads before the event below */
        CHECK(drive(c, &o, 1, 1) == COLL_SUCCESS);
        CHECK(o.done > 0 && o.done < len);
        if (mode == ABORT_SENDER) {
            atomic_store(&c->aborted, 1);
            coll_tcp_abort(c); /* the reason would travel through the bootstrap: none here */
            /* our own view: the interrupted send now fails as aborted */
            CHECK(drive(c, &o, 1, 0) == COLL_ERR_ABORTED);
        }
        CHECK(write(g_inflight[1], &ev, 1) == 1);
    } else {
        /* answer the sender's handshakes (it sends nothing before they end),
         * then read nothing until the event */
        for (int k = 0; k < 30000; k++) {
            const coll_tcp_peer_t *pc = c->tcp->peers ? c->tcp->peers[0] : NULL;
            if (pc && pc->nrecv && pc->rgot == pc->nrecv)
                break;
            CHECK(coll_tcp_accept(c, 1) == COLL_SUCCESS);
            usleep(1000);
        }
        struct pollfd pf = {.fd = g_inflight[0], .events = POLLIN};
        CHECK(poll(&pf, 1, 30000) == 1 && read(g_inflight[0], &ev, 1) == 1);
    }
    if (c->rank == failing) {
        if (mode == ABORT_SENDER)
            usleep(500 * 1000); /* alive: the peer sees the abort, not an exit */
        _exit(0);               /* no teardown: the kernel closes the sockets, as in a crash */
    }
    int peer = failing;
    coll_status_t st = drive(c, &o, 1, 0);
    const char *msg = coll_last_error();
    fprintf(stderr, "rank %d got: %s: %s\n", c->rank, coll_strerror(st), msg);
    CHECK(st == COLL_ERR_NETWORK); /* no bootstrap here: an abort looks like a closed peer */
    CHECK(strstr(msg, "rank 0") || strstr(msg, "rank 1"));
    char want[64];
    snprintf(want, sizeof want, "rank %d (host node%d, 127.0.0.1:", peer, peer);
    CHECK(strstr(msg, want) != NULL);
    /* the error sticks */
    CHECK(drive(c, &o, 1, 0) == st);
    if (mode == ABORT_SENDER)
        CHECK(strstr(msg, "closed by the peer") != NULL);
    free(buf);
}

static void run_fail(fail_mode_t m)
{
    assert_int_equal(pipe(g_inflight), 0);
    run_ranks(2, rank_fail, &m, NULL);
    close(g_inflight[0]);
    close(g_inflight[1]);
}

static void test_peer_dies_while_sending(void **state)
{
    (void)state;
    g_nsocks = 2;
    run_fail(DIE_SENDER);
}

static void test_peer_dies_while_receiving(void **state)
{
    (void)state;
    g_nsocks = 2;
    signal(SIGPIPE, SIG_DFL); /* a SIGPIPE would kill the sender: must not happen */
    run_fail(DIE_RECEIVER);
}

static void test_peer_aborts(void **state)
{
    (void)state;
    g_nsocks = 3;
    run_fail(ABORT_SENDER);
}

/* ---- lazy connections: only what is used exists ---- */

/* 3 ranks: 0 sends to 1 (twice), nobody else talks. Rank 0 then holds its
 * COLL_NSOCKS sending sockets to 1, rank 1 the same sockets accepted, rank 2
 * nothing but its listener; nobody has a record of a peer it did not use. */
static void rank_one_way(coll_comm *c, void *arg)
{
    (void)arg;
    size_t len = (1u << 20) + 3;
    uint8_t *b = malloc(len), *e = malloc(len);
    CHECK(b && e);
    for (int round = 0; round < 2 && c->rank < 2; round++) {
        fill_pattern(b, len, 0, (uint64_t)round);
        op_t o = c->rank == 0 ? op_send(1, b, len) : op_recv(0, b, NULL, NULL, 1, len);
        CHECK(drive(c, &o, 1, 0) == COLL_SUCCESS);
        fill_pattern(e, len, 0, (uint64_t)round);
        CHECK(memcmp(b, e, len) == 0);
    }
    const coll_tcp_peer_t *const *pr = (const coll_tcp_peer_t *const *)c->tcp->peers;
    if (c->rank == 0)
        CHECK(pr[1] && pr[1]->nsend == g_nsocks && pr[1]->nrecv == 0 && !pr[2] && c->tcp->npeers == 1);
    if (c->rank == 1)
        CHECK(pr[0] && pr[0]->nrecv == g_nsocks && pr[0]->nsend == 0 && !pr[2] && c->tcp->npeers == 1);
    if (c->rank == 2)
        CHECK(!pr[0] && !pr[1] && c->tcp->npeers == 0 && c->tcp->npend == 0);
    CHECK(count_sockets() == 1 + (c->rank < 2 ? g_nsocks : 0));
    free(b);
    free(e);
}

static void test_lazy_one_way(void **state)
{
    (void)state;
    g_nsocks = 2;
    run_ranks(3, rank_one_way, NULL, NULL);
}

/* ---- connect failures (one process) ---- */

/* Send 1 byte to rank 1 of c until it completes or fails (at most 10 s). */
static coll_status_t send_one(coll_comm *c)
{
    uint8_t b = 7;
    size_t done = 0;
    double t0 = now_s();
    while (now_s() - t0 < 10) {
        coll_status_t st = coll_tcp_ops.send(c, 1, &b, 1, &done);
        if (st != COLL_SUCCESS || done == 1)
            return st;
        struct pollfd fds[16];
        int n = coll_tcp_ops.pollfds(c, 1, 1, fds, 16);
        poll(fds, (nfds_t)n, 20);
    }
    return COLL_SUCCESS;
}

static void test_connect_fails(void **state)
{
    (void)state;
    coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
    coll_cfg_set(COLL_CFG_NSOCKS, "2");
    /* 1. a port that is bound but not listening: refused, the rank is gone -> at once */
    int hole = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(hole, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t sl = sizeof a;
    getsockname(hole, (struct sockaddr *)&a, &sl);
    coll_comm c;
    g_rank = 0;
    /* "at once" is told from "after the connect timeout" by a timeout of 20 s
     * against 2 s taken at most: it was 1 s against 0.5 s, which a process
     * descheduled half a second (ASan, beside other tests on 2 cores) failed */
    comm_build(&c, 0, 2, 20.0);
    assert_int_equal(coll_tcp_listen(&c, &c.peers[0]), COLL_SUCCESS);
    c.peers[1].family = AF_INET;
    c.peers[1].port = ntohs(a.sin_port);
    memcpy(c.peers[1].addr, &a.sin_addr, 4);
    assert_int_equal(coll_tcp_setup(&c), COLL_SUCCESS);
    assert_int_equal(count_sockets(), 2); /* the hole and our listener: no connection at init */
    double t0 = now_s();
    assert_int_equal(send_one(&c), COLL_ERR_NETWORK);
    assert_true(now_s() - t0 < 2.0);
    char want[160];
    snprintf(want, sizeof want,
             "cannot connect to rank 1 (host node1, 127.0.0.1:%d): connection refused: "
             "that rank is gone",
             ntohs(a.sin_port));
    if (!strstr(coll_last_error(), want))
        fail_msg("unexpected message: %s", coll_last_error());
    cbt_tcp_comm_free(&c);

    /* 2. a listener whose queue is full (backlog 0, one connection never
     * accepted): SYNs are dropped, no answer -> COLL_CONNECT_TIMEOUT (1 s) */
    assert_int_equal(listen(hole, 0), 0);
    int filler = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(filler, (struct sockaddr *)&a, sizeof a), 0);
    usleep(50 * 1000);
    comm_build(&c, 0, 2, 1.0);
    assert_int_equal(coll_tcp_listen(&c, &c.peers[0]), COLL_SUCCESS);
    c.peers[1].family = AF_INET;
    c.peers[1].port = ntohs(a.sin_port);
    memcpy(c.peers[1].addr, &a.sin_addr, 4);
    assert_int_equal(coll_tcp_setup(&c), COLL_SUCCESS);
    t0 = now_s();
    assert_int_equal(send_one(&c), COLL_ERR_TIMEOUT);
    double el = now_s() - t0;
    assert_true(el >= 0.9 && el < 5);
    snprintf(want, sizeof want, "cannot connect to rank 1 (host node1, 127.0.0.1:%d): no answer after 1.",
             ntohs(a.sin_port));
    if (!strstr(coll_last_error(), want))
        fail_msg("unexpected message: %s", coll_last_error());
    cbt_tcp_comm_free(&c);
    close(filler);
    close(hole);
}

/* ---- throughput ---- */

/* A floor far below any sane machine's loopback (a few GB/s; the oversubscribed
 * 2-core test VM measured 0.3-1.5 GB/s under load): only a transport that
 * stalls (a lost wake-up waiting for a poll timeout, a 1-byte read loop) falls
 * under it. The numbers are printed for the eye; bench/ measures properly. */
#ifndef BW_FLOOR_GBPS /* -DBW_FLOOR_GBPS=1000 shows the check failing */
#define BW_FLOOR_GBPS 0.05
#endif

/* 64 MiB from rank 0 to rank 1, copied then fp32-summed into a second buffer:
 * every element arrives intact (or summed exactly: small integers in fp32),
 * the configured sockets all carried data, and the best of 2 runs beats the floor. */
static void rank_bw(coll_comm *c, void *arg)
{
    (void)arg;
    size_t len = 64u << 20, n = len / sizeof(float);
    float *buf = malloc(len), *src2 = malloc(len), *want = malloc(len);
    CHECK(buf && src2 && want);
    for (size_t i = 0; i < n; i++) {
        buf[i] = (float)(i & 4095); /* rank 0 sends this, unchanged */
        src2[i] = (float)(i & 7);
    }
    for (int reduce = 0; reduce < 2; reduce++) {
        double best = 1e9;
        for (size_t i = 0; i < n; i++)
            want[i] = (float)(i & 4095) + (reduce ? (float)(i & 7) : 0.0f);
        for (int it = 0; it < 2; it++) {
            if (c->rank == 1)
                memset(buf, 0xff, len); /* NaNs: nothing left from the last run */
            /* align both ranks with a 1-byte ping-pong */
            uint8_t t = 0;
            op_t ping[2] = {op_send(1 - c->rank, &t, 1), op_recv(1 - c->rank, &t, NULL, NULL, 1, 1)};
            CHECK(drive(c, ping, 2, 0) == COLL_SUCCESS);
            double t0 = now_s();
            op_t o = c->rank == 0
                ? op_send(1, buf, len)
                : op_recv(0, buf, src2, reduce ? coll_reduce_kernel(COLL_SUM, COLL_FP32) : NULL, 4, len);
            CHECK(drive(c, &o, 1, 0) == COLL_SUCCESS);
            double el = now_s() - t0;
            if (el < best)
                best = el;
            if (c->rank == 1)
                CHECK(memcmp(buf, want, len) == 0);
        }
        if (c->rank == 1) {
            double gbps = (double)len / best / 1e9;
            printf("tcp loopback 64 MiB, COLL_NSOCKS=%d, %s sink: %.2f GB/s (best of 2, %.1f ms)\n",
                   c->tcp->peers[0]->nrecv, reduce ? "fp32-sum reducing" : "copying", gbps, best * 1e3);
            CHECK(c->tcp->peers[0]->nrecv == g_nsocks);
            CHECK(gbps > BW_FLOOR_GBPS);
        }
    }
    fflush(stdout);
    free(buf);
    free(src2);
    free(want);
}

static void test_throughput(void **state)
{
    (void)state;
    const int socks[] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        g_nsocks = socks[i];
        run_ranks(2, rank_bw, NULL, NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_plan),
        cmocka_unit_test(test_header_roundtrip),
        cmocka_unit_test(test_reduce_partial_elements),
        cmocka_unit_test(test_spin_policy),
        cmocka_unit_test(test_exchange_1sock),
        cmocka_unit_test(test_exchange_3socks),
        cmocka_unit_test(test_three_ranks_series),
        cmocka_unit_test(test_strangers),
        cmocka_unit_test(test_replay_data),
        cmocka_unit_test(test_peer_dies_while_sending),
        cmocka_unit_test(test_peer_dies_while_receiving),
        cmocka_unit_test(test_peer_aborts),
        cmocka_unit_test(test_lazy_one_way),
        cmocka_unit_test(test_connect_fails),
        cmocka_unit_test(test_throughput),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
