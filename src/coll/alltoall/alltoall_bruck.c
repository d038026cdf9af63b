/*
 * alltoall_bruck.c - Bruck AllToAll for small blocks: ceil(log2 p) steps for
 * any p; in step k = 2^s member me sends to me + k and receives from me - k,
 * so a rank talks to 2 ceil(log2 p) peers in all (pairwise: p - 1), which is
 * what keeps a rank's connections (and file descriptors, with connections
 * opened on first use) at O(log N) across thousands of ranks. The steps are
 * those of alltoallv_bruck.c with every block count elements, so no size
 * headers travel; see there for the slot arithmetic and an example.
 *
 * Cost (p ranks, S = ceil(log2 p), n = bytes each rank sends in all,
 * f = (sum over steps of blocks moved) / p ~ S/2):
 *   S alpha + f n beta + 2 f n beta_mem (pack + unpack)   (beta twice on shm)
 * vs pairwise (p-1) alpha + (p-1)/p n beta: Bruck wins while blocks are
 * small; large blocks go pairwise or hierarchical (alltoall_hier.c).
 * Memory: O(f n) private buffers and O(p) counts. Any p, any transport.
 */
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/alltoall/alltoall.h"
#include "coll/alltoallv/alltoallv.h"
#include "coll/cost.h"
#include "coll/tuning.h"

coll_status_t coll_alltoall_bruck_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                      size_t n, coll_dtype_t dt)
{
    int p = g->size;
    if (n == 0)
        return COLL_SUCCESS;
    size_t *cnt = malloc(sizeof *cnt * 2 * (size_t)p);
    if (!cnt)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "alltoall bruck: out of memory (%d ranks)", p);
    size_t *displ = cnt + p;
    for (int i = 0; i < p; i++) {
        cnt[i] = n;
        displ[i] = (size_t)i * n;
    }
    coll_status_t st = coll_bruck_a2a(comm, g, sendbuf, cnt, displ, recvbuf, cnt, displ, coll_dtype_size(dt), 1);
    free(cnt);
    return st;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_alltoall_bruck_run(comm, g, a->sendbuf, a->recvbuf, a->count, a->dt);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double mem = coll_tuning_shm()->beta_us_per_b, n = (double)a->bytes;
    int steps;
    double f = coll_bruck_a2a_factor(g->size, &steps);
    return steps * coll_cost_alpha(comm, l) + f * n * (coll_cost_beta(comm, g, l) + 2 * mem);
}

const coll_algo_t coll_algo_alltoall_bruck
    = COLL_ALGO(COLL_ALLTOALL, "bruck",
                .desc = "Bruck: ceil(log2 p) steps to 2 log2 p peers, ~log2(p)/2 n bytes each; small blocks, any p");
