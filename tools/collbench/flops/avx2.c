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

#define CBT_V(op) _mm256_##op
#define CBT_VH(op) _mm_##op
#define CBT_VPD __m256d
#define CBT_VPS __m256
#define CBT_VI __m256i
#define CBT_VHI __m128i
#define CBT_KEEP "+x"
#define CBT_CAST_PS _mm256_castsi256_ps

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

#define DPBUSD(x) _mm256_dpbusd_avx_epi32(x, va, vb)

#include "simd.h"

CBT_FK_KERNEL(fp64_fma, CBT_EACH10, __m256d, PD_AB, PD_K, CBT_FK_NONE, FMA_PD, BAD_PD)
CBT_FK_KERNEL(fp32_fma, CBT_EACH10, __m256, PS_AB, PS_K, CBT_FK_NONE, FMA_PS, BAD_PS)
CBT_FK_KERNEL(fp16_f16c, CBT_EACH10, __m256, FP16_B, PS_K, FP16_CVT, FMA_PS, BAD_PS)
CBT_FK_KERNEL(bf16_cvt, CBT_EACH10, __m256, BF16_B, PS_K, BF16_CVT, FMA_PS, BAD_PS)
CBT_FK_KERNEL(int8_avxvnni, CBT_EACH10, __m256i, I8_AB, EPI32_K, CBT_FK_NONE, DPBUSD, BAD_I8)
CBT_FK_KERNEL(int8_avx2, CBT_EACH8, __m256i, I8_AB1, EPI32_K, CBT_FK_NONE, MADD3, BAD_I8)

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
