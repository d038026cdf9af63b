/*
 * avx512.c - AVX-512 peak-throughput kernels (built with -mavx512f -mavx512bw
 * -mavx512vl -mavx512dq -mfma -mf16c -mavx512bf16 -mavx512vnni -mavx512fp16; run
 * only after flops.c checked `requires` on this CPU).
 *
 * 16 independent zmm accumulators per kernel: FMA latency 4 x 2 ports needs 8 in
 * flight; 16 leaves room for the 5-cycle dot-product instructions. Per step:
 *   fp64  vfmadd231pd x16      16 x  8 lanes x 2          =  256 ops
 *   fp32  vfmadd231ps x16      16 x 16 lanes x 2          =  512 ops
 *   fp16  vfmadd231ph x16      16 x 32 lanes x 2          = 1024 ops
 *   bf16  vdpbf16ps x16        16 x 16 lanes x (2 mul + 2 add) = 1024 ops
 *   int8  vpdpbusd x16         16 x 16 lanes x (4 mul + 4 add) = 2048 ops
 * Fallbacks: fp16/bf16 stored in 16 bits, converted once per step and computed
 * with fp32 FMA (vcvtph2ps / vpmovzxwd+vpslld); int8 without VNNI with
 * vpmaddubsw + vpmaddwd + vpaddd (same 2048 ops, three instructions).
 */
#include "flops.h"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>

#include "acc.h"

static uint64_t fp64_fma(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m512d va = _mm512_set1_pd(p->a), vb = _mm512_set1_pd(p->b);
#define X(k) __m512d x##k = _mm512_set1_pd((double)(k));
    CBT_ACC16(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm512_fmadd_pd(x##k, va, vb);
        CBT_ACC16(X)
#undef X
    }
    uint64_t bad = 0;
#define X(k) \
    bad += 8 \
        - (uint64_t)__builtin_popcount( \
               _mm512_cmp_pd_mask(x##k, _mm512_set1_pd((double)(k) + (double)steps * p->b), _CMP_EQ_OQ));
    CBT_ACC16(X)
#undef X
    return bad;
}

static uint64_t fp32_fma(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m512 va = _mm512_set1_ps((float)p->a), vb = _mm512_set1_ps((float)p->b);
#define X(k) __m512 x##k = _mm512_set1_ps((float)(k));
    CBT_ACC16(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm512_fmadd_ps(x##k, va, vb);
        CBT_ACC16(X)
#undef X
    }
    uint64_t bad = 0;
#define X(k) \
    bad += 16 \
        - (uint64_t)__builtin_popcount( \
               _mm512_cmp_ps_mask(x##k, _mm512_set1_ps((float)((double)(k) + (double)steps * p->b)), _CMP_EQ_OQ));
    CBT_ACC16(X)
#undef X
    return bad;
}

static uint64_t fp16_fma(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m512h va = _mm512_set1_ph((_Float16)p->a), vb = _mm512_set1_ph((_Float16)p->b);
#define X(k) __m512h x##k = _mm512_set1_ph((_Float16)(k));
    CBT_ACC16(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm512_fmadd_ph(x##k, va, vb);
        CBT_ACC16(X)
#undef X
    }
    uint64_t bad = 0;
#define X(k) \
    bad += 32 \
        - (uint64_t)__builtin_popcount( \
               _mm512_cmp_ph_mask(x##k, _mm512_set1_ph((_Float16)((double)(k) + (double)steps * p->b)), _CMP_EQ_OQ));
    CBT_ACC16(X)
#undef X
    return bad;
}

/* fp16 storage, fp32 compute: one vcvtph2ps per step feeds 16 FMAs. The empty asm
 * makes the 16-bit operand look new every step, so the conversion stays in the loop. */
static uint64_t fp16_f16c(uint64_t steps, const cbt_fk_args_t *p)
{
    __m256i h = _mm256_set1_epi16((short)p->fp16_a);
    const __m512 vb = _mm512_set1_ps((float)p->b);
#define X(k) __m512 x##k = _mm512_set1_ps((float)(k));
    CBT_ACC16(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
        __asm__ volatile("" : "+v"(h));
        const __m512 va = _mm512_cvtph_ps(h);
#define X(k) x##k = _mm512_fmadd_ps(x##k, va, vb);
        CBT_ACC16(X)
#undef X
    }
    uint64_t bad = 0;
#define X(k) \
    bad += 16 \
        - (uint64_t)__builtin_popcount( \
               _mm512_cmp_ps_mask(x##k, _mm512_set1_ps((float)((double)(k) + (double)steps * p->b)), _CMP_EQ_OQ));
    CBT_ACC16(X)
#undef X
    return bad;
}

static uint64_t bf16_dp(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m512bh va = (__m512bh)_mm512_set1_epi16((short)p->bf16_a);
    const __m512bh vb = (__m512bh)_mm512_set1_epi16((short)p->bf16_a);
#define X(k) __m512 x##k = _mm512_set1_ps((float)(k));
    CBT_ACC16(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm512_dpbf16_ps(x##k, va, vb);
        CBT_ACC16(X)
#undef X
    }
    /* each step adds a0*b0 + a1*b1 = 2 (a = b = 1.0) */
    uint64_t bad = 0;
#define X(k) \
    bad += 16 \
        - (uint64_t)__builtin_popcount( \
               _mm512_cmp_ps_mask(x##k, _mm512_set1_ps((float)((double)(k) + 2.0 * (double)steps)), _CMP_EQ_OQ));
    CBT_ACC16(X)
#undef X
    return bad;
}

/* bf16 storage, fp32 compute: widen (vpmovzxwd) and shift (vpslld 16) once per step. */
static uint64_t bf16_cvt(uint64_t steps, const cbt_fk_args_t *p)
{
    __m256i h = _mm256_set1_epi16((short)p->bf16_a);
    const __m512 vb = _mm512_set1_ps((float)p->b);
#define X(k) __m512 x##k = _mm512_set1_ps((float)(k));
    CBT_ACC16(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
        __asm__ volatile("" : "+v"(h));
        const __m512 va = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
#define X(k) x##k = _mm512_fmadd_ps(x##k, va, vb);
        CBT_ACC16(X)
#undef X
    }
    uint64_t bad = 0;
#define X(k) \
    bad += 16 \
        - (uint64_t)__builtin_popcount( \
               _mm512_cmp_ps_mask(x##k, _mm512_set1_ps((float)((double)(k) + (double)steps * p->b)), _CMP_EQ_OQ));
    CBT_ACC16(X)
#undef X
    return bad;
}

static uint64_t int8_vnni(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m512i va = _mm512_set1_epi8(p->i8_a), vb = _mm512_set1_epi8(p->i8_b);
#define X(k) __m512i x##k = _mm512_set1_epi32((k));
    CBT_ACC16(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm512_dpbusd_epi32(x##k, va, vb);
        CBT_ACC16(X)
#undef X
    }
    const uint32_t inc = 4u * (uint32_t)(uint8_t)p->i8_a * (uint32_t)p->i8_b;
    uint64_t bad = 0;
#define X(k) \
    bad += 16 \
        - (uint64_t)__builtin_popcount( \
               _mm512_cmpeq_epi32_mask(x##k, _mm512_set1_epi32((int)(uint32_t)((k) + (uint32_t)steps * inc))));
    CBT_ACC16(X)
#undef X
    return bad;
}

static uint64_t int8_bw(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m512i va = _mm512_set1_epi8(p->i8_a), vb = _mm512_set1_epi8(p->i8_b);
    const __m512i ones = _mm512_set1_epi16(1);
#define X(k) __m512i x##k = _mm512_set1_epi32((k));
    CBT_ACC16(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm512_add_epi32(x##k, _mm512_madd_epi16(_mm512_maddubs_epi16(va, vb), ones));
        CBT_ACC16(X)
#undef X
    }
    const uint32_t inc = 4u * (uint32_t)(uint8_t)p->i8_a * (uint32_t)p->i8_b;
    uint64_t bad = 0;
#define X(k) \
    bad += 16 \
        - (uint64_t)__builtin_popcount( \
               _mm512_cmpeq_epi32_mask(x##k, _mm512_set1_epi32((int)(uint32_t)((k) + (uint32_t)steps * inc))));
    CBT_ACC16(X)
#undef X
    return bad;
}

#define F CBT_CPU_AVX512F
const cbt_fkern_t cbt_fk_avx512[] = {
    {CBT_FP64, "avx512f", "zmm vfmadd231pd, 16 accumulators", F | CBT_CPU_FMA, 8, 256, 1u << 20, fp64_fma},
    {CBT_FP32, "avx512f", "zmm vfmadd231ps, 16 accumulators", F | CBT_CPU_FMA, 16, 512, 1u << 20, fp32_fma},
    {CBT_FP16, "avx512fp16", "zmm vfmadd231ph, 16 accumulators",
     F | CBT_CPU_AVX512BW | CBT_CPU_AVX512VL | CBT_CPU_AVX512FP16, 32, 1024, 1024, fp16_fma},
    {CBT_FP16, "avx512f-f16c", "fp16 storage: vcvtph2ps + 16 zmm vfmadd231ps (fp32 compute)", F | CBT_CPU_F16C, 16, 512,
     1u << 20, fp16_f16c},
    {CBT_BF16, "avx512bf16", "zmm vdpbf16ps, 16 accumulators", F | CBT_CPU_AVX512BW | CBT_CPU_AVX512BF16, 32, 1024,
     1u << 20, bf16_dp},
    {CBT_BF16, "avx512f-cvt", "bf16 storage: vpmovzxwd+vpslld + 16 zmm vfmadd231ps (fp32 compute)", F, 16, 512,
     1u << 20, bf16_cvt},
    {CBT_INT8, "avx512vnni", "zmm vpdpbusd, 16 accumulators", F | CBT_CPU_AVX512VNNI, 64, 2048, 1u << 20, int8_vnni},
    {CBT_INT8, "avx512bw", "zmm vpmaddubsw+vpmaddwd+vpaddd, 16 accumulators", F | CBT_CPU_AVX512BW, 64, 2048, 1u << 20,
     int8_bw},
};
#undef F
const size_t cbt_fk_avx512_count = sizeof cbt_fk_avx512 / sizeof cbt_fk_avx512[0];

#else /* not an x86-64 AVX-512 build */
const cbt_fkern_t cbt_fk_avx512[1];
const size_t cbt_fk_avx512_count = 0;
#endif
