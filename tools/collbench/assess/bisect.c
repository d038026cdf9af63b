/*
 * bisect.c - `collbench assess --tests bisect`: half the hosts against
 * the other half, --halvings K times, every pair of a halving exchanging at
 * once (so the network's bisection carries H/2 pairs in both directions).
 *
 * Halving g (cbt_as_halving): the hosts are relabelled by a random permutation
 * drawn from --seed, and halving g pairs them as round g of the round-robin
 * schedule of pairs (measure.c), each pair's two hosts put on opposite
 * sides by a coin drawn from --seed and g. So the halvings are random but a
 * host meets a different partner in each (up to H-1 halvings): a slow host is
 * slow in every halving, each of its partners in one only, which tells them
 * apart (report.c: a host is named when more than half of its pairs,
 * and at least two, are slow).
 * Per pair: one untimed then -et coll_sendrecv of -s bytes each way at once;
 * each end takes its median execution, the pair's figure is the slower end's
 * 2 x SIZE / time (GB/s, both directions). A halving's aggregate is the sum of
 * its pairs' figures, its worst pair the smallest.
 * Confirmation as for pairs: every pair below the threshold is measured again
 * alone (one pair at a time), CBT_AS_CONFIRM_PAIRS passes at most (after the first only marginal suspects), best kept.
 * Cost: K x (et + 1) x SIZE / link rate for the halvings, independent of H,
 * plus one pair per suspect and pass (2 x K for one bad host).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "../cb.h"

static const char *TOOL = "assess";

typedef struct {
    int32_t peer; /* partner host, -1 none */
    int32_t pad;
    double gbs; /* 2 x SIZE / my median execution */
} brec_t;

/* One halving (only = -1) or one pair of it measured alone (only = the pair's
 * lower host; only it and its partner move data). f: the confirmation's scale
 * (the pair's figure is multiplied by it before it is filed); ref: a reference
 * measurement, nothing filed, the pair's figure in *ref (rank 0). */
static int halving_run(cbt_as_ctx_t *c, int g, int only, const int *peer, double *ex, brec_t *all, double f,
                       double *ref)
{
    int n = c->nhosts;
    size_t sz = (size_t)c->o->size;
    brec_t me = {.peer = -1, .gbs = -1};
    coll_status_t st = coll_barrier(c->comm);
    int p = c->speaker ? peer[c->me_host] : -1;
    if (only >= 0 && c->me_host != only && p != only)
        p = -1;
    if (st == COLL_SUCCESS && p >= 0) {
        int pr = c->hosts[p].speaker;
        unsigned char b = 0, b2 = 0;
        st = coll_sendrecv(&b, 1, pr, &b2, 1, pr, COLL_UINT8, c->comm);
        double med = 1e-9;
        if (st == COLL_SUCCESS)
            st = cbt_as_exchange(c, pr, pr, ex, &med);
        me.peer = p;
        me.gbs = 2.0 * (double)sz / med / 1e9;
    }
    if (st == COLL_SUCCESS)
        st = coll_gather(&me, all, sizeof me, COLL_UINT8, 0, c->comm);
    if (st != COLL_SUCCESS) {
        int rc = cbt_error(TOOL, cbt_exit_of(st), "rank %d: bisect halving %d: %s: %s", c->rank, g + 1,
                           coll_strerror(st), coll_last_error());
        coll_comm_abort(c->comm);
        return rc;
    }
    if (c->rank != 0)
        return CBT_EXIT_OK;
    cbt_as_result_t *r = c->res;
    for (int h = 0; h < n; h++) { /* the pair's figure: the slower end */
        const brec_t *x = &all[c->hosts[h].speaker], *y;
        if (x->peer < 0 || h > x->peer)
            continue;
        y = &all[c->hosts[x->peer].speaker];
        double v = y->peer == h && y->gbs < x->gbs ? y->gbs : x->gbs;
        int a = g * n + h, b = g * n + x->peer;
        if (ref) {
            *ref = v;
        } else if (only >= 0) {
            v *= f;
            r->bis_again[a] = r->bis_again[b] = v;
            r->bis[a] = r->bis[b] = cbt_as_better(0, r->bis[a], v);
        } else {
            r->bis[a] = r->bis[b] = v;
        }
    }
    return CBT_EXIT_OK;
}

/* Reference pair g * n + a (a its lower host): hosts in no suspect pair,
 * figure nearest the median of such pairs; -1 none. */
static int bis_ref(const cbt_as_result_t *r, const int *sus, int ns)
{
    int n = r->n, best = -1, m = 0;
    char *touched = calloc((size_t)n, 1);
    double *v = malloc(((size_t)r->nhalv * (size_t)n + 1) * sizeof *v), bd = -1;
    if (!touched || !v) {
        free(touched), free(v);
        return -1;
    }
    for (int i = 0; i < ns; i++) {
        int g = sus[i] / n, a = sus[i] % n;
        touched[a] = touched[r->bis_peer[g * n + a]] = 1;
    }
    for (int pass = 0; pass < 2; pass++) {
        double med = pass ? cbt_as_median(v, m) : 0;
        for (int i = 0; i < r->nhalv * n; i++) {
            int a = i % n, b = r->bis_peer[i];
            if (b <= a || touched[a] || touched[b] || r->bis[i] < 0)
                continue;
            if (!pass) {
                v[m++] = r->bis[i];
                continue;
            }
            double d = r->bis[i] > med ? r->bis[i] - med : med - r->bis[i];
            if (bd < 0 || d < bd)
                bd = d, best = i;
        }
    }
    free(touched), free(v);
    return best;
}

typedef struct {
    int *peer; /* halving g's partners from peer + g * n */
    double *ex;
    brec_t *all;
} bis_bufs_t;

/* The suspects of pass `pass` (after the first only marginal ones) and the
 * reference pair (sus[1], g * n + a; -1 none). */
static void bis_find(cbt_as_ctx_t *c, int pass, int *sus, void *arg)
{
    sus[0] = cbt_as_bisect_suspects(c->res, c->o->threshold, pass > 0, sus + 2);
    sus[1] = sus[0] ? bis_ref(c->res, sus + 2, sus[0]) : -1;
}

/* Suspect i alone, after the reference pair alone: scaled by the reference's
 * first / now, clamped to 1..4 (only a busier machine is corrected, measure.c). */
static int bis_again(cbt_as_ctx_t *c, const int *sus, int i, void *arg)
{
    bis_bufs_t *b = arg;
    int n = c->nhosts, g = sus[2 + i] / n, a = sus[2 + i] % n, rc;
    double f = 1, now = -1;
    if (sus[1] >= 0) {
        int rg = sus[1] / n, ra = sus[1] % n;
        if ((rc = halving_run(c, rg, ra, b->peer + (size_t)rg * (size_t)n, b->ex, b->all, 1, &now)))
            return rc;
        if (c->rank == 0 && now > 0 && c->res->bis[sus[1]] > 0) {
            f = c->res->bis[sus[1]] / now;
            f = f < 1 ? 1 : f > 4 ? 4 : f;
        }
    }
    return halving_run(c, g, a, b->peer + (size_t)g * (size_t)n, b->ex, b->all, f, NULL);
}

int cbt_as_bisect(cbt_as_ctx_t *c)
{
    int n = c->nhosts, k = (int)c->o->halvings, rc = CBT_EXIT_OK;
    int *peer = malloc((size_t)k * (size_t)n * sizeof *peer), *side = malloc((size_t)n * sizeof *side);
    int *sus = malloc(((size_t)k * (size_t)n + 2) * sizeof *sus);
    double *ex = calloc((size_t)c->o->et, sizeof *ex);
    brec_t *all = c->rank == 0 ? calloc((size_t)c->nranks, sizeof *all) : NULL;
    if (!peer || !side || !sus || !ex || (c->rank == 0 && !all)) {
        free(peer), free(side), free(sus), free(ex), free(all);
        return cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
    }
    for (int g = 0; g < k; g++)
        cbt_as_halving(c->o->seed, g, n, peer + (size_t)g * (size_t)n, side);
    if (c->rank == 0)
        memcpy(c->res->bis_peer, peer, (size_t)k * (size_t)n * sizeof *peer);
    double t_start = cbt_now();
    for (int g = 0; g < k && !rc; g++) {
        rc = halving_run(c, g, -1, peer + (size_t)g * (size_t)n, ex, all, 1, NULL);
        if (!rc && c->rank == 0 && !c->o->quiet)
            cbt_as_progress("bisect halving", g + 1, k, t_start);
    }
    if (c->rank == 0 && !rc)
        c->res->nhalv = k;
    /* confirmation: each suspect pair alone, after a reference pair alone
     * (as pairs does, measure.c: a healthy pair of the halvings touching no
     * suspect host, figure nearest the median; the suspect's figure scaled by
     * the reference's first / now, clamped to 1..4) */
    if (!rc) {
        bis_bufs_t bb = {peer, ex, all};
        cbt_as_confirm_t cf = {
            "bisect confirmation", NULL, CBT_AS_CONFIRM_PAIRS, 2, (size_t)k * (size_t)n + 2, bis_find, bis_again, &bb};
        rc = cbt_as_confirm(c, &cf, sus);
    }
    free(peer), free(side), free(sus), free(ex), free(all);
    return rc;
}
