/*
 * allgather_bruck.c - Bruck AllGather (Bruck et al., 1997) for small blocks:
 * ceil(log2 p) steps for any p. Each rank keeps the blocks it has in a
 * contiguous scratch buffer in rotated order (slot i = block (me + i) mod p);
 * in the step of distance d it sends its first min(d, p - d) slots to rank
 * me - d and appends what rank me + d sends. A final rotation puts the blocks
 * in place.
 *
 * Cost (p ranks, n = total bytes gathered, L = ceil(log2 p)):
 *   L alpha + (p-1)/p n beta + n beta_mem     (beta twice on shm; the rotation
 *   copy costs n at memory speed). Wins over the ring when p is large and the
 *   blocks are small; the ring wins for large blocks.
 * Memory: a private buffer of p * count elements (malloc). Any p, any transport.
 * alpha is scaled by ranks per core when the host is oversubscribed, as the
 * barriers of the direct algorithms are: every step then waits for a context
 * switch.
 *
 * Example, p = 5, rank 0: starts with [0]; d = 1: sends [0] to 4, receives
 * [1] from 1 -> [0 1]; d = 2: sends [0 1] to 3, receives [2 3] from 2 ->
 * [0 1 2 3]; d = 4: sends min(4, 1) = 1 slot [0] to 1, receives [4] from 4.
 * Rank 2 ends with [2 3 4 0 1] and rotates by 2.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/allgather/allgather.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v);
    size_t blk = v.n * v.es;
    /* private, not comm->scratch: the executor reads and writes it during the
     * steps, and neither a transport nor a caller may share it */
    char *tmp = coll_work_alloc(comm, (size_t)v.p * blk);
    if (!tmp)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "allgather bruck: cannot allocate %zu bytes",
                          (size_t)v.p * blk);
    coll_status_t st = COLL_SUCCESS;
    coll_local_copy(comm, tmp, v.sb, blk);
    for (int d = 1; d < v.p; d *= 2) {
        size_t cnt = (size_t)(d < v.p - d ? d : v.p - d);
        int to = g->ranks[coll_mod(v.me - d, v.p)], from = g->ranks[(v.me + d) % v.p];
        COLL_CHECK_GOTO(coll_prim_sendrecv(comm, tmp, cnt * blk, to, tmp + (size_t)d * blk, cnt * blk, from), st, out);
    }
    /* slot i holds block (me + i) mod p */
    coll_local_copy(comm, v.rb + (size_t)v.me * blk, tmp, (size_t)(v.p - v.me) * blk);
    coll_local_copy(comm, v.rb, tmp + (size_t)(v.p - v.me) * blk, (size_t)v.me * blk);
out:
    coll_work_free(comm, tmp);
    return st;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double mem = coll_tuning_shm()->beta_us_per_b; /* local memcpy */
    double p = g->size, n = (double)a->bytes;
    return coll_tree_binomial_depth(g->size) * coll_cost_alpha(comm, l) + (p - 1) / p * n * coll_cost_beta(comm, g, l)
        + n * mem;
}

const coll_algo_t coll_algo_allgather_bruck
    = COLL_ALGO(COLL_ALLGATHER, "bruck",
                .desc = "Bruck: ceil(log2 p) steps through a rotated scratch buffer, for small blocks; any p");
