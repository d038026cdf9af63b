/*
 * assess_out2.c - bisect's and coll's part of what `collbench assess` prints
 * (rank 0), their outliers and their JSON files (DIR/bisect.json,
 * DIR/coll.json; schema collbench-assess/1 as the others, assess_out.c).
 *
 * bisect: the median of every pair figure of every halving; a pair below
 *   threshold x median after its confirmation (measured again alone) is a
 *   link outlier (OUTLIER bisect a<->b), and a host is named (OUTLIER bisect
 *   host) when more than half of its pairs, and at least two, are: its
 *   partners differ per halving (assess_bisect.c), so a slow host's partners
 *   are slow in one halving each, it in all of them.
 * coll: each group's bus bandwidth at the largest size against the median
 *   group; a group below threshold x median after its confirmation is named
 *   (OUTLIER coll group h1,h2,...).
 * Each OUTLIER line is also noted for DIR/outliers.json (cbt_as_note_outlier).
 */
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "../cb.h"

static const char *LINE = "----------------------------------------------------------------";

/* ------------------------------------------------------------ bisect */

static double bis_median(const cbt_as_result_t *r, double *v)
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
    double med = bis_median(r, v);
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

static int bis_slow(const cbt_as_result_t *r, int i, double med, double th)
{
    double x = r->bis[i];
    return x >= 0 && med > 0 && x < th * med && r->bis_again[i] >= 0;
}

void cbt_as_print_bisect(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    int n = r->n, *peer = malloc((size_t)n * sizeof *peer), *side = malloc((size_t)n * sizeof *side);
    if (!peer || !side) {
        free(peer), free(side);
        return;
    }
    printf("Bisection (%d halvings, seed %llu; per pair GB/s of both directions at once, the slower end;\n"
           "aggregate: the sum over the halving's pairs)\n",
           r->nhalv, o->seed);
    printf("Size(Bytes): %llu  Execute Times: %lld\n%s\n", o->size, o->et, LINE);
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
    printf("%s\n\n", LINE);
    free(peer), free(side);
}

int cbt_as_bisect_outliers(const cbt_as_result_t *r, double th)
{
    int n = r->n, cnt = 0;
    double *v = malloc(((size_t)r->nhalv * (size_t)n + 1) * sizeof *v), *hv = malloc((size_t)n * sizeof *hv);
    double *row = malloc(((size_t)r->nhalv + 1) * sizeof *row);
    if (!v || !hv || !row) {
        free(v), free(hv), free(row);
        return 0;
    }
    double med = bis_median(r, v);
    char subj[2 * CBT_AS_HOST_MAX + 4];
    for (int g = 0; g < r->nhalv; g++)
        for (int h = 0; h < n; h++) {
            int i = g * n + h, p = r->bis_peer[i];
            if (p <= h || !bis_slow(r, i, med, th))
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
                npair[h]++, nslow[h] += bis_slow(r, g * n + h, med, th);
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
            if (r->bis_peer[g * n + h] >= 0 && bis_slow(r, g * n + h, med, th))
                printf(" %d (with %s)", g + 1, r->hosts[r->bis_peer[g * n + h]].name);
        printf(" of %d pairs\n", npair[h]);
        cnt++;
    }
    free(v), free(hv), free(row), free(nslow), free(npair);
    return cnt;
}

/* ------------------------------------------------------------ coll */

#define TOP 0 /* csize[] falls from -s: index 0 is the largest size */

int cbt_as_coll_suspects(const cbt_as_result_t *r, double th, int *out)
{
    int k = 0, t = TOP;
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

static int group_name(const cbt_as_result_t *r, int g, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = 0;
    for (int h = 0; h < r->n && l + 1 < len; h++)
        if (r->grp[h] == g)
            l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? "," : "", r->hosts[h].name);
    return l >= len;
}

void cbt_as_print_coll(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    char name[512];
    printf("Coll (AllReduce FP32 sum, bus bandwidth GB/s of the median execution per size; groups of %lld\n"
           "consecutive hosts at once, then the whole job)\n",
           o->group_size);
    printf("Execute Times: %lld\n%s\n", o->et, LINE);
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
    printf("%s\n\n", LINE);
}

int cbt_as_coll_outliers(const cbt_as_result_t *r, double th)
{
    int cnt = 0, t = TOP;
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

/* ------------------------------------------------------------ JSON */

int cbt_as_json_bisect_coll(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    int n = r->n;
    if (r->nhalv) {
        FILE *f = cbt_as_json_open(o, r, "bisect");
        int *peer = malloc((size_t)n * sizeof *peer), *side = malloc((size_t)n * sizeof *side);
        if (!f || !peer || !side) {
            if (f)
                fclose(f);
            free(peer), free(side);
            return -1;
        }
        /* pair_gbs: n x n, the pair's figure (the smallest where it met twice) */
        fprintf(f, ",\n \"seed\": %llu,\n \"pair_gbs\": [", o->seed);
        for (int a = 0; a < n; a++) {
            fprintf(f, "%s[", a ? ", " : "");
            for (int b = 0; b < n; b++) {
                double v = -1;
                for (int g = 0; g < r->nhalv; g++)
                    if (r->bis_peer[g * n + a] == b && (v < 0 || r->bis[g * n + a] < v))
                        v = r->bis[g * n + a];
                cbt_as_json_num(f, b ? ", " : "", v);
            }
            fprintf(f, "]");
        }
        fprintf(f, "],\n \"halvings\": [");
        for (int g = 0; g < r->nhalv; g++) {
            cbt_as_halving(o->seed, g, n, peer, side);
            double agg = 0;
            fprintf(f, "%s\n  {\"side\": [", g ? "," : "");
            for (int h = 0; h < n; h++)
                fprintf(f, "%s%d", h ? ", " : "", peer[h] < 0 ? -1 : side[h]);
            fprintf(f, "], \"partner\": [");
            for (int h = 0; h < n; h++)
                fprintf(f, "%s%d", h ? ", " : "", r->bis_peer[g * n + h]);
            fprintf(f, "], \"gbs\": [");
            for (int h = 0; h < n; h++) {
                cbt_as_json_num(f, h ? ", " : "", r->bis[g * n + h]);
                if (r->bis_peer[g * n + h] > h && r->bis[g * n + h] >= 0)
                    agg += r->bis[g * n + h];
            }
            fprintf(f, "], \"aggregate_gbs\": %.6f}", agg);
        }
        fprintf(f, "]}\n");
        free(peer), free(side);
        if (fclose(f))
            return -1;
    }
    if (r->ngroups) {
        FILE *f = cbt_as_json_open(o, r, "coll");
        if (!f)
            return -1;
        fprintf(f, ",\n \"group_size\": %lld, \"sizes\": [", o->group_size);
        for (int i = 0; i < r->ncsizes; i++)
            fprintf(f, "%s%llu", i ? ", " : "", r->csize[i]);
        fprintf(f, "],\n \"group_of_host\": [");
        for (int h = 0; h < n; h++)
            fprintf(f, "%s%d", h ? ", " : "", r->grp[h]);
        fprintf(f, "],\n \"busbw_gbs\": [");
        for (int g = 0; g <= r->ngroups; g++) {
            const double *b = g < r->ngroups ? &r->gbus[g * CBT_AS_COLL_SIZES] : r->job_bus;
            fprintf(f, "%s[", g ? ", " : "");
            for (int i = 0; i < r->ncsizes; i++)
                cbt_as_json_num(f, i ? ", " : "", b[i]);
            fprintf(f, "]");
        }
        fprintf(f, "],\n \"last_row_is_job\": true}\n");
        if (fclose(f))
            return -1;
    }
    return 0;
}
