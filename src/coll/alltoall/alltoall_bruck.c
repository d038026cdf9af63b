/*
 * alltoall_bruck.c - Bruck AllToAll for small blocks: ceil(log2 p) steps for
 * any p; in step k = 2^s member me sends to me + k and receives from me - k,
 * so a rank talks to 2 ceil(log2 p) peers in all (pairwise: p - 1), which is
 * what keeps a rank's connections (and file descriptors, with connections
 * opened on first use) at O(log N) across thousands of ranks. The steps are
 * those of alltoallv_bruck.c with every block count elements, so no size
 * headers travel, and no per-slot arrays either: a rank keeps its p blocks in
 * one rotated buffer (slot i = the block for member me + i at first, from
 * member me - i at the end), packs the slots with bit k set into a send
 * buffer, receives the same slots from me - k and unpacks them in place.
 * Example, p = 3, member 0: slots [b00 b01 b02]; k = 1 sends slot 1 (b01) to
 * 1 and receives b20 from 2 into slot 1; k = 2 sends slot 2 (b02) to 2 and
 * receives b10 from 1 into slot 2: [b00 b20 b10], slot i from member -i.
 *
 * Cost (p ranks, S = ceil(log2 p), n = bytes each rank sends in all,
 * f = (sum over steps of blocks moved) / p ~ S/2):
 *   S alpha + f n beta + 2 f n beta_mem (pack + unpack)   (beta twice on shm)
 * vs pairwise (p-1) alpha + (p-1)/p n beta: Bruck wins while blocks are
 * small; large blocks go pairwise or hierarchical (alltoall_hier.c).
 * Memory: n (the rotated blocks) + 2 ceil(p/2) n/p (send and receive) bytes,
 * nothing O(p) beyond them: the p slot pointers and lengths of the v variant
 * were 32 p bytes a rank, 1 MiB at 32,768 ranks, and with the O(p) counts
 * 48 GiB for a simulation of them all (collbench sim was killed for memory).
 * Any p, any transport.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/alltoall/alltoall.h"
#include "coll/alltoallv/alltoallv.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"

/* Slots with bit k set, in order, between the rotated buffer and a packed
 * one (out: rotated -> packed); returns the bytes moved. O(p), or O(1) in a
 * sizes-only simulation (no values: only the count). */
static size_t move_slots(coll_comm *comm, char *rot, char *packed, int p, int k, size_t blk, int out)
{
    size_t off = 0;
    int real = coll_data_real(comm);
    if (!real)
        off = (size_t)coll_bruck_step_slots(p, k) * blk;
    for (int base = k; base < p && real; base += 2 * k)
        for (int i = base; i < base + k && i < p; i++, off += blk)
            memcpy(out ? packed + off : rot + (size_t)i * blk, out ? rot + (size_t)i * blk : packed + off, blk);
    coll_local_charge(comm, off);
    return off;
}

coll_status_t coll_alltoall_bruck_run(coll_comm *comm, const coll_group_t *g, const void *sendbuf, void *recvbuf,
                                      size_t n, coll_dtype_t dt)
{
    int p = g->size, me = g->me;
    size_t blk = n * coll_dtype_size(dt), half = (size_t)(p + 1) / 2 * blk;
    const char *sb = sendbuf;
    char *rb = recvbuf;
    if (n == 0)
        return COLL_SUCCESS;
    char *rot = coll_work_alloc(comm, (size_t)p * blk), *sbuf = coll_work_alloc(comm, half),
         *rbuf = coll_work_alloc(comm, half);
    coll_status_t st = COLL_SUCCESS;
    if (!rot || !sbuf || !rbuf) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "alltoall bruck: cannot allocate %zu bytes",
                        (size_t)p * blk + 2 * half);
        goto out;
    }
    coll_local_copy(comm, rot, sb + (size_t)me * blk, (size_t)(p - me) * blk); /* slot i: for me + i */
    coll_local_copy(comm, rot + (size_t)(p - me) * blk, sb, (size_t)me * blk);
    for (int k = 1; k < p; k <<= 1) {
        size_t bytes = move_slots(comm, rot, sbuf, p, k, blk, 1);
        int to = g->ranks[(me + k) % p], from = g->ranks[coll_mod(me - k, p)];
        COLL_CHECK_GOTO(coll_prim_sendrecv(comm, sbuf, bytes, to, rbuf, bytes, from), st, out);
        move_slots(comm, rot, rbuf, p, k, blk, 0);
    }
    int real = coll_data_real(comm);
    for (int i = 0; i < p && real; i++) /* slot i: from member me - i */
        memcpy(rb + (size_t)coll_mod(me - i, p) * blk, rot + (size_t)i * blk, blk);
    coll_local_charge(comm, (size_t)p * blk);
out:
    coll_work_free(comm, rbuf);
    coll_work_free(comm, sbuf);
    coll_work_free(comm, rot);
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
