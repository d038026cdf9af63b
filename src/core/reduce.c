/*
 * reduce.c - reduction kernels: the table kernels[op][dtype], its run-time ISA
 * dispatch, the scalar reference kernels, the portable (generic) kernels and
 * the exact fp16/bf16 conversions.
 *
 * Three tables are built once (pthread_once): generic, avx2 and avx512. The
 * ISA tables come from reduce_avx2.c / reduce_avx512.c, the only files built
 * with ISA flags; they are selected only after __builtin_cpu_supports says the
 * CPU (and OS) has the features they were compiled for. Their NULL entries are
 * filled with the generic kernel.
 *
 * Semantics shared by every variant (tests compare each against ref_*):
 *   - integers: sum/prod wrap modulo 2^bits (done in unsigned arithmetic);
 *   - floats: max/min are IEEE 754-2019 maximum/minimum: NaN if either input is
 *     NaN (the NaN of a + b), -0.0 < +0.0, otherwise the larger/smaller value;
 *   - fp16/bf16: widened exactly to fp32, computed in fp32, rounded to nearest
 *     even (NaN stays NaN with the quiet bit set, overflow gives inf).
 *
 * The generic kernels work on 64-byte blocks copied into locals: the compiler
 * vectorises the fixed-length inner loop at -O2 (SLP) for the baseline ISA, and
 * the copies make out == a / out == b (any overlap, in fact) well defined.
 */
#include <math.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "core/reduce.h"
#include "core/reduce_table.h"

/* ---- bit casts and exact conversions ---------------------------------- */

#define BIT_CAST(NAME, TO, FROM) \
    static inline TO NAME(FROM v) \
    { \
        TO r; \
        memcpy(&r, &v, sizeof r); \
        return r; \
    }

BIT_CAST(f32_bits, uint32_t, float)
BIT_CAST(f32_from, float, uint32_t)
BIT_CAST(f64_bits, uint64_t, double)
BIT_CAST(f64_from, double, uint64_t)

static inline float h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;

    if (exp == 0x1f) /* inf or NaN: payload kept (and its quiet bit) */
        return f32_from(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) { /* zero or subnormal: mant * 2^-24, exact in fp32 */
        float v = (float)mant * 0x1p-24f;
        return f32_from(sign | f32_bits(v));
    }
    return f32_from(sign | ((exp + 112u) << 23) | (mant << 13));
}

static inline uint16_t f2h(float f)
{
    uint32_t bits = f32_bits(f);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t abs = bits & 0x7fffffffu;

    if (abs > 0x7f800000u) /* NaN: quiet, top of the payload kept */
        return (uint16_t)(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
    if (abs >= 0x477ff000u) /* >= 65520 rounds to inf (and inf itself) */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) { /* below 2^-14: fp16 subnormal or zero */
        uint32_t e = abs >> 23;
        if (e < 102) /* below 2^-25: rounds to zero */
            return sign;
        uint32_t m = (abs & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* 14..24: units of 2^-24 */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t base = ((abs >> 23) - 112u) << 10 | ((abs >> 13) & 0x3ffu);
    uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (base & 1u)))
        base++; /* a carry into the exponent is the right result */
    return (uint16_t)(sign | base);
}

static inline float b2f(uint16_t h) { return f32_from((uint32_t)h << 16); }

static inline uint16_t f2b(float f)
{
    uint32_t bits = f32_bits(f);
    if ((bits & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it NaN, quiet */
        return (uint16_t)((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u); /* nearest even; overflow -> inf */
    return (uint16_t)(bits >> 16);
}

float coll_fp16_to_fp32(uint16_t h) { return h2f(h); }
uint16_t coll_fp32_to_fp16(float f) { return f2h(f); }
float coll_bf16_to_fp32(uint16_t h) { return b2f(h); }
uint16_t coll_fp32_to_bf16(float f) { return f2b(f); }

/* ---- element operations ------------------------------------------------ */

/* W: an unsigned type at least as wide as int, so nothing promotes to a signed
 * int that could overflow (uint16 65535 * 65535 would). */
#define INT_ELEMENT_OPS(SFX, T, W) \
    static inline T e_sum_##SFX(T a, T b) { return (T)((W)a + (W)b); } \
    static inline T e_prod_##SFX(T a, T b) { return (T)((W)a * (W)b); } \
    static inline T e_max_##SFX(T a, T b) { return a > b ? a : b; } \
    static inline T e_min_##SFX(T a, T b) { return a < b ? a : b; }

INT_ELEMENT_OPS(i8, int8_t, unsigned)
INT_ELEMENT_OPS(i16, int16_t, unsigned)
INT_ELEMENT_OPS(i32, int32_t, uint32_t)
INT_ELEMENT_OPS(i64, int64_t, uint64_t)
INT_ELEMENT_OPS(u8, uint8_t, unsigned)
INT_ELEMENT_OPS(u16, uint16_t, unsigned)
INT_ELEMENT_OPS(u32, uint32_t, uint32_t)
INT_ELEMENT_OPS(u64, uint64_t, uint64_t)

static inline float e_sum_f32(float a, float b) { return a + b; }
static inline float e_prod_f32(float a, float b) { return a * b; }
static inline double e_sum_f64(double a, double b) { return a + b; }
static inline double e_prod_f64(double a, double b) { return a * b; }

/* IEEE maximum/minimum: equal values can only differ in the sign of zero, and
 * and/or of the bits picks +0 for max, -0 for min. BITS/FROM: the bit casts. */
#define IEEE_MAX_MIN(SFX, T, BITS, FROM) \
    static inline T e_max_##SFX(T a, T b) \
    { \
        if (isnan(a) || isnan(b)) \
            return a + b; \
        if (a == b) \
            return FROM(BITS(a) & BITS(b)); \
        return a > b ? a : b; \
    } \
    static inline T e_min_##SFX(T a, T b) \
    { \
        if (isnan(a) || isnan(b)) \
            return a + b; \
        if (a == b) \
            return FROM(BITS(a) | BITS(b)); \
        return a < b ? a : b; \
    }

IEEE_MAX_MIN(f32, float, f32_bits, f32_from)
IEEE_MAX_MIN(f64, double, f64_bits, f64_from)

/* The same, branch-free for the generic kernels: quiet comparisons and
 * selects that the vectoriser if-converts (a + b on a NaN would trap, so the
 * NaN is built as x86 returns it: the first NaN operand, made quiet: QUIET is
 * the quiet bit of type U). == is a quiet comparison. */
#define VEC_MAX_MIN(SFX, T, U, BITS, FROM, QUIET) \
    static inline T v_max_##SFX(T a, T b) \
    { \
        U ua = BITS(a), ub = BITS(b); \
        U r = __builtin_isgreater(a, b) ? ua : ub; \
        r = a == b ? (ua & ub) : r; \
        U nan = (__builtin_isunordered(a, a) ? ua : ub) | QUIET; \
        return FROM(__builtin_isunordered(a, b) ? nan : r); \
    } \
    static inline T v_min_##SFX(T a, T b) \
    { \
        U ua = BITS(a), ub = BITS(b); \
        U r = __builtin_isless(a, b) ? ua : ub; \
        r = a == b ? (ua | ub) : r; \
        U nan = (__builtin_isunordered(a, a) ? ua : ub) | QUIET; \
        return FROM(__builtin_isunordered(a, b) ? nan : r); \
    }

VEC_MAX_MIN(f32, float, uint32_t, f32_bits, f32_from, 0x400000u)
VEC_MAX_MIN(f64, double, uint64_t, f64_bits, f64_from, 0x8000000000000ull)

/* fp16 / bf16: widen, compute in fp32, round once. */
#define HALF_ELEMENT_OPS(SFX, TO32, FROM32) \
    static inline uint16_t e_sum_##SFX(uint16_t a, uint16_t b) { return FROM32(e_sum_f32(TO32(a), TO32(b))); } \
    static inline uint16_t e_prod_##SFX(uint16_t a, uint16_t b) { return FROM32(e_prod_f32(TO32(a), TO32(b))); } \
    static inline uint16_t e_max_##SFX(uint16_t a, uint16_t b) { return FROM32(e_max_f32(TO32(a), TO32(b))); } \
    static inline uint16_t e_min_##SFX(uint16_t a, uint16_t b) { return FROM32(e_min_f32(TO32(a), TO32(b))); }

HALF_ELEMENT_OPS(f16, h2f, f2h)
HALF_ELEMENT_OPS(b16, b2f, f2b)

/* ---- kernels: scalar reference and generic (blocked) ------------------- */

#define REF_KERNEL(OP, SFX, T) \
    static void ref_##OP##_##SFX(void *out, const void *a, const void *b, size_t n) \
    { \
        T *o = out; \
        const T *x = a, *y = b; \
        for (size_t i = 0; i < n; i++) \
            o[i] = e_##OP##_##SFX(x[i], y[i]); \
    }

#define GEN_BLOCK 64 /* bytes per block: one cache line, 4 SSE vectors */

#define GEN_KERNEL(OP, SFX, T, FN) \
    static void gen_##OP##_##SFX(void *out, const void *a, const void *b, size_t n) \
    { \
        enum { B = GEN_BLOCK / sizeof(T) }; \
        unsigned char *o = out; \
        const unsigned char *x = a, *y = b; \
        size_t i = 0; \
        for (; i + B <= n; i += B) { \
            T p[B], q[B]; \
            memcpy(p, x + i * sizeof(T), sizeof p); \
            memcpy(q, y + i * sizeof(T), sizeof q); \
            for (size_t j = 0; j < B; j++) \
                p[j] = FN(p[j], q[j]); \
            memcpy(o + i * sizeof(T), p, sizeof p); \
        } \
        for (; i < n; i++) { \
            T p, q; \
            memcpy(&p, x + i * sizeof(T), sizeof p); \
            memcpy(&q, y + i * sizeof(T), sizeof q); \
            p = FN(p, q); \
            memcpy(o + i * sizeof(T), &p, sizeof p); \
        } \
    }

/* MAX, MIN: the element functions of the generic max/min kernels. */
/* One kernel a line: clang-format 14 packs this list differently on each pass. */
// clang-format off
#define KERNELS(SFX, T, MAX, MIN) \
    REF_KERNEL(sum, SFX, T) \
    REF_KERNEL(prod, SFX, T) \
    REF_KERNEL(max, SFX, T) \
    REF_KERNEL(min, SFX, T) \
    GEN_KERNEL(sum, SFX, T, e_sum_##SFX) \
    GEN_KERNEL(prod, SFX, T, e_prod_##SFX) \
    GEN_KERNEL(max, SFX, T, MAX) \
    GEN_KERNEL(min, SFX, T, MIN)
// clang-format on

KERNELS(i8, int8_t, e_max_i8, e_min_i8)
KERNELS(i16, int16_t, e_max_i16, e_min_i16)
KERNELS(i32, int32_t, e_max_i32, e_min_i32)
KERNELS(i64, int64_t, e_max_i64, e_min_i64)
KERNELS(u8, uint8_t, e_max_u8, e_min_u8)
KERNELS(u16, uint16_t, e_max_u16, e_min_u16)
KERNELS(u32, uint32_t, e_max_u32, e_min_u32)
KERNELS(u64, uint64_t, e_max_u64, e_min_u64)
KERNELS(f16, uint16_t, e_max_f16, e_min_f16)
KERNELS(b16, uint16_t, e_max_b16, e_min_b16)
KERNELS(f32, float, v_max_f32, v_min_f32)
KERNELS(f64, double, v_max_f64, v_min_f64)

static const coll_reduce_fn ref_kernels[COLL_OP_COUNT][COLL_DTYPE_COUNT] = COLL_REDUCE_TABLE(ref);
static const coll_reduce_fn gen_kernels[COLL_OP_COUNT][COLL_DTYPE_COUNT] = COLL_REDUCE_TABLE(gen);

/* ---- run-time dispatch ------------------------------------------------- */

enum { ISA_GENERIC = 0, ISA_AVX2, ISA_AVX512, ISA_COUNT };
static const char *const isa_names[ISA_COUNT] = {"generic", "avx2", "avx512"};

static coll_reduce_fn isa_tables[ISA_COUNT][COLL_OP_COUNT][COLL_DTYPE_COUNT];
static coll_reduce_multi_fn isa_multi[ISA_COUNT][COLL_OP_COUNT][COLL_DTYPE_COUNT]; /* NULL: generic */
static int isa_available[ISA_COUNT];
static int isa_best;
static atomic_int isa_current;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

static int cpu_has_avx2(void)
{
#if defined(__x86_64__) || defined(__i386__)
    /* f16c by CPUID leaf 1 (ECX): clang 14's __builtin_cpu_supports does not know "f16c" */
    unsigned a, b, c, d;
    int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
#else
    return 0;
#endif
}

static int cpu_has_avx512(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
    return 0;
#endif
}

/* Fills isa_tables[isa] from src (NULL entries: generic) and isa_multi[isa]
 * from multi; 0 if src is empty (the file was built for another architecture). */
static int fill_table(int isa, const coll_reduce_fn src[COLL_OP_COUNT][COLL_DTYPE_COUNT],
                      const coll_reduce_multi_fn multi[COLL_OP_COUNT][COLL_DTYPE_COUNT])
{
    int any = 0;
    for (size_t op = 0; op < COLL_OP_COUNT; op++) {
        for (size_t dt = 0; dt < COLL_DTYPE_COUNT; dt++) {
            coll_reduce_fn fn = src ? src[op][dt] : NULL;
            any |= fn != NULL;
            isa_tables[isa][op][dt] = fn ? fn : gen_kernels[op][dt];
            isa_multi[isa][op][dt] = fn && multi ? multi[op][dt] : NULL;
        }
    }
    return any;
}

static void isa_init(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
#endif
    fill_table(ISA_GENERIC, NULL, NULL);
    isa_available[ISA_GENERIC] = 1;
    isa_best = ISA_GENERIC;
    if (cpu_has_avx2() && fill_table(ISA_AVX2, coll_reduce_kernels_avx2, coll_reduce_multi_avx2)) {
        isa_available[ISA_AVX2] = 1;
        isa_best = ISA_AVX2;
    }
    if (cpu_has_avx512() && fill_table(ISA_AVX512, coll_reduce_kernels_avx512, coll_reduce_multi_avx512)) {
        isa_available[ISA_AVX512] = 1;
        isa_best = ISA_AVX512;
    }
    atomic_store_explicit(&isa_current, isa_best, memory_order_release);
}

/* The current ISA (after the one-time set-up), or -1 for an invalid op or dtype. */
static int current_isa(coll_op_t op, coll_dtype_t dt)
{
    if ((unsigned)op >= COLL_OP_COUNT || (unsigned)dt >= COLL_DTYPE_COUNT)
        return -1;
    pthread_once(&isa_once, isa_init);
    return atomic_load_explicit(&isa_current, memory_order_relaxed);
}

coll_reduce_fn coll_reduce_kernel(coll_op_t op, coll_dtype_t dt)
{
    int isa = current_isa(op, dt);
    return isa < 0 ? NULL : isa_tables[isa][op][dt];
}

coll_reduce_multi_fn coll_reduce_multi_kernel(coll_op_t op, coll_dtype_t dt)
{
    int isa = current_isa(op, dt);
    return isa < 0 ? NULL : isa_multi[isa][op][dt];
}

coll_reduce_fn coll_reduce_kernel_ref(coll_op_t op, coll_dtype_t dt)
{
    if ((unsigned)op >= COLL_OP_COUNT || (unsigned)dt >= COLL_DTYPE_COUNT)
        return NULL;
    return ref_kernels[op][dt];
}

const char *coll_reduce_isa(void)
{
    pthread_once(&isa_once, isa_init);
    return isa_names[atomic_load_explicit(&isa_current, memory_order_relaxed)];
}

/* "avx512", "avx2", "generic"; NULL, "" or "auto" restore the best one. */
int coll_reduce_force_isa(const char *isa)
{
    pthread_once(&isa_once, isa_init);
    if (isa == NULL || isa[0] == '\0' || strcmp(isa, "auto") == 0) {
        atomic_store_explicit(&isa_current, isa_best, memory_order_relaxed);
        return 0;
    }
    for (int i = 0; i < ISA_COUNT; i++) {
        if (strcmp(isa, isa_names[i]) == 0) {
            if (!isa_available[i])
                return -1;
            atomic_store_explicit(&isa_current, i, memory_order_relaxed);
            return 0;
        }
    }
    return -1;
}
