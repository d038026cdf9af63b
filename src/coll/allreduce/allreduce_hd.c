/*
 * allreduce_hd.c - recursive halving-doubling AllReduce (Rabenseifner; HCCL's
 * H-D_R): reduce-scatter by recursive halving, then allgather by recursive
 * doubling, over the largest power of two p2 <= p members; the r = p - p2
 * extra members fold their vector into a partner first and get the result
 * back at the end. Peer and block arithmetic: src/coll/execution/hd.h (worked example
 * there).
 *
 * Cost (p members, n bytes, p2 = pof2(p), r = p - p2):
 *   2 log2(p2) alpha + 2 (p2-1)/p2 n beta + (p2-1)/p2 n gamma
 *   + [r > 0] (2 alpha + 2 n beta + n gamma)      (fold in, fold out)
 * alpha and gamma scaled by ranks per core when oversubscribed (cost.h).
 * Latency-optimal for powers of two (log p steps instead of the ring's 2(p-1)),
 * bandwidth-optimal too; non-powers of two pay two whole-vector transfers.
 * Works for any p, any transport; every block is reduced by exactly one owner,
 * so all members get bitwise identical results.
 */
#include <string.h>

#include "coll/algo.h"
#include "core/config.h"
#include "coll/allreduce/allreduce.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/hd.h"
#include "coll/execution/prim.h"
#include "coll/selection/tuning.h"

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v);
    int fold = coll_hd_fold_peer(v.me, v.p);
    int vr = coll_hd_vrank(v.me, v.p);
    if (vr < 0) { /* folded out: hand the vector over, get the result back */
        COLL_CHECK(coll_prim_sendrecv(comm, v.sb, v.n * v.es, g->ranks[fold], NULL, 0, -1));
        return coll_prim_sendrecv(comm, NULL, 0, -1, v.rb, v.n * v.es, g->ranks[fold]);
    }
    if (fold >= 0)
        COLL_CHECK(coll_prim_send_recv_reduce(comm, NULL, 0, -1, v.rb, v.sb, v.n * v.es, g->ranks[fold], a->dt, a->op));
    else if (v.sb != v.rb)
        memcpy(v.rb, v.sb, v.n * v.es);
    int p2 = coll_hd_pof2(v.p), ns = coll_hd_nsteps(v.p);
    for (int s = 0; s < ns; s++) {
        coll_hd_step_t st = coll_hd_halving(vr, v.p, s);
        int peer = g->ranks[coll_hd_member(st.peer, v.p)];
        size_t so = coll_block_offset(v.n, p2, st.send_lo), se = coll_block_offset(v.n, p2, st.send_lo + st.send_n);
        size_t ko = coll_block_offset(v.n, p2, st.keep_lo), ke = coll_block_offset(v.n, p2, st.keep_lo + st.keep_n);
        COLL_CHECK(coll_prim_send_recv_reduce(comm, v.rb + so * v.es, (se - so) * v.es, peer, v.rb + ko * v.es,
                                              v.rb + ko * v.es, (ke - ko) * v.es, peer, a->dt, a->op));
    }
    for (int s = ns - 1; s >= 0; s--) {
        coll_hd_step_t st = coll_hd_halving(vr, v.p, s);
        int peer = g->ranks[coll_hd_member(st.peer, v.p)];
        size_t so = coll_block_offset(v.n, p2, st.send_lo), se = coll_block_offset(v.n, p2, st.send_lo + st.send_n);
        size_t ko = coll_block_offset(v.n, p2, st.keep_lo), ke = coll_block_offset(v.n, p2, st.keep_lo + st.keep_n);
        COLL_CHECK(coll_prim_sendrecv(comm, v.rb + ko * v.es, (ke - ko) * v.es, peer, v.rb + so * v.es,
                                      (se - so) * v.es, peer));
    }
    if (fold >= 0)
        COLL_CHECK(coll_prim_sendrecv(comm, v.rb, v.n * v.es, g->ranks[fold], NULL, 0, -1));
    return COLL_SUCCESS;
}

double coll_allreduce_hd_cost(const coll_link_cost_t *l, double beta, int p, double n, double ov)
{
    int p2 = coll_hd_pof2(p);
    double f = (double)(p2 - 1) / p2;
    double alpha = l->alpha_us * ov; /* every step may wait for a context switch (cost.h) */
    double c = 2 * coll_hd_nsteps(p) * alpha + 2 * f * n * beta + f * n * l->gamma_us_per_b * ov;
    if (p2 != p)
        c += 2 * alpha + 2 * n * beta + n * l->gamma_us_per_b * ov;
    return c;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double beta = coll_cost_beta(comm, g, l);
    /* Across hosts each step moves whole halves, with no chunk pipelining:
     * measured on two namespace hosts (bench/results/multihost-20261202.md),
     * 64 MiB hd 0.73-0.87 GB/s vs ring 1.64-1.92, and ring with pipelining off
     * (COLL_CHUNK=64M) 0.87: count the transfer twice once halves exceed a chunk. */
    if (!coll_group_is_local(comm, g) && (double)a->bytes / 2 > (double)coll_cfg_size(COLL_CFG_CHUNK))
        beta *= 2.0;
    return coll_allreduce_hd_cost(l, beta, g->size, (double)a->bytes, coll_tuning_oversub(comm));
}

const coll_algo_t coll_algo_allreduce_hd = COLL_ALGO(
    COLL_ALLREDUCE, "hd",
    .desc
    = "recursive halving-doubling (Rabenseifner, HCCL H-D_R), extra ranks folded: 2 log2 p steps, 2(p-1)/p n bytes");
