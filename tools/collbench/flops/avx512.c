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

#define CBT_V(op) _mm512_##op
#define CBT_VH(op) _mm256_##op
#define CBT_VPD __m512d
#define CBT_VPS __m512
#define CBT_VI __m512i
#define CBT_VHI __m256i
#define CBT_KEEP "+v"
#define CBT_CAST_PS _mm512_castsi512_ps

/* Lanes of x that differ from e (one compare into a mask, counted). */
static inline uint64_t bad_pd(__m512d x, double e)
{
    return 8 - (uint64_t)__builtin_popcount(_mm512_cmp_pd_mask(x, _mm512_set1_pd(e), _CMP_EQ_OQ));
}

static inline uint64_t bad_ps(__m512 x, float e)
{
    return 16 - (uint64_t)__builtin_popcount(_mm512_cmp_ps_mask(x, _mm512_set1_ps(e), _CMP_EQ_OQ));
}

static inline uint64_t bad_ph(__m512h x, _Float16 e)
{
    return 32 - (uint64_t)__builtin_popcount(_mm512_cmp_ph_mask(x, _mm512_set1_ph(e), _CMP_EQ_OQ));
}

static inline uint64_t bad_epi32(__m512i x, uint32_t e)
{
    return 16 - (uint64_t)__builtin_popcount(_mm512_cmpeq_epi32_mask(x, _mm512_set1_epi32((int)e)));
}

#define PH_AB const __m512h va = _mm512_set1_ph((_Float16)p->a), vb = _mm512_set1_ph((_Float16)p->b);
#define BH_AA \
    const __m512bh va = (__m512bh)_mm512_set1_epi16((short)p->bf16_a); \
    const __m512bh vb = (__m512bh)_mm512_set1_epi16((short)p->bf16_a);
#define PH_K(k) _mm512_set1_ph((_Float16)(k))
#define FMA_PH(x) _mm512_fmadd_ph(x, va, vb)
#define DPBF16(x) _mm512_dpbf16_ps(x, va, vb)
#define DPBUSD(x) _mm512_dpbusd_epi32(x, va, vb)
#define BAD_PH(x, k) bad_ph(x, (_Float16)CBT_FK_SUM(k))
/* vdpbf16ps adds a0*b0 + a1*b1 = 2 a step (a = b = 1.0) */
#define BAD_DP2(x, k) bad_ps(x, (float)((double)(k) + 2.0 * (double)steps))

#include "simd.h"

CBT_FK_KERNEL(fp64_fma, CBT_EACH16, __m512d, PD_AB, PD_K, CBT_FK_NONE, FMA_PD, BAD_PD)
CBT_FK_KERNEL(fp32_fma, CBT_EACH16, __m512, PS_AB, PS_K, CBT_FK_NONE, FMA_PS, BAD_PS)
CBT_FK_KERNEL(fp16_fma, CBT_EACH16, __m512h, PH_AB, PH_K, CBT_FK_NONE, FMA_PH, BAD_PH)
CBT_FK_KERNEL(fp16_f16c, CBT_EACH16, __m512, FP16_B, PS_K, FP16_CVT, FMA_PS, BAD_PS)
CBT_FK_KERNEL(bf16_dp, CBT_EACH16, __m512, BH_AA, PS_K, CBT_FK_NONE, DPBF16, BAD_DP2)
CBT_FK_KERNEL(bf16_cvt, CBT_EACH16, __m512, BF16_B, PS_K, BF16_CVT, FMA_PS, BAD_PS)
CBT_FK_KERNEL(int8_vnni, CBT_EACH16, __m512i, I8_AB, EPI32_K, CBT_FK_NONE, DPBUSD, BAD_I8)
CBT_FK_KERNEL(int8_bw, CBT_EACH16, __m512i, I8_AB1, EPI32_K, CBT_FK_NONE, MADD3, BAD_I8)

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
