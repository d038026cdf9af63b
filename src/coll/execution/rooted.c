/*
 * rooted.c - the linear exchange and the cost model shared by Gather and
 * Scatter (rooted.h).
 */
#include "coll/execution/rooted.h"

#include <string.h>

#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"

#define BATCH 64

coll_status_t coll_rooted_linear(coll_comm *comm, const coll_group_t *g, int ri, coll_rooted_dir_t dir, char *blocks,
                                 char *own, size_t blk)
{
    int p = g->size, me = g->me, to_root = dir == COLL_TO_ROOT;
    if (blk == 0)
        return COLL_SUCCESS;
    if (me != ri)
        return to_root ? coll_prim_sendrecv(comm, own, blk, g->ranks[ri], NULL, 0, -1)
                       : coll_prim_sendrecv(comm, NULL, 0, -1, own, blk, g->ranks[ri]);
    char *mine = blocks + (size_t)me * blk;
    if (own != mine)
        memcpy(to_root ? mine : own, to_root ? own : mine, blk);
    coll_prim_t ops[BATCH];
    int nops = 0;
    for (int j = 0; j < p; j++) {
        char *b = blocks + (size_t)j * blk;
        if (j != me)
            ops[nops++] = to_root ? coll_prim_recv(g->ranks[j], b, blk) : coll_prim_send(g->ranks[j], b, blk);
        if (nops == BATCH || (j == p - 1 && nops)) {
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
