/*
 * test_huge_buf.c - the test tools' private buffers (tools/common/huge_buf.h):
 * alignment, whole mappings freed, and 2 MiB pages where the kernel's
 * transparent huge pages are on (enabled = madvise or always), read back
 * from /proc/self/smaps; none when COLL_TEST_HUGE=0's advice is withheld
 * and the kernel only backs advised memory (madvise).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../tools/common/huge_buf.h"
#include "core/copy.h"

#define MiB ((size_t)1 << 20)

/* AnonHugePages of the mapping that contains address p, kB; -1 if not found. */
static long huge_kb(uintptr_t p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    int in = 0;
    long kb = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = p >= lo && p < hi;
            continue;
        }
        if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

static void test_small_sizes(void **state)
{
    (void)state;
    size_t sizes[] = {0, 1, 64, 4096, 2 * MiB - 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int huge = 0; huge <= 1; huge++) {
            char *p = cb_buf_alloc(sizes[i], huge);
            assert_non_null(p);
            uintptr_t at = (uintptr_t)p;                                 /* compared after the free */
            assert_int_equal((uintptr_t)p % (huge ? 2 * MiB : 4096), 0); /* huge: always a whole 2 MiB page */
            if (sizes[i])
                memset(p, 0x5a, sizes[i]);
            cb_buf_free(p, sizes[i], huge);
            if (huge) /* its own mapping, gone (a small unadvised one is in the heap) */
                assert_int_equal(huge_kb(at), -1);
        }
    }
    cb_buf_free(NULL, 64 * MiB, 1); /* ignored */
}

/* From 2 MiB: 2 MiB-aligned, the whole rounded-up length usable, and
 * nothing left mapped after the free (the address no longer in smaps). */
static void test_large_aligned_and_unmapped(void **state)
{
    (void)state;
    size_t sizes[] = {2 * MiB, 2 * MiB + 1, 64 * MiB + 4096};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int huge = 0; huge <= 1; huge++) {
            char *p = cb_buf_alloc(sizes[i], huge);
            assert_non_null(p);
            uintptr_t at = (uintptr_t)p; /* compared after the free */
            assert_int_equal((uintptr_t)p % (2 * MiB), 0);
            memset(p, 0xa5, cb_buf_map_len(sizes[i]));
            assert_true(huge_kb(at) >= 0);
            cb_buf_free(p, sizes[i], huge);
            assert_int_equal(huge_kb(at), -1);
        }
    }
}

/* Where the kernel has THP, an advised 16 MiB buffer gets 2 MiB pages once
 * touched (defrag compacts for advised memory; one page is enough to show
 * the advice reached the kernel). Under "madvise" an unadvised one gets none. */
static void test_huge_pages_backing(void **state)
{
    (void)state;
    int mode = coll_thp_mode(); /* the library's reader of transparent_hugepage/enabled */
    size_t n = 16 * MiB;
    char *h = cb_buf_alloc(n, 1), *s = cb_buf_alloc(n, 0);
    assert_non_null(h);
    assert_non_null(s);
    memset(h, 1, n);
    memset(s, 1, n);
    long hk = huge_kb((uintptr_t)h), sk = huge_kb((uintptr_t)s);
    static const char *const names[] = {"never", "madvise", "always"};
    print_message("THP %s: advised %ld kB, unadvised %ld kB of huge pages\n", names[mode], hk, sk);
    if (mode == COLL_THP_NEVER) {
        assert_int_equal(hk, 0);
    } else {
        assert_true(hk >= 2048);
        if (mode == COLL_THP_MADVISE)
            assert_int_equal(sk, 0);
    }
    cb_buf_free(h, n, 1);
    cb_buf_free(s, n, 0);
}

static void test_env_switch(void **state)
{
    (void)state;
    assert_int_equal(unsetenv("COLL_TEST_HUGE"), 0);
    assert_int_equal(cb_buf_huge_env(), 1);
    assert_int_equal(setenv("COLL_TEST_HUGE", "0", 1), 0);
    assert_int_equal(cb_buf_huge_env(), 0);
    assert_int_equal(setenv("COLL_TEST_HUGE", "1", 1), 0);
    assert_int_equal(cb_buf_huge_env(), 1);
    assert_int_equal(unsetenv("COLL_TEST_HUGE"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_sizes),
        cmocka_unit_test(test_large_aligned_and_unmapped),
        cmocka_unit_test(test_huge_pages_backing),
        cmocka_unit_test(test_env_switch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
