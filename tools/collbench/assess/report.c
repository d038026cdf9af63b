/*
 * report.c - what `collbench assess` prints (rank 0): the host list, the
 * pair matrices as `collbench bw -t p2p` prints them (row: source, column:
 * destination, columns are host numbers), the ring, node, bisect and coll
 * tables, then one line per outlier with its evidence; with --json DIR the
 * files of json.c.
 *
 * An outlier (judge.c) is a figure past the threshold that was measured again
 * alone and is still past it:
 *   link  each measured link (uni: a->b; bidi and latency: a<->b)
 *   host  named when more than half of the links that touch it are outliers:
 *         one bad host makes all of its links slow but only one of each other
 *         host's, so only it is named (from 4 hosts on; with 3 its peers have
 *         half their links slow). Its line gives the median of its links
 *         against the median of those host figures.
 *   ring  a ring's slowest host against the median ring.
 *   node  a host's d2d GB/s or FP64 GFLOPS against the median host; node-shm
 *         a host's shared-memory GB/s and latency against the median of the
 *         hosts with several ranks.
 *   bisect a pair of a halving against the median pair; a host is named when
 *         more than half of its pairs, and at least two, are: its partners
 *         differ per halving (rounds.c), so a slow host's partners are slow
 *         in one halving each, it in all of them.
 *   coll  a group's bus bandwidth at the largest size against the median group
 *         (OUTLIER coll group h1,h2,...).
 * Line: OUTLIER <test> <host or link>: <value> (median <m>, <pct>%), then
 * "  evidence:" lines (the host's matrix row and the rounds it was slow in).
 * Each OUTLIER line is also noted for DIR/outliers.json (json.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "../cb.h"

/* A pair figure's matrix as `collbench bw -t p2p` prints it (row: source,
 * column: destination, columns are host numbers). */
static void matrix(const cbt_as_result_t *r, const cbt_as_fig_t *f, const cbt_as_opts_t *o)
{
    cbt_dense_t x = {f->m, r->n};
    char title[128];
    snprintf(title, sizeof title, "%s Matrix (%s%s)", f->test, f->unit,
             f->directed ? ", row: source, column: destination" : "");
    cbt_print_matrix(title, o->size, o->et, r->n, cbt_dense_cell, &x);
    printf("\n");
}

static void print_node(const cbt_as_result_t *r)
{
    printf("Node (per host: d2d memcpy GB/s, FP64 GFLOPS on one thread, shared-memory p2p between two of its "
           "ranks; better of two where measured again)\n%s\n",
           CBT_RULE);
    printf("%6s %-24s %12s %12s %12s %12s\n", "host", "name", "d2d GB/s", "GFLOPS", "shm GB/s", "shm lat us");
    for (int h = 0; h < r->n; h++) {
        printf("%6d %-24s %12.6f %12.6f", h, r->hosts[h].name, r->d2d[h], r->gflops[h]);
        if (r->shm_gbs[h] < 0) /* one rank on the host: no shared-memory figure */
            printf(" %12s %12s\n", "-", "-");
        else
            printf(" %12.6f %12.3f\n", r->shm_gbs[h], r->shm_lat[h]);
    }
    printf("%s\n\n", CBT_RULE);
}

static int node_outliers(const cbt_as_result_t *r, double th)
{
    int n = r->n, cnt = 0;
    struct {
        const char *test, *unit;
        const double *v, *again;
    } f[2] = {{"node-d2d", "GB/s", r->d2d, r->again_d2d}, {"node-flops", "GFLOPS", r->gflops, r->again_gflops}};
    for (int i = 0; i < 2; i++) {
        double med = cbt_as_median(f[i].v, n);
        for (int h = 0; h < n; h++) {
            double x = f[i].v[h];
            if (x < 0 || med <= 0 || x >= th * med || f[i].again[h] < 0)
                continue;
            printf("OUTLIER %s %s: %.6f %s (median %.6f, %.0f%%; last measured alone: %.6f)\n", f[i].test,
                   r->hosts[h].name, x, f[i].unit, med, 100.0 * x / med, f[i].again[h]);
            cbt_as_note_outlier(f[i].test, r->hosts[h].name, x, med);
            cnt++;
        }
    }
    return cnt;
}

/* Names hosts still past the threshold after being measured again alone. */
static int shm_outliers(const cbt_as_result_t *r, double th, double lat_th)
{
    int n = r->n, cnt = 0;
    double mg = cbt_as_median(r->shm_gbs, n), ml = cbt_as_median(r->shm_lat, n);
    for (int h = 0; h < n; h++) {
        double g = r->shm_gbs[h], l = r->shm_lat[h];
        if (g >= 0 && mg > 0 && g < th * mg && r->again_shm_gbs[h] >= 0) {
            printf("OUTLIER node-shm %s: %.6f GB/s (median %.6f, %.0f%%; last measured alone: %.6f)\n",
                   r->hosts[h].name, g, mg, 100.0 * g / mg, r->again_shm_gbs[h]);
            cbt_as_note_outlier("node-shm", r->hosts[h].name, g, mg);
            cnt++;
        }
        if (l >= 0 && ml > 0 && l > ml / lat_th && r->again_shm_lat[h] >= 0) {
            printf("OUTLIER node-shm-lat %s: %.3f us (median %.3f, %.0f%%; last measured alone: %.3f)\n",
                   r->hosts[h].name, l, ml, 100.0 * l / ml, r->again_shm_lat[h]);
            cbt_as_note_outlier("node-shm-lat", r->hosts[h].name, l, ml);
            cnt++;
        }
    }
    return cnt;
}

/* Outliers of one pair figure: links, then hosts. Returns how many. */
static int pair_outliers(const cbt_as_result_t *r, const cbt_as_fig_t *f, double th)
{
    int n = r->n, cnt = 0;
    double *v = malloc((size_t)n * (size_t)n * sizeof *v), *hv = malloc((size_t)n * sizeof *hv);
    double *row = malloc((size_t)n * 2 * sizeof *row);
    if (!v || !hv || !row) {
        free(v), free(hv), free(row);
        return 0;
    }
    double med = cbt_as_fig_median(r, f, v);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double x = f->m[i * n + j];
            if (i == j || (!f->directed && i > j) || !cbt_as_confirmed(f, i * n + j, med, th))
                continue;
            printf("OUTLIER %s %s%s%s: %.6f %s (median %.6f, %.0f%%; last measured alone: %.6f)\n", f->test,
                   r->hosts[i].name, f->directed ? "->" : "<->", r->hosts[j].name, x, f->unit, med, 100.0 * x / med,
                   f->again[i * n + j]);
            char subj[2 * CBT_AS_HOST_MAX + 4];
            snprintf(subj, sizeof subj, "%s%s%s", r->hosts[i].name, f->directed ? "->" : "<->", r->hosts[j].name);
            cbt_as_note_outlier(f->test, subj, x, med);
            cnt++;
        }
    int *nbad = calloc((size_t)n, sizeof *nbad), *nlink = calloc((size_t)n, sizeof *nlink);
    for (int h = 0; h < n && nbad && nlink; h++) {
        int m = 0;
        for (int j = 0; j < n; j++)
            if (j != h) {
                row[m++] = f->m[h * n + j];
                if (f->m[h * n + j] >= 0)
                    nlink[h]++, nbad[h] += cbt_as_confirmed(f, h * n + j, med, th);
                if (f->directed) {
                    row[m++] = f->m[j * n + h];
                    if (f->m[j * n + h] >= 0)
                        nlink[h]++, nbad[h] += cbt_as_confirmed(f, j * n + h, med, th);
                }
            }
        hv[h] = cbt_as_median(row, m);
    }
    double hmed = cbt_as_median(hv, n);
    for (int h = 0; h < n && nbad && nlink; h++) {
        if (2 * nbad[h] <= nlink[h])
            continue;
        printf("OUTLIER %s %s: %.6f %s (median %.6f, %.0f%%)\n", f->test, r->hosts[h].name, hv[h], f->unit, hmed,
               100.0 * hv[h] / hmed);
        cbt_as_note_outlier(f->test, r->hosts[h].name, hv[h], hmed);
        printf("  evidence: row %d (%s):", h, r->hosts[h].name);
        for (int j = 0; j < n; j++)
            printf(j == h ? " -" : " %.6f", f->m[h * n + j]);
        printf("\n  evidence: slow in rounds:");
        for (int j = 0; j < n; j++) {
            int slow = j != h
                && (cbt_as_confirmed(f, h * n + j, med, th)
                    || (f->directed && cbt_as_confirmed(f, j * n + h, med, th)));
            if (slow)
                printf(" %d (with %s)", r->round[h * n + j] + 1, r->hosts[j].name);
        }
        printf("\n");
        cnt++;
    }
    free(v), free(hv), free(row), free(nbad), free(nlink);
    return cnt;
}

static void print_ring(const cbt_as_result_t *r, const cbt_as_opts_t *o)
{
    int n = r->n;
    printf("Ring Bandwidth (GB/s per host to its successor; ring 0 ordered, others random, seed %llu)\n", o->seed);
    printf("Size(Bytes): %llu  Execute Times: %lld\n%s\n", o->size, o->et, CBT_RULE);
    printf("%6s %-10s", "ring", "order");
    for (int h = 0; h < n; h++)
        printf("%12d", h);
    printf("%12s\n", "min");
    for (int g = 0; g < r->nrings; g++) {
        char ord[256] = "";
        size_t l = 0;
        /* the order, starting at host 0 */
        int h = 0;
        for (int i = 0; i < n && l + 8 < sizeof ord; i++, h = r->succ[g * n + h] >= 0 ? r->succ[g * n + h] : 0)
            l += (size_t)snprintf(ord + l, sizeof ord - l, "%s%d", i ? "," : "", h);
        double mn = -1;
        printf("%6d %-10s", g, ord);
        for (int k = 0; k < n; k++) {
            double v = r->ring[g * n + k];
            if (v < 0)
                printf("%12s", "-");
            else
                printf("%12.6f", v);
            if (v >= 0 && (mn < 0 || v < mn))
                mn = v;
        }
        printf("%12.6f\n", mn);
    }
    printf("%s\n\n", CBT_RULE);
}

/* A ring's figure is its slowest host (the exchanges couple the ring); rings
 * are compared with the median ring. */
static int ring_outliers(const cbt_as_result_t *r, double th)
{
    int n = r->n, cnt = 0;
    double *mins = malloc((size_t)(r->nrings > 0 ? r->nrings : 1) * sizeof *mins);
    if (!mins)
        return 0;
    cbt_as_ring_mins(r, r->nrings, mins);
    double med = cbt_as_median(mins, r->nrings);
    for (int g = 0; g < r->nrings; g++) {
        if (mins[g] < 0 || med <= 0 || mins[g] >= th * med || r->ring_again[g * n] < 0)
            continue;
        char subj[1024];
        size_t l = 0;
        subj[0] = 0;
        for (int i = 0, h = 0; i <= n && l + 1 < sizeof subj; i++, h = r->succ[g * n + h] >= 0 ? r->succ[g * n + h] : 0)
            l += (size_t)snprintf(subj + l, sizeof subj - l, "%s%s", i ? "->" : "", r->hosts[h].name);
        printf("OUTLIER %s %s", g ? "ring-random" : "ring-ordered", subj);
        cbt_as_note_outlier(g ? "ring-random" : "ring-ordered", subj, mins[g], med);
        printf(": %.6f GB/s (median ring %.6f, %.0f%%)\n", mins[g], med, 100.0 * mins[g] / med);
        printf("  evidence: ring %d, every host to its successor:", g);
        for (int h = 0; h < n; h++)
            printf(" %.6f", r->ring[g * n + h]);
        printf("\n");
        cnt++;
    }
    free(mins);
    return cnt;
}

static void print_bisect(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    int n = r->n, *peer = malloc((size_t)n * sizeof *peer), *side = malloc((size_t)n * sizeof *side);
    if (!peer || !side) {
        free(peer), free(side);
        return;
    }
    printf("Bisection (%d halvings, seed %llu; per pair GB/s of both directions at once, the slower end;\n"
           "aggregate: the sum over the halving's pairs)\n",
           r->nhalv, o->seed);
    printf("Size(Bytes): %llu  Execute Times: %lld\n%s\n", o->size, o->et, CBT_RULE);
    for (int g = 0; g < r->nhalv; g++) {
        cbt_as_halving(o->seed, g, n, peer, side);
        printf("halving %d:", g + 1);
        for (int s = 0; s < 2; s++) {
            printf(s ? " | side B:" : " side A:");
            for (int h = 0; h < n; h++)
                if (peer[h] >= 0 && side[h] == s)
                    printf(" %d", h);
        }
        for (int h = 0; h < n; h++)
            if (peer[h] < 0)
                printf(" | idle: %d", h);
        printf("\n");
        double agg = 0, worst = -1;
        int wa = -1, wb = -1;
        for (int h = 0; h < n; h++) {
            double x = r->bis[g * n + h];
            if (r->bis_peer[g * n + h] <= h || x < 0)
                continue;
            printf("  %d<->%d %12.6f\n", h, r->bis_peer[g * n + h], x);
            agg += x;
            if (worst < 0 || x < worst)
                worst = x, wa = h, wb = r->bis_peer[g * n + h];
        }
        if (wa >= 0)
            printf("  aggregate %.6f GB/s, worst pair %s<->%s %.6f GB/s\n", agg, r->hosts[wa].name, r->hosts[wb].name,
                   worst);
    }
    printf("%s\n\n", CBT_RULE);
    free(peer), free(side);
}

static int bisect_outliers(const cbt_as_result_t *r, double th)
{
    int n = r->n, cnt = 0;
    double *v = malloc(((size_t)r->nhalv * (size_t)n + 1) * sizeof *v), *hv = malloc((size_t)n * sizeof *hv);
    double *row = malloc(((size_t)r->nhalv + 1) * sizeof *row);
    if (!v || !hv || !row) {
        free(v), free(hv), free(row);
        return 0;
    }
    double med = cbt_as_bis_median(r, v);
    char subj[2 * CBT_AS_HOST_MAX + 4];
    for (int g = 0; g < r->nhalv; g++)
        for (int h = 0; h < n; h++) {
            int i = g * n + h, p = r->bis_peer[i];
            if (p <= h || !cbt_as_bis_slow(r, i, med, th))
                continue;
            snprintf(subj, sizeof subj, "%s<->%s", r->hosts[h].name, r->hosts[p].name);
            printf("OUTLIER bisect %s: %.6f GB/s (median %.6f, %.0f%%; halving %d, last measured alone: %.6f)\n", subj,
                   r->bis[i], med, 100.0 * r->bis[i] / med, g + 1, r->bis_again[i]);
            cbt_as_note_outlier("bisect", subj, r->bis[i], med);
            cnt++;
        }
    int *nslow = calloc((size_t)n, sizeof *nslow), *npair = calloc((size_t)n, sizeof *npair);
    for (int h = 0; h < n && nslow && npair; h++) {
        int m = 0;
        for (int g = 0; g < r->nhalv; g++)
            if (r->bis_peer[g * n + h] >= 0 && r->bis[g * n + h] >= 0) {
                row[m++] = r->bis[g * n + h];
                npair[h]++, nslow[h] += cbt_as_bis_slow(r, g * n + h, med, th);
            }
        hv[h] = cbt_as_median(row, m);
    }
    double hmed = cbt_as_median(hv, n);
    for (int h = 0; h < n && nslow && npair; h++) {
        if (nslow[h] < 2 || 2 * nslow[h] <= npair[h])
            continue;
        printf("OUTLIER bisect %s: %.6f GB/s (median %.6f, %.0f%%)\n", r->hosts[h].name, hv[h], hmed,
               100.0 * hv[h] / hmed);
        cbt_as_note_outlier("bisect", r->hosts[h].name, hv[h], hmed);
        printf("  evidence: slow in halvings:");
        for (int g = 0; g < r->nhalv; g++)
            if (r->bis_peer[g * n + h] >= 0 && cbt_as_bis_slow(r, g * n + h, med, th))
                printf(" %d (with %s)", g + 1, r->hosts[r->bis_peer[g * n + h]].name);
        printf(" of %d pairs\n", npair[h]);
        cnt++;
    }
    free(v), free(hv), free(row), free(nslow), free(npair);
    return cnt;
}

static int group_name(const cbt_as_result_t *r, int g, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = 0;
    for (int h = 0; h < r->n && l + 1 < len; h++)
        if (r->grp[h] == g)
            l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? "," : "", r->hosts[h].name);
    return l >= len;
}

static void print_coll(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    char name[512];
    printf("Coll (AllReduce FP32 sum, bus bandwidth GB/s of the median execution per size; groups of %lld\n"
           "consecutive hosts at once, then the whole job)\n",
           o->group_size);
    printf("Execute Times: %lld\n%s\n", o->et, CBT_RULE);
    printf("%6s %-28s", "group", "hosts");
    for (int i = 0; i < r->ncsizes; i++)
        printf("%12llu", r->csize[i]);
    printf("\n");
    for (int g = 0; g <= r->ngroups; g++) {
        const double *b = g < r->ngroups ? &r->gbus[g * CBT_AS_COLL_SIZES] : r->job_bus;
        if (g < r->ngroups) {
            group_name(r, g, name, sizeof name);
            printf("%6d %-28s", g, name);
        } else {
            printf("%6s %-28s", "job", "all hosts");
        }
        for (int i = 0; i < r->ncsizes; i++)
            printf("%12.6f", b[i]);
        printf("\n");
    }
    printf("%s\n\n", CBT_RULE);
}

static int coll_outliers(const cbt_as_result_t *r, double th)
{
    int cnt = 0, t = CBT_AS_TOP;
    double *v = malloc((size_t)(r->ngroups + 1) * sizeof *v);
    char name[512];
    if (!v)
        return 0;
    for (int g = 0; g < r->ngroups; g++)
        v[g] = r->gbus[g * CBT_AS_COLL_SIZES + t];
    double med = cbt_as_median(v, r->ngroups);
    for (int g = 0; g < r->ngroups; g++) {
        double again = r->gbus_again[g * CBT_AS_COLL_SIZES + t];
        if (v[g] < 0 || med <= 0 || v[g] >= th * med || again < 0)
            continue;
        group_name(r, g, name, sizeof name);
        printf("OUTLIER coll group %s: %.6f GB/s (median %.6f, %.0f%%; AllReduce %llu bytes, last measured alone: "
               "%.6f)\n",
               name, v[g], med, 100.0 * v[g] / med, r->csize[t], again);
        char subj[520];
        snprintf(subj, sizeof subj, "group %s", name);
        cbt_as_note_outlier("coll", subj, v[g], med);
        cnt++;
    }
    free(v);
    return cnt;
}

int cbt_as_report(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    int n = r->n, cnt = 0;
    printf("collbench assess: %d host%s (launch %s), threshold %.2f\n", n, n == 1 ? "" : "s", o->launch, o->threshold);
    for (int h = 0; h < n; h++)
        printf("Host %d: %s (speaker rank %d, %d rank%s)\n", h, r->hosts[h].name, r->hosts[h].speaker,
               r->hosts[h].nranks, r->hosts[h].nranks == 1 ? "" : "s");
    printf("\n");
    cbt_as_fig_t figs[3];
    cbt_as_figs(r, figs);
    if ((o->tests & CBT_AS_PAIRS) && n > 1)
        for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
            matrix(r, &figs[i], o);
    if ((o->tests & CBT_AS_RING) && r->nrings)
        print_ring(r, o);
    if (r->node_done)
        print_node(r);
    if (r->nhalv)
        print_bisect(o, r);
    if (r->ngroups)
        print_coll(o, r);
    if (n < 2 && (o->tests & (CBT_AS_PAIRS | CBT_AS_RING)))
        printf("collbench assess: one host: pairs and ring need two or more\n");
    if (r->node_done && n > 1)
        cnt += node_outliers(r, o->threshold);
    if (r->node_done) /* node-shm: hosts with several ranks, however many hosts */
        cnt += shm_outliers(r, o->threshold, o->lat_threshold > 0 ? o->lat_threshold : o->threshold);
    if ((o->tests & CBT_AS_PAIRS) && n > 1)
        for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
            cnt += pair_outliers(r, &figs[i], o->threshold);
    if ((o->tests & CBT_AS_RING) && r->nrings)
        cnt += ring_outliers(r, o->threshold);
    if (r->nhalv)
        cnt += bisect_outliers(r, o->threshold);
    if (r->ngroups > 1)
        cnt += coll_outliers(r, o->threshold);
    if ((o->tests & CBT_AS_PAIRS) && n > 1) {
        printf("collbench assess: %d suspect pair%s measured again", r->nconfirm, r->nconfirm == 1 ? "" : "s");
        if (r->pairs_ref >= 0)
            printf(", each after the reference pair %s<->%s (its change since the first pass scales them)",
                   r->hosts[r->pairs_ref / n].name, r->hosts[r->pairs_ref % n].name);
        printf("\n");
    }
    printf("collbench assess: %d outlier%s\n", cnt, cnt == 1 ? "" : "s");
    fflush(stdout);
    int bad_json = o->json_dir && cbt_as_json_write(o, r);
    cbt_as_forget_outliers();
    return bad_json ? -1 : cnt;
}
