/* acc.h - the shape every SIMD flops kernel shares, as one macro family.
 *
 * CBT_FK_KERNEL(name, EACH, T, PRE, INIT, FRESH, STEP, BAD) defines
 *   static uint64_t name(uint64_t steps, const cbt_fk_args_t *p)
 * with EACH's accumulators x0, x1, ... of type T (EACH = CBT_EACH8, CBT_EACH10
 * or CBT_EACH16): PRE declares the operands, x<k> starts at INIT(k), every step
 * runs FRESH (operands the compiler must see as new each step; CBT_FK_NONE
 * when there are none) and then x<k> = STEP(x<k>) for each k, independent
 * chains so the FMA / dot-product units stay full. The result is the sum of
 * BAD(x<k>, k): the lanes that differ from the exact value after `steps` steps.
 * PRE, INIT, FRESH, STEP and BAD are macro names, so their commas do not split
 * the arguments; they may use p and steps. The expansion is the hand-written
 * kernel, unrolled: nothing is called or indexed inside the loop. */
#ifndef CBT_FLOPS_ACC_H
#define CBT_FLOPS_ACC_H
#define CBT_EACH8(M, T, F) M(0, T, F) M(1, T, F) M(2, T, F) M(3, T, F) M(4, T, F) M(5, T, F) M(6, T, F) M(7, T, F)
#define CBT_EACH10(M, T, F) CBT_EACH8(M, T, F) M(8, T, F) M(9, T, F)
#define CBT_EACH16(M, T, F) CBT_EACH10(M, T, F) M(10, T, F) M(11, T, F) M(12, T, F) M(13, T, F) M(14, T, F) M(15, T, F)

#define CBT_FK_NONE
#define CBT_FK_X_INIT(k, T, INIT) T x##k = INIT(k);
#define CBT_FK_X_STEP(k, T, STEP) x##k = STEP(x##k);
#define CBT_FK_X_BAD(k, T, BAD) bad += BAD(x##k, k);

#define CBT_FK_KERNEL(name, EACH, T, PRE, INIT, FRESH, STEP, BAD) \
    static uint64_t name(uint64_t steps, const cbt_fk_args_t *p) \
    { \
        PRE EACH(CBT_FK_X_INIT, T, INIT) for (uint64_t s = 0; s < steps; \
                                              s++){FRESH EACH(CBT_FK_X_STEP, T, STEP)} uint64_t bad \
            = 0; \
        EACH(CBT_FK_X_BAD, T, BAD) \
        return bad; \
    }

/* The exact sums the kernels check against: k + steps*b for x = x*a + b with
 * a = 1; k + steps*inc for the int8 dot products (4 products of a*b a step). */
#define CBT_FK_SUM(k) ((double)(k) + (double)steps * p->b)
#define CBT_FK_I8_INC (4u * (uint32_t)(uint8_t)p->i8_a * (uint32_t)p->i8_b)
#define CBT_FK_I8_SUM(k) ((uint32_t)(k) + (uint32_t)steps * CBT_FK_I8_INC)
#endif
