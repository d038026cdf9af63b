/* simd.h - the operands, steps and checks of the SIMD flops kernels, written
 * once for every vector width (avx2.c: ymm, avx512.c: zmm) and expanded into
 * CBT_FK_KERNEL (acc.h). Before including it, an ISA file defines:
 *   CBT_V(op)     its intrinsic of that name (_mm256_##op, _mm512_##op)
 *   CBT_VH(op)    the one of half the width (the 16-bit operands: _mm_##op)
 *   CBT_VPD, CBT_VPS, CBT_VI, CBT_VHI   its double, float, integer and half
 *                 integer vector types
 *   CBT_KEEP      the asm constraint of such a register ("+x", "+v")
 *   CBT_CAST_PS   its integer-to-float bit cast
 *   bad_pd, bad_ps, bad_epi32 (x, e)   the lanes of x that differ from e
 * Operands: a and b broadcast; fp16 / bf16 kept in 16 bits (h) and converted
 * each step, the empty asm making h look new so the conversion stays in the loop. */
#ifndef CBT_FLOPS_SIMD_H
#define CBT_FLOPS_SIMD_H

#define PD_AB const CBT_VPD va = CBT_V(set1_pd)(p->a), vb = CBT_V(set1_pd)(p->b);
#define PS_AB const CBT_VPS va = CBT_V(set1_ps)((float)p->a), vb = CBT_V(set1_ps)((float)p->b);
#define H16_B(field) \
    CBT_VHI h = CBT_VH(set1_epi16)((short)p->field); \
    const CBT_VPS vb = CBT_V(set1_ps)((float)p->b);
#define FP16_B H16_B(fp16_a)
#define BF16_B H16_B(bf16_a)
#define I8_AB const CBT_VI va = CBT_V(set1_epi8)(p->i8_a), vb = CBT_V(set1_epi8)(p->i8_b);
#define I8_AB1 I8_AB const CBT_VI ones = CBT_V(set1_epi16)(1);
#define FP16_CVT \
    __asm__ volatile("" : CBT_KEEP(h)); \
    const CBT_VPS va = CBT_V(cvtph_ps)(h);
#define BF16_CVT \
    __asm__ volatile("" : CBT_KEEP(h)); \
    const CBT_VPS va = CBT_CAST_PS(CBT_V(slli_epi32)(CBT_V(cvtepu16_epi32)(h), 16));

#define PD_K(k) CBT_V(set1_pd)((double)(k))
#define PS_K(k) CBT_V(set1_ps)((float)(k))
#define EPI32_K(k) CBT_V(set1_epi32)((k))

#define FMA_PD(x) CBT_V(fmadd_pd)(x, va, vb)
#define FMA_PS(x) CBT_V(fmadd_ps)(x, va, vb)
#define MADD3(x) CBT_V(add_epi32)(x, CBT_V(madd_epi16)(CBT_V(maddubs_epi16)(va, vb), ones))

#define BAD_PD(x, k) bad_pd(x, CBT_FK_SUM(k))
#define BAD_PS(x, k) bad_ps(x, (float)CBT_FK_SUM(k))
#define BAD_I8(x, k) bad_epi32(x, CBT_FK_I8_SUM(k))
#endif
