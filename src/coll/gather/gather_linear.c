/*
 * gather_linear.c - linear Gather: every member sends its block to the root;
 * the root posts all receives at once (in batches of 64), straight into
 * recvbuf, and copies its own block (nothing when in place).
 *
 * Cost (p ranks, N = p * count bytes in all): (p-1) alpha + (p-1)/p N beta.
 * Simple and bandwidth-optimal at the root; the binomial tree has less latency
 * for many ranks. Any p, any root, any transport.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/coll_util.h"
#include "coll/gather/gather.h"
#include "coll/prim.h"
#include "coll/tuning.h"

#define BATCH 64

coll_status_t coll_gather_linear_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                     void *recvbuf, size_t n, coll_dtype_t dt, int root)
{
    int p = g->size, me = g->me, ri = coll_group_index(g, root);
    size_t blk = n * coll_dtype_size(dt);
    char *rb = recvbuf;
    if (ri < 0)
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL, "gather: root %d is not in the group", root);
    if (blk == 0)
        return COLL_SUCCESS;
    if (me != ri)
        return coll_prim_sendrecv(comm, sendbuf, blk, root, NULL, 0, -1);
    if (sendbuf != rb + (size_t)me * blk)
        memcpy(rb + (size_t)me * blk, sendbuf, blk);
    coll_prim_t ops[BATCH];
    int nops = 0;
    for (int j = 0; j < p; j++) {
        if (j != me)
            ops[nops++] = coll_prim_recv(g->ranks[j], rb + (size_t)j * blk, blk);
        if (nops == BATCH || (j == p - 1 && nops)) {
            COLL_CHECK(coll_prim_run(comm, ops, nops, dt, COLL_SUM));
            nops = 0;
        }
    }
    return COLL_SUCCESS;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_gather_linear_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt, a->root);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes;
    /* shm: copy in + out, every rank copying at once (ov ranks per core share a core) */
    int shm = coll_group_is_local(comm, g);
    double ov = shm ? coll_tuning_oversub(comm) : 1.0;
    double alpha = l->alpha_us * ov, beta = l->beta_us_per_b * (shm ? 2.0 * ov : 1.0);
    return (p - 1) * alpha + (p - 1) / p * n * beta;
}

const coll_algo_t coll_algo_gather_linear = {
    .kind = COLL_GATHER,
    .name = "linear",
    .desc = "every member sends its block to the root, received all at once; (p-1) alpha + (p-1)/p n beta",
    .cost_us = cost,
    .run = run,
};
