/*
 * reduce_table.h - what the kernel files share (reduce.c, reduce_avx2.c,
 * reduce_avx512.c): the shape of a table kernels[op][dtype] and, for the two
 * ISA files, the kernels built from their vector ops.
 *
 * Kernel names follow PFX_OP_SFX, SFX one of i8 i16 i32 i64 u8 u16 u32 u64
 * f16 b16 f32 f64; COLL_REDUCE_TABLE(PFX) is then the whole initialiser.
 */
#ifndef COLL_REDUCE_TABLE_H
#define COLL_REDUCE_TABLE_H

#include "core/reduce.h"

#define COLL_REDUCE_TABLE_ROW(PFX, OP) \
    { \
        [COLL_INT8] = PFX##_##OP##_i8, [COLL_INT16] = PFX##_##OP##_i16, [COLL_INT32] = PFX##_##OP##_i32, \
        [COLL_INT64] = PFX##_##OP##_i64, [COLL_UINT8] = PFX##_##OP##_u8, [COLL_UINT16] = PFX##_##OP##_u16, \
        [COLL_UINT32] = PFX##_##OP##_u32, [COLL_UINT64] = PFX##_##OP##_u64, [COLL_FP16] = PFX##_##OP##_f16, \
        [COLL_BF16] = PFX##_##OP##_b16, [COLL_FP32] = PFX##_##OP##_f32, [COLL_FP64] = PFX##_##OP##_f64, \
    }

#define COLL_REDUCE_TABLE(PFX) \
    { \
        [COLL_SUM] = COLL_REDUCE_TABLE_ROW(PFX, sum), [COLL_PROD] = COLL_REDUCE_TABLE_ROW(PFX, prod), \
        [COLL_MAX] = COLL_REDUCE_TABLE_ROW(PFX, max), [COLL_MIN] = COLL_REDUCE_TABLE_ROW(PFX, min), \
    }

/* ---- ISA files ----------------------------------------------------------
 * An ISA file defines, for its integer vector type V: INLINE, run(out, a, b,
 * n, element size, vector op), run_multi(out, dup, in, k, n, element size,
 * vector op, nt), the integer ops sum_8..sum_64, prod_8..prod_64,
 * max/min_i8..u64, the fp32 ops fsum fprod fmax_ieee fmin_ieee, the fp64 ops
 * sum/prod/max/min_f64 and the appliers f32_apply f16_apply b16_apply (run an
 * fp32 op on a vector of that type); those that read the same at every width
 * come from including reduce_isa_ops.h. Then:
 *   COLL_REDUCE_ISA_FLOAT_OPS(V)   the fp32/fp16/bf16 vector ops
 *   COLL_REDUCE_ISA_KERNELS        k_OP_SFX for every op and dtype
 *   ... = COLL_REDUCE_TABLE(k);   the two-input table
 *   ... = COLL_REDUCE_TABLE(m);   the k-input table (coll_reduce_multi_fn)
 */

/* sum/prod/max/min_SFX: the fp32 op run through APPLY. */
#define COLL_REDUCE_ISA_APPLIED(V, SFX, APPLY) \
    INLINE V sum_##SFX(V a, V b) { return APPLY(a, b, fsum); } \
    INLINE V prod_##SFX(V a, V b) { return APPLY(a, b, fprod); } \
    INLINE V max_##SFX(V a, V b) { return APPLY(a, b, fmax_ieee); } \
    INLINE V min_##SFX(V a, V b) { return APPLY(a, b, fmin_ieee); }

#define COLL_REDUCE_ISA_FLOAT_OPS(V) \
    COLL_REDUCE_ISA_APPLIED(V, f32, f32_apply) \
    COLL_REDUCE_ISA_APPLIED(V, f16, f16_apply) \
    COLL_REDUCE_ISA_APPLIED(V, b16, b16_apply)

/* One dtype's four kernels: run() over ES-byte elements with each vector op,
 * and the k-input kernels m_OP_SFX: run_multi() with the same op. */
#define COLL_REDUCE_ISA_K(OP, SFX, ES, VOP) \
    static void k_##OP##_##SFX(void *out, const void *a, const void *b, size_t n) { run(out, a, b, n, ES, VOP); } \
    static void m_##OP##_##SFX(void *out, void *dup, const void *const *in, int k, size_t n, int nt) \
    { \
        run_multi(out, dup, in, k, n, ES, VOP, nt); \
    }
#define COLL_REDUCE_ISA_DTYPE(SFX, ES, SUM, PROD, MAX, MIN) \
    COLL_REDUCE_ISA_K(sum, SFX, ES, SUM) \
    COLL_REDUCE_ISA_K(prod, SFX, ES, PROD) COLL_REDUCE_ISA_K(max, SFX, ES, MAX) COLL_REDUCE_ISA_K(min, SFX, ES, MIN)

/* Signed and unsigned sum/prod are the same bits modulo 2^bits: one vector
 * op serves both. */
#define COLL_REDUCE_ISA_KERNELS \
    COLL_REDUCE_ISA_DTYPE(i8, 1, sum_8, prod_8, max_i8, min_i8) \
    COLL_REDUCE_ISA_DTYPE(u8, 1, sum_8, prod_8, max_u8, min_u8) \
    COLL_REDUCE_ISA_DTYPE(i16, 2, sum_16, prod_16, max_i16, min_i16) \
    COLL_REDUCE_ISA_DTYPE(u16, 2, sum_16, prod_16, max_u16, min_u16) \
    COLL_REDUCE_ISA_DTYPE(i32, 4, sum_32, prod_32, max_i32, min_i32) \
    COLL_REDUCE_ISA_DTYPE(u32, 4, sum_32, prod_32, max_u32, min_u32) \
    COLL_REDUCE_ISA_DTYPE(i64, 8, sum_64, prod_64, max_i64, min_i64) \
    COLL_REDUCE_ISA_DTYPE(u64, 8, sum_64, prod_64, max_u64, min_u64) \
    COLL_REDUCE_ISA_DTYPE(f16, 2, sum_f16, prod_f16, max_f16, min_f16) \
    COLL_REDUCE_ISA_DTYPE(b16, 2, sum_b16, prod_b16, max_b16, min_b16) \
    COLL_REDUCE_ISA_DTYPE(f32, 4, sum_f32, prod_f32, max_f32, min_f32) \
    COLL_REDUCE_ISA_DTYPE(f64, 8, sum_f64, prod_f64, max_f64, min_f64)

#endif
