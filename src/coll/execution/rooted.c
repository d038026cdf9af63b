/*
 * rooted.c - the linear exchange and the cost model shared by Gather and
 * Scatter (rooted.h).
 */
#include "coll/execution/rooted.h"

#include <string.h>

#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"
#include "coll/util/coll_util.h"

#define BATCH 64

coll_status_t coll_rooted_open(const coll_group_t *g, const coll_args_t *a, coll_rooted_call_t *c)
{
    int to_root = a->kind == COLL_GATHER;
    *c = (coll_rooted_call_t){.dir = to_root ? COLL_TO_ROOT : COLL_FROM_ROOT,
                              .p = g->size,
                              .me = g->me,
                              .n = a->count,
                              .es = a->esize,
                              .blk = a->count * a->esize,
                              /* Scatter never writes through blocks, nor Gather through own (rooted.h) */
                              .blocks = (char *)(to_root ? a->recvbuf : a->sendbuf),
                              .own = (char *)(to_root ? a->sendbuf : a->recvbuf)};
    COLL_CHECK(coll_root_index(g, coll_kind_name(a->kind), a->root, &c->ri));
    /* a group of one is its own root: its block goes between own and blocks */
    c->done = c->blk == 0 || coll_alone(c->p, to_root ? c->own : c->blocks, to_root ? c->blocks : c->own, c->blk);
    return COLL_SUCCESS;
}

coll_status_t coll_rooted_linear(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_rooted_call_t c;
    COLL_OPEN(coll_rooted_open, g, a, c);
    int to_root = c.dir == COLL_TO_ROOT;
    if (c.me != c.ri)
        return to_root ? coll_prim_sendrecv(comm, c.own, c.blk, g->ranks[c.ri], NULL, 0, -1)
                       : coll_prim_sendrecv(comm, NULL, 0, -1, c.own, c.blk, g->ranks[c.ri]);
    char *mine = c.blocks + (size_t)c.me * c.blk;
    if (c.own != mine)
        memcpy(to_root ? mine : c.own, to_root ? c.own : mine, c.blk);
    coll_prim_t ops[BATCH];
    int nops = 0;
    for (int j = 0; j < c.p; j++) {
        char *b = c.blocks + (size_t)j * c.blk;
        if (j != c.me)
            ops[nops++] = to_root ? coll_prim_recv(g->ranks[j], b, c.blk) : coll_prim_send(g->ranks[j], b, c.blk);
        if (nops == BATCH || (j == c.p - 1 && nops)) {
            COLL_CHECK(coll_prim_run(comm, ops, nops, COLL_UINT8, COLL_SUM));
            nops = 0;
        }
    }
    return COLL_SUCCESS;
}

double coll_rooted_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a, double rounds)
{
    double p = g->size, n = (double)a->bytes;
    coll_cost_step_t s = coll_cost_tree_step(comm, g);
    return rounds * s.alpha + (p - 1) / p * n * s.beta;
}

double coll_rooted_linear_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_rooted_cost(comm, g, a, g->size - 1);
}

double coll_rooted_binomial_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_rooted_cost(comm, g, a, coll_tree_binomial_depth(g->size));
}
