/*
 * allreduce_ring.c - ring AllReduce: reduce-scatter then allgather around the
 * ring of the group, pipelined in chunks of COLL_CHUNK bytes.
 *
 * Cost (p ranks, n bytes, c chunks): 2(p-1)c alpha + 2(p-1)/p n beta + (p-1)/p n gamma.
 * Bandwidth-optimal; latency grows with p. Works for any p, any transport.
 * alpha and gamma are scaled by ranks per core when oversubscribed (cost.h).
 *
 * Example, p = 3, segments A B C: reduce-scatter step 0 rank 0 sends A (its
 * own data) to rank 1 and receives C from rank 2, reducing it with its own C;
 * step 1 sends the partial C and receives B; rank 0 then owns the full B
 * ((me + 1) mod p). The allgather passes finished segments on the same way.
 *
 * Chunk: COLL_CHUNK on one host; across hosts at least COLL_NET_CHUNK (2M).
 * Every step ends only when its send and its receive are through, so each is a
 * moment where a direction of the link can idle and a rank must be woken; a
 * 64 MiB AllReduce between two hosts took 256 steps of 256K (128 per phase),
 * now 32. The received bytes are still reduced as they arrive (the TCP sink,
 * 256 KiB per socket), so a bigger chunk adds no pass over memory.
 */
#include "coll/algo.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"
#include "core/config.h"

#include <string.h>

typedef struct {
    size_t off, cnt; /* elements */
} piece_t;

static piece_t piece(size_t n, int p, int seg, size_t chunk, size_t c)
{
    size_t so = coll_block_offset(n, p, seg), sc = coll_block_count(n, p, seg);
    piece_t r = {so, 0};
    size_t start = c * chunk;
    if (start < sc) {
        r.off = so + start;
        r.cnt = coll_min_sz(chunk, sc - start);
    }
    return r;
}

/* Bytes per chunk: the same on every member (coll_group_is_local is). */
static size_t chunk_bytes(const coll_comm *comm, const coll_group_t *g)
{
    size_t c = coll_cfg_size(COLL_CFG_CHUNK), net = coll_cfg_size(COLL_CFG_NET_CHUNK);
    return !coll_group_is_local(comm, g) && net > c ? net : c;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v);
    int right = g->ranks[coll_ring_next(v.me, v.p)], left = g->ranks[coll_ring_prev(v.me, v.p)];
    size_t chunk = coll_chunk_elems(chunk_bytes(comm, g), v.es);
    size_t maxseg = coll_block_count(v.n, v.p, 0);
    size_t nchunks = (maxseg + chunk - 1) / chunk;
    for (size_t c = 0; c < nchunks; c++) {
        for (int s = 0; s < v.p - 1; s++) {
            piece_t snd = piece(v.n, v.p, coll_mod(v.me - s, v.p), chunk, c);
            piece_t rcv = piece(v.n, v.p, coll_mod(v.me - s - 1, v.p), chunk, c);
            const char *src = s == 0 ? v.sb : v.rb;
            COLL_CHECK(coll_prim_send_recv_reduce(comm, src + snd.off * v.es, snd.cnt * v.es, right,
                                                  v.rb + rcv.off * v.es, v.sb + rcv.off * v.es, rcv.cnt * v.es, left,
                                                  a->dt, a->op));
        }
    }
    for (size_t c = 0; c < nchunks; c++) {
        for (int s = 0; s < v.p - 1; s++) {
            piece_t snd = piece(v.n, v.p, coll_mod(v.me + 1 - s, v.p), chunk, c);
            piece_t rcv = piece(v.n, v.p, coll_mod(v.me - s, v.p), chunk, c);
            COLL_CHECK(coll_prim_sendrecv(comm, v.rb + snd.off * v.es, snd.cnt * v.es, right, v.rb + rcv.off * v.es,
                                          rcv.cnt * v.es, left));
        }
    }
    return COLL_SUCCESS;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double p = g->size, n = (double)a->bytes;
    /* two passes (reduce-scatter, allgather) in this ring's chunks (coll_cost_ring_pass's
     * formula with chunk_bytes: across hosts COLL_NET_CHUNK) + the reductions */
    return 2 * (p - 1) * (1.0 + n / p / (double)chunk_bytes(comm, g)) * coll_cost_alpha(comm, l)
        + 2 * (p - 1) / p * n * coll_cost_beta(comm, g, l)
        + (p - 1) / p * n * l->gamma_us_per_b * coll_tuning_oversub(comm);
}

const coll_algo_t coll_algo_allreduce_ring = COLL_ALGO(
    COLL_ALLREDUCE, "ring",
    .desc = "reduce-scatter + allgather around a ring, chunk-pipelined; 2(p-1) steps, 2(p-1)/p n bytes per rank");
