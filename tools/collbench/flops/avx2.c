/*
 * avx2.c - AVX2 peak-throughput kernels (built with -mavx2 -mfma -mf16c
 * -mavxvnni; run only after flops.c checked `requires` on this CPU).
 *
 * 16 ymm registers: 10 accumulators (FMA latency 4 x 2 ports needs 8) plus the
 * operands. Per step:
 *   fp64  vfmadd231pd x10        10 x 4 lanes x 2              =  80 ops
 *   fp32  vfmadd231ps x10        10 x 8 lanes x 2              = 160 ops
 *   fp16  vcvtph2ps + 10 fp32 FMA (fp16 storage, fp32 compute) = 160 ops
 *   bf16  vpmovzxwd+vpslld + 10 fp32 FMA                       = 160 ops
 *   int8  AVX-VNNI vpdpbusd x10  10 x 8 lanes x (4 mul + 4 add) = 640 ops
 *   int8  vpmaddubsw+vpmaddwd+vpaddd x8                          = 512 ops
 */
#include "flops.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "acc.h"

static inline uint64_t bad_ps(__m256 x, float e)
{
    return 8 - (uint64_t)__builtin_popcount(_mm256_movemask_ps(_mm256_cmp_ps(x, _mm256_set1_ps(e), _CMP_EQ_OQ)));
}

static inline uint64_t bad_pd(__m256d x, double e)
{
    return 4 - (uint64_t)__builtin_popcount(_mm256_movemask_pd(_mm256_cmp_pd(x, _mm256_set1_pd(e), _CMP_EQ_OQ)));
}

static inline uint64_t bad_epi32(__m256i x, uint32_t e)
{
    __m256i eq = _mm256_cmpeq_epi32(x, _mm256_set1_epi32((int)e));
    return 8 - (uint64_t)__builtin_popcount(_mm256_movemask_ps(_mm256_castsi256_ps(eq)));
}

static uint64_t fp64_fma(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m256d va = _mm256_set1_pd(p->a), vb = _mm256_set1_pd(p->b);
#define X(k) __m256d x##k = _mm256_set1_pd((double)(k));
    CBT_ACC10(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm256_fmadd_pd(x##k, va, vb);
        CBT_ACC10(X)
#undef X
    }
    uint64_t bad = 0;
#define X(k) bad += bad_pd(x##k, (double)(k) + (double)steps * p->b);
    CBT_ACC10(X)
#undef X
    return bad;
}

static uint64_t fp32_fma(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m256 va = _mm256_set1_ps((float)p->a), vb = _mm256_set1_ps((float)p->b);
#define X(k) __m256 x##k = _mm256_set1_ps((float)(k));
    CBT_ACC10(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm256_fmadd_ps(x##k, va, vb);
        CBT_ACC10(X)
#undef X
    }
    uint64_t bad = 0;
#define X(k) bad += bad_ps(x##k, (float)((double)(k) + (double)steps * p->b));
    CBT_ACC10(X)
#undef X
    return bad;
}

/* fp16 storage, fp32 compute; the empty asm keeps the conversion inside the loop. */
static uint64_t fp16_f16c(uint64_t steps, const cbt_fk_args_t *p)
{
    __m128i h = _mm_set1_epi16((short)p->fp16_a);
    const __m256 vb = _mm256_set1_ps((float)p->b);
#define X(k) __m256 x##k = _mm256_set1_ps((float)(k));
    CBT_ACC10(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
        __asm__ volatile("" : "+x"(h));
        const __m256 va = _mm256_cvtph_ps(h);
#define X(k) x##k = _mm256_fmadd_ps(x##k, va, vb);
        CBT_ACC10(X)
#undef X
    }
    uint64_t bad = 0;
#define X(k) bad += bad_ps(x##k, (float)((double)(k) + (double)steps * p->b));
    CBT_ACC10(X)
#undef X
    return bad;
}

static uint64_t bf16_cvt(uint64_t steps, const cbt_fk_args_t *p)
{
    __m128i h = _mm_set1_epi16((short)p->bf16_a);
    const __m256 vb = _mm256_set1_ps((float)p->b);
#define X(k) __m256 x##k = _mm256_set1_ps((float)(k));
    CBT_ACC10(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
        __asm__ volatile("" : "+x"(h));
        const __m256 va = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
#define X(k) x##k = _mm256_fmadd_ps(x##k, va, vb);
        CBT_ACC10(X)
#undef X
    }
    uint64_t bad = 0;
#define X(k) bad += bad_ps(x##k, (float)((double)(k) + (double)steps * p->b));
    CBT_ACC10(X)
#undef X
    return bad;
}

static uint64_t int8_avxvnni(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m256i va = _mm256_set1_epi8(p->i8_a), vb = _mm256_set1_epi8(p->i8_b);
#define X(k) __m256i x##k = _mm256_set1_epi32((k));
    CBT_ACC10(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm256_dpbusd_avx_epi32(x##k, va, vb);
        CBT_ACC10(X)
#undef X
    }
    const uint32_t inc = 4u * (uint32_t)(uint8_t)p->i8_a * (uint32_t)p->i8_b;
    uint64_t bad = 0;
#define X(k) bad += bad_epi32(x##k, (uint32_t)(k) + (uint32_t)steps * inc);
    CBT_ACC10(X)
#undef X
    return bad;
}

static uint64_t int8_avx2(uint64_t steps, const cbt_fk_args_t *p)
{
    const __m256i va = _mm256_set1_epi8(p->i8_a), vb = _mm256_set1_epi8(p->i8_b);
    const __m256i ones = _mm256_set1_epi16(1);
#define X(k) __m256i x##k = _mm256_set1_epi32((k));
    CBT_ACC8(X)
#undef X
    for (uint64_t s = 0; s < steps; s++) {
#define X(k) x##k = _mm256_add_epi32(x##k, _mm256_madd_epi16(_mm256_maddubs_epi16(va, vb), ones));
        CBT_ACC8(X)
#undef X
    }
    const uint32_t inc = 4u * (uint32_t)(uint8_t)p->i8_a * (uint32_t)p->i8_b;
    uint64_t bad = 0;
#define X(k) bad += bad_epi32(x##k, (uint32_t)(k) + (uint32_t)steps * inc);
    CBT_ACC8(X)
#undef X
    return bad;
}

#define A (CBT_CPU_AVX2 | CBT_CPU_FMA)
const cbt_fkern_t cbt_fk_avx2[] = {
    {CBT_FP64, "avx2-fma", "ymm vfmadd231pd, 10 accumulators", A, 4, 80, 1u << 20, fp64_fma},
    {CBT_FP32, "avx2-fma", "ymm vfmadd231ps, 10 accumulators", A, 8, 160, 1u << 20, fp32_fma},
    {CBT_FP16, "avx2-f16c", "fp16 storage: vcvtph2ps + 10 ymm vfmadd231ps (fp32 compute)", A | CBT_CPU_F16C, 8, 160,
     1u << 20, fp16_f16c},
    {CBT_BF16, "avx2-cvt", "bf16 storage: vpmovzxwd+vpslld + 10 ymm vfmadd231ps (fp32 compute)", A, 8, 160, 1u << 20,
     bf16_cvt},
    {CBT_INT8, "avxvnni", "ymm {vex} vpdpbusd, 10 accumulators", A | CBT_CPU_AVXVNNI, 32, 640, 1u << 20, int8_avxvnni},
    {CBT_INT8, "avx2", "ymm vpmaddubsw+vpmaddwd+vpaddd, 8 accumulators", A, 32, 512, 1u << 20, int8_avx2},
};
#undef A
const size_t cbt_fk_avx2_count = sizeof cbt_fk_avx2 / sizeof cbt_fk_avx2[0];

#else
const cbt_fkern_t cbt_fk_avx2[1];
const size_t cbt_fk_avx2_count = 0;
#endif
