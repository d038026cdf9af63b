/*
 * test_copy.c - coll_copy_nt (core/copy.h) copies exactly what memcpy copies:
 * every length 0..300 at every source and destination misalignment 0..15,
 * then large copies (17 MiB + 13, misaligned both sides); guard bytes on both
 * sides of the destination stay untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/copy.h"

#define GUARD 64

static void fill(unsigned char *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (unsigned char)(seed >> 24);
    }
}

/* One copy of n bytes, src at misalignment sa, dst at da: dst equals src, guards 0xA5. */
static void one(unsigned char *sbuf, unsigned char *dbuf, size_t n, size_t sa, size_t da)
{
    unsigned char *src = sbuf + sa, *dst = dbuf + GUARD + da;
    fill(src, n, (uint32_t)(n * 31 + sa * 7 + da));
    memset(dbuf, 0xA5, GUARD + da + n + GUARD);
    coll_copy_nt(dst, src, n);
    assert_memory_equal(dst, src, n);
    for (size_t i = 0; i < GUARD + da; i++)
        assert_int_equal(dbuf[i], 0xA5);
    for (size_t i = 0; i < GUARD; i++)
        assert_int_equal(dst[n + i], 0xA5);
}

static void test_small_all_alignments(void **state)
{
    (void)state;
    unsigned char *s = aligned_alloc(64, 512), *d = aligned_alloc(64, 512);
    assert_non_null(s);
    assert_non_null(d);
    for (size_t n = 0; n <= 300; n++)
        for (size_t sa = 0; sa < 16; sa++)
            for (size_t da = 0; da < 16; da++)
                one(s, d, n, sa, da);
    free(s);
    free(d);
}

static void test_large_misaligned(void **state)
{
    (void)state;
    size_t n = (17u << 20) + 13, a = (n + 3 * GUARD + 63) & ~(size_t)63; /* aligned_alloc: a multiple of 64 */
    unsigned char *s = aligned_alloc(64, a), *d = aligned_alloc(64, a);
    assert_non_null(s);
    assert_non_null(d);
    one(s, d, n, 5, 9);
    one(s, d, n, 0, 0);
    free(s);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_all_alignments),
        cmocka_unit_test(test_large_misaligned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
