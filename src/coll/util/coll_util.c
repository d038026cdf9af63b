/*
 * coll_util.c - helpers shared by algorithms.
 */
#include "coll/util/coll_util.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/reduce.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

coll_status_t coll_direct_small_reduce(coll_comm *comm, const coll_group_t *g, const void *sb, size_t post, size_t at,
                                       void *out, size_t n, coll_dtype_t dt, coll_op_t op)
{
    uint64_t seq;
    const void *src[COLL_MAX_LOCAL];
    COLL_CHECK(coll_direct_small_post(comm, sb, post, &seq));
    COLL_CHECK(coll_direct_small_wait_all(comm, seq));
    for (int j = 0; j < g->size; j++)
        src[j] = (const char *)coll_direct_small_peer(comm, coll_group_lr(comm, g, j), seq) + at;
    if (n)
        coll_direct_reduce(comm, out, src, g->size, n, dt, op);
    coll_direct_small_done(comm, seq);
    return COLL_SUCCESS;
}

coll_status_t coll_direct_small_collect(coll_comm *comm, const coll_group_t *g, const void *sb, size_t post, size_t at,
                                        char *out, size_t blk)
{
    uint64_t seq;
    COLL_CHECK(coll_direct_small_post(comm, sb, post, &seq));
    COLL_CHECK(coll_direct_small_wait_all(comm, seq));
    for (int j = 0; j < g->size; j++)
        if (j != g->me)
            coll_direct_copy(comm, out + (size_t)j * blk,
                             (const char *)coll_direct_small_peer(comm, coll_group_lr(comm, g, j), seq) + at, blk);
    coll_direct_small_done(comm, seq);
    return COLL_SUCCESS;
}

int coll_direct_usable(const coll_comm *comm, const coll_group_t *g, size_t min_half)
{
    if (!coll_group_is_host(comm, g) || g->size > COLL_MAX_LOCAL)
        return 0;
    return min_half == 0 || g->size == 1 || coll_direct_stage_bytes(comm) / 2 >= min_half;
}

int coll_direct_usable_any(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    (void)a;
    return coll_direct_usable(comm, g, 0);
}

int coll_direct_usable_64(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    (void)a;
    return coll_direct_usable(comm, g, 32);
}

size_t coll_stage_rot(coll_comm *comm, size_t used, size_t half)
{
    size_t ring = coll_min_sz(coll_ring_span(comm->stage_ring, comm->local_size, COLL_RING_SPAN_MIN), half);
    size_t step = (used + 4095) & ~(size_t)4095; /* windows page-aligned */
    size_t rot = 0;
    if (used != 0 && step <= ring / 2) {
        if (comm->stage_pos + step > ring)
            comm->stage_pos = 0;
        rot = comm->stage_pos;
        comm->stage_pos += step;
    }
    if (rot + coll_min_sz(used, half) > comm->stage_hw) { /* past what init touched (shm.c prefault_used) */
        comm->stage_hw = rot + coll_min_sz(used, half);
        comm->first_use++;
    }
    return rot;
}

int coll_group_peer_ptrs(coll_comm *comm, const coll_group_t *g, int slot, size_t bytes, const size_t *counts,
                         const char **out)
{
    int all = 1;
    for (int j = 0; j < g->size; j++) {
        out[j] = coll_direct_peer_ptr(comm, coll_group_lr(comm, g, j), slot, counts ? counts[j] * bytes : bytes);
        if (!out[j] && (!counts || counts[j]))
            all = 0;
    }
    return all;
}

void *coll_work_alloc(coll_comm *comm, size_t bytes)
{
    void *p;
    if (comm->runner && (p = comm->runner->work(comm, bytes)))
        return p;
    return coll_comm_work_take(comm, bytes);
}

void coll_work_free(coll_comm *comm, void *p)
{
    if (!p || (comm->runner && comm->runner->is_work(comm, p)))
        return;
    coll_comm_work_keep(comm, p);
}

int coll_data_real(const coll_comm *comm) { return !comm->runner || comm->runner->moves_data(comm); }

void coll_local_copy(coll_comm *comm, void *dst, const void *src, size_t n)
{
    if (coll_data_real(comm)) /* sizes only: no values to copy, as coll_direct_copy */
        memcpy(dst, src, n);
    if (comm->runner)
        comm->runner->charge_copy(comm, n);
}

void coll_local_charge(coll_comm *comm, size_t n)
{
    if (comm->runner)
        comm->runner->charge_copy(comm, n);
}

/* A sizes-only comm's scratch is its runner's one shared block (the work
 * hook), which coll_comm_scratch must not outgrow (it would free it): such a
 * comm takes coll_work_alloc's block, or untouched address space. */
coll_status_t coll_tmp_get(coll_comm *comm, const coll_group_t *g, size_t bytes, void **out)
{
    if (g == &comm->world && coll_data_real(comm))
        return coll_comm_scratch(comm, bytes, out);
    if (!(*out = coll_work_alloc(comm, bytes)))
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "out of memory (%zu bytes of working memory)", bytes);
    return COLL_SUCCESS;
}

void coll_tmp_put(coll_comm *comm, const coll_group_t *g, void *p)
{
    if (g != &comm->world || !coll_data_real(comm))
        coll_work_free(comm, p);
}
