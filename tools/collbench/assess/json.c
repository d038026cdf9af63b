/*
 * json.c - the files of `collbench assess --json DIR` (rank 0), schema
 * collbench-assess/1: DIR/<test>.json per test that ran (pairs, ring, node,
 * bisect, coll), each with the common header (the options, the hosts), and
 * DIR/outliers.json, every OUTLIER line report.c printed (test, subject,
 * value, median; what collbench-report lists). A figure not measured is null.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "../cb.h"

/* The OUTLIER lines printed, for DIR/outliers.json (rank 0 only). */
typedef struct {
    char test[16], subject[600];
    double v, med;
} note_t;

static note_t *notes;

static int nnotes, cap_notes;

void cbt_as_note_outlier(const char *test, const char *subject, double v, double med)
{
    if (nnotes == cap_notes) {
        int c2 = cap_notes ? 2 * cap_notes : 16;
        note_t *p = realloc(notes, (size_t)c2 * sizeof *p);
        if (!p)
            return;
        notes = p, cap_notes = c2;
    }
    note_t *x = &notes[nnotes++];
    snprintf(x->test, sizeof x->test, "%s", test);
    snprintf(x->subject, sizeof x->subject, "%s", subject);
    x->v = v, x->med = med;
}

void cbt_as_forget_outliers(void)
{
    free(notes);
    notes = NULL, nnotes = cap_notes = 0;
}

FILE *cbt_as_json_open(const cbt_as_opts_t *o, const cbt_as_result_t *r, const char *test)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", o->json_dir, test);
    FILE *f = fopen(path, "w");
    if (!f) {
        cbt_error("assess", CBT_EXIT_FAIL, "cannot write %s: %s", path, strerror(errno));
        return NULL;
    }
    fprintf(f,
            "{\"schema\": \"collbench-assess/1\", \"test\": \"%s\", \"size\": %llu, \"execute_times\": %lld, "
            "\"threshold\": %.3f,\n \"hosts\": [",
            test, o->size, o->et, o->threshold);
    for (int h = 0; h < r->n; h++) {
        fprintf(f, "%s{\"host\": ", h ? ", " : "");
        cbt_json_str(f, r->hosts[h].name);
        fprintf(f, ", \"speaker\": %d, \"ranks\": %d}", r->hosts[h].speaker, r->hosts[h].nranks);
    }
    fprintf(f, "]");
    return f;
}

/* DIR/outliers.json: every OUTLIER line (test, subject, value, median). */
static int write_outliers(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    FILE *f = cbt_as_json_open(o, r, "outliers");
    if (!f)
        return -1;
    fprintf(f, ",\n \"outliers\": [");
    for (int i = 0; i < nnotes; i++) {
        fprintf(f, "%s\n  {\"test\": ", i ? "," : "");
        cbt_json_str(f, notes[i].test);
        fprintf(f, ", \"subject\": ");
        cbt_json_str(f, notes[i].subject);
        fprintf(f, ", \"value\": %.6f, \"median\": %.6f}", notes[i].v, notes[i].med);
    }
    fprintf(f, "]}\n");
    return fclose(f) ? -1 : 0;
}

static void json_matrix(FILE *f, const char *name, const double *m, int n)
{
    cbt_dense_t x = {m, n};
    fprintf(f, ",\n \"%s\": ", name);
    cbt_json_matrix(f, n, cbt_dense_cell, &x);
}

static void json_shm(FILE *f, const cbt_as_result_t *r)
{
    fprintf(f, ",\n \"shm_gbs\": [");
    for (int h = 0; h < r->n; h++)
        cbt_json_num(f, h ? ", " : "", r->shm_gbs[h]);
    fprintf(f, "],\n \"shm_latency_us\": [");
    for (int h = 0; h < r->n; h++)
        cbt_json_num(f, h ? ", " : "", r->shm_lat[h]);
    fprintf(f, "]");
}

/* DIR/bisect.json: the pairs' figures, and per halving its sides, partners and figures. */
static int json_bisect(const cbt_as_opts_t *o, const cbt_as_result_t *r)
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
                cbt_json_num(f, b ? ", " : "", v);
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
                cbt_json_num(f, h ? ", " : "", r->bis[g * n + h]);
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
    return 0;
}

/* DIR/coll.json: the bus bandwidth per group and size, the job's last. */
static int json_coll(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    int n = r->n;
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
                cbt_json_num(f, i ? ", " : "", b[i]);
            fprintf(f, "]");
        }
        fprintf(f, "],\n \"last_row_is_job\": true}\n");
        if (fclose(f))
            return -1;
    }
    return 0;
}

int cbt_as_json_write(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    int n = r->n;
    if (write_outliers(o, r) || json_bisect(o, r) || json_coll(o, r))
        return -1;
    if (o->tests & CBT_AS_PAIRS) {
        FILE *f = cbt_as_json_open(o, r, "pairs");
        if (!f)
            return -1;
        json_matrix(f, "uni_gbs", r->uni, n);
        json_matrix(f, "bidi_gbs", r->bidi, n);
        json_matrix(f, "latency_us", r->lat, n);
        fprintf(f, ",\n \"round\": [");
        for (int i = 0; i < n * n; i++)
            fprintf(f, "%s%d", i ? ", " : "", r->round[i]);
        fprintf(f, "]}\n");
        if (fclose(f))
            return -1;
    }
    if (r->node_done) {
        FILE *f = cbt_as_json_open(o, r, "node");
        if (!f)
            return -1;
        fprintf(f, ",\n \"d2d_gbs\": [");
        for (int h = 0; h < n; h++)
            cbt_json_num(f, h ? ", " : "", r->d2d[h]);
        fprintf(f, "],\n \"gflops_fp64\": [");
        for (int h = 0; h < n; h++)
            cbt_json_num(f, h ? ", " : "", r->gflops[h]);
        fprintf(f, "]");
        json_shm(f, r);
        fprintf(f, "}\n");
        if (fclose(f))
            return -1;
    }
    if ((o->tests & CBT_AS_RING) && r->nrings) {
        FILE *f = cbt_as_json_open(o, r, "ring");
        if (!f)
            return -1;
        fprintf(f, ",\n \"rings\": [");
        for (int g = 0; g < r->nrings; g++) {
            fprintf(f, "%s\n  {\"kind\": \"%s\", \"successor\": [", g ? "," : "", g ? "random" : "ordered");
            for (int h = 0; h < n; h++)
                fprintf(f, "%s%d", h ? ", " : "", r->succ[g * n + h]);
            fprintf(f, "], \"gbs\": [");
            for (int h = 0; h < n; h++)
                cbt_json_num(f, h ? ", " : "", r->ring[g * n + h]);
            fprintf(f, "]}");
        }
        fprintf(f, "]}\n");
        if (fclose(f))
            return -1;
    }
    return 0;
}
