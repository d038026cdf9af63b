/*
 * test_reduce.c - reduction kernels and datatype names.
 *
 * Every kernel variant available on this CPU (generic, avx2, avx512, forced
 * with coll_reduce_force_isa as users would) is compared with the scalar
 * reference for every op x dtype: odd lengths, unaligned pointers, out == a,
 * out == b, out == a == b, random bits plus NaN/inf/-0.0/subnormals, guard
 * bytes around the output. The k-input reduction (coll_reduce_multi and its
 * streaming form) likewise against the reference applied input by input, in
 * order. Then exact checks: integer wrap-around, IEEE
 * max/min, fp16/bf16 conversions exhaustively over all 65536 patterns and
 * round-to-nearest-even at every midpoint between adjacent values.
 */
#include <cpuid.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll.h"
#include "core/reduce.h"

static const char *const all_isas[] = {"generic", "avx2", "avx512"};
#define N_ISAS (sizeof all_isas / sizeof all_isas[0])

static const size_t lengths[] = {0,  1,  3,  7,  8,   9,   15,  16,  17,  31,   32,
                                 33, 63, 64, 65, 127, 128, 129, 255, 257, 1000, 4097};
#define N_LENGTHS (sizeof lengths / sizeof lengths[0])

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng_state = x;
    return x;
}

static int is_float(coll_dtype_t dt)
{
    return dt == COLL_FP16 || dt == COLL_BF16 || dt == COLL_FP32 || dt == COLL_FP64;
}

static uint64_t get_bits(coll_dtype_t dt, const unsigned char *p)
{
    uint64_t v = 0;
    memcpy(&v, p, coll_dtype_size(dt)); /* little endian */
    return v;
}

static void put_bits(coll_dtype_t dt, unsigned char *p, uint64_t v) { memcpy(p, &v, coll_dtype_size(dt)); }

static int bits_is_nan(coll_dtype_t dt, uint64_t v)
{
    switch (dt) {
    case COLL_FP16: return (v & 0x7fff) > 0x7c00;
    case COLL_BF16: return (v & 0x7fff) > 0x7f80;
    case COLL_FP32: return (v & 0x7fffffffu) > 0x7f800000u;
    case COLL_FP64: return (v & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    default: return 0;
    }
}

/* A value of dtype dt given as a double (exactly representable ones). */
static uint64_t from_double(coll_dtype_t dt, double d)
{
    switch (dt) {
    case COLL_FP16: return coll_fp32_to_fp16((float)d);
    case COLL_BF16: return coll_fp32_to_bf16((float)d);
    case COLL_FP32: {
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        return u;
    }
    case COLL_FP64: {
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        return u;
    }
    default: return (uint64_t)(int64_t)d;
    }
}

/* Random element: random bits, or (floats) a special value or a small number,
 * so that sums, products, ties and equal values all occur. */
static uint64_t random_elem(coll_dtype_t dt)
{
    static const double specials[] = {0.0,  -0.0, 1.0, -1.0,  INFINITY, -INFINITY, NAN,
                                      -NAN, 0.5,  2.0, 1e-30, 3.0,      -7.25};
    uint64_t r = rnd();
    if (!is_float(dt) || (r & 3) == 0)
        return rnd();
    if ((r & 3) == 1)
        return from_double(dt, specials[(r >> 8) % (sizeof specials / sizeof specials[0])]);
    return from_double(dt, (double)((int64_t)(r >> 8) % 200) / 8.0);
}

static void fill(coll_dtype_t dt, unsigned char *p, size_t n)
{
    size_t es = coll_dtype_size(dt);
    for (size_t i = 0; i < n; i++)
        put_bits(dt, p + i * es, random_elem(dt));
}

/* Make some b[i] equal to a[i], or its negation (tests max/min on ties, -0). */
static void add_ties(coll_dtype_t dt, const unsigned char *a, unsigned char *b, size_t n)
{
    size_t es = coll_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd() & 7;
        if (r == 0)
            memcpy(b + i * es, a + i * es, es);
        else if (r == 1 && is_float(dt))
            b[i * es + es - 1] = (unsigned char)(a[i * es + es - 1] ^ 0x80);
    }
}

static void check_equal(const char *isa, coll_op_t op, coll_dtype_t dt, size_t n, const char *what,
                        const unsigned char *got, const unsigned char *want)
{
    size_t es = coll_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
        uint64_t g = get_bits(dt, got + i * es), w = get_bits(dt, want + i * es);
        if (g == w || (bits_is_nan(dt, g) && bits_is_nan(dt, w)))
            continue;
        fail_msg("%s %s %s n=%zu %s: element %zu got 0x%llx want 0x%llx", isa, coll_op_name(op), coll_dtype_name(dt), n,
                 what, i, (unsigned long long)g, (unsigned long long)w);
    }
}

enum { ALIAS_NONE, ALIAS_OUT_A, ALIAS_OUT_B, ALIAS_ALL, ALIAS_COUNT };
static const char *const alias_names[] = {"out!=a,b", "out==a", "out==b", "out==a==b"};

#define GUARD 64
#define GUARD_BYTE 0xa5

/* One case: kernel of the forced ISA at byte offset off vs the reference on
 * aligned copies; guard bytes around the output must stay intact. */
static void run_case(const char *isa, coll_op_t op, coll_dtype_t dt, size_t n, size_t off, int alias)
{
    size_t es = coll_dtype_size(dt), bytes = n * es;
    size_t cap = bytes + 2 * GUARD + 16;
    unsigned char *a = malloc(bytes + 1), *b = malloc(bytes + 1), *want = malloc(bytes + 1);
    unsigned char *ba = malloc(cap), *bb = malloc(cap), *bo = malloc(cap);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(want);
    assert_non_null(ba);
    assert_non_null(bb);
    assert_non_null(bo);

    fill(dt, a, n);
    fill(dt, b, n);
    add_ties(dt, a, b, n);
    if (alias == ALIAS_ALL)
        memcpy(b, a, bytes);
    coll_reduce_kernel_ref(op, dt)(want, a, b, n);

    memset(ba, GUARD_BYTE, cap);
    memset(bb, GUARD_BYTE, cap);
    memset(bo, GUARD_BYTE, cap);
    unsigned char *pa = ba + GUARD + off, *pb = bb + GUARD + off + 3 * es % 7, *po;
    memcpy(pa, a, bytes);
    memcpy(pb, b, bytes);
    coll_reduce_fn fn = coll_reduce_kernel(op, dt);
    assert_non_null(fn);
    switch (alias) {
    case ALIAS_OUT_A:
        po = pa;
        fn(pa, pa, pb, n);
        break;
    case ALIAS_OUT_B:
        po = pb;
        fn(pb, pa, pb, n);
        break;
    case ALIAS_ALL:
        po = pa;
        fn(pa, pa, pa, n);
        break;
    default:
        po = bo + GUARD + (off * 5) % 11;
        fn(po, pa, pb, n);
        break;
    }
    check_equal(isa, op, dt, n, alias_names[alias], po, want);
    unsigned char *base = alias == ALIAS_OUT_B ? bb : alias == ALIAS_NONE ? bo : ba;
    for (unsigned char *p = base; p < po; p++)
        assert_int_equal(*p, GUARD_BYTE);
    for (unsigned char *p = po + bytes; p < base + cap; p++)
        assert_int_equal(*p, GUARD_BYTE);
    if (alias != ALIAS_OUT_A && alias != ALIAS_ALL && bytes) /* inputs left alone */
        assert_memory_equal(pa, a, bytes);
    if (alias != ALIAS_OUT_B && alias != ALIAS_ALL && bytes)
        assert_memory_equal(pb, b, bytes);

    free(a);
    free(b);
    free(want);
    free(ba);
    free(bb);
    free(bo);
}

/* Calls body(isa) for each ISA this CPU has; returns how many. */
static size_t for_each_isa(void (*body)(const char *isa))
{
    size_t tested = 0;
    for (size_t k = 0; k < N_ISAS; k++) {
        if (coll_reduce_force_isa(all_isas[k]) != 0)
            continue;
        assert_string_equal(coll_reduce_isa(), all_isas[k]);
        body(all_isas[k]);
        tested++;
    }
    assert_int_equal(coll_reduce_force_isa(NULL), 0);
    return tested;
}

static void matrix_body(const char *isa)
{
    static const size_t offsets[] = {0, 1, 3, 8, 21};
    for (int op = 0; op < COLL_OP_COUNT; op++)
        for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
            for (size_t li = 0; li < N_LENGTHS; li++)
                for (int alias = 0; alias < ALIAS_COUNT; alias++)
                    for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; oi++)
                        run_case(isa, (coll_op_t)op, (coll_dtype_t)dt, lengths[li], offsets[oi], alias);
}

static void test_kernels_match_reference(void **state)
{
    (void)state;
    size_t tested = for_each_isa(matrix_body);
    assert_true(tested >= 1);
    printf("# reduce: %zu variant(s) checked against the reference, best: %s\n", tested, coll_reduce_isa());
}

/* coll_reduce_multi(_nt) of k inputs at byte offset off against the
 * reference applied in order 0..k-1; alias: 0 none, 1 out == in[0],
 * 2 out == in[k-1]. Guard bytes around out and the other inputs untouched.
 * dup: coll_reduce_multi_dup, the result also in a second buffer (at another
 * misalignment, guarded the same way). */
static void run_multi_case(const char *isa, coll_op_t op, coll_dtype_t dt, int k, size_t n, size_t off, int alias,
                           int nt, int dup)
{
    size_t es = coll_dtype_size(dt), bytes = n * es, cap = bytes + 2 * GUARD + 32;
    unsigned char *orig[8], *buf[8], *want = malloc(bytes + 1), *bo = malloc(cap);
    const void *in[8];
    assert_non_null(want);
    assert_non_null(bo);
    for (int j = 0; j < k; j++) {
        orig[j] = malloc(bytes + 1);
        buf[j] = malloc(cap);
        assert_non_null(orig[j]);
        assert_non_null(buf[j]);
        fill(dt, orig[j], n);
        if (j > 0)
            add_ties(dt, orig[j - 1], orig[j], n);
        memset(buf[j], GUARD_BYTE, cap);
        in[j] = buf[j] + GUARD + (off + (size_t)j * es) % 32;
        memcpy((void *)(uintptr_t)in[j], orig[j], bytes);
    }
    memcpy(want, orig[0], bytes);
    for (int j = 1; j < k; j++)
        coll_reduce_kernel_ref(op, dt)(want, want, orig[j], n);
    memset(bo, GUARD_BYTE, cap);
    int aj = alias == 1 ? 0 : alias == 2 ? k - 1 : -1;
    unsigned char *base = aj >= 0 ? buf[aj] : bo, *po = aj >= 0 ? (unsigned char *)(uintptr_t)in[aj] : bo + GUARD + off;
    unsigned char *bd = malloc(cap), *pd = bd + GUARD + (off + 8) % 32;
    assert_non_null(bd);
    memset(bd, GUARD_BYTE, cap);
    if (dup)
        coll_reduce_multi_dup(po, pd, in, k, n, dt, op, nt);
    else
        (nt ? coll_reduce_multi_nt : coll_reduce_multi)(po, in, k, n, dt, op);
    char what[80];
    snprintf(what, sizeof what, "multi k=%d off=%zu alias=%d nt=%d dup=%d", k, off, alias, nt, dup);
    check_equal(isa, op, dt, n, what, po, want);
    if (dup) {
        check_equal(isa, op, dt, n, what, pd, want);
        for (unsigned char *p = bd; p < pd; p++)
            assert_int_equal(*p, GUARD_BYTE);
        for (unsigned char *p = pd + bytes; p < bd + cap; p++)
            assert_int_equal(*p, GUARD_BYTE);
    } else {
        for (unsigned char *p = bd; p < bd + cap; p++)
            assert_int_equal(*p, GUARD_BYTE);
    }
    free(bd);
    for (unsigned char *p = base; p < po; p++)
        assert_int_equal(*p, GUARD_BYTE);
    for (unsigned char *p = po + bytes; p < base + cap; p++)
        assert_int_equal(*p, GUARD_BYTE);
    for (int j = 0; j < k; j++) {
        if (j != aj && bytes)
            assert_memory_equal(in[j], orig[j], bytes);
        free(orig[j]);
        free(buf[j]);
    }
    free(want);
    free(bo);
}

static void multi_body(const char *isa)
{
    static const int ks[] = {1, 2, 3, 5};
    static const size_t offsets[] = {0, 1, 24}; /* 1: out not element-aligned (no stream) */
    static const size_t lens[] = {0, 1, 7, 33, 129, 1000};
    for (int op = 0; op < COLL_OP_COUNT; op++)
        for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                    for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; oi++)
                        for (int alias = 0; alias < 3; alias++)
                            for (int nt = 0; nt < 4; nt++) /* bit 1: dup */
                                run_multi_case(isa, (coll_op_t)op, (coll_dtype_t)dt, ks[ki], lens[li], offsets[oi],
                                               alias, nt & 1, nt >> 1);
}

static void test_multi_matches_reference(void **state)
{
    (void)state;
    size_t tested = for_each_isa(multi_body);
    assert_true(tested >= 1);
    /* the vector ISAs have a one-pass kernel for every op and dtype; generic has none */
    assert_int_equal(coll_reduce_force_isa("generic"), 0);
    assert_null(coll_reduce_multi_kernel(COLL_SUM, COLL_FP32));
    assert_int_equal(coll_reduce_force_isa(NULL), 0);
    if (strcmp(coll_reduce_isa(), "generic") != 0)
        for (int op = 0; op < COLL_OP_COUNT; op++)
            for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
                assert_non_null(coll_reduce_multi_kernel((coll_op_t)op, (coll_dtype_t)dt));
    printf("# reduce_multi: %zu variant(s) checked against the reference\n", tested);
}

static int f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}

static void test_dispatch(void **state)
{
    (void)state;
    const char *best = coll_reduce_isa();
    assert_true(strcmp(best, "generic") == 0 || strcmp(best, "avx2") == 0 || strcmp(best, "avx512") == 0);
    assert_int_equal(coll_reduce_force_isa("generic"), 0);
    assert_string_equal(coll_reduce_isa(), "generic");
    assert_int_equal(coll_reduce_force_isa("sse9"), -1);
    assert_string_equal(coll_reduce_isa(), "generic");
    assert_int_equal(coll_reduce_force_isa("auto"), 0);
    assert_string_equal(coll_reduce_isa(), best);
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")
        && __builtin_cpu_supports("avx512vl"))
        assert_string_equal(best, "avx512");
    else if (__builtin_cpu_supports("avx2") && f16c()) /* clang 14's builtin has no "f16c" */
        assert_string_equal(best, "avx2");
    assert_null(coll_reduce_kernel(COLL_OP_COUNT, COLL_FP32));
    assert_null(coll_reduce_kernel(COLL_SUM, COLL_DTYPE_COUNT));
    assert_null(coll_reduce_kernel_ref((coll_op_t)-1, COLL_FP32));
    for (int op = 0; op < COLL_OP_COUNT; op++)
        for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++) {
            assert_non_null(coll_reduce_kernel((coll_op_t)op, (coll_dtype_t)dt));
            assert_non_null(coll_reduce_kernel_ref((coll_op_t)op, (coll_dtype_t)dt));
        }
    unsigned char x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
    coll_reduce_local(x, x, y, 4, COLL_UINT8, COLL_SUM);
    assert_int_equal(x[3], 44);
}

/* ---- exact expectations, checked for every variant ---- */

struct exact_case {
    coll_dtype_t dt;
    coll_op_t op;
    uint64_t a, b, want; /* element bits */
};

static uint32_t f32bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static const struct exact_case exact_cases[] = {
    /* integer wrap-around */
    {COLL_INT8, COLL_SUM, 127, 1, 0x80},
    {COLL_UINT8, COLL_SUM, 255, 1, 0},
    {COLL_INT16, COLL_SUM, 32767, 1, 0x8000},
    {COLL_UINT16, COLL_SUM, 65535, 2, 1},
    {COLL_INT32, COLL_SUM, 0x7fffffff, 1, 0x80000000u},
    {COLL_UINT32, COLL_SUM, 0xffffffffu, 0xffffffffu, 0xfffffffeu},
    {COLL_INT64, COLL_SUM, 0x7fffffffffffffffull, 1, 0x8000000000000000ull},
    {COLL_UINT64, COLL_SUM, ~0ull, 1, 0},
    {COLL_INT8, COLL_PROD, 16, 16, 0},
    {COLL_INT8, COLL_PROD, 0x80, 0xff, 0x80}, /* -128 * -1 = -128 */
    {COLL_UINT8, COLL_PROD, 255, 255, 1},
    {COLL_INT8, COLL_PROD, 0xfd, 0x05, 0xf1}, /* -3 * 5 = -15 */
    {COLL_INT16, COLL_PROD, 300, 300, 24464}, /* 90000 mod 65536 */
    {COLL_UINT16, COLL_PROD, 65535, 65535, 1},
    {COLL_INT32, COLL_PROD, 65536, 65536, 0},
    {COLL_UINT32, COLL_PROD, 0xffffffffu, 0xffffffffu, 1},
    {COLL_INT64, COLL_PROD, 1ull << 32, 1ull << 32, 0},
    {COLL_UINT64, COLL_PROD, ~0ull, ~0ull, 1},
    {COLL_INT64, COLL_PROD, 0x123456789abcdefull, 0xfedcba987654321ull, 0x123456789abcdefull * 0xfedcba987654321ull},
    {COLL_INT64, COLL_PROD, (uint64_t)-3, 7, (uint64_t)-21},
    /* signed vs unsigned order */
    {COLL_INT8, COLL_MAX, 0xff, 1, 1},
    {COLL_UINT8, COLL_MAX, 0xff, 1, 0xff},
    {COLL_INT16, COLL_MIN, 0x8000, 0x7fff, 0x8000},
    {COLL_UINT16, COLL_MIN, 0x8000, 0x7fff, 0x7fff},
    {COLL_INT32, COLL_MAX, 0xffffffffu, 0, 0},
    {COLL_UINT32, COLL_MAX, 0xffffffffu, 0, 0xffffffffu},
    {COLL_INT64, COLL_MAX, ~0ull, 5, 5},
    {COLL_INT64, COLL_MIN, ~0ull, 5, ~0ull},
    {COLL_UINT64, COLL_MAX, ~0ull, 5, ~0ull},
    {COLL_UINT64, COLL_MIN, 0x8000000000000000ull, 0x7fffffffffffffffull, 0x7fffffffffffffffull},
    /* IEEE maximum/minimum: -0 < +0; NaN wins */
    {COLL_FP32, COLL_MAX, 0x80000000u, 0, 0},
    {COLL_FP32, COLL_MAX, 0, 0x80000000u, 0},
    {COLL_FP32, COLL_MIN, 0, 0x80000000u, 0x80000000u},
    {COLL_FP32, COLL_MIN, 0x80000000u, 0, 0x80000000u},
    {COLL_FP64, COLL_MAX, 0x8000000000000000ull, 0, 0},
    {COLL_FP64, COLL_MIN, 0, 0x8000000000000000ull, 0x8000000000000000ull},
    {COLL_FP16, COLL_MAX, 0x8000, 0, 0},
    {COLL_FP16, COLL_MIN, 0, 0x8000, 0x8000},
    {COLL_BF16, COLL_MAX, 0x8000, 0, 0},
    {COLL_BF16, COLL_MIN, 0, 0x8000, 0x8000},
    {COLL_FP32, COLL_MAX, 0x7fc00000u, 0x3f800000u, 0x7fc00000u},
    {COLL_FP32, COLL_MAX, 0x3f800000u, 0x7fc00000u, 0x7fc00000u},
    {COLL_FP32, COLL_MIN, 0xff800000u, 0x7fc00000u, 0x7fc00000u},
    {COLL_FP32, COLL_MAX, 0x7f800000u, 0x7fc00000u, 0x7fc00000u},
    {COLL_FP64, COLL_MAX, 0x7ff8000000000000ull, 0x7ff0000000000000ull, 0x7ff8000000000000ull},
    {COLL_FP64, COLL_MIN, 0xbff0000000000000ull, 0x7ff8000000000000ull, 0x7ff8000000000000ull},
    {COLL_FP16, COLL_MAX, 0x7e00, 0x3c00, 0x7e00},
    {COLL_FP16, COLL_MIN, 0x3c00, 0x7c01, 0x7e00}, /* signalling NaN in, NaN out */
    {COLL_BF16, COLL_MAX, 0x3f80, 0x7fc0, 0x7fc0},
    {COLL_BF16, COLL_MIN, 0x7f81, 0x3f80, 0x7fc0},
    {COLL_FP32, COLL_MAX, 0xbf800000u, 0xc0000000u, 0xbf800000u}, /* max(-1,-2) */
    {COLL_FP32, COLL_MIN, 0x00000001u, 0x80000001u, 0x80000001u}, /* subnormals */
    /* inf and NaN arithmetic, overflow */
    {COLL_FP32, COLL_SUM, 0x7f800000u, 0xff800000u, 0x7fc00000u},
    {COLL_FP32, COLL_PROD, 0x7f800000u, 0, 0x7fc00000u},
    {COLL_FP32, COLL_SUM, 0x7f7fffffu, 0x7f7fffffu, 0x7f800000u},
    {COLL_FP32, COLL_SUM, 0x80000000u, 0x80000000u, 0x80000000u}, /* -0 + -0 */
    {COLL_FP64, COLL_PROD, 0x7fefffffffffffffull, 0x4000000000000000ull, 0x7ff0000000000000ull},
    {COLL_FP16, COLL_SUM, 0x7bff, 0x7bff, 0x7c00}, /* 65504 + 65504 = inf */
    {COLL_FP16, COLL_SUM, 0x7bff, 0x4c00, 0x7c00}, /* 65504 + 16 = 65520: tie -> inf */
    {COLL_FP16, COLL_SUM, 0x7bff, 0x4800, 0x7bff}, /* 65504 + 8 -> 65504 */
    {COLL_FP16, COLL_SUM, 0xfbff, 0xfbff, 0xfc00},
    {COLL_FP16, COLL_SUM, 0x7c00, 0xfc00, 0x7e00},  /* inf - inf */
    {COLL_FP16, COLL_PROD, 0x0001, 0x3800, 0x0000}, /* 2^-24 * 0.5: tie -> 0 */
    {COLL_FP16, COLL_PROD, 0x0003, 0x3800, 0x0002}, /* 1.5 * 2^-24: tie -> 2 */
    {COLL_FP16, COLL_PROD, 0x0001, 0x3c00, 0x0001}, /* subnormal kept */
    {COLL_FP16, COLL_SUM, 0x03ff, 0x0001, 0x0400},  /* subnormal -> normal */
    {COLL_BF16, COLL_SUM, 0x7f7f, 0x7f7f, 0x7f80},  /* overflow -> inf */
    {COLL_BF16, COLL_SUM, 0x0001, 0x0001, 0x0002},  /* subnormals, not flushed */
    {COLL_BF16, COLL_PROD, 0x0001, 0x3f00, 0x0000}, /* tie -> even (0) */
    {COLL_BF16, COLL_PROD, 0x0003, 0x3f00, 0x0002}, /* tie -> even (2) */
    /* round to nearest even on a sum */
    {COLL_FP16, COLL_SUM, 0x3c00, 0x1000, 0x3c00}, /* 1 + 2^-11: tie -> 1 */
    {COLL_FP16, COLL_SUM, 0x3c01, 0x1000, 0x3c02}, /* tie -> even up */
    {COLL_FP16, COLL_SUM, 0x3c00, 0x1001, 0x3c01}, /* above the tie */
    {COLL_BF16, COLL_SUM, 0x3f80, 0x3b80, 0x3f80}, /* 1 + 2^-8: tie -> 1 */
    {COLL_BF16, COLL_SUM, 0x3f81, 0x3b80, 0x3f82},
    {COLL_BF16, COLL_SUM, 0x3f80, 0x3b81, 0x3f81},
};

static void exact_body(const char *isa)
{
    enum { N = 37 }; /* vector body and a tail for every element size */
    for (size_t c = 0; c < sizeof exact_cases / sizeof exact_cases[0]; c++) {
        const struct exact_case *e = &exact_cases[c];
        size_t es = coll_dtype_size(e->dt);
        unsigned char a[N * 8], b[N * 8], o[N * 8], want[N * 8];
        for (size_t i = 0; i < N; i++) {
            put_bits(e->dt, a + i * es, e->a);
            put_bits(e->dt, b + i * es, e->b);
            put_bits(e->dt, want + i * es, e->want);
        }
        coll_reduce_kernel(e->op, e->dt)(o, a, b, N);
        check_equal(isa, e->op, e->dt, N, "exact", o, want);
        coll_reduce_kernel_ref(e->op, e->dt)(o, a, b, N);
        check_equal("ref", e->op, e->dt, N, "exact", o, want);
    }
}

static void test_exact_values(void **state)
{
    (void)state;
    assert_true(for_each_isa(exact_body) >= 1);
}

/* Every fp16/bf16 pattern through each variant's sum with -0.0 (x + -0 == x):
 * the hardware conversions match the scalar ones on all 65536 inputs. */
static void roundtrip_body(const char *isa)
{
    static uint16_t a[65536], b[65536], o[65536], want[65536];
    const coll_dtype_t dts[] = {COLL_FP16, COLL_BF16};
    for (size_t d = 0; d < 2; d++) {
        coll_dtype_t dt = dts[d];
        uint16_t quiet = dt == COLL_FP16 ? 0x200 : 0x40;
        uint16_t one = dt == COLL_FP16 ? 0x3c00 : 0x3f80;
        for (size_t i = 0; i < 65536; i++) {
            a[i] = (uint16_t)i;
            /* NaN comes back quiet with its sign and payload */
            want[i] = (uint16_t)(bits_is_nan(dt, i) ? i | quiet : i);
        }
        for (int op = 0; op < COLL_OP_COUNT; op++) {
            /* x + -0 = x, x * 1 = x, max(x, x) = min(x, x) = x */
            for (size_t i = 0; i < 65536; i++)
                b[i] = op == COLL_SUM ? 0x8000 : op == COLL_PROD ? one : (uint16_t)i;
            coll_reduce_kernel((coll_op_t)op, dt)(o, a, b, 65536);
            check_equal(isa, (coll_op_t)op, dt, 65536, "identity", (unsigned char *)o, (unsigned char *)want);
            for (size_t i = 0; i < 65536; i++)
                if (o[i] != want[i])
                    fail_msg("%s %s %s: NaN 0x%zx -> 0x%x", isa, coll_op_name((coll_op_t)op), coll_dtype_name(dt), i,
                             o[i]);
        }
    }
}

static void test_half_identity_all_patterns(void **state)
{
    (void)state;
    assert_true(for_each_isa(roundtrip_body) >= 1);
}

/* ---- conversions ---- */

static void test_fp16_conversion_exhaustive(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = coll_fp16_to_fp32((uint16_t)h);
        uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
        double sign = (h & 0x8000) ? -1.0 : 1.0;
        if (exp == 0x1f && mant != 0) {
            assert_true(isnan(f));
            assert_int_equal(signbit(f) != 0, (h & 0x8000) != 0);
            assert_int_equal(coll_fp32_to_fp16(f), h | 0x200); /* quiet, same payload */
            continue;
        }
        double want = exp == 0x1f ? sign * INFINITY
            : exp == 0            ? sign * ldexp(mant, -24)
                                  : sign * ldexp(1024 + mant, (int)exp - 25);
        assert_true((double)f == want);
        assert_int_equal(signbit(f) != 0, (h & 0x8000) != 0);
        assert_int_equal(coll_fp32_to_fp16(f), h);
    }
}

static void test_bf16_conversion_exhaustive(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = coll_bf16_to_fp32((uint16_t)h);
        assert_int_equal(f32bits(f), h << 16);
        if ((h & 0x7fff) > 0x7f80) {
            assert_true(isnan(f));
            assert_int_equal(coll_fp32_to_bf16(f), h | 0x40);
        } else {
            assert_int_equal(coll_fp32_to_bf16(f), h);
        }
    }
}

static float f32from(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* At every midpoint between adjacent finite fp16 values (and the last one and
 * 65536 = inf): the tie goes to the even pattern; one fp32 ulp either side
 * goes to the nearer one. */
static void test_fp16_round_nearest_even(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        for (uint32_t s = 0; s <= 0x8000; s += 0x8000) {
            double lo = coll_fp16_to_fp32((uint16_t)h);
            double hi = h + 1 == 0x7c00 ? 65536.0 : coll_fp16_to_fp32((uint16_t)(h + 1));
            float mid = (float)((lo + hi) / 2); /* exact: 12 significant bits */
            assert_true((double)mid == (lo + hi) / 2);
            uint16_t even = (uint16_t)((h & 1) ? h + 1 : h);
            float below = nextafterf(mid, 0.0f), above = nextafterf(mid, INFINITY);
            if (s) {
                mid = -mid;
                below = -below;
                above = -above;
            }
            assert_int_equal(coll_fp32_to_fp16(mid), even | s);
            assert_int_equal(coll_fp32_to_fp16(below), h | s);
            assert_int_equal(coll_fp32_to_fp16(above), (h + 1) | s);
        }
    }
    /* crafted values */
    assert_int_equal(coll_fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);
    assert_int_equal(coll_fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);
    assert_int_equal(coll_fp32_to_fp16(65504.0f), 0x7bff);
    assert_int_equal(coll_fp32_to_fp16(65519.99f), 0x7bff);
    assert_int_equal(coll_fp32_to_fp16(65520.0f), 0x7c00);
    assert_int_equal(coll_fp32_to_fp16(1e10f), 0x7c00);
    assert_int_equal(coll_fp32_to_fp16(-1e10f), 0xfc00);
    assert_int_equal(coll_fp32_to_fp16(INFINITY), 0x7c00);
    assert_int_equal(coll_fp32_to_fp16(0x1p-24f), 0x0001);
    assert_int_equal(coll_fp32_to_fp16(0x1p-25f), 0x0000);
    assert_int_equal(coll_fp32_to_fp16(-0x1p-25f), 0x8000);
    assert_int_equal(coll_fp32_to_fp16(0x1.000002p-25f), 0x0001);
    assert_int_equal(coll_fp32_to_fp16(0x1p-26f), 0x0000);
    assert_int_equal(coll_fp32_to_fp16(0x1p-149f), 0x0000); /* fp32 subnormal */
    assert_int_equal(coll_fp32_to_fp16(-0.0f), 0x8000);
    assert_true(bits_is_nan(COLL_FP16, coll_fp32_to_fp16(f32from(0x7f800001u))));
    assert_true(bits_is_nan(COLL_FP16, coll_fp32_to_fp16(f32from(0xffc00000u))));
    assert_int_equal(coll_fp32_to_fp16(f32from(0xffc00000u)) & 0x8000, 0x8000);
}

static void test_bf16_round_nearest_even(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x7f80; h++) {
        for (uint32_t s = 0; s <= 0x8000; s += 0x8000) {
            uint32_t mid = ((h | s) << 16) | 0x8000; /* halfway to h + 1 */
            uint16_t even = (uint16_t)((h & 1) ? h + 1 : h);
            assert_int_equal(coll_fp32_to_bf16(f32from(mid)), even | s);
            assert_int_equal(coll_fp32_to_bf16(f32from(mid - 1)), h | s);
            assert_int_equal(coll_fp32_to_bf16(f32from(mid + 1)), (h + 1) | s);
        }
    }
    assert_int_equal(coll_fp32_to_bf16(f32from(0x7f7fffffu)), 0x7f80); /* FLT_MAX -> inf */
    assert_int_equal(coll_fp32_to_bf16(f32from(0x00008000u)), 0x0000);
    assert_int_equal(coll_fp32_to_bf16(f32from(0x00018000u)), 0x0002);
    assert_int_equal(coll_fp32_to_bf16(f32from(0x7f800001u)), 0x7fc0); /* NaN, not inf */
    assert_int_equal(coll_fp32_to_bf16(f32from(0xff800001u)), 0xffc0);
    assert_int_equal(coll_fp32_to_bf16(INFINITY), 0x7f80);
    assert_int_equal(coll_fp32_to_bf16(-0.0f), 0x8000);
}

/* ---- names ---- */

static void test_names(void **state)
{
    (void)state;
    static const char *const dt_names[] = {"int8",   "int16",  "int32", "int64", "uint8", "uint16",
                                           "uint32", "uint64", "fp16",  "bfp16", "fp32",  "fp64"};
    static const size_t dt_sizes[] = {1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8};
    for (int i = 0; i < COLL_DTYPE_COUNT; i++) {
        coll_dtype_t dt;
        assert_string_equal(coll_dtype_name((coll_dtype_t)i), dt_names[i]);
        assert_int_equal(coll_dtype_size((coll_dtype_t)i), dt_sizes[i]);
        assert_int_equal(coll_dtype_from_name(dt_names[i], &dt), COLL_SUCCESS);
        assert_int_equal(dt, i);
    }
    static const struct {
        const char *name;
        coll_dtype_t dt;
    } aliases[] = {
        {"bf16", COLL_BF16},    {"bfloat16", COLL_BF16}, {"BFP16", COLL_BF16},   {"float", COLL_FP32},
        {"float32", COLL_FP32}, {"half", COLL_FP16},     {"float16", COLL_FP16}, {"double", COLL_FP64},
        {"float64", COLL_FP64}, {"char", COLL_INT8},     {"int", COLL_INT32},    {"FP32", COLL_FP32},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        coll_dtype_t dt;
        assert_int_equal(coll_dtype_from_name(aliases[i].name, &dt), COLL_SUCCESS);
        assert_int_equal(dt, aliases[i].dt);
    }
    coll_dtype_t dt = COLL_INT8;
    assert_int_equal(coll_dtype_from_name("fp8", &dt), COLL_ERR_INVALID_ARG);
    assert_int_equal(coll_dtype_from_name("", &dt), COLL_ERR_INVALID_ARG);
    assert_int_equal(coll_dtype_from_name(NULL, &dt), COLL_ERR_INVALID_ARG);
    assert_int_equal(coll_dtype_from_name("fp32", NULL), COLL_ERR_INVALID_ARG);
    assert_int_equal(dt, COLL_INT8); /* untouched on failure */
    assert_int_equal(coll_dtype_size(COLL_DTYPE_COUNT), 0);
    assert_string_equal(coll_dtype_name(COLL_DTYPE_COUNT), "unknown");

    static const char *const op_names[] = {"sum", "prod", "max", "min"};
    for (int i = 0; i < COLL_OP_COUNT; i++) {
        coll_op_t op;
        assert_string_equal(coll_op_name((coll_op_t)i), op_names[i]);
        assert_int_equal(coll_op_from_name(op_names[i], &op), COLL_SUCCESS);
        assert_int_equal(op, i);
    }
    coll_op_t op = COLL_MIN;
    assert_int_equal(coll_op_from_name("SUM", &op), COLL_SUCCESS);
    assert_int_equal(op, COLL_SUM);
    assert_int_equal(coll_op_from_name("avg", &op), COLL_ERR_INVALID_ARG);
    assert_int_equal(coll_op_from_name(NULL, &op), COLL_ERR_INVALID_ARG);
    assert_int_equal(op, COLL_SUM);
    assert_string_equal(coll_op_name(COLL_OP_COUNT), "unknown");

    static const char *const kinds[] = {"allreduce", "allgather", "allgatherv", "reduce_scatter", "reduce_scatterv",
                                        "reduce",    "broadcast", "scatter",    "gather",         "alltoall",
                                        "alltoallv", "barrier",   "sendrecv"};
    assert_int_equal(sizeof kinds / sizeof kinds[0], COLL_KIND_COUNT);
    for (int i = 0; i < COLL_KIND_COUNT; i++)
        assert_string_equal(coll_kind_name((coll_kind_t)i), kinds[i]);
    assert_string_equal(coll_kind_name(COLL_KIND_COUNT), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_fp16_conversion_exhaustive),
        cmocka_unit_test(test_bf16_conversion_exhaustive),
        cmocka_unit_test(test_fp16_round_nearest_even),
        cmocka_unit_test(test_bf16_round_nearest_even),
        cmocka_unit_test(test_exact_values),
        cmocka_unit_test(test_half_identity_all_patterns),
        cmocka_unit_test(test_kernels_match_reference),
        cmocka_unit_test(test_multi_matches_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
