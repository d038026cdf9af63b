/*
 * coll_util.c - helpers shared by algorithms.
 */
#include "coll/coll_util.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/reduce.h"
#include "coll/tuning.h"
#include "transport/direct.h"
#include "transport/sim.h"

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

int coll_group_is_host(const coll_comm *comm, const coll_group_t *g)
{
    if (g->size == 1)
        return 1;
    return comm->direct && g->size == comm->local_size && coll_group_is_local(comm, g);
}

int coll_group_peer_ptrs(coll_comm *comm, const coll_group_t *g, int slot, const size_t *counts,
                         const char **out)
{
    int all = 1;
    for (int j = 0; j < g->size; j++) {
        out[j] = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, j), slot);
        if (!out[j] && (!counts || counts[j]))
            all = 0;
    }
    return all;
}

void *coll_work_alloc(coll_comm *comm, size_t bytes)
{
    void *p;
    if (comm->sim && (p = coll_sim_work(comm, bytes)))
        return p;
    return malloc(bytes ? bytes : 1);
}

int coll_data_real(const coll_comm *comm)
{
    return !comm->sim || coll_sim_moves_data(comm);
}

void coll_work_free(coll_comm *comm, void *p)
{
    if (comm->sim && coll_sim_is_work(comm, p))
        return;
    free(p);
}

coll_status_t coll_tmp_get(coll_comm *comm, const coll_group_t *g, size_t bytes, void **out)
{
    if (g == &comm->world)
        return coll_comm_scratch(comm, bytes, out);
    if (!(*out = coll_work_alloc(comm, bytes)))
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "out of memory (%zu bytes of working memory)", bytes);
    return COLL_SUCCESS;
}

void coll_tmp_put(coll_comm *comm, const coll_group_t *g, void *p)
{
    if (g != &comm->world)
        coll_work_free(comm, p);
}
