/*
 * args.c - the derived fields of coll_args_t (algo.h), for the public entry
 * points (api.c, on the world group) and the sub-group calls of the
 * hierarchical algorithms (hier.c): the fields a caller sets (kind, buffers,
 * count or counts, dt, op, root) give esize, bytes and inplace.
 */
#include "coll/algo.h"
#include "core/log.h"

static size_t sum(const size_t *counts, int p)
{
    size_t t = 0;
    for (int i = 0; i < p; i++)
        t += counts[i];
    return t;
}

/* In place, as algo.h defines it per collective: my block of the larger
 * buffer is the other one. `root` = I am the root (gather, scatter). */
static int is_inplace(const coll_args_t *a, const coll_group_t *g, int root)
{
    const char *sb = a->sendbuf, *rb = a->recvbuf;
    size_t es = a->esize, mine = (size_t)g->me * a->count * es;
    switch (a->kind) {
    case COLL_ALLREDUCE:
    case COLL_REDUCE:
    case COLL_BROADCAST: return sb == rb;
    case COLL_ALLGATHER: return sb == rb + mine;
    case COLL_REDUCE_SCATTER: return rb == sb + mine;
    case COLL_ALLGATHERV: return sb == rb + a->displs[g->me] * es;
    case COLL_REDUCE_SCATTERV: return rb == sb + a->displs[g->me] * es;
    case COLL_SCATTER: return root && rb == sb + mine;
    case COLL_GATHER: return root && sb == rb + mine;
    default: return 0;
    }
}

void coll_args_finish(const coll_comm *comm, const coll_group_t *g, coll_args_t *a)
{
    size_t es = coll_dtype_size(a->dt), p = (size_t)g->size;
    a->esize = es;
    switch (a->kind) {
    case COLL_ALLREDUCE:
    case COLL_REDUCE:
    case COLL_BROADCAST: a->bytes = a->count * es; break;
    case COLL_ALLGATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_SCATTER:
    case COLL_GATHER:
    case COLL_ALLTOALL: a->bytes = a->count * es * p; break;
    case COLL_ALLGATHERV:
    case COLL_REDUCE_SCATTERV: a->bytes = sum(a->counts, g->size) * es; break;
    case COLL_ALLTOALLV: {
        size_t s = sum(a->scounts, g->size), r = sum(a->rcounts, g->size);
        a->bytes = (s > r ? s : r) * es;
        break;
    }
    default: a->bytes = 0; break;
    }
    a->inplace = is_inplace(a, g, comm->rank == a->root);
}

/* Largest end (displacement + count) of a v-collective's blocks, or SIZE_MAX
 * when one overflows; counts alone when displs is NULL (their sum). */
static size_t extent(const size_t *counts, const size_t *displs, int p)
{
    size_t hi = 0, t = 0;
    for (int i = 0; i < p && counts; i++) {
        size_t e;
        if (displs ? __builtin_add_overflow(displs[i], counts[i], &e) : __builtin_add_overflow(t, counts[i], &t))
            return SIZE_MAX;
        if (displs && e > hi)
            hi = e;
    }
    return displs ? hi : t;
}

coll_status_t coll_args_check_size(const coll_group_t *g, const coll_args_t *a, const char *fn)
{
    size_t es = coll_dtype_size(a->dt), p = (size_t)g->size, n = a->count, x;
    int bad = __builtin_mul_overflow(n, es, &x) || __builtin_mul_overflow(x, p, &x);
    const size_t *c[3] = {a->counts, a->scounts, a->rcounts}, *d[3] = {a->displs, a->sdispls, a->rdispls};
    for (int i = 0; i < 3 && !bad; i++) {
        size_t e = extent(c[i], d[i], g->size);
        bad = e == SIZE_MAX || __builtin_mul_overflow(e, es, &x)
            || __builtin_mul_overflow(extent(c[i], NULL, g->size), es, &x);
    }
    if (bad)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_COLL,
                          "%s: count %zu (or counts and displacements) x %zu-byte elements x %zu ranks overflows the "
                          "address space: allowed a total that fits in memory",
                          fn, n, es, p);
    return COLL_SUCCESS;
}
