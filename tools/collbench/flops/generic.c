/*
 * generic.c - portable peak-throughput kernels (no ISA flags: plain C that
 * the compiler may auto-vectorise for the baseline ISA). Used on CPUs without
 * AVX2/AVX-512, on other architectures, or when forced with --isa generic.
 *
 * Per step: fp64/fp32  16 independent x = x*a + b    16 x 2        = 32 ops
 *           int8       16 x (4 products + 4 adds)     16 x 4 x 2    = 128 ops
 * fp16 and bf16 have no portable hardware path: they run the fp32 kernel.
 */
#include "flops.h"

#define NACC 16

/* x = x*a + b in type T on NACC independent accumulators (fp64_c, fp32_c). */
#define FMA_C(name, T) \
    static uint64_t name(uint64_t steps, const cbt_fk_args_t *p) \
    { \
        const T a = (T)p->a, b = (T)p->b; \
        T x[NACC]; \
        for (int k = 0; k < NACC; k++) \
            x[k] = (T)k; \
        for (uint64_t s = 0; s < steps; s++) \
            for (int k = 0; k < NACC; k++) \
                x[k] = x[k] * a + b; \
        uint64_t bad = 0; \
        for (int k = 0; k < NACC; k++) \
            bad += x[k] != (T)((double)k + (double)steps * p->b); \
        return bad; \
    }
FMA_C(fp64_c, double)
FMA_C(fp32_c, float)

/* The empty asm with a memory clobber makes the operands look new every step, so
 * the (otherwise loop-invariant) dot products cannot be hoisted or folded. */
static uint64_t int8_c(uint64_t steps, const cbt_fk_args_t *p)
{
    uint8_t a[NACC * 4];
    int8_t b[NACC * 4];
    int32_t x[NACC];
    for (int i = 0; i < NACC * 4; i++) {
        a[i] = (uint8_t)p->i8_a;
        b[i] = p->i8_b;
    }
    for (int k = 0; k < NACC; k++)
        x[k] = k;
    for (uint64_t s = 0; s < steps; s++) {
        __asm__ volatile("" : : "r"(a), "r"(b) : "memory");
        for (int k = 0; k < NACC; k++) {
            int32_t t = 0;
            for (int q = 0; q < 4; q++)
                t += (int32_t)a[4 * k + q] * (int32_t)b[4 * k + q];
            x[k] = (int32_t)((uint32_t)x[k] + (uint32_t)t);
        }
    }
    const uint32_t inc = 4u * (uint32_t)(uint8_t)p->i8_a * (uint32_t)p->i8_b;
    uint64_t bad = 0;
    for (int k = 0; k < NACC; k++)
        bad += (uint32_t)x[k] != (uint32_t)k + (uint32_t)steps * inc;
    return bad;
}

const cbt_fkern_t cbt_fk_generic[] = {
    {CBT_FP64, "generic", "portable C, 16 accumulators x = x*a + b", 0, 0, 2 * NACC, 1u << 20, fp64_c},
    {CBT_FP32, "generic", "portable C, 16 accumulators x = x*a + b", 0, 0, 2 * NACC, 1u << 20, fp32_c},
    {CBT_FP16, "generic", "portable C, fp32 arithmetic (no 16-bit float hardware)", 0, 0, 2 * NACC, 1u << 20, fp32_c},
    {CBT_BF16, "generic", "portable C, fp32 arithmetic (no 16-bit float hardware)", 0, 0, 2 * NACC, 1u << 20, fp32_c},
    {CBT_INT8, "generic", "portable C, 16 int32 accumulators of 4-term int8 dot products", 0, 0, 8 * NACC, 1u << 20,
     int8_c},
};
const size_t cbt_fk_generic_count = sizeof cbt_fk_generic / sizeof cbt_fk_generic[0];
