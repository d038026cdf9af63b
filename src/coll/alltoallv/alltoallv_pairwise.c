/*
 * alltoallv_pairwise.c - pairwise-exchange AllToAllV: the local block is
 * copied, then in step s = 1..p-1 rank me sends scounts[me+s] elements to
 * me+s while receiving rcounts[me-s] from me-s (mod p), COLL_ALLTOALL_WINDOW
 * steps in flight (coll_prim_pairwise, as alltoall_pairwise.c). Zero counts move
 * nothing (sender and receiver agree: scounts[j] on i == rcounts[i] on j).
 *
 * Cost (p ranks, n = max(bytes sent, bytes received) by this rank, c = 1 + n/p/COLL_CHUNK):
 *   (p-1) c alpha + n beta   (beta twice on shm: copy in + out; alpha per
 *   chunk as in alltoall_pairwise.c). Any p, any transport.
 * alpha is scaled by ranks per core when the host is oversubscribed, as the
 * barriers of the direct algorithms are: every step then waits for a context
 * switch.
 */
#include <string.h>

#include "coll/algo.h"
#include "coll/alltoallv/alltoallv.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

coll_status_t coll_alltoallv_self(const coll_group_t *g, const char *sb, const size_t *scounts, const size_t *sdispls,
                                  char *rb, const size_t *rcounts, const size_t *rdispls, size_t es)
{
    int me = g->me;
    if (scounts[me] != rcounts[me])
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_COLL,
                          "alltoallv: rank %d sends itself %zu elements but expects %zu", g->ranks[me], scounts[me],
                          rcounts[me]);
    if (scounts[me])
        memcpy(rb + rdispls[me] * es, sb + sdispls[me] * es, scounts[me] * es);
    return COLL_SUCCESS;
}

typedef struct {
    const char *sb;
    char *rb;
    const size_t *scounts, *sdispls, *rcounts, *rdispls;
    size_t es;
} a2av_ctx_t;

static coll_pair_blk_t a2av_blk(const void *ctx, int j)
{
    const a2av_ctx_t *c = ctx;
    return (coll_pair_blk_t){c->sb + c->sdispls[j] * c->es, c->scounts[j] * c->es, c->rb + c->rdispls[j] * c->es,
                             c->rcounts[j] * c->es};
}

coll_status_t coll_alltoallv_pairwise_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf,
                                          const size_t *scounts, const size_t *sdispls, void *recvbuf,
                                          const size_t *rcounts, const size_t *rdispls, coll_dtype_t dt)
{
    size_t es = coll_dtype_size(dt);
    const char *sb = sendbuf;
    char *rb = recvbuf;
    COLL_CHECK(coll_alltoallv_self(g, sb, scounts, sdispls, rb, rcounts, rdispls, es));
    a2av_ctx_t c = {sb, rb, scounts, sdispls, rcounts, rdispls, es};
    return coll_prim_pairwise(comm, g, a2av_blk, &c);
}

/* a->scounts etc. are indexed by member of g (global rank on the world). */
static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_alltoallv_pairwise_run(comm, g, a->sendbuf, a->scounts, a->sdispls, a->recvbuf, a->rcounts, a->rdispls,
                                       a->dt);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes;
    /* one alpha per COLL_CHUNK of an average block, as in alltoall_pairwise.c */
    return (p - 1) * coll_cost_chunks(n / p) * coll_cost_alpha(comm, l) + n * coll_cost_beta(comm, g, l);
}

const coll_algo_t coll_algo_alltoallv_pairwise = COLL_ALGO(
    COLL_ALLTOALLV, "pairwise", .flags = COLL_ALGO_F_ALL_PEERS,
    .desc = "pairwise exchange with per-peer counts: p-1 steps, step s sends to me+s and receives from me-s");
