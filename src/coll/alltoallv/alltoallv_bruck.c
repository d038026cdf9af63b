/*
 * alltoallv_bruck.c - Bruck AllToAllV (Bruck et al., 1997) with per-peer
 * counts: ceil(log2 p) steps for any p, and every member talks to only
 * 2 ceil(log2 p) peers (me +- 2^k), so over a transport that connects on first
 * use a rank opens O(log N) connections instead of the N-1 of pairwise.
 *
 * Slot i of member me starts as its block for member (me + i) mod p (a pointer
 * into sendbuf: no initial rotation copy). In the step of distance k = 2^s
 * every slot i with bit k set travels to member me + k, and the slots of
 * member me - k with that bit arrive in their place. A block from s to d rides
 * slot (d - s) mod p and moves by each set bit of it, so after the last step
 * slot i holds the block from member (me - i) mod p, which is copied to its
 * place in recvbuf.
 *
 * Uneven counts: an intermediate member does not know the sizes of the
 * blocks it forwards, so each step first swaps a header (one size_t per
 * slot that moves) and then the packed data. The uniform AllToAll
 * (alltoall_bruck.c) knows every size and skips the header.
 *
 * Cost (p ranks, S = ceil(log2 p) steps, n = max(bytes sent, bytes received)
 * by a rank, f = (sum over steps of slots moved) / p ~ S/2):
 *   S alpha (2 S with headers) + f n beta + 2 f n beta_mem (pack + unpack)
 * Latency-optimal; it moves each byte ~log2(p)/2 times, so pairwise (or the
 * hierarchical AllToAll) wins for large blocks.
 * Memory: O(f n) private receive buffers (kept until the end: a slot received
 * in one step may leave again in a later one), plus O(p) slot tables.
 *
 * Example, p = 5, member 0: slots [b0 b1 b2 b3 b4] (block for 0+i). k = 1:
 * slots 1, 3 go to member 1, slots 1, 3 of member 4 arrive (its blocks for
 * 0 and 2). k = 2: slots 2, 3 go to member 2. k = 4: slot 4 goes to member 4.
 * Member 2's block for 0 rides slot 3 (= 0 - 2 mod 5): 2 -> 3 (k = 1) ->
 * 0 (k = 2), and ends in slot 3 of member 0 as the formula says.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/alltoallv/alltoallv.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"

/* Bytes moved per step relative to n: (1/p) * sum over k of #{i < p : i & k}.
 * Bit k is set in the upper half of every full 2k-period of 0..p-1 and in the
 * part of the last one past k: O(log p) per call, not O(p log p) (every rank
 * selects: at 32,768 simulated ranks that was 16 G steps per size). */
long long coll_bruck_step_slots(int p, long long k)
{
    long long rem = p % (2 * k);
    return (p / (2 * k)) * k + (rem > k ? rem - k : 0);
}

double coll_bruck_a2a_factor(int p, int *steps)
{
    double moved = 0;
    int s = 0;
    for (long long k = 1; k < p; k <<= 1, s++)
        moved += (double)coll_bruck_step_slots(p, k);
    if (steps)
        *steps = s;
    return p > 0 ? moved / p : 0;
}

/* Step k of the Bruck exchange: the slots with bit k set go to member me + k
 * and the same slots come from me - k, sizes first (hout / hin) unless
 * uniform; what arrives stays in *held and the slots point into it. */
static coll_status_t bruck_step(coll_comm *comm, const coll_group_t *g, int k, int uniform, const char **ptr,
                                size_t *len, size_t *hout, size_t *hin, char **held)
{
    int p = g->size, me = g->me, nb = 0;
    int dst = g->ranks[(me + k) % p], src = g->ranks[coll_mod(me - k, p)];
    size_t tot_s = 0, tot_r = 0;
    for (int i = 0; i < p; i++)
        if (i & k) {
            hout[nb++] = len[i];
            tot_s += len[i];
        }
    if (uniform) {
        for (int t = 0; t < nb; t++)
            hin[t] = hout[t];
    } else {
        COLL_CHECK(coll_prim_sendrecv(comm, hout, (size_t)nb * sizeof *hout, dst, hin, (size_t)nb * sizeof *hin, src));
    }
    for (int t = 0; t < nb; t++)
        tot_r += hin[t];
    char *pack = tot_s ? coll_work_alloc(comm, tot_s) : NULL;
    *held = tot_r ? coll_work_alloc(comm, tot_r) : NULL;
    if ((tot_s && !pack) || (tot_r && !*held)) {
        coll_work_free(comm, pack);
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "alltoallv bruck: cannot allocate %zu + %zu bytes", tot_s,
                          tot_r);
    }
    /* pack in slot order (sizes only, coll_data_real 0: no values to copy;
     * uncharged either way) */
    size_t off = 0;
    int real = coll_data_real(comm);
    for (int i = 0; i < p; i++)
        if (i & k) {
            if (len[i] && real)
                memcpy(pack + off, ptr[i], len[i]);
            off += len[i];
        }
    coll_status_t st = coll_prim_sendrecv(comm, pack, tot_s, dst, *held, tot_r, src);
    coll_work_free(comm, pack);
    if (st != COLL_SUCCESS)
        return st;
    off = 0;
    for (int i = 0, t = 0; i < p; i++)
        if (i & k) {
            ptr[i] = *held ? *held + off : NULL; /* nothing arrived: no buffer (NULL + 0 is undefined) */
            len[i] = hin[t++];
            off += len[i];
        }
    return COLL_SUCCESS;
}

/* After the steps slot i holds member me - i's block for me: checked against
 * rcounts and copied into place (real: values move, coll_data_real). */
static coll_status_t unrotate(const coll_group_t *g, const char *const *ptr, const size_t *len, char *rb,
                              const size_t *rcounts, const size_t *rdispls, size_t es, int real)
{
    int p = g->size, me = g->me;
    for (int i = 0; i < p; i++) {
        int j = coll_mod(me - i, p);
        if (len[i] != rcounts[j] * es)
            return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_COLL,
                              "alltoallv: rank %d expects %zu elements from rank %d, which sends %zu", g->ranks[me],
                              rcounts[j], g->ranks[j], len[i] / es);
        if (len[i] && real)
            memcpy(rb + rdispls[j] * es, ptr[i], len[i]);
    }
    return COLL_SUCCESS;
}

coll_status_t coll_bruck_a2a(coll_comm *comm, const coll_group_t *g, const char *sb, const size_t *scounts,
                             const size_t *sdispls, char *rb, const size_t *rcounts, const size_t *rdispls, size_t es,
                             int uniform)
{
    int p = g->size, me = g->me, nsteps = 0;
    for (int k = 1; k < p; k <<= 1)
        nsteps++;
    const char **ptr = malloc(sizeof *ptr * (size_t)p);
    size_t *len = malloc(sizeof *len * 3 * (size_t)p); /* len | header out | header in */
    char **held = calloc((size_t)nsteps + 1, sizeof *held);
    coll_status_t st = COLL_SUCCESS;
    if (!ptr || !len || !held) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "alltoallv bruck: out of memory (%d ranks)", p);
        goto out;
    }
    for (int i = 0; i < p; i++) {
        int j = (me + i) % p;
        ptr[i] = sb + sdispls[j] * es;
        len[i] = scounts[j] * es;
    }
    for (int k = 1, s = 0; k < p; k <<= 1, s++)
        COLL_CHECK_GOTO(bruck_step(comm, g, k, uniform, ptr, len, len + p, len + 2 * (size_t)p, &held[s]), st, out);
    st = unrotate(g, ptr, len, rb, rcounts, rdispls, es, coll_data_real(comm));
out:
    if (held)
        for (int s = 0; s <= nsteps; s++)
            coll_work_free(comm, held[s]);
    free(held);
    free(len);
    free(ptr);
    return st;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_bruck_a2a(comm, g, a->sendbuf, a->scounts, a->sdispls, a->recvbuf, a->rcounts, a->rdispls,
                          coll_dtype_size(a->dt), 0);
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double mem = coll_tuning_shm()->beta_us_per_b, n = (double)a->bytes;
    int steps;
    double f = coll_bruck_a2a_factor(g->size, &steps);
    return 2.0 * steps * coll_cost_alpha(comm, l) + f * n * (coll_cost_beta(comm, g, l) + 2 * mem);
}

const coll_algo_t coll_algo_alltoallv_bruck = COLL_ALGO(
    COLL_ALLTOALLV, "bruck",
    .desc = "Bruck with per-step size headers: 2 ceil(log2 p) messages to 2 log2 p peers, ~log2(p)/2 n bytes; any p");
