/*
 * api.c - public collective entry points: validate, normalise into
 * coll_args_t, select and run on the world group.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/execution/prim.h"
#include "core/log.h"
#include "transport/transport.h"

#define BAD(...) coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_COLL, __VA_ARGS__)

static coll_status_t check_common(coll_comm *comm, coll_dtype_t dt, const char *fn)
{
    if (!comm)
        return BAD("%s: communicator is NULL", fn);
    if ((unsigned)dt >= COLL_DTYPE_COUNT)
        return BAD("%s: invalid datatype %d (allowed 0..%d)", fn, (int)dt, COLL_DTYPE_COUNT - 1);
    if (atomic_load(&comm->aborted))
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "%s: communicator was aborted", fn);
    return COLL_SUCCESS;
}

static coll_status_t check_op(coll_op_t op, const char *fn)
{
    return (unsigned)op < COLL_OP_COUNT ? COLL_SUCCESS
                                        : BAD("%s: invalid op %d (allowed sum, prod, max, min)", fn, (int)op);
}

static coll_status_t check_root(coll_comm *comm, int root, const char *fn)
{
    return root >= 0 && root < comm->nranks ? COLL_SUCCESS
                                            : BAD("%s: invalid root %d (allowed 0..%d)", fn, root, comm->nranks - 1);
}

/* With count > 0, the buffers this rank uses must be there: sendbuf when
 * need_send, recvbuf when need_recv. */
static coll_status_t check_bufs(size_t count, const void *sendbuf, int need_send, const void *recvbuf, int need_recv,
                                const char *fn)
{
    if (count && ((need_send && !sendbuf) || (need_recv && !recvbuf)))
        return BAD("%s: NULL buffer with count %zu", fn, count);
    return COLL_SUCCESS;
}

static coll_status_t run(coll_comm *comm, coll_args_t a)
{
    COLL_CHECK(coll_args_check_size(&comm->world, &a, coll_kind_name(a.kind)));
    coll_args_finish(comm, &comm->world, &a);
    comm->cur_kind = a.kind;
    comm->cur_bytes = a.bytes;
    comm->seq++;
    coll_status_t st = coll_algo_run(comm, &comm->world, &a);
    if (st == COLL_ERR_TIMEOUT || st == COLL_ERR_ABORTED || st == COLL_ERR_NETWORK)
        coll_comm_set_aborted(comm, st, "%s failed: %s", coll_kind_name(a.kind), coll_last_error());
    return st;
}

/* AllReduce and ReduceScatter: the same arguments, both buffers needed on
 * every rank (count: of the vector, or of each rank's block). */
static coll_status_t run_reducing(coll_comm *comm, coll_kind_t kind, const void *sendbuf, void *recvbuf, size_t count,
                                  coll_dtype_t dt, coll_op_t op, const char *fn)
{
    COLL_CHECK(check_common(comm, dt, fn));
    COLL_CHECK(check_op(op, fn));
    COLL_CHECK(check_bufs(count, sendbuf, 1, recvbuf, 1, fn));
    return run(comm, coll_args_make(kind, sendbuf, recvbuf, count, dt, op, 0));
}

coll_status_t coll_all_reduce(const void *sendbuf, void *recvbuf, size_t count, coll_dtype_t dt, coll_op_t op,
                              coll_comm_t comm)
{
    return run_reducing(comm, COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, op, __func__);
}

coll_status_t coll_reduce(const void *sendbuf, void *recvbuf, size_t count, coll_dtype_t dt, coll_op_t op, int root,
                          coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    COLL_CHECK(check_op(op, __func__));
    COLL_CHECK(check_root(comm, root, __func__));
    COLL_CHECK(check_bufs(count, sendbuf, 1, recvbuf, comm->rank == root, __func__));
    return run(comm, coll_args_make(COLL_REDUCE, sendbuf, recvbuf, count, dt, op, root));
}

coll_status_t coll_broadcast(void *buf, size_t count, coll_dtype_t dt, int root, coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    COLL_CHECK(check_root(comm, root, __func__));
    COLL_CHECK(check_bufs(count, buf, 1, buf, 1, __func__));
    return run(comm, coll_args_make(COLL_BROADCAST, buf, buf, count, dt, COLL_SUM, root));
}

coll_status_t coll_all_gather(const void *sendbuf, void *recvbuf, size_t sendcount, coll_dtype_t dt, coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    COLL_CHECK(check_bufs(sendcount, sendbuf, 1, recvbuf, 1, __func__));
    return run(comm, coll_args_make(COLL_ALLGATHER, sendbuf, recvbuf, sendcount, dt, COLL_SUM, 0));
}

coll_status_t coll_all_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                               const size_t *displs, coll_dtype_t dt, coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    if (!recvcounts || !displs)
        return BAD("%s: recvcounts and displs are required", __func__);
    if (recvcounts[comm->rank] != sendcount)
        return BAD("%s: sendcount %zu differs from recvcounts[%d] = %zu", __func__, sendcount, comm->rank,
                   recvcounts[comm->rank]);
    size_t total = 0;
    for (int r = 0; r < comm->nranks; r++)
        total += recvcounts[r];
    if ((sendcount && !sendbuf) || (total && !recvbuf))
        return BAD("%s: NULL buffer", __func__);
    return run(comm, coll_args_make_v(COLL_ALLGATHERV, sendbuf, recvbuf, sendcount, recvcounts, displs, dt, COLL_SUM));
}

coll_status_t coll_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, coll_dtype_t dt, coll_op_t op,
                                  coll_comm_t comm)
{
    return run_reducing(comm, COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dt, op, __func__);
}

coll_status_t coll_reduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *recvcounts, coll_dtype_t dt,
                                   coll_op_t op, coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    COLL_CHECK(check_op(op, __func__));
    if (!recvcounts)
        return BAD("%s: recvcounts is required", __func__);
    size_t *displs = malloc(sizeof(size_t) * (size_t)comm->nranks);
    if (!displs)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "out of memory");
    size_t total = 0;
    for (int r = 0; r < comm->nranks; r++) {
        displs[r] = total;
        total += recvcounts[r];
    }
    coll_status_t st;
    if ((total && !sendbuf) || (recvcounts[comm->rank] && !recvbuf)) {
        st = BAD("%s: NULL buffer", __func__);
    } else {
        st = run(comm,
                 coll_args_make_v(COLL_REDUCE_SCATTERV, sendbuf, recvbuf, recvcounts[comm->rank], recvcounts, displs,
                                  dt, op));
    }
    free(displs);
    return st;
}

coll_status_t coll_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, coll_dtype_t dt, int root,
                           coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    COLL_CHECK(check_root(comm, root, __func__));
    COLL_CHECK(check_bufs(recvcount, sendbuf, comm->rank == root, recvbuf, 1, __func__));
    return run(comm, coll_args_make(COLL_SCATTER, sendbuf, recvbuf, recvcount, dt, COLL_SUM, root));
}

coll_status_t coll_gather(const void *sendbuf, void *recvbuf, size_t sendcount, coll_dtype_t dt, int root,
                          coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    COLL_CHECK(check_root(comm, root, __func__));
    COLL_CHECK(check_bufs(sendcount, sendbuf, 1, recvbuf, comm->rank == root, __func__));
    return run(comm, coll_args_make(COLL_GATHER, sendbuf, recvbuf, sendcount, dt, COLL_SUM, root));
}

coll_status_t coll_all_to_all(const void *sendbuf, void *recvbuf, size_t count, coll_dtype_t dt, coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    COLL_CHECK(check_bufs(count, sendbuf, 1, recvbuf, 1, __func__));
    if (count && sendbuf == recvbuf)
        return BAD("%s: in-place all-to-all is not supported (sendbuf == recvbuf)", __func__);
    return run(comm, coll_args_make(COLL_ALLTOALL, sendbuf, recvbuf, count, dt, COLL_SUM, 0));
}

coll_status_t coll_all_to_allv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                               const size_t *recvcounts, const size_t *rdispls, coll_dtype_t dt, coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    if (!sendcounts || !sdispls || !recvcounts || !rdispls)
        return BAD("%s: counts and displacements are required", __func__);
    size_t stot = 0, rtot = 0;
    for (int r = 0; r < comm->nranks; r++) {
        stot += sendcounts[r];
        rtot += recvcounts[r];
    }
    if ((stot && !sendbuf) || (rtot && !recvbuf))
        return BAD("%s: NULL buffer", __func__);
    if (stot && rtot && sendbuf == recvbuf)
        return BAD("%s: in-place all-to-all-v is not supported (sendbuf == recvbuf)", __func__);
    return run(comm, coll_args_make_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dt));
}

coll_status_t coll_barrier(coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, COLL_UINT8, __func__));
    return run(comm, coll_args_make(COLL_BARRIER, NULL, NULL, 0, COLL_UINT8, COLL_SUM, 0));
}

static coll_status_t check_peer(coll_comm *comm, int peer, const char *fn)
{
    if (peer < 0 || peer >= comm->nranks || peer == comm->rank)
        return BAD("%s: invalid peer %d (allowed 0..%d, not self)", fn, peer, comm->nranks - 1);
    return COLL_SUCCESS;
}

coll_status_t coll_sendrecv(const void *sendbuf, size_t sendcount, int dst, void *recvbuf, size_t recvcount, int src,
                            coll_dtype_t dt, coll_comm_t comm)
{
    COLL_CHECK(check_common(comm, dt, __func__));
    if (dst != -1)
        COLL_CHECK(check_peer(comm, dst, __func__));
    if (src != -1)
        COLL_CHECK(check_peer(comm, src, __func__));
    if ((dst >= 0 && sendcount && !sendbuf) || (src >= 0 && recvcount && !recvbuf))
        return BAD("%s: NULL buffer", __func__);
    size_t es = coll_dtype_size(dt);
    comm->cur_kind = COLL_SENDRECV;
    comm->cur_bytes = (dst >= 0 ? sendcount : recvcount) * es;
    coll_status_t st = coll_prim_sendrecv(comm, sendbuf, dst >= 0 ? sendcount * es : 0, dst, recvbuf,
                                          src >= 0 ? recvcount * es : 0, src);
    if (st == COLL_ERR_TIMEOUT || st == COLL_ERR_ABORTED || st == COLL_ERR_NETWORK)
        coll_comm_set_aborted(comm, st, "sendrecv failed: %s", coll_last_error());
    return st;
}

coll_status_t coll_send(const void *buf, size_t count, coll_dtype_t dt, int peer, coll_comm_t comm)
{
    if (comm)
        COLL_CHECK(check_peer(comm, peer, __func__));
    return coll_sendrecv(buf, count, peer, NULL, 0, -1, dt, comm);
}

coll_status_t coll_recv(void *buf, size_t count, coll_dtype_t dt, int peer, coll_comm_t comm)
{
    if (comm)
        COLL_CHECK(check_peer(comm, peer, __func__));
    return coll_sendrecv(NULL, 0, -1, buf, count, peer, dt, comm);
}
