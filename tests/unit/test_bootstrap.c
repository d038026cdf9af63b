/*
 * test_bootstrap.c - unique ids, the rendezvous store (server + client),
 * hostile clients, and allgather / bcast / barrier over N processes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/config.h"
#include "core/log.h"
#include "core/netif.h"
#include "../lib/fork_ranks.h"

static const uint8_t test_secret[COLL_SECRET_BYTES] = "0123456789abcdef0123456789abcde";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static coll_store_server_t *start_server(const char *addr, coll_id_info_t *info)
{
    coll_store_server_t *s = NULL;
    assert_int_equal(coll_store_server_start(addr, 0, test_secret, &s, info), COLL_SUCCESS);
    assert_non_null(s);
    assert_true(info->port != 0);
    return s;
}

static coll_store_t *connect_ok(const coll_id_info_t *info)
{
    coll_store_t *c = NULL;
    assert_int_equal(coll_store_connect(info, 10.0, &c), COLL_SUCCESS);
    return c;
}

/* ---- ids ----------------------------------------------------------------- */

static void hex(const uint8_t *d, char *out)
{
    for (int i = 0; i < 32; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_sha256(void **state)
{
    (void)state;
    uint8_t d[32];
    char h[65];
    coll_sha256("", 0, d);
    hex(d, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    coll_sha256("abc", 3, d);
    hex(d, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes */
    coll_sha256(m, strlen(m), d);
    hex(d, h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char big[1000];
    memset(big, 'a', sizeof big);
    coll_sha256(big, sizeof big, d);
    hex(d, h);
    assert_string_equal(h, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

static void test_id_roundtrip(void **state)
{
    (void)state;
    coll_id_info_t in, out;
    memset(&in, 0, sizeof in);
    in.family = AF_INET6;
    in.port = 29500;
    for (int i = 0; i < 16; i++)
        in.addr[i] = (uint8_t)(i * 7);
    memcpy(in.secret, test_secret, sizeof in.secret);
    in.nonce = 0x0123456789abcdefull;
    coll_unique_id_t id;
    assert_int_equal(coll_id_encode(&in, &id), COLL_SUCCESS);
    assert_int_equal(coll_id_decode(&id, &out), COLL_SUCCESS);
    assert_int_equal(out.family, AF_INET6);
    assert_int_equal(out.port, 29500);
    assert_memory_equal(out.addr, in.addr, 16);
    assert_memory_equal(out.secret, in.secret, COLL_SECRET_BYTES);
    assert_true(out.nonce == in.nonce);
    for (int b = 0; b < 68; b++) { /* any flipped byte is detected */
        coll_unique_id_t bad = id;
        bad.internal[b] ^= 0x10;
        assert_int_equal(coll_id_decode(&bad, &out), COLL_ERR_INVALID_ARG);
    }
    coll_unique_id_t zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(coll_id_decode(&zero, &out), COLL_ERR_INVALID_ARG);
}

static void test_unique_id_api(void **state)
{
    (void)state;
    coll_unique_id_t id, id2, id3;
    coll_id_info_t info, info2, info3;
    assert_int_equal(coll_get_unique_id(&id), COLL_SUCCESS);
    assert_int_equal(coll_id_decode(&id, &info), COLL_SUCCESS);
    coll_store_t *c = connect_ok(&info);
    assert_int_equal(coll_store_set(c, "k", "v", 1), COLL_SUCCESS);
    coll_store_close(c);
    assert_int_equal(coll_id_server_hold(&info), 1);
    assert_int_equal(coll_id_server_hold(&info), 1);
    coll_id_server_drop(&info);
    c = connect_ok(&info); /* still one holder */
    coll_store_close(c);
    coll_id_server_drop(&info); /* last holder: stopped */
    assert_int_equal(coll_id_server_hold(&info), 0);
    assert_int_equal(coll_store_connect(&info, 0.3, &c), COLL_ERR_TIMEOUT);
    assert_non_null(strstr(coll_last_error(), "cannot reach rendezvous store"));
    coll_unique_id_release(&id); /* harmless now */

    /* torchrun style: one side listens with a string secret, others refer to it */
    assert_int_equal(coll_unique_id_listen("127.0.0.1", 0, "s3cret", &id), COLL_SUCCESS);
    assert_int_equal(coll_id_decode(&id, &info), COLL_SUCCESS);
    assert_int_equal(coll_unique_id_from_addr("localhost", info.port, "s3cret", &id2), COLL_SUCCESS);
    assert_int_equal(coll_id_decode(&id2, &info2), COLL_SUCCESS);
    assert_true(info.nonce == info2.nonce);
    c = connect_ok(&info2);
    assert_int_equal(coll_store_set(c, "x", "1", 1), COLL_SUCCESS);
    coll_store_close(c);
    assert_int_equal(coll_unique_id_from_addr("127.0.0.1", info.port, "wrong", &id3), COLL_SUCCESS);
    assert_int_equal(coll_id_decode(&id3, &info3), COLL_SUCCESS);
    assert_int_equal(coll_store_connect(&info3, 5.0, &c), COLL_ERR_AUTH);
    coll_cfg_set(COLL_CFG_SECRET, NULL);
    assert_int_equal(coll_unique_id_from_addr("127.0.0.1", info.port, NULL, &id3), COLL_ERR_INVALID_ARG);
    coll_unique_id_release(&id);
    assert_int_equal(coll_store_connect(&info2, 0.2, &c), COLL_ERR_TIMEOUT);
}

/* ---- store basics ---------------------------------------------------------- */

static void test_store_ops(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    coll_store_t *c = connect_ok(&info);
    void *v;
    size_t l;
    assert_int_equal(coll_store_set(c, "a", "hello", 5), COLL_SUCCESS);
    assert_int_equal(coll_store_get(c, "a", 1.0, &v, &l), COLL_SUCCESS);
    assert_int_equal(l, 5);
    assert_memory_equal(v, "hello", 5);
    free(v);
    assert_int_equal(coll_store_set(c, "a", "", 0), COLL_SUCCESS); /* overwrite, empty */
    assert_int_equal(coll_store_get(c, "a", 1.0, &v, &l), COLL_SUCCESS);
    assert_int_equal(l, 0);
    free(v);
    int64_t n = 0;
    assert_int_equal(coll_store_add(c, "ctr", 5, &n), COLL_SUCCESS);
    assert_int_equal(n, 5);
    assert_int_equal(coll_store_add(c, "ctr", -7, &n), COLL_SUCCESS);
    assert_int_equal(n, -2);
    assert_int_equal(coll_store_add(c, "a", 1, &n), COLL_ERR_INVALID_ARG); /* not a counter */
    assert_int_equal(coll_store_del(c, "a"), COLL_SUCCESS);
    assert_int_equal(coll_store_del(c, "a"), COLL_SUCCESS); /* absent: fine */
    double t0 = now_s();
    assert_int_equal(coll_store_get(c, "a", 0.3, &v, &l), COLL_ERR_TIMEOUT);
    double dt = now_s() - t0;
    assert_true(dt >= 0.25 && dt < 2.0);
    assert_non_null(strstr(coll_last_error(), "'a'"));
    /* the connection is still usable after a server-side timeout */
    assert_int_equal(coll_store_set(c, "b", "x", 1), COLL_SUCCESS);
    /* limits */
    char key[COLL_STORE_MAX_KEY + 2];
    memset(key, 'k', sizeof key);
    key[COLL_STORE_MAX_KEY] = '\0';
    assert_int_equal(coll_store_set(c, key, "x", 1), COLL_SUCCESS);
    key[COLL_STORE_MAX_KEY] = 'k';
    key[COLL_STORE_MAX_KEY + 1] = '\0';
    assert_int_equal(coll_store_set(c, key, "x", 1), COLL_ERR_INVALID_ARG);
    assert_int_equal(coll_store_set(c, "", "x", 1), COLL_ERR_INVALID_ARG);
    size_t big = COLL_STORE_MAX_VALUE;
    char *bv = malloc(big);
    assert_non_null(bv);
    for (size_t i = 0; i < big; i++)
        bv[i] = (char)(i * 31);
    assert_int_equal(coll_store_set(c, "big", bv, big), COLL_SUCCESS);
    assert_int_equal(coll_store_get(c, "big", 5.0, &v, &l), COLL_SUCCESS);
    assert_int_equal(l, big);
    assert_memory_equal(v, bv, big);
    free(v);
    free(bv);
    coll_store_close(c);
    coll_store_server_stop(s);
}

typedef struct {
    const coll_id_info_t *info;
    const char *key;
    double timeout;
    coll_status_t st;
    size_t len;
    char val[16];
    double waited;
    char err[512];
} getter_t;

static void *getter(void *arg)
{
    getter_t *g = arg;
    coll_store_t *c = NULL;
    g->st = coll_store_connect(g->info, 10.0, &c);
    if (g->st != COLL_SUCCESS)
        return NULL;
    double t0 = now_s();
    void *v = NULL;
    g->st = coll_store_get(c, g->key, g->timeout, &v, &g->len);
    g->waited = now_s() - t0;
    snprintf(g->err, sizeof g->err, "%s", coll_last_error());
    if (g->st == COLL_SUCCESS) {
        memcpy(g->val, v, g->len < sizeof g->val ? g->len : sizeof g->val);
        free(v);
    }
    coll_store_close(c);
    return NULL;
}

/* Getters parked at the store, waited for. A fixed usleep(300000) after
 * starting the getter threads used to stand for this; a getter descheduled
 * that long on a loaded 2-core machine (the unit tests run two at a time)
 * sent its GET after the SET and got the value at once (waited ~0: the
 * "waited > 0.1" check failed). Now, before the getters start, park_cost
 * connects c and sends a GET of the same key (try_get: the same frame), so
 * that the bytes one getter costs the server (hello + GET) are measured; once
 * they are started, wait_parked polls the server's bytes_in until n getters'
 * worth arrived (10 s at most). The server reads a GET and parks it in one
 * step of its single thread, so no later request comes in between. */
typedef struct {
    uint64_t base, per;
} park_cost_t;

static park_cost_t park_cost(coll_store_server_t *s, const coll_id_info_t *info, coll_store_t **c, const char *key)
{
    uint64_t b0 = 0, b1 = 0;
    coll_store_server_stats(s, &b0, NULL, NULL, NULL);
    *c = connect_ok(info);
    void *v = NULL;
    size_t l = 0;
    assert_int_equal(coll_store_try_get(*c, key, &v, &l), COLL_ERR_TIMEOUT); /* absent or incomplete: unchanged */
    free(v);
    coll_store_server_stats(s, &b1, NULL, NULL, NULL);
    return (park_cost_t){b1, b1 - b0};
}

/* until the server has read want bytes in all (10 s at most) */
static void wait_bytes_in(coll_store_server_t *s, uint64_t base, uint64_t want)
{
    uint64_t now = 0;
    double t0 = now_s();
    while (coll_store_server_stats(s, &now, NULL, NULL, NULL), now < want && now_s() - t0 < 10.0)
        usleep(1000);
    if (now < want)
        fail_msg("the getters did not reach the store in 10 s (%llu of %llu bytes)", (unsigned long long)(now - base),
                 (unsigned long long)(want - base));
}

static void wait_parked(coll_store_server_t *s, park_cost_t pc, int n)
{
    wait_bytes_in(s, pc.base, pc.base + (uint64_t)n * pc.per);
}

static void test_get_waits_for_set(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    getter_t g[3];
    pthread_t t[3];
    coll_store_t *c = NULL;
    park_cost_t pc = park_cost(s, &info, &c, "late");
    for (int i = 0; i < 3; i++) {
        g[i] = (getter_t){.info = &info, .key = "late", .timeout = i == 2 ? 0 : 10.0};
        assert_int_equal(pthread_create(&t[i], NULL, getter, &g[i]), 0);
    }
    wait_parked(s, pc, 3);
    usleep(300000); /* parked that long at least: waited > 0.1 below */
    assert_int_equal(coll_store_set(c, "late", "value", 5), COLL_SUCCESS);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(g[i].st, COLL_SUCCESS);
        assert_int_equal(g[i].len, 5);
        assert_memory_equal(g[i].val, "value", 5);
        assert_true(g[i].waited > 0.1);
    }
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* A job marked failed answers its parked and later waits at once, with the
 * reason; other jobs on the same store are not touched. */
static void test_job_failed(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    getter_t g[2];
    pthread_t t[2];
    g[0] = (getter_t){.info = &info, .key = "jobA/7/all", .timeout = 30.0};
    g[1] = (getter_t){.info = &info, .key = "jobB/1", .timeout = 1.0};
    coll_store_t *c = NULL, *c1 = NULL;
    park_cost_t pa = park_cost(s, &info, &c, g[0].key), pb = park_cost(s, &info, &c1, g[1].key);
    coll_store_close(c1);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, getter, &g[i]), 0);
    wait_bytes_in(s, pb.base, pb.base + pa.per + pb.per); /* both parked: the FAIL answers g[0] */
    assert_int_equal(coll_store_fail(c, "jobA", "rank 2 failed: no port"), COLL_SUCCESS);
    assert_int_equal(coll_store_fail(c, "jobA", "second reason"), COLL_SUCCESS); /* first one stays */
    assert_int_equal(coll_store_fail(c, "job/A", "x"), COLL_ERR_INVALID_ARG);    /* a job has no '/' */
    pthread_join(t[0], NULL);
    assert_int_equal(g[0].st, COLL_ERR_ABORTED);
    assert_true(g[0].waited < 5.0); /* woken by the failure, not by its 30 s timeout */
    assert_non_null(strstr(g[0].err, "rank 2 failed: no port"));
    assert_non_null(strstr(g[0].err, "jobA/7/all"));
    pthread_join(t[1], NULL);
    assert_int_equal(g[1].st, COLL_ERR_TIMEOUT); /* another job: untouched */
    /* later waits of the failed job: at once; existing keys still readable */
    void *v = NULL;
    size_t l = 0;
    double t0 = now_s();
    assert_int_equal(coll_store_get(c, "jobA/8/all", 30.0, &v, &l), COLL_ERR_ABORTED);
    assert_non_null(strstr(coll_last_error(), "rank 2 failed: no port"));
    assert_int_equal(coll_store_barrier(c, "jobA/bar", 3, 30.0), COLL_ERR_ABORTED);
    assert_true(now_s() - t0 < 5.0);
    assert_int_equal(coll_store_set(c, "jobA/k", "v", 1), COLL_SUCCESS);
    assert_int_equal(coll_store_get(c, "jobA/k", 1.0, &v, &l), COLL_SUCCESS);
    free(v);
    coll_store_close(c);
    coll_store_server_stop(s);
}

static void test_wrong_secret(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    coll_id_info_t bad = info;
    bad.secret[5] ^= 1;
    coll_store_t *c = NULL;
    double t0 = now_s();
    assert_int_equal(coll_store_connect(&bad, 10.0, &c), COLL_ERR_AUTH);
    assert_true(now_s() - t0 < 2.0);
    assert_null(c);
    assert_non_null(strstr(coll_last_error(), "did not prove it knows our secret"));
    c = connect_ok(&info); /* the store is unharmed */
    assert_int_equal(coll_store_set(c, "k", "v", 1), COLL_SUCCESS);
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* A port of 127.0.0.1 that is free now and below the kernel's ephemeral range
 * (tests/lib/common.sh's free_port in C), so that no bind to port 0 and no
 * connect() of another process can be given it before we bind it ourselves.
 * A port taken by bind(0) and closed again (as here until 2026-12) was an
 * ephemeral one: for the ~1 s until the store bound it, any listener or
 * outgoing connection of the tests running beside this one could get it. */
static int quiet_port(void)
{
    int lo = 32768;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d", &lo) != 1)
            lo = 32768;
        fclose(f);
    }
    if (lo < 10100)
        fail_msg("ephemeral ports start at %d: no room below them for a test port", lo);
    unsigned x = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
    for (int i = 0; i < 200; i++) {
        x = x * 1103515245u + 12345u;
        int port = 10000 + (int)((x >> 8) % (unsigned)(lo - 10001));
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(fd >= 0);
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
        close(fd);
        if (ok)
            return port;
    }
    fail_msg("no free port in 10000..%d", lo - 1);
    return -1;
}

static void test_connect_refused_then_retry(void **state)
{
    (void)state;
    int port = quiet_port();
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    coll_id_info_t info;
    memset(&info, 0, sizeof info);
    info.family = AF_INET;
    info.port = (uint16_t)port;
    memcpy(info.addr, &a.sin_addr, 4);
    memcpy(info.secret, test_secret, COLL_SECRET_BYTES);
    coll_store_t *c = NULL;
    double t0 = now_s();
    assert_int_equal(coll_store_connect(&info, 0.5, &c), COLL_ERR_TIMEOUT);
    double dt = now_s() - t0;
    assert_true(dt >= 0.45 && dt < 2.0);
    char want[96];
    snprintf(want, sizeof want, "cannot reach rendezvous store 127.0.0.1:%d after 0.5 s", port);
    assert_non_null(strstr(coll_last_error(), want));
    assert_non_null(strstr(coll_last_error(), "connection refused"));
    /* a client that starts first connects once the store appears */
    getter_t g = {.info = &info, .key = "k", .timeout = 5.0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, getter, &g), 0);
    usleep(400000);
    coll_store_server_t *s = NULL;
    coll_id_info_t got;
    assert_int_equal(coll_store_server_start("127.0.0.1", port, test_secret, &s, &got), COLL_SUCCESS);
    assert_int_equal(got.port, port);
    c = connect_ok(&got);
    assert_int_equal(coll_store_set(c, "k", "ok", 2), COLL_SUCCESS);
    pthread_join(t, NULL);
    assert_int_equal(g.st, COLL_SUCCESS);
    assert_memory_equal(g.val, "ok", 2);
    coll_store_close(c);
    coll_store_server_stop(s);
}

static void test_ipv6(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("::1", &info);
    assert_int_equal(info.family, AF_INET6);
    coll_store_t *c = connect_ok(&info);
    assert_true(strncmp(coll_store_addr(c), "[::1]:", 6) == 0);
    void *v;
    size_t l;
    assert_int_equal(coll_store_set(c, "six", "v6", 2), COLL_SUCCESS);
    assert_int_equal(coll_store_get(c, "six", 1.0, &v, &l), COLL_SUCCESS);
    assert_memory_equal(v, "v6", 2);
    free(v);
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* ---- hostile clients ------------------------------------------------------- */

static int raw_connect(const coll_id_info_t *info)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(info->port)};
    memcpy(&a.sin_addr, info->addr, 4);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The client's side of the store handshake by hand (bootstrap.h); hello and
 * proof are copied out (may be NULL) for replays. */
static void raw_hello_as(int fd, uint32_t claim, uint8_t *hello_out, uint8_t *proof_out)
{
    uint8_t h[COLL_STORE_HELLO_BYTES], r[COLL_STORE_REP_HDR + COLL_AUTH_CHALLENGE_BYTES], proof[COLL_AUTH_MAC_BYTES];
    put32(h, COLL_STORE_MAGIC);
    put32(h + 4, COLL_STORE_VERSION);
    put32(h + 8, claim);
    put32(h + 12, 0);
    assert_int_equal(coll_auth_random(h + 16, COLL_AUTH_NONCE_BYTES), COLL_SUCCESS);
    assert_int_equal(send(fd, h, sizeof h, MSG_NOSIGNAL), (ssize_t)sizeof h);
    assert_int_equal(recv(fd, r, sizeof r, MSG_WAITALL), (ssize_t)sizeof r);
    assert_int_equal(r[4], COLL_SUCCESS);
    coll_auth_bind_t b = {.role = COLL_AUTH_STORE, .from = claim};
    assert_true(coll_auth_respond(test_secret, &b, h + 16, r + COLL_STORE_REP_HDR, proof));
    assert_int_equal(send(fd, proof, sizeof proof, MSG_NOSIGNAL), (ssize_t)sizeof proof);
    if (hello_out)
        memcpy(hello_out, h, sizeof h);
    if (proof_out)
        memcpy(proof_out, proof, sizeof proof);
}

static void raw_hello(int fd) { raw_hello_as(fd, COLL_STORE_NO_RANK, NULL, NULL); }

/* Seconds until the server closes fd (reads and discards), or -1 after limit. */
static double time_to_close(int fd, double limit)
{
    double t0 = now_s();
    for (;;) {
        double left = limit - (now_s() - t0);
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        char buf[256];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return now_s() - t0;
    }
}

typedef struct {
    const coll_id_info_t *info;
    atomic_int *stop;
    int rounds, failures;
} worker_t;

static void *busy_client(void *arg)
{
    worker_t *w = arg;
    coll_store_t *c = NULL;
    if (coll_store_connect(w->info, 10.0, &c) != COLL_SUCCESS) {
        w->failures++;
        return NULL;
    }
    char key[32];
    snprintf(key, sizeof key, "busy%p", (void *)w);
    while (!atomic_load(w->stop)) {
        int64_t n = 0;
        void *v;
        size_t l;
        if (coll_store_set(c, key, "abc", 3) != COLL_SUCCESS || coll_store_get(c, key, 2.0, &v, &l) != COLL_SUCCESS
            || l != 3 || coll_store_add(c, "busyctr", 1, &n) != COLL_SUCCESS)
            w->failures++;
        else
            free(v), w->rounds++;
        usleep(1000);
    }
    coll_store_close(c);
    return NULL;
}

/* Reads the store's reply header on fd: its status, or -1 when it closed. */
static int reply_status(int fd)
{
    uint8_t r[COLL_STORE_REP_HDR];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 5000) <= 0 || recv(fd, r, sizeof r, MSG_WAITALL) != (ssize_t)sizeof r)
        return -1;
    return (int)r[4];
}

/* H2: a recorded hello and proof, replayed on a new connection, are refused
 * (the store's nonce is new), and the secret never was on the wire. */
static void test_replay_refused(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    uint8_t hello[COLL_STORE_HELLO_BYTES], proof[COLL_AUTH_MAC_BYTES];
    int fd = raw_connect(&info);
    raw_hello_as(fd, COLL_STORE_NO_RANK, hello, proof);
    assert_null(memmem(hello, sizeof hello, test_secret, 8));
    assert_null(memmem(proof, sizeof proof, test_secret, 8));
    close(fd);
    for (int round = 0; round < 3; round++) {
        fd = raw_connect(&info);
        uint8_t r[COLL_STORE_REP_HDR + COLL_AUTH_CHALLENGE_BYTES];
        assert_int_equal(send(fd, hello, sizeof hello, MSG_NOSIGNAL), (ssize_t)sizeof hello);
        assert_int_equal(recv(fd, r, sizeof r, MSG_WAITALL), (ssize_t)sizeof r);
        assert_int_equal(send(fd, proof, sizeof proof, MSG_NOSIGNAL), (ssize_t)sizeof proof);
        assert_int_equal(reply_status(fd), COLL_ERR_AUTH);
        close(fd);
    }
    coll_store_close(connect_ok(&info)); /* the store is unharmed */
    coll_store_server_stop(s);
}

/* H1/H3: a stranger that knows every public value (address, port, the
 * protocol) but not the secret cannot get past the hello, let alone GATHER
 * a slot or read the join table. */
static void test_stranger_cannot_join(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    int fd = raw_connect(&info);
    uint8_t h[COLL_STORE_HELLO_BYTES] = {0}, r[COLL_STORE_REP_HDR + COLL_AUTH_CHALLENGE_BYTES];
    put32(h, COLL_STORE_MAGIC);
    put32(h + 4, COLL_STORE_VERSION);
    put32(h + 8, 2);
    assert_int_equal(send(fd, h, sizeof h, MSG_NOSIGNAL), (ssize_t)sizeof h);
    assert_int_equal(recv(fd, r, sizeof r, MSG_WAITALL), (ssize_t)sizeof r);
    uint8_t guess[COLL_AUTH_MAC_BYTES + COLL_STORE_REQ_HDR];
    memset(guess, 0, sizeof guess);                       /* a made-up proof ... */
    put32(guess + COLL_AUTH_MAC_BYTES, COLL_STORE_MAGIC); /* ... and a GET behind it */
    put32(guess + COLL_AUTH_MAC_BYTES + 4, COLL_STORE_GET);
    assert_int_equal(send(fd, guess, sizeof guess, MSG_NOSIGNAL), (ssize_t)sizeof guess);
    assert_int_equal(reply_status(fd), COLL_ERR_AUTH);
    close(fd);
    /* a client with another secret refuses the store (it cannot prove ours) */
    coll_id_info_t bad = info;
    bad.secret[0] ^= 0x80;
    coll_store_t *c = NULL;
    assert_int_equal(coll_store_connect(&bad, 5.0, &c), COLL_ERR_AUTH);
    coll_store_server_stop(s);
}

/* H3: a connection that proved itself as rank r gathers into slot r only. */
static void test_gather_claim(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    coll_store_t *c = NULL;
    assert_int_equal(coll_store_connect_as(&info, 1, 5.0, &c), COLL_SUCCESS);
    assert_int_equal(coll_store_gather(c, "j/join", 3, 2, "x", 1), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "not the rank this connection proved itself as"));
    coll_store_close(c);
    assert_int_equal(coll_store_connect_as(&info, 2, 5.0, &c), COLL_SUCCESS);
    assert_int_equal(coll_store_gather(c, "j/join", 3, 2, "x", 1), COLL_SUCCESS);
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* M3: an authenticated client cannot grow the store past its cap: keys
 * count (they were free), and request bodies count from their header on, so
 * connections that each declare a 16 MiB value are refused once the cap would
 * be passed (the old store took them all, 16 MiB each). */
static void test_store_cap(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    uint64_t h0 = coll_store_server_held(s);
    coll_store_t *c = connect_ok(&info);
    char key[220];
    memset(key, 'k', sizeof key);
    for (int i = 0; i < 5000; i++) {
        snprintf(key + 200, 20, "%d", i);
        assert_int_equal(coll_store_set(c, key, "", 0), COLL_SUCCESS);
    }
    coll_store_close(c);
    usleep(50 * 1000);
    assert_true(coll_store_server_held(s) >= h0 + 5000ull * 200);
    enum { NC = (int)(COLL_STORE_MAX_TOTAL / COLL_STORE_MAX_VALUE) + 6 };
    int fds[NC], alive = 0;
    for (int i = 0; i < NC; i++) {
        fds[i] = raw_connect(&info);
        raw_hello(fds[i]);
        uint8_t h[COLL_STORE_REQ_HDR + 1];
        put32(h, COLL_STORE_MAGIC);
        put32(h + 4, COLL_STORE_SET);
        put32(h + 8, 1);
        put32(h + 12, COLL_STORE_MAX_VALUE);
        h[16] = 'v';
        assert_int_equal(send(fds[i], h, sizeof h, MSG_NOSIGNAL), (ssize_t)sizeof h);
    }
    int dead[NC];
    memset(dead, 0, sizeof dead);
    for (int w = 0; w < 100; w++) { /* up to 10 s (an ASan build on a loaded machine is slow to refuse) */
        usleep(100 * 1000);
        alive = 0;
        for (int i = 0; i < NC; i++) {
            struct pollfd p = {.fd = fds[i], .events = POLLIN};
            char b;
            if (!dead[i] && poll(&p, 1, 0) == 1 && recv(fds[i], &b, 1, MSG_DONTWAIT) <= 0)
                dead[i] = 1; /* EOF or reset */
            alive += !dead[i];
        }
        if (alive < NC - 1 && w >= 2)
            break;
    }
    assert_true(coll_store_server_held(s) <= COLL_STORE_MAX_TOTAL);
    assert_true(alive < NC - 1); /* the last ones were refused */
    assert_true(alive >= NC - 8);
    for (int i = 0; i < NC; i++)
        close(fds[i]);
    coll_store_server_stop(s);
}

static void test_hostile_clients(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    atomic_int stop = 0;
    worker_t w[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (worker_t){.info = &info, .stop = &stop};
        assert_int_equal(pthread_create(&t[i], NULL, busy_client, &w[i]), 0);
    }
    /* random bytes instead of a hello */
    int f_rand = raw_connect(&info);
    uint8_t junk[4096];
    srand(7);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)rand();
    (void)send(f_rand, junk, sizeof junk, MSG_NOSIGNAL);
    /* silent */
    int f_silent = raw_connect(&info);
    /* half a hello */
    int f_half = raw_connect(&info);
    assert_int_equal(send(f_half, junk, 10, MSG_NOSIGNAL), 10);
    /* good hello then a header claiming a 4 GiB value */
    int f_huge = raw_connect(&info);
    raw_hello(f_huge);
    uint8_t h[COLL_STORE_REQ_HDR];
    put32(h, COLL_STORE_MAGIC);
    put32(h + 4, COLL_STORE_SET);
    put32(h + 8, 1);
    put32(h + 12, 0xffffffffu);
    assert_int_equal(send(f_huge, h, sizeof h, MSG_NOSIGNAL), (ssize_t)sizeof h);
    /* good hello then a bad magic */
    int f_magic = raw_connect(&info);
    raw_hello(f_magic);
    put32(h, 0xdeadbeef);
    put32(h + 12, 1);
    assert_int_equal(send(f_magic, h, sizeof h, MSG_NOSIGNAL), (ssize_t)sizeof h);
    /* good hello then half a header: authenticated, may idle (not dropped at 5 s) */
    int f_partial = raw_connect(&info);
    raw_hello(f_partial);
    assert_int_equal(send(f_partial, h, 7, MSG_NOSIGNAL), 7);

    assert_true(time_to_close(f_rand, 2.0) >= 0);
    assert_true(time_to_close(f_huge, 2.0) >= 0);
    assert_true(time_to_close(f_magic, 2.0) >= 0);
    double t_silent = time_to_close(f_silent, COLL_STORE_HELLO_TIMEOUT_S + 3);
    assert_true(t_silent >= 0);
    assert_true(time_to_close(f_half, 1.0) >= 0); /* same deadline: already gone */
    assert_int_equal(time_to_close(f_partial, 0.2), -1);
    /* meanwhile the honest clients were served */
    atomic_store(&stop, 1);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].failures, 0);
        assert_true(w[i].rounds > 50);
    }
    close(f_rand), close(f_silent), close(f_half), close(f_huge), close(f_magic), close(f_partial);
    coll_store_t *c = connect_ok(&info);
    assert_int_equal(coll_store_set(c, "after", "1", 1), COLL_SUCCESS);
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* Many sockets at once, mostly strangers: legit clients still get in. */
static void test_many_connections(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    enum { N = 300 };
    int fds[N];
    for (int i = 0; i < N; i++)
        fds[i] = raw_connect(&info);
    coll_store_t *c = connect_ok(&info);
    assert_int_equal(coll_store_set(c, "x", "1", 1), COLL_SUCCESS);
    for (int i = 0; i < N; i++)
        close(fds[i]);
    assert_int_equal(coll_store_set(c, "x", "2", 1), COLL_SUCCESS);
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* ---- gather tables -------------------------------------------------------- */

static void test_gather_complete(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    enum { N = 5, LEN = 7 };
    getter_t g[2];
    pthread_t t[2];
    coll_store_t *c = NULL;
    park_cost_t pc = park_cost(s, &info, &c, "jobT/peers");
    for (int i = 0; i < 2; i++) { /* parked readers, answered with one shared value */
        g[i] = (getter_t){.info = &info, .key = "jobT/peers", .timeout = 10.0};
        assert_int_equal(pthread_create(&t[i], NULL, getter, &g[i]), 0);
    }
    wait_parked(s, pc, 2);
    usleep(300000); /* parked that long at least: waited > 0.1 below */
    const int order[N] = {3, 0, 4, 1, 2};
    for (int k = 0; k < N; k++) {
        char rec[LEN];
        memset(rec, 'a' + order[k], LEN);
        assert_int_equal(coll_store_gather(c, "jobT/peers", N, (uint32_t)order[k], rec, LEN), COLL_SUCCESS);
    }
    void *v = NULL;
    size_t l = 0;
    assert_int_equal(coll_store_get(c, "jobT/peers", 1.0, &v, &l), COLL_SUCCESS);
    assert_int_equal(l, N * LEN);
    for (int i = 0; i < N * LEN; i++)
        assert_int_equal(((char *)v)[i], 'a' + i / LEN);
    free(v);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(g[i].st, COLL_SUCCESS);
        assert_int_equal(g[i].len, N * LEN);
        assert_memory_equal(g[i].val, "aaaaaaabbbbbbbcc", sizeof g[i].val);
        assert_true(g[i].waited > 0.1);
    }
    /* complete: a further GATHER is refused; DEL removes it, a new table may start */
    assert_int_equal(coll_store_gather(c, "jobT/peers", N, 0, "xxxxxxx", LEN), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "holds a value"));
    assert_int_equal(coll_store_del(c, "jobT/peers"), COLL_SUCCESS);
    assert_int_equal(coll_store_try_get(c, "jobT/peers", &v, &l), COLL_ERR_TIMEOUT);
    assert_int_equal(coll_store_gather(c, "jobT/peers", 2, 1, "z", 1), COLL_SUCCESS);
    assert_int_equal(coll_store_del(c, "jobT/peers"), COLL_SUCCESS); /* an incomplete table */
    assert_int_equal(coll_store_gather(c, "jobT/peers", 3, 1, "zz", 2), COLL_SUCCESS);
    /* a 1-slot table of 0 bytes is complete at once */
    assert_int_equal(coll_store_gather(c, "jobT/one", 1, 0, NULL, 0), COLL_SUCCESS);
    assert_int_equal(coll_store_try_get(c, "jobT/one", &v, &l), COLL_SUCCESS);
    assert_int_equal(l, 0);
    free(v);
    uint64_t in = 0, out = 0, conns = 0, peak = 0;
    coll_store_server_stats(s, &in, &out, &conns, &peak);
    assert_true(in > 0 && out > 0 && conns >= 3 && peak >= N * LEN);
    coll_store_close(c);
    coll_store_server_stop(s);
}

static void test_gather_bad(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    coll_store_t *c = connect_ok(&info);
    assert_int_equal(coll_store_gather(c, "g", 4, 1, "abcd", 4), COLL_SUCCESS);
    /* the same slot twice */
    assert_int_equal(coll_store_gather(c, "g", 4, 1, "abcd", 4), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "slot 1 filled twice"));
    /* another length, another n, an index out of range */
    assert_int_equal(coll_store_gather(c, "g", 4, 2, "abc", 3), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(),
                           "4 slots of 3 bytes differ from the table's 4 "
                           "slots of 4 bytes"));
    assert_int_equal(coll_store_gather(c, "g", 5, 2, "abcd", 4), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "differ"));
    assert_int_equal(coll_store_gather(c, "g", 4, 4, "abcd", 4), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "slot 4 out of range (4 slots)"));
    assert_int_equal(coll_store_gather(c, "h", 0, 0, "abcd", 4), COLL_ERR_INVALID_ARG);
    /* over the value limit; a counter key is not a table, nor a table a counter */
    assert_int_equal(coll_store_gather(c, "h", 1u << 20, 0, "abcdefghijklmnopq", 17), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "value limit"));
    int64_t n;
    assert_int_equal(coll_store_add(c, "g", 1, &n), COLL_ERR_INVALID_ARG);
    assert_int_equal(coll_store_add(c, "ctr", 1, &n), COLL_SUCCESS);
    assert_int_equal(coll_store_gather(c, "ctr", 2, 0, "x", 1), COLL_ERR_INVALID_ARG);
    /* the connection and the table are fine after all that */
    for (uint32_t i = 0; i < 4; i++)
        if (i != 1)
            assert_int_equal(coll_store_gather(c, "g", 4, i, "wxyz", 4), COLL_SUCCESS);
    void *v = NULL;
    size_t l = 0;
    assert_int_equal(coll_store_get(c, "g", 1.0, &v, &l), COLL_SUCCESS);
    assert_int_equal(l, 16);
    assert_memory_equal(v, "wxyzabcdwxyzwxyz", 16);
    free(v);
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* A GET of an incomplete table that times out names the missing slots. */
static void test_gather_timeout_text(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    coll_store_t *c = connect_ok(&info);
    const uint32_t have[] = {0, 1, 3};
    for (int i = 0; i < 3; i++)
        assert_int_equal(coll_store_gather(c, "j/peers", 40, have[i], "r", 1), COLL_SUCCESS);
    void *v = NULL;
    size_t l = 0;
    double t0 = now_s();
    assert_int_equal(coll_store_get(c, "j/peers", 0.3, &v, &l), COLL_ERR_TIMEOUT);
    assert_true(now_s() - t0 >= 0.25 && now_s() - t0 < 2.0);
    assert_non_null(strstr(coll_last_error(), "'j/peers'"));
    assert_non_null(strstr(coll_last_error(),
                           "3 of 40 joined; missing: 2, 4, 5, 6, 7, 8, 9, 10, "
                           "11, 12, 13, 14, 15, 16, 17, 18, ..."));
    assert_null(strstr(coll_last_error(), "18, 19")); /* 16 listed at most (the address may hold a 19) */
    assert_int_equal(coll_store_try_get(c, "j/peers", &v, &l), COLL_ERR_TIMEOUT);
    assert_non_null(v); /* the store's text about the incomplete table */
    assert_non_null(strstr(v, "3 of 40 joined; missing: 2, 4,"));
    free(v);
    v = NULL;
    /* the connection is still usable; a short list has no "..." */
    for (uint32_t i = 4; i < 40; i++)
        if (i != 9 && i != 33)
            assert_int_equal(coll_store_gather(c, "j/peers", 40, i, "r", 1), COLL_SUCCESS);
    assert_int_equal(coll_store_get(c, "j/peers", 0.05, &v, &l), COLL_ERR_TIMEOUT);
    assert_non_null(strstr(coll_last_error(), "37 of 40 joined; missing: 2, 9, 33"));
    assert_null(strstr(coll_last_error(), "..."));
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* FAIL of the job answers a GET parked on an incomplete gather table. */
static void test_gather_fail(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    coll_store_t *c = connect_ok(&info);
    assert_int_equal(coll_store_gather(c, "jobF/peers", 3, 0, "a", 1), COLL_SUCCESS);
    getter_t g = {.info = &info, .key = "jobF/peers", .timeout = 30.0};
    pthread_t t;
    coll_store_t *c1 = NULL;
    park_cost_t pc = park_cost(s, &info, &c1, g.key); /* an incomplete table: TIMEOUT, its text */
    coll_store_close(c1);
    assert_int_equal(pthread_create(&t, NULL, getter, &g), 0);
    wait_parked(s, pc, 1); /* parked on the table: the FAIL answers it */
    assert_int_equal(coll_store_fail(c, "jobF", "rank 2 failed: no GPU"), COLL_SUCCESS);
    pthread_join(t, NULL);
    assert_int_equal(g.st, COLL_ERR_ABORTED);
    assert_true(g.waited < 5.0);
    assert_non_null(strstr(g.err, "rank 2 failed: no GPU"));
    /* the probe of a waiting rank: ABORTED + reason at once */
    void *v = NULL;
    size_t l = 0;
    assert_int_equal(coll_store_try_get(c, "jobF/!probe", &v, &l), COLL_ERR_ABORTED);
    assert_non_null(strstr(coll_last_error(), "rank 2 failed: no GPU"));
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* 2,000 clients connected at once (more than the old cap of half of that
 * times two), all parked on one key, all answered by one SET. */
static void raw_request(int fd, uint32_t op, const char *key, const void *val, uint32_t vlen)
{
    uint8_t f[COLL_STORE_REQ_HDR + 64];
    size_t kl = strlen(key);
    put32(f, COLL_STORE_MAGIC);
    put32(f + 4, op);
    put32(f + 8, (uint32_t)kl);
    put32(f + 12, vlen);
    memcpy(f + COLL_STORE_REQ_HDR, key, kl);
    if (vlen)
        memcpy(f + COLL_STORE_REQ_HDR + kl, val, vlen);
    size_t n = COLL_STORE_REQ_HDR + kl + vlen;
    assert_int_equal(send(fd, f, n, MSG_NOSIGNAL), (ssize_t)n);
}

static void test_2000_clients(void **state)
{
    (void)state;
    enum { N = 2000 };
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 2 * N + 100) {
        print_message("hard open-file limit %llu < %d: skipped\n", (unsigned long long)rl.rlim_max, 2 * N + 100);
        skip();
    }
    struct rlimit old = rl;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 2 * N + 100 ? 2 * N + 100 : rl.rlim_max;
    if (rl.rlim_cur < old.rlim_cur)
        rl.rlim_cur = old.rlim_cur;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    int *fds = malloc(N * sizeof *fds);
    assert_non_null(fds);
    for (int i = 0; i < N; i++) { /* all connected and parked at once */
        fds[i] = raw_connect(&info);
        raw_hello(fds[i]);
        raw_request(fds[i], COLL_STORE_GET, "wide", NULL, 0);
    }
    coll_store_t *c = connect_ok(&info);
    assert_int_equal(coll_store_set(c, "wide", "0123456789", 10), COLL_SUCCESS);
    for (int i = 0; i < N; i++) {
        uint8_t r[COLL_STORE_REP_HDR + 10];
        assert_int_equal(recv(fds[i], r, sizeof r, MSG_WAITALL), (ssize_t)sizeof r);
        assert_int_equal(r[4], COLL_SUCCESS);
        assert_int_equal(r[8], 10);
        assert_memory_equal(r + COLL_STORE_REP_HDR, "0123456789", 10);
        close(fds[i]);
    }
    free(fds);
    uint64_t conns = 0, peak = 0;
    coll_store_server_stats(s, NULL, NULL, &conns, &peak);
    assert_true(conns >= N + 1);
    assert_true(peak < 4096); /* one value shared by the 2,000 replies */
    coll_store_close(c);
    coll_store_server_stop(s);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

static void test_decode_frame(void **state)
{
    (void)state;
    uint8_t f[64];
    size_t used = 99;
    put32(f, COLL_STORE_MAGIC);
    put32(f + 4, COLL_STORE_SET);
    put32(f + 8, 3);
    put32(f + 12, 2);
    memcpy(f + 16, "keyv1", 5);
    assert_int_equal(coll_store_decode_frame(f, 21, &used), COLL_SUCCESS);
    assert_int_equal(used, 21);
    assert_int_equal(coll_store_decode_frame(f, 20, &used), COLL_SUCCESS);
    assert_int_equal(used, 0); /* incomplete */
    assert_int_equal(coll_store_decode_frame(f, 5, &used), COLL_SUCCESS);
    assert_int_equal(used, 0);
    put32(f + 12, COLL_STORE_MAX_VALUE + 1);
    assert_int_equal(coll_store_decode_frame(f, 21, &used), COLL_ERR_INVALID_ARG);
    put32(f + 12, 2);
    put32(f + 8, 0);
    assert_int_equal(coll_store_decode_frame(f, 21, &used), COLL_ERR_INVALID_ARG);
    put32(f + 8, COLL_STORE_MAX_KEY + 1);
    assert_int_equal(coll_store_decode_frame(f, 21, &used), COLL_ERR_INVALID_ARG);
    put32(f + 8, 3);
    put32(f + 4, 77);
    assert_int_equal(coll_store_decode_frame(f, 21, &used), COLL_ERR_INVALID_ARG);
    put32(f + 4, COLL_STORE_ADD); /* ADD needs exactly 8 bytes */
    assert_int_equal(coll_store_decode_frame(f, 21, &used), COLL_ERR_INVALID_ARG);
    put32(f + 4, COLL_STORE_BARRIER);
    put32(f + 12, 8);
    memset(f + 19, 0, 8); /* n = 0 */
    assert_int_equal(coll_store_decode_frame(f, 27, &used), COLL_ERR_INVALID_ARG);
    put32(f, 0);
    assert_int_equal(coll_store_decode_frame(f, 21, &used), COLL_ERR_INVALID_ARG);
    /* GATHER: u32 n, u32 idx, then the payload: at least 8 bytes; n and idx are
     * the table's business (answered, not dropped) */
    put32(f, COLL_STORE_MAGIC);
    put32(f + 4, COLL_STORE_GATHER);
    put32(f + 8, 3);
    put32(f + 12, 7);
    assert_int_equal(coll_store_decode_frame(f, 26, &used), COLL_ERR_INVALID_ARG);
    put32(f + 12, 8);
    put32(f + 19, 0);
    put32(f + 23, 5);
    assert_int_equal(coll_store_decode_frame(f, 27, &used), COLL_SUCCESS);
    assert_int_equal(used, 27);
    put32(f + 12, 11);
    assert_int_equal(coll_store_decode_frame(f, 29, &used), COLL_SUCCESS);
    assert_int_equal(used, 0);
    assert_int_equal(coll_store_decode_frame(f, 30, &used), COLL_SUCCESS);
    assert_int_equal(used, 30);
    /* random input never reads out of bounds (run under ASan in the sanitizer build) */
    srand(11);
    for (int it = 0; it < 200000; it++) {
        size_t n = (size_t)(rand() % 40);
        uint8_t *b = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)rand();
        if (n >= 4 && rand() % 2)
            put32(b, COLL_STORE_MAGIC);
        if (coll_store_decode_frame(b, n, &used) == COLL_SUCCESS)
            assert_true(used <= n);
        free(b);
    }
}

/* ---- collectives over N processes ------------------------------------------ */

static int child_run(const coll_id_info_t *info, int rank, int n, atomic_int *arrived)
{
    coll_bootstrap_t bs;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "t%d", n);
    /* the join carries a record per rank */
    int rec = rank * 7 + 1, *recs = calloc((size_t)n, sizeof *recs);
    if (coll_bootstrap_init(&bs, info, prefix, rank, n, 20.0, NULL, &rec, sizeof rec, recs) != COLL_SUCCESS)
        return 11;
    for (int r = 0; r < n; r++)
        if (recs[r] != r * 7 + 1)
            return 19;
    free(recs);
    for (int round = 0; round < 5; round++) {
        /* allgather of len bytes per rank, in place on odd rounds */
        size_t len = (size_t)(round * 97 + 1);
        uint8_t *out = malloc(len * (size_t)n), *mine = malloc(len);
        for (size_t i = 0; i < len; i++)
            mine[i] = (uint8_t)(rank * 13 + round + i);
        const uint8_t *src = mine;
        if (round % 2) {
            memcpy(out + (size_t)rank * len, mine, len);
            src = out + (size_t)rank * len;
        }
        if (coll_bootstrap_allgather(&bs, src, len, out) != COLL_SUCCESS)
            return 12;
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < len; i++)
                if (out[(size_t)r * len + i] != (uint8_t)(r * 13 + round + i))
                    return 13;
        free(out);
        free(mine);
        /* barrier: nobody leaves before everybody arrived */
        atomic_fetch_add(arrived, 1);
        if (coll_bootstrap_barrier(&bs) != COLL_SUCCESS) {
            fprintf(stderr, "rank %d of %d: %s\n", rank, n, coll_last_error());
            return 14;
        }
        if (atomic_load(arrived) < n * (round + 1))
            return 15;
        /* bcast from a rotating root */
        int root = round % n;
        char buf[40];
        memset(buf, rank == root ? 'A' + round : 0, sizeof buf);
        if (coll_bootstrap_bcast(&bs, buf, sizeof buf, root) != COLL_SUCCESS)
            return 16;
        for (size_t i = 0; i < sizeof buf; i++)
            if (buf[i] != 'A' + round)
                return 17;
    }
    /* max of a per-rank vector */
    int64_t v[3] = {rank, -rank, rank == n - 1 ? 42 : 0};
    if (coll_bootstrap_allreduce_max(&bs, v, 3) != COLL_SUCCESS)
        return 20;
    if (v[0] != n - 1 || v[1] != 0 || v[2] != 42)
        return 21;
    if (coll_bootstrap_barrier(&bs) != COLL_SUCCESS)
        return 18;
    coll_bootstrap_close(&bs);
    return 0;
}

typedef struct {
    const coll_id_info_t *info;
    int n;
    atomic_int *arrived;
} proc_arg_t;

static int proc_rank(int rank, void *arg)
{
    const proc_arg_t *pa = arg;
    alarm(60);
    return child_run(pa->info, rank, pa->n, pa->arrived);
}

static void run_procs(const coll_id_info_t *info, int n)
{
    atomic_int *arrived = mmap(NULL, sizeof *arrived, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(arrived != MAP_FAILED);
    atomic_init(arrived, 0);
    proc_arg_t pa = {info, n, arrived};
    assert_int_equal(cb_ranks_run(n, proc_rank, &pa, "test_bootstrap"), 0);
    munmap(arrived, sizeof *arrived);
}

static void assert_absent(coll_store_t *c, const char *key)
{
    void *v;
    size_t l;
    assert_int_equal(coll_store_get(c, key, 0.01, &v, &l), COLL_ERR_TIMEOUT);
}

static void test_collectives_procs(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    for (int n = 1; n <= 8; n++)
        run_procs(&info, n);
    /* keys of finished calls were deleted */
    coll_store_t *c = connect_ok(&info);
    assert_absent(c, "t4/join");
    assert_absent(c, "t8/join");
    coll_store_close(c);
    coll_store_server_stop(s);
}

/* Threads of one process, over a store made by coll_get_unique_id; one piece
 * large enough (n * len > 16 MiB) for the everyone-reads-everyone path. */
typedef struct {
    coll_id_info_t info;
    int rank, n;
    size_t len;
    coll_status_t st;
    int bad;
} thr_arg_t;

static void *thr_main(void *arg)
{
    thr_arg_t *a = arg;
    coll_bootstrap_t bs;
    a->st = coll_bootstrap_init(&bs, &a->info, "thr", a->rank, a->n, 30.0, NULL, NULL, 0, NULL);
    uint8_t *mine = malloc(a->len), *out = malloc(a->len * (size_t)a->n);
    for (size_t i = 0; i < a->len; i++)
        mine[i] = (uint8_t)(a->rank + i);
    if (a->st == COLL_SUCCESS)
        a->st = coll_bootstrap_allgather(&bs, mine, a->len, out);
    for (int r = 0; a->st == COLL_SUCCESS && r < a->n; r++)
        for (size_t i = 0; i < a->len; i += 4093)
            if (out[(size_t)r * a->len + i] != (uint8_t)(r + i))
                a->bad = 1;
    if (a->st == COLL_SUCCESS)
        a->st = coll_bootstrap_barrier(&bs);
    free(mine);
    free(out);
    coll_bootstrap_close(&bs);
    return NULL;
}

static void test_collectives_threads_big(void **state)
{
    (void)state;
    coll_unique_id_t id;
    coll_id_info_t info;
    assert_int_equal(coll_get_unique_id(&id), COLL_SUCCESS);
    assert_int_equal(coll_id_decode(&id, &info), COLL_SUCCESS);
    enum { N = 3 };
    thr_arg_t a[N];
    pthread_t t[N];
    for (int r = 0; r < N; r++) {
        a[r] = (thr_arg_t){.info = info, .rank = r, .n = N, .len = COLL_STORE_MAX_VALUE / N + 1};
        assert_int_equal(pthread_create(&t[r], NULL, thr_main, &a[r]), 0);
    }
    for (int r = 0; r < N; r++) {
        pthread_join(t[r], NULL);
        assert_int_equal(a[r].st, COLL_SUCCESS);
        assert_int_equal(a[r].bad, 0);
    }
    coll_store_t *c = connect_ok(&info);
    assert_absent(c, "thr/join");
    coll_store_close(c);
    coll_unique_id_release(&id);
}

static void test_barrier_timeout(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    coll_store_t *c = connect_ok(&info);
    coll_bootstrap_t bs;
    double t0 = now_s();
    /* rank 1 never joins: rank 0 stops at its timeout, naming the join */
    assert_int_equal(coll_bootstrap_init(&bs, &info, "lonely", 0, 2, 0.3, NULL, NULL, 0, NULL), COLL_ERR_TIMEOUT);
    assert_true(now_s() - t0 < 2.0);
    assert_non_null(strstr(coll_last_error(), "join"));
    /* so does a rank whose parent never connects */
    t0 = now_s();
    assert_int_equal(coll_bootstrap_init(&bs, &info, "lonely2", 1, 2, 0.3, NULL, NULL, 0, NULL), COLL_ERR_TIMEOUT);
    assert_true(now_s() - t0 < 4.0); /* + a probe interval and the grace that lets the root speak first */
    assert_non_null(strstr(coll_last_error(), "1 of 2 joined; missing: 0"));
    assert_non_null(strstr(coll_last_error(), "rank 0"));
    assert_int_equal(coll_bootstrap_init(&bs, &info, "x", 2, 2, 1.0, NULL, NULL, 0, NULL), COLL_ERR_INVALID_ARG);
    assert_int_equal(coll_bootstrap_barrier(&bs), COLL_ERR_INVALID_ARG); /* not joined */
    coll_store_close(c);
    coll_store_server_stop(s);
}

static void test_abort_flag(void **state)
{
    (void)state;
    coll_id_info_t info;
    coll_store_server_t *s = start_server("127.0.0.1", &info);
    coll_store_t *c = connect_ok(&info);
    static atomic_int flag;
    atomic_store(&flag, 1);
    coll_store_set_abort_flag(c, &flag);
    void *v;
    size_t l;
    assert_int_equal(coll_store_get(c, "never", 0, &v, &l), COLL_ERR_ABORTED);
    /* unusable afterwards, with a message saying why */
    assert_int_equal(coll_store_set(c, "k", "v", 1), COLL_ERR_NETWORK);
    assert_non_null(strstr(coll_last_error(), "aborted"));
    coll_store_close(c);
    coll_store_server_stop(s);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256),
        cmocka_unit_test(test_id_roundtrip),
        cmocka_unit_test(test_unique_id_api),
        cmocka_unit_test(test_store_ops),
        cmocka_unit_test(test_get_waits_for_set),
        cmocka_unit_test(test_job_failed),
        cmocka_unit_test(test_wrong_secret),
        cmocka_unit_test(test_replay_refused),
        cmocka_unit_test(test_stranger_cannot_join),
        cmocka_unit_test(test_gather_claim),
        cmocka_unit_test(test_store_cap),
        cmocka_unit_test(test_connect_refused_then_retry),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_hostile_clients),
        cmocka_unit_test(test_many_connections),
        cmocka_unit_test(test_gather_complete),
        cmocka_unit_test(test_gather_bad),
        cmocka_unit_test(test_gather_timeout_text),
        cmocka_unit_test(test_gather_fail),
        cmocka_unit_test(test_2000_clients),
        cmocka_unit_test(test_decode_frame),
        cmocka_unit_test(test_collectives_procs),
        cmocka_unit_test(test_collectives_threads_big),
        cmocka_unit_test(test_barrier_timeout),
        cmocka_unit_test(test_abort_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
