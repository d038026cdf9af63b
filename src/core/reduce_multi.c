/*
 * reduce_multi.c - k-input reduction in fixed order, block by block so the
 * accumulator stays in cache (core/reduce.h). Below the transports so that a
 * transport's direct-memory service (transport.h: coll_direct_ops_t.reduce)
 * can do the same work the algorithms would do inline.
 * Cost: (k-1) n element operations; no allocation (one thread-local block).
 */
#include <string.h>

#include "core/reduce.h"

#define REDUCE_BLOCK_BYTES (32 * 1024)

void coll_reduce_multi(void *out, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op)
{
    size_t es = coll_dtype_size(dt);
    if (k == 1) {
        if (out != in[0])
            memcpy(out, in[0], n * es);
        return;
    }
    coll_reduce_fn fn = coll_reduce_kernel(op, dt);
    if (k == 2 && in[1] != out) { /* one pass: nothing to keep in cache between inputs */
        fn(out, in[0], in[1], n);
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
    }
}
