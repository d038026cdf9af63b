/*
 * reduce_avx2.c - AVX2 + FMA + F16C reduction kernels.
 *
 * Built with -mavx2 -mfma -mf16c; reduce.c selects this table only after
 * checking the CPU. Semantics: see reduce.c (same results as the scalar
 * reference, bit for bit, NaN payloads aside).
 *
 * Every kernel is run() with the element size and a vector op: two 32-byte
 * vectors per iteration, then one, then the tail: a masked load/store for 4-
 * and 8-byte elements, a zero-padded 32-byte buffer for 1- and 2-byte ones.
 * Loads of a and b precede the store of the same bytes, which makes out == a
 * and out == b safe. The k-input kernels (run_multi) are the same loop over k
 * inputs.
 */
#include "core/reduce.h"
#include "core/reduce_table.h"

#if defined(__AVX2__) && defined(__F16C__)

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

typedef __m256i (*vop_t)(__m256i, __m256i);
typedef __m256 (*fop_t)(__m256, __m256);

#define INLINE static inline __attribute__((always_inline))

/* The types and intrinsics reduce_isa_ops.h is written in. */
#define VEC __m256i
#define VPS __m256
#define V(op) _mm256_##op
#define V_SI(op) _mm256_##op##_si256
#define V_FROM_SI(type) _mm256_castsi256_##type

/* Copies n < 32 bytes with fixed-size pieces (inlined, unlike memcpy(n)). */
INLINE void copy_small(unsigned char *d, const unsigned char *s, size_t n)
{
    if (n & 16) {
        memcpy(d, s, 16);
        d += 16;
        s += 16;
    }
    if (n & 8) {
        memcpy(d, s, 8);
        d += 8;
        s += 8;
    }
    if (n & 4) {
        memcpy(d, s, 4);
        d += 4;
        s += 4;
    }
    if (n & 2) {
        memcpy(d, s, 2);
        d += 2;
        s += 2;
    }
    if (n & 1)
        *d = *s;
}

INLINE void run(void *out, const void *a, const void *b, size_t n, size_t es, vop_t op)
{
    unsigned char *o = out;
    const unsigned char *x = a, *y = b;
    size_t bytes = n * es, i = 0;

    for (; i + 64 <= bytes; i += 64) {
        __m256i x0 = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i x1 = _mm256_loadu_si256((const __m256i *)(x + i + 32));
        __m256i y0 = _mm256_loadu_si256((const __m256i *)(y + i));
        __m256i y1 = _mm256_loadu_si256((const __m256i *)(y + i + 32));
        _mm256_storeu_si256((__m256i *)(o + i), op(x0, y0));
        _mm256_storeu_si256((__m256i *)(o + i + 32), op(x1, y1));
    }
    if (i + 32 <= bytes) {
        __m256i x0 = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i y0 = _mm256_loadu_si256((const __m256i *)(y + i));
        _mm256_storeu_si256((__m256i *)(o + i), op(x0, y0));
        i += 32;
    }
    if (i < bytes && es >= 4) { /* whole dwords: masked load/store */
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)((bytes - i) / 4)),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256i r = op(_mm256_maskload_epi32((const int *)(x + i), m), _mm256_maskload_epi32((const int *)(y + i), m));
        _mm256_maskstore_epi32((int *)(o + i), m, r);
    } else if (i < bytes) {
        unsigned char tx[32] = {0}, ty[32] = {0}, to[32];
        size_t rest = bytes - i;
        copy_small(tx, x + i, rest);
        copy_small(ty, y + i, rest);
        __m256i r = op(_mm256_loadu_si256((const __m256i *)tx), _mm256_loadu_si256((const __m256i *)ty));
        _mm256_storeu_si256((__m256i *)to, r);
        copy_small(o + i, to, rest);
    }
}

/* The last bytes (< 32) at byte i of every input, combined: masked dwords for
 * 4- and 8-byte elements, zero-padded copies for 1- and 2-byte ones. */
INLINE void multi_tail1(unsigned char *o, const void *const *in, int k, size_t i, size_t rest, size_t es, vop_t op)
{
    if (es >= 4) {
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(rest / 4)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256i v = _mm256_maskload_epi32((const int *)((const unsigned char *)in[0] + i), m);
        for (int j = 1; j < k; j++)
            v = op(v, _mm256_maskload_epi32((const int *)((const unsigned char *)in[j] + i), m));
        _mm256_maskstore_epi32((int *)(o + i), m, v);
        return;
    }
    unsigned char t[32] = {0}, to[32];
    copy_small(t, (const unsigned char *)in[0] + i, rest);
    __m256i v = _mm256_loadu_si256((const __m256i *)t);
    for (int j = 1; j < k; j++) {
        copy_small(t, (const unsigned char *)in[j] + i, rest);
        v = op(v, _mm256_loadu_si256((const __m256i *)t));
    }
    _mm256_storeu_si256((__m256i *)to, v);
    copy_small(o + i, to, rest);
}

/* multi_tail1 into o and, unless NULL, the same bytes into d (after o is
 * written: o may be an input, d may not). */
INLINE void multi_tail(unsigned char *o, unsigned char *d, const void *const *in, int k, size_t i, size_t rest,
                       size_t es, vop_t op)
{
    multi_tail1(o, in, k, i, rest, es, op);
    if (d)
        memcpy(d + i, o + i, rest);
}

/* k inputs in one pass: two vectors of in[0], combined in registers with the
 * same bytes of in[1], in[2], ... in that order, then stored (streamed when
 * nt, from the first 32-byte boundary of out on), and stored again into dup
 * (normal stores) unless dup is NULL. Every input's bytes are loaded before
 * out's same bytes are written: out may be an input (dup may not). */
INLINE void run_multi(void *out, void *dup, const void *const *in, int k, size_t n, size_t es, vop_t op, int nt)
{
    unsigned char *o = out, *d = dup;
    size_t bytes = n * es, i = 0;
    if (nt) {
        size_t head = (size_t)(-(uintptr_t)o & 31);
        if (head % es) /* out not element-aligned: no aligned stream possible */
            nt = 0;
        else if ((i = head < bytes ? head : bytes) > 0)
            multi_tail(o, d, in, k, 0, i, es, op);
    }
    for (; i + 64 <= bytes; i += 64) {
        const unsigned char *s = in[0];
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        for (int j = 1; j < k; j++) {
            s = in[j];
            v0 = op(v0, _mm256_loadu_si256((const __m256i *)(s + i)));
            v1 = op(v1, _mm256_loadu_si256((const __m256i *)(s + i + 32)));
        }
        if (nt) {
            _mm256_stream_si256((__m256i *)(o + i), v0);
            _mm256_stream_si256((__m256i *)(o + i + 32), v1);
        } else {
            _mm256_storeu_si256((__m256i *)(o + i), v0);
            _mm256_storeu_si256((__m256i *)(o + i + 32), v1);
        }
        if (d) {
            _mm256_storeu_si256((__m256i *)(d + i), v0);
            _mm256_storeu_si256((__m256i *)(d + i + 32), v1);
        }
    }
    for (; i + 32 <= bytes; i += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)((const unsigned char *)in[0] + i));
        for (int j = 1; j < k; j++)
            v = op(v, _mm256_loadu_si256((const __m256i *)((const unsigned char *)in[j] + i)));
        _mm256_storeu_si256((__m256i *)(o + i), v);
        if (d)
            _mm256_storeu_si256((__m256i *)(d + i), v);
    }
    if (i < bytes)
        multi_tail(o, d, in, k, i, bytes - i, es, op);
    if (nt)
        _mm_sfence();
}

/* ---- integers: the 64-bit product and compares (the others: reduce_isa_ops.h) ---- */

/* 64-bit low product: lo*lo + ((hi_a*lo_b + lo_a*hi_b) << 32). */
INLINE __m256i prod_64(__m256i a, __m256i b)
{
    __m256i lo = _mm256_mul_epu32(a, b);
    __m256i c1 = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), b);
    __m256i c2 = _mm256_mul_epu32(a, _mm256_srli_epi64(b, 32));
    return _mm256_add_epi64(lo, _mm256_slli_epi64(_mm256_add_epi64(c1, c2), 32));
}

/* 64-bit compares: signed only; unsigned by flipping the sign bits. */
INLINE __m256i max_i64(__m256i a, __m256i b) { return _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(a, b)); }
INLINE __m256i min_i64(__m256i a, __m256i b) { return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b)); }
INLINE __m256i gt_u64(__m256i a, __m256i b)
{
    __m256i bias = _mm256_set1_epi64x((long long)0x8000000000000000ull);
    return _mm256_cmpgt_epi64(_mm256_xor_si256(a, bias), _mm256_xor_si256(b, bias));
}
INLINE __m256i max_u64(__m256i a, __m256i b) { return _mm256_blendv_epi8(b, a, gt_u64(a, b)); }
INLINE __m256i min_u64(__m256i a, __m256i b) { return _mm256_blendv_epi8(a, b, gt_u64(a, b)); }

/* ---- fp32 / fp64 ---- */

/* IEEE maximum: max_ps, but +0 over -0 (and of the bits where equal) and the
 * NaN of a + b where either is NaN. */
INLINE __m256 fmax_ieee(__m256 a, __m256 b)
{
    __m256 r = _mm256_max_ps(a, b);
    r = _mm256_blendv_ps(r, _mm256_and_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
    return _mm256_blendv_ps(r, _mm256_add_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

INLINE __m256 fmin_ieee(__m256 a, __m256 b)
{
    __m256 r = _mm256_min_ps(a, b);
    r = _mm256_blendv_ps(r, _mm256_or_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
    return _mm256_blendv_ps(r, _mm256_add_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

/* IEEE maximum / minimum on fp64 lanes, as fmax_ieee / fmin_ieee. */
#define F64_IEEE(NAME, PICK, EQUAL) \
    INLINE __m256i NAME(__m256i ai, __m256i bi) \
    { \
        __m256d a = _mm256_castsi256_pd(ai), b = _mm256_castsi256_pd(bi); \
        __m256d r = PICK(a, b); \
        r = _mm256_blendv_pd(r, EQUAL(a, b), _mm256_cmp_pd(a, b, _CMP_EQ_OQ)); \
        r = _mm256_blendv_pd(r, _mm256_add_pd(a, b), _mm256_cmp_pd(a, b, _CMP_UNORD_Q)); \
        return _mm256_castpd_si256(r); \
    }
F64_IEEE(max_f64, _mm256_max_pd, _mm256_and_pd)
F64_IEEE(min_f64, _mm256_min_pd, _mm256_or_pd)

/* ---- fp16: F16C conversions are exact and round to nearest even ---- */

INLINE __m256i f16_apply(__m256i a, __m256i b, fop_t f)
{
    __m256 alo = _mm256_cvtph_ps(_mm256_castsi256_si128(a));
    __m256 ahi = _mm256_cvtph_ps(_mm256_extracti128_si256(a, 1));
    __m256 blo = _mm256_cvtph_ps(_mm256_castsi256_si128(b));
    __m256 bhi = _mm256_cvtph_ps(_mm256_extracti128_si256(b, 1));
    enum { RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* a constant expression, as clang requires */
    __m128i lo = _mm256_cvtps_ph(f(alo, blo), RN);
    __m128i hi = _mm256_cvtps_ph(f(ahi, bhi), RN);
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* ---- bf16: widen by shifting into the high half; round in integers ---- */

/* fp32 bits -> bf16 in the low half of each 32-bit lane (nearest even, NaN
 * quiet). */
INLINE __m256i f32_to_b16_lanes(__m256 f)
{
    __m256i bits = _mm256_castps_si256(f);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
    __m256i qnan = _mm256_or_si256(bits, _mm256_set1_epi32(0x400000));
    __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
    r = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(qnan), nan));
    return _mm256_srli_epi32(r, 16);
}

/* ---- the ops alike at every width (sum, prod, max/min up to 32 bits, fp32/fp64
 * sum and prod, the fp32 and bf16 appliers) ---- */

#include "core/reduce_isa_ops.h"

/* ---- the fp32/fp16/bf16 ops, the kernels and the table (reduce_table.h) ---- */

COLL_REDUCE_ISA_FLOAT_OPS(__m256i)
COLL_REDUCE_ISA_KERNELS

const coll_reduce_fn coll_reduce_kernels_avx2[COLL_OP_COUNT][COLL_DTYPE_COUNT] = COLL_REDUCE_TABLE(k);
const coll_reduce_multi_fn coll_reduce_multi_avx2[COLL_OP_COUNT][COLL_DTYPE_COUNT] = COLL_REDUCE_TABLE(m);

#else /* built without the ISA flags (another architecture): no kernels */

const coll_reduce_fn coll_reduce_kernels_avx2[COLL_OP_COUNT][COLL_DTYPE_COUNT];
const coll_reduce_multi_fn coll_reduce_multi_avx2[COLL_OP_COUNT][COLL_DTYPE_COUNT];

#endif
