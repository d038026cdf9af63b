/*
 * flops.h - peak arithmetic throughput kernels of `collbench flops`.
 *
 * A kernel runs `steps` steps; one step applies one vector instruction (or one
 * instruction group) to each of its independent accumulators, enough of them to
 * cover latency x throughput of the FMA ports (e.g. 16 zmm with 4-cycle latency
 * on 2 ports needs >= 8). Operands come from `args` at run time so the compiler
 * cannot fold the work. With a = b = 1 accumulator k (initialised to k) holds
 * k + steps * inc after the run (inc = 1 for FMA, 2 for a bf16 pair dot product,
 * 4 for an int8 quad dot product): exact while below 2^mantissa, which
 * `max_steps` guarantees. The kernel returns the number of lanes that differ from
 * that closed form, so 0 = validated.
 *
 * Operation counts are exact: an FMA is 2 operations (multiply + add); a dot
 * product of n pairs added to an accumulator is 2n operations.
 *
 * Files: generic.c (no ISA flags), avx2.c (-mavx2 -mfma -mf16c
 * -mavxvnni), avx512.c (AVX-512 F/BW/VL/DQ/BF16/VNNI/FP16). Only flops.c
 * decides, from `requires`, which kernel may run on this CPU.
 */
#ifndef CBT_FLOPS_H
#define CBT_FLOPS_H

#include <stddef.h>
#include <stdint.h>

typedef enum { CBT_FP64, CBT_FP32, CBT_FP16, CBT_BF16, CBT_INT8, CBT_FTYPE_COUNT } cbt_ftype_t;

/* CPU features a kernel needs (checked with __builtin_cpu_supports in flops.c). */
enum {
    CBT_CPU_AVX2 = 1 << 0,
    CBT_CPU_FMA = 1 << 1,
    CBT_CPU_F16C = 1 << 2,
    CBT_CPU_AVXVNNI = 1 << 3,
    CBT_CPU_AVX512F = 1 << 4,
    CBT_CPU_AVX512BW = 1 << 5,
    CBT_CPU_AVX512BF16 = 1 << 6,
    CBT_CPU_AVX512VNNI = 1 << 7,
    CBT_CPU_AVX512FP16 = 1 << 8,
    CBT_CPU_AVX512VL = 1 << 9,
};

typedef struct {
    double a, b;       /* FP operands: 1.0 and 1.0 */
    uint16_t fp16_a;   /* 1.0 as IEEE binary16 (0x3C00) */
    uint16_t bf16_a;   /* 1.0 as bfloat16 (0x3F80) */
    int8_t i8_a, i8_b; /* int8 operands: 1 and 1 */
} cbt_fk_args_t;

typedef struct {
    cbt_ftype_t type;
    const char *name;    /* what --isa selects, e.g. "avx512fp16" */
    const char *desc;    /* instruction and accumulators */
    unsigned requires;   /* CBT_CPU_* bits */
    int peak_lanes;      /* elements per instruction for the peak formula; 0 = no peak */
    double ops_per_step; /* exact operations of one step */
    uint64_t max_steps;  /* steps per call that keep the closed form exact */
    uint64_t (*run)(uint64_t steps, const cbt_fk_args_t *args);
} cbt_fkern_t;

/* Kernel tables, best first within each file. */
extern const cbt_fkern_t cbt_fk_avx512[];
extern const size_t cbt_fk_avx512_count;
extern const cbt_fkern_t cbt_fk_avx2[];
extern const size_t cbt_fk_avx2_count;
extern const cbt_fkern_t cbt_fk_generic[];
extern const size_t cbt_fk_generic_count;

/* collbench assess --tests node: GFLOPS of one unpinned thread running the
 * best FP64 kernel for `seconds` after `warmup` (the caller's CPU share shows);
 * -1 when no kernel runs or the result does not validate. */
double cbt_flops_probe(double warmup, double seconds);

/* clock.c: this core's clock now (GHz) from a dependent add chain; 0 if
 * it could not be measured. */
double cbt_flops_clock_ghz(void);

#endif
