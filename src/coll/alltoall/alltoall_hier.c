/*
 * alltoall_hier.c - hierarchical AllToAll for large blocks: only the host
 * leaders touch the network, and each sends one message per host instead of
 * every rank sending one per rank.
 *   (1) shm gather of every local rank's whole send buffer to the host leader:
 *       A[j][r] = local rank j's block for global rank r;
 *   (2) the leader packs, for each host h' in turn, the blocks of its L ranks
 *       for the L' ranks of h' ([t][j]: destination t of h', source j of mine),
 *       and the leaders run an AllToAllV over comm->leaders (its algorithm
 *       chosen by the registry: pairwise, or Bruck among many hosts);
 *   (3) the leader unpacks what host h' sent into S[t][r] (for my local rank t,
 *       the block from global rank r, in rank order) and scatters S over shm:
 *       local rank t receives its recvbuf in one piece.
 * Any rank layout (hosts of different sizes, interleaved ranks): positions go
 * through rank_host / rank_local.
 *
 * Peers: a non-leader talks only to its host (shm); a leader to the other
 * leaders (H - 1 with pairwise, 2 log2 H with Bruck): N ranks on H hosts open
 * O(H) sockets in all per leader instead of O(N) per rank.
 *
 * Cost (p ranks, H hosts, L = most ranks on a host, n = bytes each rank sends,
 * B = L n the bytes of one host):
 *   shm gather(L, B) + 2 B beta_mem (pack, unpack) + leaders' alltoall of B
 *   + shm scatter(L, B); the network level carries (H-1)/H B per leader,
 *   the same bytes as flat pairwise through the host's link but in H - 1
 *   messages instead of L (p - 1).
 * Memory: 3 L n at each leader (gather/scatter buffer, pack, receive), one
 * block of the communicator's scratch (coll_tmp_get: this algorithm is always
 * the outermost, on the world group), kept from call to call: a fresh block
 * per call cost the kernel's page faults and zeroing, about 0.5 ms per MiB:
 * ~20 ms of a 4 MiB AlltoAll on 2 hosts x 4 ranks (48 MiB at the leader),
 * ~370 ms at 64 MiB (bench/results/alltoall-hier-scratch-20261204.md).
 * That grows with the message: 3 x 8 ranks x 1 GiB = 24 GiB at a leader,
 * which no host holds, so the algorithm is usable only while 3 L n fits
 * COLL_SCRATCH_MAX (default 1 GiB: 2 x 4 ranks up to 85 MiB per rank, 8
 * ranks a host up to 42 MiB); above it the pairwise exchange (no working
 * memory) carries the call. Every rank decides alike: L, n and the setting
 * are the same on all.
 * Constraint: the world group, more than one host (COLL_ALGO_F_HIER).
 *
 * Example, hosts {0,1} and {2}: leader 0 gathers A = [b00 b01 b02 | b10 b11 b12]
 * (b_sd: from s to d), sends host 1 [b02 b12] and keeps [b00 b10 b01 b11];
 * leader 2 sends host 0 [b20 b21]. Leader 0 builds S = [b00 b10 b20 | b01 b11
 * b21] and scatters: rank 1 gets [b01 b11 b21].
 */
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/alltoall/alltoall.h"
#include "coll/alltoallv/alltoallv.h"
#include "coll/util/coll_util.h"
#include "coll/execution/hier.h"
#include "core/config.h"

/* hm[] = global ranks in host-major order (host 0's local ranks 0.., then host 1's...). */
static void host_major(const coll_comm *comm, int *hm)
{
    for (int r = 0; r < comm->nranks; r++)
        hm[coll_hier_host_displ(comm, comm->rank_host[r], 1) + (size_t)comm->rank_local[r]] = r;
}

/* Steps (2) and (3) at the leader: A (gathered) -> exchange -> S (in A's place);
 * pack and recv are L p count elements each. */
static coll_status_t leader_exchange(coll_comm *comm, char *A, char *pack, char *recv, size_t count, coll_dtype_t dt)
{
    int p = comm->nranks, H = comm->nhosts, L = comm->local_size;
    size_t es = coll_dtype_size(dt), bb = count * es;
    int *hm = malloc(sizeof *hm * (size_t)p);
    size_t *v = malloc(sizeof *v * 4 * (size_t)H);
    coll_status_t st = COLL_SUCCESS;
    if (!hm || !v) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "alltoall hier: out of memory (%d ranks)", p);
        goto out;
    }
    host_major(comm, hm);
    size_t *sc = v, *sd = v + H, *rc = v + 2 * H, *rd = v + 3 * H;
    size_t o = 0;
    for (int h = 0; h < H; h++) { /* host h: [t of h][j mine] */
        int Lh = comm->host_nranks[h];
        const int *dst = hm + coll_hier_host_displ(comm, h, 1);
        sc[h] = rc[h] = (size_t)Lh * (size_t)L * count;
        sd[h] = rd[h] = o / es;
        for (int t = 0; t < Lh; t++)
            for (int j = 0; j < L; j++, o += bb)
                coll_local_copy(comm, pack + o, A + ((size_t)j * (size_t)p + (size_t)dst[t]) * bb, bb);
    }
    COLL_CHECK_GOTO(coll_sub_alltoallv(comm, &comm->leaders, pack, sc, sd, recv, rc, rd, dt), st, out);
    o = 0;
    for (int h = 0; h < H; h++) { /* from host h: [t mine][j of h] -> S[t][global rank of (h, j)] */
        int Lh = comm->host_nranks[h];
        const int *src = hm + coll_hier_host_displ(comm, h, 1);
        for (int t = 0; t < L; t++)
            for (int j = 0; j < Lh; j++, o += bb)
                coll_local_copy(comm, A + ((size_t)t * (size_t)p + (size_t)src[j]) * bb, recv + o, bb);
    }
out:
    free(v);
    free(hm);
    return st;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    size_t count = a->count, es = coll_dtype_size(a->dt), per = count * (size_t)comm->nranks;
    if (count == 0)
        return COLL_SUCCESS;
    int leader = comm->leader_ranks[comm->host], is_leader = comm->rank == leader;
    size_t host_bytes = per * es * (size_t)comm->local_size; /* L p count elements: A, pack, recv */
    char *A = NULL;
    if (is_leader)
        COLL_CHECK(coll_tmp_get(comm, g, 3 * host_bytes, (void **)&A));
    coll_status_t st;
    COLL_CHECK_GOTO(coll_sub_gather(comm, &comm->local, a->sendbuf, A, per, a->dt, leader), st, out);
    if (is_leader)
        COLL_CHECK_GOTO(leader_exchange(comm, A, A + host_bytes, A + 2 * host_bytes, count, a->dt), st, out);
    COLL_CHECK_GOTO(coll_sub_scatter(comm, &comm->local, A, a->recvbuf, per, a->dt, leader), st, out);
out:
    if (is_leader)
        coll_tmp_put(comm, g, A);
    return st;
}

/* The leader's 3 L n bytes of working memory within COLL_SCRATCH_MAX (0: no limit). */
static int usable(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    size_t cap = coll_cfg_size(COLL_CFG_SCRATCH_MAX);
    return cap == 0 || 3.0 * coll_hier_max_local(comm) * (double)a->bytes <= (double)cap;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *t = coll_tuning_tcp(), *s = coll_tuning_shm();
    int L = coll_hier_max_local(comm), H = comm->nhosts;
    double n = (double)a->bytes, B = n * L, mem = s->beta_us_per_b;
    double ov = coll_tuning_oversub(comm);
    /* shm gather and scatter of B: 2 barriers each, every byte copied in and out */
    double shm = L > 1 ? 2 * (2 * s->bar_us * ov + 2 * B * s->beta_us_per_b) : 0;
    /* the leaders' level: the cheaper of pairwise and Bruck over H members */
    double chunks = 1.0 + B / H / (double)coll_cfg_size(COLL_CFG_CHUNK);
    double pairwise = (H - 1) * chunks * t->alpha_us * ov + (H - 1.0) / H * B * t->beta_us_per_b;
    int steps;
    double f = coll_bruck_a2a_factor(H, &steps);
    double bruck = steps * t->alpha_us * ov + f * B * (t->beta_us_per_b + 2 * mem);
    return shm + 2 * B * mem + (pairwise < bruck ? pairwise : bruck);
}

const coll_algo_t coll_algo_alltoall_hier = COLL_ALGO(
    COLL_ALLTOALL, "hier", .flags = COLL_ALGO_F_HIER, .usable = usable,
    .desc = "hierarchical: shm gather to the host leader, leaders exchange host blocks (alltoallv), shm scatter; "
            "only leaders use the network; a leader holds 3 x local ranks x n bytes: only within COLL_SCRATCH_MAX");
