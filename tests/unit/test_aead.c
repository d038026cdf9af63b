/*
 * test_aead.c - the records of COLL_ENCRYPT=1 (src/core/aead.c) and their keys
 * (coll_auth_data_key): a record opens under its key, counter and header only;
 * a wrong key, a wrong counter (a record replayed, dropped or reordered), an
 * altered header (AAD), ciphertext or tag is refused; keys differ per
 * connection and direction, and the open run's zero key gives none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/aead.h"
#include "core/auth.h"

#define N 1000

static uint8_t key1[32], key2[32], hdr[16], msg[N], rec[N + COLL_AEAD_TAG_BYTES], out[N + COLL_AEAD_TAG_BYTES];

static void setup_data(void)
{
    for (int i = 0; i < 32; i++)
        key1[i] = (uint8_t)(i + 1), key2[i] = (uint8_t)(i + 2);
    for (int i = 0; i < 16; i++)
        hdr[i] = (uint8_t)(0xa0 + i);
    for (int i = 0; i < N; i++)
        msg[i] = (uint8_t) "collbench-plain!"[i % 16];
}

/* A sender and a receiver context under keys ks / kr, counters at 0. */
static void pair(coll_aead_t *s, coll_aead_t *r, const uint8_t *ks, const uint8_t *kr)
{
    assert_int_equal(coll_aead_init(s, ks), COLL_SUCCESS);
    assert_int_equal(coll_aead_init(r, kr), COLL_SUCCESS);
}

static void test_roundtrip(void **state)
{
    (void)state;
    coll_aead_t s, r;
    setup_data();
    pair(&s, &r, key1, key1);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(coll_aead_seal(&s, hdr, 16, msg, N, rec), 0);
        assert_null(memmem(rec, N, "collbench-plain!", 16)); /* no plaintext left */
        assert_int_equal(coll_aead_open(&r, hdr, 16, rec, N, out), 1);
        assert_memory_equal(out, msg, N);
    }
    assert_int_equal(s.ctr, 3);
    assert_int_equal(r.ctr, 3);
    /* an empty record (the end header's) and in place */
    assert_int_equal(coll_aead_seal(&s, hdr, 16, msg, 0, rec), 0);
    assert_int_equal(coll_aead_open(&r, hdr, 16, rec, 0, rec), 1);
    memcpy(out, msg, N);
    assert_int_equal(coll_aead_seal(&s, hdr, 16, out, N, out), 0);
    assert_int_equal(coll_aead_open(&r, hdr, 16, out, N, out), 1);
    assert_memory_equal(out, msg, N);
    coll_aead_free(&s);
    coll_aead_free(&r);
}

static void test_refused(void **state)
{
    (void)state;
    coll_aead_t s, r;
    setup_data();
    pair(&s, &r, key1, key2); /* wrong key */
    assert_int_equal(coll_aead_seal(&s, hdr, 16, msg, N, rec), 0);
    assert_int_equal(coll_aead_open(&r, hdr, 16, rec, N, out), 0);
    assert_int_equal(r.ctr, 0); /* a refused record does not advance */
    coll_aead_free(&s), coll_aead_free(&r);

    pair(&s, &r, key1, key1); /* wrong counter: record 1 where 0 is due */
    assert_int_equal(coll_aead_seal(&s, hdr, 16, msg, N, rec), 0);
    assert_int_equal(coll_aead_seal(&s, hdr, 16, msg, N, rec), 0);
    assert_int_equal(coll_aead_open(&r, hdr, 16, rec, N, out), 0);
    r.ctr = 1;
    assert_int_equal(coll_aead_open(&r, hdr, 16, rec, N, out), 1);
    assert_int_equal(coll_aead_open(&r, hdr, 16, rec, N, out), 0); /* replayed */
    coll_aead_free(&s), coll_aead_free(&r);

    uint8_t h2[16];
    for (int what = 0; what < 3; what++) { /* altered AAD, ciphertext, tag */
        pair(&s, &r, key1, key1);
        assert_int_equal(coll_aead_seal(&s, hdr, 16, msg, N, rec), 0);
        memcpy(h2, hdr, 16);
        if (what == 0)
            h2[3] ^= 1; /* the chunk's offset */
        else
            rec[what == 1 ? N / 2 : N + 5] ^= 0x40;
        assert_int_equal(coll_aead_open(&r, h2, 16, rec, N, out), 0);
        coll_aead_free(&s), coll_aead_free(&r);
    }

    pair(&s, &r, key1, key1); /* the counter never wraps */
    s.ctr = UINT64_MAX;
    assert_int_equal(coll_aead_seal(&s, hdr, 16, msg, N, rec), -1);
    coll_aead_free(&s), coll_aead_free(&r);
}

static void test_keys(void **state)
{
    (void)state;
    uint8_t nc[32], na[32], k[4][32], zero[32] = {0};
    setup_data();
    memset(nc, 1, 32), memset(na, 2, 32);
    coll_auth_bind_t b = {.role = COLL_AUTH_DATA, .job = 7, .from = 0, .to = 1, .idx = 0, .count = 2};
    assert_int_equal(coll_auth_data_key(key1, &b, nc, na, k[0]), 0);
    b.idx = 1; /* another connection of the same direction */
    assert_int_equal(coll_auth_data_key(key1, &b, nc, na, k[1]), 0);
    b.idx = 0, b.from = 1, b.to = 0; /* the other direction */
    assert_int_equal(coll_auth_data_key(key1, &b, nc, na, k[2]), 0);
    b.from = 0, b.to = 1, na[0] ^= 1; /* the same binding, a fresh handshake */
    assert_int_equal(coll_auth_data_key(key1, &b, nc, na, k[3]), 0);
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            assert_memory_not_equal(k[i], k[j], 32);
    uint8_t mac[32];
    na[0] ^= 1;
    coll_auth_mac(key1, COLL_AUTH_CONNECTOR, &b, nc, na, mac); /* not a MAC of the handshake */
    assert_memory_not_equal(mac, k[0], 32);
    assert_int_equal(coll_auth_data_key(zero, &b, nc, na, k[0]), -1); /* open run */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
