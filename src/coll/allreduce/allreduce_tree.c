/*
 * allreduce_tree.c - double binary tree AllReduce (NCCL's "tree"): the vector
 * is split in two halves, half t is reduced up binary tree t to its root and
 * broadcast back down the same tree, both halves at once. The two trees are
 * complementary (src/coll/execution/tree.h: tree 1 is tree 0 mirrored or shifted): a
 * member interior in one tree is a leaf (or the root) in the other, so every
 * member sends and receives about the same, and every tree link carries the
 * reduction up and the result down at the same time. Each half moves in chunks
 * (coll_dbtree_chunk: ~4 per tree level, 32 KiB .. COLL_CHUNK) so the pipeline
 * fills: a member of height h sends chunk k up at step k + h, the root starts
 * broadcasting chunk k at step k + H, and a member at depth d forwards it at
 * step k + H + d.
 *
 * Cost (p members, n bytes, H = ceil(log2 p) levels, m = chunk bytes,
 * c = ceil(n/2 / m) chunks per half):
 *   (c + 2H - 1) alpha + (2n + 2(2H - 1) m) beta + n gamma
 * alpha and gamma scaled by ranks per core when oversubscribed (cost.h).
 * Every step costs a latency; in the steady state the busiest member (interior
 * in one tree, a leaf in the other) sends and receives 4 chunks a step, 2n
 * bytes in all, like the ring's 2(p-1)/p n; the 2H - 1 fill and drain steps
 * carry about half that load. Latency grows with log2 p instead of the ring's
 * 2(p-1) steps, without halving-doubling's unpipelined whole halves or its
 * fold for non-powers of two: it wins at large rank counts for mid sizes.
 * Works for any p, any transport. The reduction order of every element is
 * fixed (own, then the shallower child, then the deeper one) and the root's
 * result is what every member receives: results are bitwise identical on all
 * members and from run to run.
 *
 * Example, p = 6 (trees in src/coll/execution/tree.h): member 4 is interior in tree 0
 * (children 2 and 5, parent 0) and a leaf in tree 1 (parent 3): it reduces the
 * first half's chunks from 2 and 5 and passes them to 0, sends its own second
 * half's chunks to 3, and gets both halves' results from 0 and 3.
 */
#include <math.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/allreduce/allreduce.h"
#include "coll/util/coll_util.h"
#include "coll/selection/cost.h"
#include "coll/execution/prim.h"
#include "coll/execution/tree.h"
#include "coll/selection/tuning.h"
#include "core/config.h"
#include "core/reduce.h"

typedef struct {
    int parent, nk, kids[2], hk[2];  /* group indices; hk: heights of the children */
    int h, d, H;                     /* own height, depth, the tree's height */
    size_t off, cnt, chunk, nchunks; /* elements */
} side_t;

/* Elements [off, off + cnt) of chunk k of side t, or cnt 0 when k is out of range. */
static int chunk_of(const side_t *t, long k, size_t *off, size_t *cnt)
{
    if (k < 0 || (size_t)k >= t->nchunks)
        return 0;
    *off = t->off + (size_t)k * t->chunk;
    *cnt = coll_min_sz(t->chunk, t->off + t->cnt - *off);
    return *cnt > 0;
}

#define MAX_OPS 12 /* per tree: 2 reduce receives, 1 send up, 1 receive down, 2 sends down */

/* Both trees' plan for me: peers, heights, my half of the n elements and its
 * chunks. Returns the steps the schedule takes; *tmp_elems: the working
 * memory a second child of equal height needs (it is folded after the step). */
static long plan_sides(side_t side[2], int me, int p, size_t n, size_t es, size_t *tmp_elems)
{
    long steps = 0;
    *tmp_elems = 0;
    for (int t = 0; t < 2; t++) {
        side_t *s = &side[t];
        s->parent = coll_dbtree_parent(t, me, p);
        s->nk = coll_dbtree_children(t, me, p, s->kids);
        for (int j = 0; j < s->nk; j++)
            s->hk[j] = coll_dbtree_height(t, s->kids[j], p);
        s->h = coll_dbtree_height(t, me, p);
        s->d = coll_dbtree_depth(t, me, p);
        s->H = coll_dbtree_height(t, coll_dbtree_root(t, p), p);
        s->off = coll_block_offset(n, 2, t);
        s->cnt = coll_block_count(n, 2, t);
        s->chunk = coll_dbtree_chunk(coll_block_count(n, 2, 0) * es, s->H, coll_cfg_size(COLL_CFG_CHUNK), es) / es;
        s->nchunks = (s->cnt + s->chunk - 1) / s->chunk;
        if (s->nchunks && (long)s->nchunks + 2 * s->H - 1 > steps)
            steps = (long)s->nchunks + 2 * s->H - 1;
        if (s->nk == 2 && s->hk[0] == s->hk[1] && s->chunk > *tmp_elems)
            *tmp_elems = s->chunk;
    }
    return steps;
}

/* Step s of tree sd into ops (returns how many it added). A second child of
 * the same height as the first goes into tmp, to be folded into rb[*fold]
 * after the step. */
static int step_ops(const side_t *sd, long s, const coll_group_t *g, const char *sb, char *rb, char *tmp, size_t es,
                    coll_prim_t *ops, size_t *fold_off, size_t *fold_cnt)
{
    int nops = 0;
    size_t o, c;
    /* reduce up: children's partial sums; the shallower child's arrives first */
    for (int j = 0; j < sd->nk; j++) {
        if (!chunk_of(sd, s - sd->hk[j], &o, &c))
            continue;
        int peer = g->ranks[sd->kids[j]];
        if (sd->nk == 2 && sd->hk[0] == sd->hk[1] && j == 1) {
            ops[nops++] = coll_prim_recv(peer, tmp, c * es);
            *fold_off = o;
            *fold_cnt = c;
        } else {
            int first = sd->nk == 1 || (j == 0 && sd->hk[0] == sd->hk[1]) || (j == 1 && sd->hk[1] < sd->hk[0]);
            ops[nops++] = coll_prim_recv_reduce(peer, rb + o * es, (first ? sb : rb) + o * es, c * es);
        }
    }
    if (sd->parent >= 0 && chunk_of(sd, s - sd->h, &o, &c))
        ops[nops++] = coll_prim_send(g->ranks[sd->parent], (sd->nk ? rb : sb) + o * es, c * es);
    /* broadcast down: the root's result */
    if (sd->parent >= 0 && chunk_of(sd, s - (sd->H + sd->d - 1), &o, &c))
        ops[nops++] = coll_prim_recv(g->ranks[sd->parent], rb + o * es, c * es);
    if (chunk_of(sd, s - (sd->H + sd->d), &o, &c))
        for (int j = 0; j < sd->nk; j++)
            ops[nops++] = coll_prim_send(g->ranks[sd->kids[j]], rb + o * es, c * es);
    return nops;
}

/* A step may carry two messages between the same two members in the same
 * direction (one per tree, e.g. p = 2): their bytes share one stream, so
 * they go in rounds, in the order both sides built them. */
static coll_status_t run_rounds(coll_comm *comm, coll_prim_t *ops, int nops, coll_dtype_t dt, coll_op_t op)
{
    coll_prim_t round[MAX_OPS];
    coll_status_t st = COLL_SUCCESS;
    while (nops > 0 && st == COLL_SUCCESS) {
        int nr = 0, k = 0;
        for (int i = 0; i < nops; i++) {
            int clash = 0;
            for (int j = 0; j < nr && !clash; j++)
                clash = round[j].peer == ops[i].peer
                    && (round[j].type == COLL_PRIM_SEND) == (ops[i].type == COLL_PRIM_SEND);
            if (clash)
                ops[k++] = ops[i]; /* next round */
            else
                round[nr++] = ops[i];
        }
        nops = k;
        st = coll_prim_run(comm, round, nr, dt, op);
    }
    return st;
}

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    coll_vec_t v;
    COLL_OPEN(coll_vec_open, g, a, v);
    side_t side[2];
    size_t tmp_elems;
    long steps = plan_sides(side, v.me, v.p, v.n, v.es, &tmp_elems);
    char *tmp = NULL;
    if (tmp_elems)
        COLL_CHECK(coll_tmp_get(comm, g, tmp_elems * v.es, (void **)&tmp));
    int fold = coll_data_real(comm); /* sizes-only simulation: no values to fold (an eighth of its CPU) */
    coll_status_t st = COLL_SUCCESS;
    for (long s = 0; s < steps && st == COLL_SUCCESS; s++) {
        coll_prim_t ops[MAX_OPS];
        size_t fold_off = 0, fold_cnt = 0; /* rb[fold] = rb[fold] OP tmp after the step */
        int nops = 0;
        for (int t = 0; t < 2; t++)
            nops += step_ops(&side[t], s, g, v.sb, v.rb, tmp, v.es, ops + nops, &fold_off, &fold_cnt);
        st = run_rounds(comm, ops, nops, a->dt, a->op);
        if (st == COLL_SUCCESS && fold_cnt && fold)
            coll_reduce_local(v.rb + fold_off * v.es, v.rb + fold_off * v.es, tmp, fold_cnt, a->dt, a->op);
    }
    if (tmp)
        coll_tmp_put(comm, g, tmp);
    return st;
}

double coll_allreduce_tree_cost(const coll_link_cost_t *l, double beta, int p, double n, double ov)
{
    if (p <= 1)
        return 0;
    int H = coll_dbtree_height(0, coll_dbtree_root(0, p), p);
    double half = n / 2;
    double m = (double)coll_dbtree_chunk((size_t)half, H, coll_cfg_size(COLL_CFG_CHUNK), 1);
    if (m > half)
        m = half;
    double c = m > 0 ? ceil(half / m) : 0;
    /* alpha: every step may wait for a context switch (cost.h) */
    return (c + 2 * H - 1) * l->alpha_us * ov + (2 * n + 2 * (2 * H - 1) * m) * beta + n * l->gamma_us_per_b * ov;
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    double beta = coll_cost_beta(comm, g, l);
    return coll_allreduce_tree_cost(l, beta, g->size, (double)a->bytes, coll_tuning_oversub(comm));
}

const coll_algo_t coll_algo_allreduce_tree
    = COLL_ALGO(COLL_ALLREDUCE, "tree",
                .desc = "double binary tree (NCCL): halves reduced up and broadcast down two complementary trees, "
                        "chunk-pipelined; 2 log2 p + n/2/chunk steps, 2n bytes per rank");
