/*
 * judge.c - which figures of `collbench assess` are past the threshold (rank
 * 0, pure): the median of a test's figures, and its suspects, which the
 * measurements measure again alone (confirmation) and report.c names when
 * they stay past it.
 *
 * Per test figure, the median of all its values; a value below threshold x
 * median (latency: above median / threshold, --lat-threshold when set) is
 * suspect. A clear outlier is past CBT_AS_CLEAR x the threshold: after the
 * first confirmation only marginal suspects (pairs, bisect) are measured
 * again. A link, ring, host or group is confirmed (an outlier) only when it
 * was measured again and its better figure is still past the threshold.
 *   pairs   each link's uni, bidi and latency against the median link
 *   ring    a ring's slowest host against the median ring
 *   node    a host's d2d GB/s or FP64 GFLOPS against the median host; node-shm
 *           its shared-memory GB/s and latency against the median of the
 *           hosts with several ranks
 *   bisect  a pair's GB/s against the median pair of every halving
 *   coll    a group's bus bandwidth at the largest size against the median group
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "../cb.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cbt_as_median(const double *v, int n)
{
    double *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    int k = 0;
    if (!w)
        return -1;
    for (int i = 0; i < n; i++)
        if (v[i] >= 0)
            w[k++] = v[i];
    double m = -1;
    if (k) {
        qsort(w, (size_t)k, sizeof *w, cmp_double);
        m = k % 2 ? w[k / 2] : (w[k / 2 - 1] + w[k / 2]) / 2;
    }
    free(w);
    return m;
}

double cbt_as_better(int lower_is_better, double a, double b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return lower_is_better ? (a < b ? a : b) : (a > b ? a : b);
}

/* --lat-threshold: latency's own threshold (0 = --threshold's). Set once from
 * the options before any test runs, on every rank. */
static double lat_th;

void cbt_as_set_lat_threshold(double t) { lat_th = t; }

/* Past th (latency: --lat-threshold when set) scaled by k: k = 1 the
 * threshold itself, k = CBT_AS_CLEAR a clear outlier. */
static int bad_k(const cbt_as_fig_t *f, double v, double med, double th, double k)
{
    if (v < 0 || med <= 0)
        return 0;
    if (!f->lower_is_bad && lat_th > 0)
        th = lat_th;
    th *= k;
    return f->lower_is_bad ? v < th * med : v > med / th;
}

static int bad(const cbt_as_fig_t *f, double v, double med, double th) { return bad_k(f, v, med, th, 1); }

/* Past the threshold in the first pass and again in the confirmation round
 * (the matrix holds the better of the two, so only that is tested, and only
 * links that were measured again qualify). */
int cbt_as_confirmed(const cbt_as_fig_t *f, int ij, double med, double th)
{
    return bad(f, f->m[ij], med, th) && f->again[ij] >= 0;
}

double cbt_as_fig_median(const cbt_as_result_t *r, const cbt_as_fig_t *f, double *v)
{
    int n = r->n, k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && (f->directed || i < j))
                v[k++] = f->m[i * n + j];
    return cbt_as_median(v, k);
}

void cbt_as_figs(const cbt_as_result_t *r, cbt_as_fig_t *figs)
{
    cbt_as_fig_t f[3] = {
        {"pairs-uni", "GB/s", 1, r->uni, 1, r->again_uni},
        {"pairs-bidi", "GB/s", 1, r->bidi, 0, r->again_bidi},
        {"pairs-lat", "us", 0, r->lat, 0, r->again_lat},
    };
    memcpy(figs, f, sizeof f);
}

int cbt_as_suspects(const cbt_as_result_t *r, double th, int marginal, int *out, int max)
{
    int n = r->n, k = 0;
    cbt_as_fig_t figs[3];
    double med[3], *v = malloc((size_t)n * (size_t)n * sizeof *v + 1);
    if (!v)
        return 0;
    cbt_as_figs(r, figs);
    for (int f = 0; f < 3; f++)
        med[f] = cbt_as_fig_median(r, &figs[f], v);
    free(v);
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n && k < max; b++) {
            int s = 0;
            for (int f = 0; f < 3; f++)
                for (int d = 0; d < 2; d++) {
                    double x = figs[f].m[d ? b * n + a : a * n + b];
                    s |= bad(&figs[f], x, med[f], th) && !(marginal && bad_k(&figs[f], x, med[f], th, CBT_AS_CLEAR));
                }
            if (s)
                out[k++] = a * n + b;
        }
    return k;
}

void cbt_as_ring_mins(const cbt_as_result_t *r, int nrings, double *mins)
{
    int n = r->n;
    for (int g = 0; g < nrings; g++) {
        mins[g] = -1;
        for (int h = 0; h < n; h++)
            if (r->ring[g * n + h] >= 0 && (mins[g] < 0 || r->ring[g * n + h] < mins[g]))
                mins[g] = r->ring[g * n + h];
    }
}

int cbt_as_ring_suspects(const cbt_as_result_t *r, int nrings, double th, int *out)
{
    double *mins = malloc((size_t)(nrings > 0 ? nrings : 1) * sizeof *mins);
    int k = 0;
    if (!mins)
        return 0;
    cbt_as_ring_mins(r, nrings, mins);
    double med = cbt_as_median(mins, nrings);
    for (int g = 0; g < nrings; g++)
        if (mins[g] >= 0 && med > 0 && mins[g] < th * med)
            out[k++] = g;
    free(mins);
    return k;
}

int cbt_as_node_suspects(const cbt_as_result_t *r, double th, int *out)
{
    int n = r->n, k = 0;
    double md = cbt_as_median(r->d2d, n), mf = cbt_as_median(r->gflops, n);
    for (int h = 0; h < n; h++)
        if ((r->d2d[h] >= 0 && md > 0 && r->d2d[h] < th * md)
            || (r->gflops[h] >= 0 && mf > 0 && r->gflops[h] < th * mf))
            out[k++] = h;
    return k;
}

int cbt_as_shm_suspects(const cbt_as_result_t *r, double th, double lth, int *out)
{
    int n = r->n, k = 0;
    double mg = cbt_as_median(r->shm_gbs, n), ml = cbt_as_median(r->shm_lat, n);
    for (int h = 0; h < n; h++)
        if ((r->shm_gbs[h] >= 0 && mg > 0 && r->shm_gbs[h] < th * mg)
            || (r->shm_lat[h] >= 0 && ml > 0 && r->shm_lat[h] > ml / lth))
            out[k++] = h;
    return k;
}

double cbt_as_bis_median(const cbt_as_result_t *r, double *v)
{
    int n = r->n, k = 0;
    for (int g = 0; g < r->nhalv; g++)
        for (int h = 0; h < n; h++)
            if (r->bis_peer[g * n + h] > h)
                v[k++] = r->bis[g * n + h];
    return cbt_as_median(v, k);
}

int cbt_as_bisect_suspects(const cbt_as_result_t *r, double th, int marginal, int *out)
{
    int n = r->n, k = 0;
    double *v = malloc(((size_t)r->nhalv * (size_t)n + 1) * sizeof *v);
    if (!v)
        return 0;
    double med = cbt_as_bis_median(r, v);
    free(v);
    for (int g = 0; g < r->nhalv; g++)
        for (int h = 0; h < n; h++) {
            double x = r->bis[g * n + h];
            if (r->bis_peer[g * n + h] > h && x >= 0 && med > 0 && x < th * med
                && !(marginal && x < CBT_AS_CLEAR * th * med))
                out[k++] = g * n + h;
        }
    return k;
}

int cbt_as_bis_slow(const cbt_as_result_t *r, int i, double med, double th)
{
    double x = r->bis[i];
    return x >= 0 && med > 0 && x < th * med && r->bis_again[i] >= 0;
}

int cbt_as_coll_suspects(const cbt_as_result_t *r, double th, int *out)
{
    int k = 0, t = CBT_AS_TOP;
    double *v = malloc((size_t)(r->ngroups + 1) * sizeof *v);
    if (!v)
        return 0;
    for (int g = 0; g < r->ngroups; g++)
        v[g] = r->gbus[g * CBT_AS_COLL_SIZES + t];
    double med = cbt_as_median(v, r->ngroups);
    for (int g = 0; g < r->ngroups; g++)
        if (v[g] >= 0 && med > 0 && v[g] < th * med)
            out[k++] = g;
    free(v);
    return k;
}
