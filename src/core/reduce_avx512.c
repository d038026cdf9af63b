/*
 * reduce_avx512.c - AVX-512 (F, BW, VL, DQ) + F16C reduction kernels.
 *
 * Built with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mf16c; reduce.c
 * selects this table only after checking the CPU, so nothing here runs on a
 * machine without those features. Semantics: see reduce.c (same results as the
 * scalar reference, bit for bit, NaN payloads aside).
 *
 * Every kernel is run() with the element size and a vector op: two 64-byte
 * vectors per iteration, then one, then a masked load/store for the tail, so a
 * tiny n costs one masked iteration. Loads of a and b precede the store of the
 * same bytes, which makes out == a and out == b safe. The k-input kernels
 * (run_multi) are the same loop over k inputs.
 */
#include "core/reduce.h"
#include "core/reduce_table.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__F16C__)

#include <immintrin.h>
#include <stdint.h>

typedef __m512i (*vop_t)(__m512i, __m512i);
typedef __m512 (*fop_t)(__m512, __m512);

#define INLINE static inline __attribute__((always_inline))

/* The types and intrinsics reduce_isa_ops.h is written in. */
#define VEC __m512i
#define VPS __m512
#define V(op) _mm512_##op
#define V_SI(op) _mm512_##op##_si512
#define V_FROM_SI(type) _mm512_castsi512_##type

INLINE __m512i load_tail(const void *p, size_t k, size_t es)
{
    switch (es) {
    case 1: return _mm512_maskz_loadu_epi8((__mmask64)((1ull << k) - 1), p);
    case 2: return _mm512_maskz_loadu_epi16((__mmask32)((1ull << k) - 1), p);
    case 4: return _mm512_maskz_loadu_epi32((__mmask16)((1u << k) - 1), p);
    default: return _mm512_maskz_loadu_epi64((__mmask8)((1u << k) - 1), p);
    }
}

INLINE void store_tail(void *p, __m512i v, size_t k, size_t es)
{
    switch (es) {
    case 1: _mm512_mask_storeu_epi8(p, (__mmask64)((1ull << k) - 1), v); break;
    case 2: _mm512_mask_storeu_epi16(p, (__mmask32)((1ull << k) - 1), v); break;
    case 4: _mm512_mask_storeu_epi32(p, (__mmask16)((1u << k) - 1), v); break;
    default: _mm512_mask_storeu_epi64(p, (__mmask8)((1u << k) - 1), v); break;
    }
}

INLINE void run(void *out, const void *a, const void *b, size_t n, size_t es, vop_t op)
{
    unsigned char *o = out;
    const unsigned char *x = a, *y = b;
    size_t bytes = n * es, i = 0;

    for (; i + 128 <= bytes; i += 128) {
        __m512i x0 = _mm512_loadu_si512(x + i), x1 = _mm512_loadu_si512(x + i + 64);
        __m512i y0 = _mm512_loadu_si512(y + i), y1 = _mm512_loadu_si512(y + i + 64);
        _mm512_storeu_si512(o + i, op(x0, y0));
        _mm512_storeu_si512(o + i + 64, op(x1, y1));
    }
    if (i + 64 <= bytes) {
        __m512i x0 = _mm512_loadu_si512(x + i), y0 = _mm512_loadu_si512(y + i);
        _mm512_storeu_si512(o + i, op(x0, y0));
        i += 64;
    }
    if (i < bytes) {
        size_t k = (bytes - i) / es;
        store_tail(o + i, op(load_tail(x + i, k, es), load_tail(y + i, k, es)), k, es);
    }
}

/* One vector (cnt < 64 / es elements at byte i) of every input, combined;
 * stored into o and, unless NULL, d. */
INLINE void multi_tail(unsigned char *o, unsigned char *d, const void *const *in, int k, size_t i, size_t cnt,
                       size_t es, vop_t op)
{
    __m512i v = load_tail((const unsigned char *)in[0] + i, cnt, es);
    for (int j = 1; j < k; j++)
        v = op(v, load_tail((const unsigned char *)in[j] + i, cnt, es));
    store_tail(o + i, v, cnt, es);
    if (d)
        store_tail(d + i, v, cnt, es);
}

/* k inputs in one pass: two vectors of in[0], combined in registers with the
 * same bytes of in[1], in[2], ... in that order, then stored (streamed when
 * nt, from the first 64-byte boundary of out on), and stored again into dup
 * (normal stores) unless dup is NULL. Every input's bytes are loaded before
 * out's same bytes are written: out may be an input (dup may not). */
INLINE void run_multi(void *out, void *dup, const void *const *in, int k, size_t n, size_t es, vop_t op, int nt)
{
    unsigned char *o = out, *d = dup;
    size_t bytes = n * es, i = 0;
    if (nt) {
        size_t head = (size_t)(-(uintptr_t)o & 63);
        if (head % es) /* out not element-aligned: no aligned stream possible */
            nt = 0;
        else if ((i = head < bytes ? head : bytes) > 0)
            multi_tail(o, d, in, k, 0, i / es, es, op);
    }
    for (; i + 128 <= bytes; i += 128) {
        const unsigned char *s = in[0];
        __m512i v0 = _mm512_loadu_si512(s + i), v1 = _mm512_loadu_si512(s + i + 64);
        for (int j = 1; j < k; j++) {
            s = in[j];
            v0 = op(v0, _mm512_loadu_si512(s + i));
            v1 = op(v1, _mm512_loadu_si512(s + i + 64));
        }
        if (nt) {
            _mm512_stream_si512((void *)(o + i), v0);
            _mm512_stream_si512((void *)(o + i + 64), v1);
        } else {
            _mm512_storeu_si512(o + i, v0);
            _mm512_storeu_si512(o + i + 64, v1);
        }
        if (d) {
            _mm512_storeu_si512(d + i, v0);
            _mm512_storeu_si512(d + i + 64, v1);
        }
    }
    for (; i + 64 <= bytes; i += 64) {
        __m512i v = _mm512_loadu_si512((const unsigned char *)in[0] + i);
        for (int j = 1; j < k; j++)
            v = op(v, _mm512_loadu_si512((const unsigned char *)in[j] + i));
        _mm512_storeu_si512(o + i, v);
        if (d)
            _mm512_storeu_si512(d + i, v);
    }
    if (i < bytes)
        multi_tail(o, d, in, k, i, (bytes - i) / es, es, op);
    if (nt)
        _mm_sfence();
}

/* ---- integers: the 64-bit product and compares (the others: reduce_isa_ops.h) ---- */

INLINE __m512i prod_64(__m512i a, __m512i b) { return _mm512_mullo_epi64(a, b); }

INLINE __m512i max_i64(__m512i a, __m512i b) { return _mm512_max_epi64(a, b); }
INLINE __m512i min_i64(__m512i a, __m512i b) { return _mm512_min_epi64(a, b); }
INLINE __m512i max_u64(__m512i a, __m512i b) { return _mm512_max_epu64(a, b); }
INLINE __m512i min_u64(__m512i a, __m512i b) { return _mm512_min_epu64(a, b); }

/* ---- fp32 / fp64 ---- */

/* IEEE maximum: max_ps, but +0 over -0 (and of the bits where equal) and the
 * NaN of a + b where either is NaN. */
INLINE __m512 fmax_ieee(__m512 a, __m512 b)
{
    __m512 r = _mm512_max_ps(a, b);
    r = _mm512_mask_and_ps(r, _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), a, b);
    return _mm512_mask_add_ps(r, _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), a, b);
}

INLINE __m512 fmin_ieee(__m512 a, __m512 b)
{
    __m512 r = _mm512_min_ps(a, b);
    r = _mm512_mask_or_ps(r, _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), a, b);
    return _mm512_mask_add_ps(r, _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), a, b);
}

/* IEEE maximum / minimum on fp64 lanes, as fmax_ieee / fmin_ieee. */
#define F64_IEEE(NAME, PICK, EQUAL) \
    INLINE __m512i NAME(__m512i ai, __m512i bi) \
    { \
        __m512d a = _mm512_castsi512_pd(ai), b = _mm512_castsi512_pd(bi); \
        __m512d r = PICK(a, b); \
        r = EQUAL(r, _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ), a, b); \
        r = _mm512_mask_add_pd(r, _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q), a, b); \
        return _mm512_castpd_si512(r); \
    }
F64_IEEE(max_f64, _mm512_max_pd, _mm512_mask_and_pd)
F64_IEEE(min_f64, _mm512_min_pd, _mm512_mask_or_pd)

/* ---- fp16: F16C conversions are exact and round to nearest even ---- */

INLINE __m512i f16_apply(__m512i a, __m512i b, fop_t f)
{
    __m512 alo = _mm512_cvtph_ps(_mm512_castsi512_si256(a));
    __m512 ahi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(a, 1));
    __m512 blo = _mm512_cvtph_ps(_mm512_castsi512_si256(b));
    __m512 bhi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(b, 1));
    enum { RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* a constant expression, as clang requires */
    __m256i lo = _mm512_cvtps_ph(f(alo, blo), RN);
    __m256i hi = _mm512_cvtps_ph(f(ahi, bhi), RN);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

/* ---- bf16: widen by shifting into the high half; round in integers ---- */

/* fp32 bits -> bf16 in the low half of each 32-bit lane (nearest even, NaN
 * quiet). Not vcvtneps2bf16: it flushes subnormals. */
INLINE __m512i f32_to_b16_lanes(__m512 f)
{
    __m512i bits = _mm512_castps_si512(f);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, bits, _mm512_set1_epi32(0x400000));
    return _mm512_srli_epi32(r, 16);
}

/* ---- the ops alike at every width (sum, prod, max/min up to 32 bits, fp32/fp64
 * sum and prod, the fp32 and bf16 appliers) ---- */

#include "core/reduce_isa_ops.h"

/* ---- the fp32/fp16/bf16 ops, the kernels and the table (reduce_table.h) ---- */

COLL_REDUCE_ISA_FLOAT_OPS(__m512i)
COLL_REDUCE_ISA_KERNELS

const coll_reduce_fn coll_reduce_kernels_avx512[COLL_OP_COUNT][COLL_DTYPE_COUNT] = COLL_REDUCE_TABLE(k);
const coll_reduce_multi_fn coll_reduce_multi_avx512[COLL_OP_COUNT][COLL_DTYPE_COUNT] = COLL_REDUCE_TABLE(m);

#else /* built without the ISA flags (another architecture): no kernels */

const coll_reduce_fn coll_reduce_kernels_avx512[COLL_OP_COUNT][COLL_DTYPE_COUNT];
const coll_reduce_multi_fn coll_reduce_multi_avx512[COLL_OP_COUNT][COLL_DTYPE_COUNT];

#endif
