/*
 * copy.c - coll_copy_nt (copy.h): 64 bytes per step, unaligned loads, aligned
 * streaming stores after a head copied with memcpy up to the destination's
 * next 16-byte boundary; the tail (< 64 bytes) by memcpy; one sfence at the end.
 * And coll_llc_bytes: the cache size that decides where streaming pays;
 * coll_thp_mode: whether large user buffers come with 2 MiB pages.
 */
#include "core/copy.h"

#include "core/config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

uint64_t coll_llc_bytes(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    unsigned long long v = 0;
    char unit = 0;
    if (!f)
        return 0;
    int got = fscanf(f, "%llu%c", &v, &unit);
    fclose(f);
    if (got < 1)
        return 0;
    return got == 2 && unit == 'K' ? v << 10 : got == 2 && unit == 'M' ? v << 20 : v;
}

int coll_thp_mode(void)
{
    char line[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return COLL_THP_NEVER;
    if (!fgets(line, sizeof line, f))
        line[0] = 0;
    fclose(f);
    return strstr(line, "[always]") ? COLL_THP_ALWAYS : strstr(line, "[madvise]") ? COLL_THP_MADVISE : COLL_THP_NEVER;
}

int coll_buf_huge_cfg(void)
{
    const char *v = coll_cfg_str(COLL_CFG_BUF_HUGE);
    return !strcmp(v, "auto") ? coll_thp_mode() == COLL_THP_ALWAYS : !strcmp(v, "1");
}

/* Reads bytes that are no object of this program's (a loaded object's padding
 * between globals, pages peers write): not instrumented by the sanitizers. */
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize("address", "thread", "undefined")))
#endif
void coll_touch_pages(const void *p, size_t n)
{
    const volatile char *c = p;
    if (n == 0)
        return;
    for (size_t o = 0; o < n; o += 4096)
        (void)c[o];
    (void)c[n - 1]; /* an unaligned end's last page */
}

#if defined(__x86_64__) || defined(__SSE2__)
#include <emmintrin.h>

void coll_copy_nt(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
}
#else
void coll_copy_nt(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
#endif
