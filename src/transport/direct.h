/*
 * direct.h - what algorithms include to use peers' memory directly (the
 * direct-memory capability of the transport serving this host's ranks:
 * transport.h, coll_direct_ops_t). Thin wrappers over comm->direct, which is
 * NULL when no local peer's memory is readable (one rank per host, shm off):
 * sizes then read 0, cma is off and the barrier is a no-op; the other calls
 * are only made by algorithms whose group is the host (coll_group_is_host).
 *
 * coll_direct_copy / coll_direct_reduce: every copy and reduction of staged,
 * peer or user data in those algorithms goes through them (not tiny headers),
 * so a transport may account for or skip the work (sim). On shm the ops are
 * NULL: one predictable branch, then memcpy / coll_reduce_multi inline.
 */
#ifndef COLL_DIRECT_H
#define COLL_DIRECT_H

#include <string.h>

#include "core/reduce.h"
#include "transport/transport.h"

static inline void *coll_direct_stage(coll_comm *comm, int lr) { return comm->direct->stage(comm, lr); }
static inline size_t coll_direct_stage_bytes(const coll_comm *comm)
{
    return comm->direct ? comm->direct->stage_bytes(comm) : 0;
}
static inline coll_status_t coll_direct_barrier(coll_comm *comm)
{
    return comm->direct ? comm->direct->barrier(comm) : COLL_SUCCESS;
}
static inline void coll_direct_publish(coll_comm *comm, int slot, const void *ptr)
{
    comm->direct->publish(comm, slot, ptr);
}
static inline void *coll_direct_peer_ptr(coll_comm *comm, int lr, int slot, size_t len)
{
    return comm->direct->peer_ptr(comm, lr, slot, len);
}
static inline int coll_direct_is_registered(coll_comm *comm, const void *ptr, size_t len)
{
    return comm->direct ? comm->direct->is_registered(comm, ptr, len) : 0;
}
static inline coll_status_t coll_direct_small_post(coll_comm *comm, const void *src, size_t len, uint64_t *seq)
{
    return comm->direct->small_post(comm, src, len, seq);
}
static inline coll_status_t coll_direct_small_wait_all(coll_comm *comm, uint64_t seq)
{
    return comm->direct->small_wait_all(comm, seq);
}
static inline const void *coll_direct_small_peer(coll_comm *comm, int lr, uint64_t seq)
{
    return comm->direct->small_peer(comm, lr, seq);
}
static inline void coll_direct_small_done(coll_comm *comm, uint64_t seq) { comm->direct->small_done(comm, seq); }
static inline size_t coll_direct_small_max(const coll_comm *comm)
{
    return comm->direct ? comm->direct->small_max(comm) : 0;
}
static inline int coll_direct_cma_ok(const coll_comm *comm) { return comm->direct ? comm->direct->cma_ok(comm) : 0; }
static inline void coll_direct_publish_addr(coll_comm *comm, int slot, const void *ptr)
{
    comm->direct->publish_addr(comm, slot, ptr);
}
static inline coll_status_t coll_direct_cma_read(coll_comm *comm, int lr, int slot, size_t off, void *dst, size_t len)
{
    return comm->direct->cma_read(comm, lr, slot, off, dst, len);
}
static inline coll_status_t coll_direct_cma_write(coll_comm *comm, int lr, int slot, size_t off, const void *src,
                                                  size_t len)
{
    return comm->direct->cma_write(comm, lr, slot, off, src, len);
}
static inline void coll_direct_copy(coll_comm *comm, void *dst, const void *src, size_t len)
{
    if (comm->direct->copy)
        comm->direct->copy(comm, dst, src, len);
    else
        memcpy(dst, src, len);
}
/* A piece of the call's result (total bytes in all) copied into the user's buffer (transport.h). */
static inline void coll_direct_copy_out(coll_comm *comm, void *dst, const void *src, size_t len, size_t total)
{
    if (comm->direct->copy_out)
        comm->direct->copy_out(comm, dst, src, len, total);
    else
        coll_direct_copy(comm, dst, src, len);
}
/* out = in[0] OP ... OP in[k-1] over n elements (coll_reduce_multi). */
static inline void coll_direct_reduce(coll_comm *comm, void *out, const void *const *in, int k, size_t n,
                                      coll_dtype_t dt, coll_op_t op)
{
    if (comm->direct->reduce)
        comm->direct->reduce(comm, out, in, k, n, dt, op);
    else
        coll_reduce_multi(out, in, k, n, dt, op);
}
/* The same into a piece of the call's result (total bytes in all), which
 * nobody reads again within the call (transport.h: reduce_out). */
static inline void coll_direct_reduce_out(coll_comm *comm, void *out, const void *const *in, int k, size_t n,
                                          coll_dtype_t dt, coll_op_t op, size_t total)
{
    if (comm->direct->reduce_out)
        comm->direct->reduce_out(comm, out, in, k, n, dt, op, total);
    else
        coll_direct_reduce(comm, out, in, k, n, dt, op);
}
/* The same, the result also left in dup for the peers (transport.h: reduce_out_dup). */
static inline void coll_direct_reduce_out_dup(coll_comm *comm, void *out, void *dup, const void *const *in, int k,
                                              size_t n, coll_dtype_t dt, coll_op_t op, size_t total)
{
    if (comm->direct->reduce_out_dup) {
        comm->direct->reduce_out_dup(comm, out, dup, in, k, n, dt, op, total);
        return;
    }
    coll_direct_reduce(comm, dup, in, k, n, dt, op);
    coll_direct_copy_out(comm, out, dup, n * coll_dtype_size(dt), total);
}

#endif
