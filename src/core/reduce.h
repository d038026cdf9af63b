/*
 * reduce.h - reduction kernels, one table kernels[op][dtype].
 * out[i] = a[i] OP b[i] for i < n elements. out may be the same pointer as a
 * or b (never a partial overlap). fp16/bf16 are computed in fp32 and rounded to
 * nearest even. Integer sum/prod wrap around (two's complement, as unsigned).
 * max/min with NaN: the result is NaN if either input is NaN (IEEE maximum).
 * Vectorised variants (AVX-512, AVX2) are chosen at run time from cpuid.
 */
#ifndef COLL_REDUCE_H
#define COLL_REDUCE_H

#include <stddef.h>
#include <stdint.h>
#include "coll.h"

typedef void (*coll_reduce_fn)(void *out, const void *a, const void *b, size_t n);

/* The kernel for op and dtype (never NULL for valid op/dtype). */
coll_reduce_fn coll_reduce_kernel(coll_op_t op, coll_dtype_t dt);
/* Scalar reference implementation (tests compare against it). */
coll_reduce_fn coll_reduce_kernel_ref(coll_op_t op, coll_dtype_t dt);
/* Name of the instruction set the kernels use: "avx512", "avx2", "generic". */
const char *coll_reduce_isa(void);
/* Force a variant (tests): "avx512", "avx2", "generic"; returns 0 if available. */
int coll_reduce_force_isa(const char *isa);

/* Convenience: out = a OP b over n elements. (Named coll_reduce_local: the name
 * coll_reduce is the public collective of coll.h.) */
static inline void coll_reduce_local(void *out, const void *a, const void *b, size_t n, coll_dtype_t dt, coll_op_t op)
{
    coll_reduce_kernel(op, dt)(out, a, b, n);
}

/* reduce_multi.c: out = in[0] OP in[1] OP ... OP in[k-1] over n elements, in
 * the fixed order ((in[0] OP in[1]) OP in[2]) ..., so every rank computes
 * bitwise identical results. out may be one of the inputs. k == 1 copies.
 * With a vector ISA, one pass: each vector of every input is loaded and
 * combined in registers, then stored once (k reads + 1 write per element);
 * generic: in blocks that stay in cache. */
void coll_reduce_multi(void *out, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op);
/* The same, writing out with non-temporal stores (core/copy.h): for a result
 * larger than the last-level cache that nobody reads again soon. Visible to
 * other cores as after a normal store once it returns (sfence). */
void coll_reduce_multi_nt(void *out, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op);

/* The same, the result written twice in the one pass: into out (streamed when
 * nt, as coll_reduce_multi_nt) and into dup with normal stores, where it stays
 * in cache for whoever reads it next (a peer reading a shared stage while out
 * is the caller's private buffer). dup overlaps neither out nor an input.
 * Saves the second pass over the result a reduce-then-copy makes (2 ranks 1M
 * AllReduce: 28 -> 22 us for the 512 KiB slice). */
void coll_reduce_multi_dup(void *out, void *dup, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op,
                           int nt);

/* A k-input kernel (k >= 2) of an ISA file: the loop of coll_reduce_multi;
 * nt: stream out; dup: NULL, or a second destination (coll_reduce_multi_dup).
 * out may equal an input (never a partial overlap). */
typedef void (*coll_reduce_multi_fn)(void *out, void *dup, const void *const *in, int k, size_t n, int nt);
/* The k-input kernel of the current ISA for op and dtype; NULL for the
 * generic one (coll_reduce_multi then works block by block). */
coll_reduce_multi_fn coll_reduce_multi_kernel(coll_op_t op, coll_dtype_t dt);

/* Exact conversions (round to nearest even; NaN stays NaN, overflow -> inf). */
float coll_fp16_to_fp32(uint16_t h);
uint16_t coll_fp32_to_fp16(float f);
float coll_bf16_to_fp32(uint16_t h);
uint16_t coll_fp32_to_bf16(float f);

/* Internal, for reduce.c's dispatch: the kernels of reduce_avx2.c and
 * reduce_avx512.c (compiled with ISA flags: call only after the cpu check).
 * A NULL entry means "use the generic kernel". */
extern const coll_reduce_fn coll_reduce_kernels_avx2[COLL_OP_COUNT][COLL_DTYPE_COUNT];
extern const coll_reduce_fn coll_reduce_kernels_avx512[COLL_OP_COUNT][COLL_DTYPE_COUNT];
extern const coll_reduce_multi_fn coll_reduce_multi_avx2[COLL_OP_COUNT][COLL_DTYPE_COUNT];
extern const coll_reduce_multi_fn coll_reduce_multi_avx512[COLL_OP_COUNT][COLL_DTYPE_COUNT];

#endif
