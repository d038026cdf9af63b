/*
 * coll_util.c - helpers shared by algorithms.
 */
#include "coll/coll_util.h"

#include <string.h>

#include "core/reduce.h"
#include "coll/tuning.h"

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
    size_t blk = REDUCE_BLOCK_BYTES / es;
    for (size_t b = 0; b < n; b += blk) {
        size_t m = n - b < blk ? n - b : blk;
        size_t o = b * es;
        fn((char *)out + o, (const char *)in[0] + o, (const char *)in[1] + o, m);
        for (int j = 2; j < k; j++)
            fn((char *)out + o, (char *)out + o, (const char *)in[j] + o, m);
    }
}

int coll_group_is_host(const coll_comm *comm, const coll_group_t *g)
{
    if (g->size == 1)
        return 1;
    return comm->shm && g->size == comm->local_size && coll_group_is_local(comm, g);
}
