/*
 * reduce_isa_ops.h - the vector ops that read the same at every vector width:
 * included (once) by reduce_avx2.c and reduce_avx512.c after they define
 *   INLINE, fop_t (an fp32 vector op),
 *   VEC, VPS           the integer and fp32 vector types (__m256i, __m256),
 *   V(op)              the intrinsic _mm<width>_op (V(add_epi8)),
 *   V_SI(op)           _mm<width>_op_si<width> (V_SI(and): _mm256_and_si256),
 *   V_FROM_SI(type)    _mm<width>_castsi<width>_type (V_FROM_SI(ps)).
 * What differs between the ISAs (run() and its tail, prod_64, the 64-bit
 * compares, the IEEE max/min, the fp16 conversions, bf16 rounding) stays in
 * the ISA file; reduce_table.h builds the kernels from both.
 * Not a header of its own: no include guard, nothing to include it elsewhere.
 */

/* ---- integers ---- */

INLINE VEC sum_8(VEC a, VEC b) { return V(add_epi8)(a, b); }
INLINE VEC sum_16(VEC a, VEC b) { return V(add_epi16)(a, b); }
INLINE VEC sum_32(VEC a, VEC b) { return V(add_epi32)(a, b); }
INLINE VEC sum_64(VEC a, VEC b) { return V(add_epi64)(a, b); }

/* No 8-bit multiply: the low byte of 16-bit products, even and odd bytes. */
INLINE VEC prod_8(VEC a, VEC b)
{
    VEC even = V(mullo_epi16)(a, b);
    VEC odd = V(mullo_epi16)(V(srli_epi16)(a, 8), V(srli_epi16)(b, 8));
    return V_SI(or)(V_SI(and)(even, V(set1_epi16)(0xff)), V(slli_epi16)(odd, 8));
}
INLINE VEC prod_16(VEC a, VEC b) { return V(mullo_epi16)(a, b); }
INLINE VEC prod_32(VEC a, VEC b) { return V(mullo_epi32)(a, b); }

INLINE VEC max_i8(VEC a, VEC b) { return V(max_epi8)(a, b); }
INLINE VEC min_i8(VEC a, VEC b) { return V(min_epi8)(a, b); }
INLINE VEC max_u8(VEC a, VEC b) { return V(max_epu8)(a, b); }
INLINE VEC min_u8(VEC a, VEC b) { return V(min_epu8)(a, b); }
INLINE VEC max_i16(VEC a, VEC b) { return V(max_epi16)(a, b); }
INLINE VEC min_i16(VEC a, VEC b) { return V(min_epi16)(a, b); }
INLINE VEC max_u16(VEC a, VEC b) { return V(max_epu16)(a, b); }
INLINE VEC min_u16(VEC a, VEC b) { return V(min_epu16)(a, b); }
INLINE VEC max_i32(VEC a, VEC b) { return V(max_epi32)(a, b); }
INLINE VEC min_i32(VEC a, VEC b) { return V(min_epi32)(a, b); }
INLINE VEC max_u32(VEC a, VEC b) { return V(max_epu32)(a, b); }
INLINE VEC min_u32(VEC a, VEC b) { return V(min_epu32)(a, b); }

/* ---- fp32 / fp64 ---- */

INLINE VPS fsum(VPS a, VPS b) { return V(add_ps)(a, b); }
INLINE VPS fprod(VPS a, VPS b) { return V(mul_ps)(a, b); }

INLINE VEC f32_apply(VEC a, VEC b, fop_t f) { return V_SI(castps)(f(V_FROM_SI(ps)(a), V_FROM_SI(ps)(b))); }

INLINE VEC sum_f64(VEC a, VEC b) { return V_SI(castpd)(V(add_pd)(V_FROM_SI(pd)(a), V_FROM_SI(pd)(b))); }

INLINE VEC prod_f64(VEC a, VEC b) { return V_SI(castpd)(V(mul_pd)(V_FROM_SI(pd)(a), V_FROM_SI(pd)(b))); }

/* ---- bf16: widen by shifting into the high half (the rounding back,
 * f32_to_b16_lanes, is the ISA file's) ---- */

INLINE VEC b16_apply(VEC a, VEC b, fop_t f)
{
    VEC z = V_SI(setzero)();
    VPS alo = V_FROM_SI(ps)(V(unpacklo_epi16)(z, a));
    VPS ahi = V_FROM_SI(ps)(V(unpackhi_epi16)(z, a));
    VPS blo = V_FROM_SI(ps)(V(unpacklo_epi16)(z, b));
    VPS bhi = V_FROM_SI(ps)(V(unpackhi_epi16)(z, b));
    /* packus undoes unpacklo/hi lane by lane; values are <= 0xffff */
    return V(packus_epi32)(f32_to_b16_lanes(f(alo, blo)), f32_to_b16_lanes(f(ahi, bhi)));
}
