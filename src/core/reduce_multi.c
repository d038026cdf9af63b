/*
 * reduce_multi.c - k-input reduction in fixed order (core/reduce.h): the ISA's
 * one-pass kernel (k loads and one store per vector, in registers), or, for
 * the generic kernels, block by block so the accumulator stays in cache. Below
 * the transports so that a transport's direct-memory service (transport.h:
 * coll_direct_ops_t.reduce) can do the same work the algorithms would do inline.
 * Cost: (k-1) n element operations, k n elements read and n written in memory;
 * no allocation (one thread-local block, generic only).
 *
 * Why one pass: block by block, a 4-input fp32 sum of 16 MiB per input took
 * 6.9 ms on this machine's one core (three two-input passes over each 32 KiB
 * block: 9 vector loads/stores per output vector where 5 suffice); one pass
 * 4.8 ms, one pass streaming the result 4.0 ms (2026-12-04).
 */
#include <string.h>

#include "core/copy.h"
#include "core/reduce.h"

#define REDUCE_BLOCK_BYTES (32 * 1024)

static void reduce_multi(void *out, void *dup, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op,
                         int nt)
{
    size_t es = coll_dtype_size(dt);
    if (k == 1) {
        if (out != in[0] && nt)
            coll_copy_nt(out, in[0], n * es);
        else if (out != in[0])
            memcpy(out, in[0], n * es);
        if (dup)
            memcpy(dup, in[0], n * es);
        return;
    }
    coll_reduce_fn fn = coll_reduce_kernel(op, dt);
    if (k == 2 && !nt && !dup) { /* the two-input kernel is one pass already (and out may be either input) */
        fn(out, in[0], in[1], n);
        return;
    }
    coll_reduce_multi_fn one_pass = coll_reduce_multi_kernel(op, dt);
    if (one_pass) {
        one_pass(out, dup, in, k, n, nt);
        return;
    }
    size_t blk = REDUCE_BLOCK_BYTES / es;
    /* out may also be a later input (in-place zero-copy): then accumulate each
     * block in a private buffer so no input is overwritten before it is read */
    static _Thread_local _Alignas(64) char acc_buf[REDUCE_BLOCK_BYTES];
    int alias = 0;
    for (int j = 1; j < k; j++)
        if (in[j] == out)
            alias = 1;
    for (size_t b = 0; b < n; b += blk) {
        size_t m = n - b < blk ? n - b : blk;
        size_t o = b * es;
        char *dst = alias ? acc_buf : (char *)out + o;
        fn(dst, (const char *)in[0] + o, (const char *)in[1] + o, m);
        for (int j = 2; j < k; j++)
            fn(dst, dst, (const char *)in[j] + o, m);
        if (alias)
            memcpy((char *)out + o, acc_buf, m * es);
        if (dup) /* the block is still in cache */
            memcpy((char *)dup + o, dst, m * es);
    }
}

void coll_reduce_multi(void *out, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op)
{
    reduce_multi(out, NULL, in, k, n, dt, op, 0);
}

void coll_reduce_multi_nt(void *out, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op)
{
    reduce_multi(out, NULL, in, k, n, dt, op, 1);
}

void coll_reduce_multi_dup(void *out, void *dup, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op,
                           int nt)
{
    reduce_multi(out, dup, in, k, n, dt, op, nt);
}
