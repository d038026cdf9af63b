/*
 * assess_out.c - what `collbench assess` prints (rank 0): the host list, the
 * pair matrices as `collbench bw -t p2p` prints them (row: source, column:
 * destination, columns are host numbers), the ring table, then one line per
 * outlier with its evidence, and with --json DIR one file per test
 * (DIR/pairs.json, DIR/ring.json, DIR/node.json, schema collbench-assess/1;
 * bisect's and coll's in assess_out2.c) and DIR/outliers.json (every OUTLIER
 * line: test, subject, value, median; what collbench-report lists).
 *
 * Outliers: per test figure, the median of all its values; a value below
 * threshold x median (latency: above median / threshold) is suspect. Every
 * suspect pair is measured again in a confirmation round, one pair at a time,
 * and what is still suspect once more (CBT_AS_CONFIRM passes)
 * (assess_run.c: a burst of load from other processes or the other pairs of
 * a round slows one measurement, rarely three apart in time; re-measuring alone
 * costs one pair per suspect, not K x the whole matrix as best-of-K would).
 * The matrices then hold the best of the measurements, and a link is an
 * outlier only when it was measured again and is still past the threshold.
 *   link  each measured link (uni: a->b; bidi and latency: a<->b)
 *   host  named when more than half of the links that touch it are outliers:
 *         one bad host makes all of its links slow but only one of each other
 *         host's, so only it is named (from 4 hosts on; with 3 its peers have
 *         half their links slow). Its line gives the median of its links
 *         against the median of those host figures.
 *   ring  a ring's slowest host against the median ring (see assess_run.c).
 *   node  a host's d2d GB/s or FP64 GFLOPS against the median host; node-shm
 *         (assess_shm.c) a host's shared-memory GB/s and latency against the
 *         median of the hosts with several ranks.
 * Line: OUTLIER <test> <host or link>: <value> (median <m>, <pct>%), then
 * "  evidence:" lines (the host's matrix row and the rounds it was slow in).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "../cb.h"

static const char *LINE = "----------------------------------------------------------------";

typedef struct {
    const char *test, *unit;
    int lower_is_bad;    /* bandwidth: 1, latency: 0 */
    const double *m;     /* n x n */
    int directed;        /* uni: a->b and b->a differ */
    const double *again; /* n x n: the confirmation measurement, -1 none */
} fig_t;

/* --lat-threshold: latency's own threshold (0 = --threshold's). Set once from
 * the options before any test runs, on every rank. */
static double lat_th;

void cbt_as_set_lat_threshold(double t) { lat_th = t; }

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

/* Past th (latency: --lat-threshold when set) scaled by k: k = 1 the
 * threshold itself, k = CBT_AS_CLEAR a clear outlier. */
static int bad_k(const fig_t *f, double v, double med, double th, double k)
{
    if (v < 0 || med <= 0)
        return 0;
    if (!f->lower_is_bad && lat_th > 0)
        th = lat_th;
    th *= k;
    return f->lower_is_bad ? v < th * med : v > med / th;
}

static int bad(const fig_t *f, double v, double med, double th) { return bad_k(f, v, med, th, 1); }

/* Past the threshold in the first pass and again in the confirmation round
 * (the matrix holds the better of the two, so only that is tested, and only
 * links that were measured again qualify). */
static int confirmed(const fig_t *f, int ij, double med, double th)
{
    return bad(f, f->m[ij], med, th) && f->again[ij] >= 0;
}

static double fig_median(const cbt_as_result_t *r, const fig_t *f, double *v)
{
    int n = r->n, k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && (f->directed || i < j))
                v[k++] = f->m[i * n + j];
    return cbt_as_median(v, k);
}

static void figs_of(const cbt_as_result_t *r, fig_t *figs)
{
    fig_t f[3] = {
        {"pairs-uni", "GB/s", 1, r->uni, 1, r->again_uni},
        {"pairs-bidi", "GB/s", 1, r->bidi, 0, r->again_bidi},
        {"pairs-lat", "us", 0, r->lat, 0, r->again_lat},
    };
    memcpy(figs, f, sizeof f);
}

int cbt_as_suspects(const cbt_as_result_t *r, double th, int marginal, int *out, int max)
{
    int n = r->n, k = 0;
    fig_t figs[3];
    double med[3], *v = malloc((size_t)n * (size_t)n * sizeof *v + 1);
    if (!v)
        return 0;
    figs_of(r, figs);
    for (int f = 0; f < 3; f++)
        med[f] = fig_median(r, &figs[f], v);
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

static void ring_mins(const cbt_as_result_t *r, int nrings, double *mins)
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
    ring_mins(r, nrings, mins);
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

static void print_node(const cbt_as_result_t *r)
{
    printf("Node (per host: d2d memcpy GB/s, FP64 GFLOPS on one thread, shared-memory p2p between two of its "
           "ranks; better of two where measured again)\n%s\n",
           LINE);
    printf("%6s %-24s %12s %12s %12s %12s\n", "host", "name", "d2d GB/s", "GFLOPS", "shm GB/s", "shm lat us");
    for (int h = 0; h < r->n; h++) {
        printf("%6d %-24s %12.6f %12.6f", h, r->hosts[h].name, r->d2d[h], r->gflops[h]);
        if (r->shm_gbs[h] < 0) /* one rank on the host: no shared-memory figure */
            printf(" %12s %12s\n", "-", "-");
        else
            printf(" %12.6f %12.3f\n", r->shm_gbs[h], r->shm_lat[h]);
    }
    printf("%s\n\n", LINE);
}

static void matrix(const cbt_as_result_t *r, const fig_t *f, const cbt_as_opts_t *o)
{
    int n = r->n;
    printf("%s Matrix (%s%s)\n", f->test, f->unit, f->directed ? ", row: source, column: destination" : "");
    printf("Size(Bytes): %llu  Execute Times: %lld\n%s\n", o->size, o->et, LINE);
    printf("%9s", "src\\dst");
    for (int j = 0; j < n; j++)
        printf("%12d", j);
    printf("\n");
    for (int i = 0; i < n; i++) {
        printf("%9d", i);
        for (int j = 0; j < n; j++) {
            double v = f->m[i * n + j];
            if (v < 0)
                printf("%12s", "-");
            else
                printf("%12.6f", v);
        }
        printf("\n");
    }
    printf("%s\n\n", LINE);
}

/* Outliers of one pair figure: links, then hosts. Returns how many. */
static int pair_outliers(const cbt_as_result_t *r, const fig_t *f, double th)
{
    int n = r->n, cnt = 0;
    double *v = malloc((size_t)n * (size_t)n * sizeof *v), *hv = malloc((size_t)n * sizeof *hv);
    double *row = malloc((size_t)n * 2 * sizeof *row);
    if (!v || !hv || !row) {
        free(v), free(hv), free(row);
        return 0;
    }
    double med = fig_median(r, f, v);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double x = f->m[i * n + j];
            if (i == j || (!f->directed && i > j) || !confirmed(f, i * n + j, med, th))
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
                    nlink[h]++, nbad[h] += confirmed(f, h * n + j, med, th);
                if (f->directed) {
                    row[m++] = f->m[j * n + h];
                    if (f->m[j * n + h] >= 0)
                        nlink[h]++, nbad[h] += confirmed(f, j * n + h, med, th);
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
                && (confirmed(f, h * n + j, med, th) || (f->directed && confirmed(f, j * n + h, med, th)));
            if (slow)
                printf(" %d (with %s)", r->round[h * n + j] + 1, r->hosts[j].name);
        }
        printf("\n");
        cnt++;
    }
    free(v), free(hv), free(row), free(nbad), free(nlink);
    return cnt;
}

/* A ring's figure is its slowest host (the exchanges couple the ring); rings
 * are compared with the median ring. */
static int ring_outliers(const cbt_as_result_t *r, double th)
{
    int n = r->n, cnt = 0;
    double *mins = malloc((size_t)(r->nrings > 0 ? r->nrings : 1) * sizeof *mins);
    if (!mins)
        return 0;
    ring_mins(r, r->nrings, mins);
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

static void print_ring(const cbt_as_result_t *r, const cbt_as_opts_t *o)
{
    int n = r->n;
    printf("Ring Bandwidth (GB/s per host to its successor; ring 0 ordered, others random, seed %llu)\n", o->seed);
    printf("Size(Bytes): %llu  Execute Times: %lld\n%s\n", o->size, o->et, LINE);
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
    printf("%s\n\n", LINE);
}

void cbt_as_json_num(FILE *f, const char *sep, double v)
{
    if (v < 0)
        fprintf(f, "%snull", sep);
    else
        fprintf(f, "%s%.6f", sep, v);
}

static void json_matrix(FILE *f, const char *name, const double *m, int n)
{
    fprintf(f, ",\n \"%s\": [", name);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s[", i ? ", " : "");
        for (int j = 0; j < n; j++)
            cbt_as_json_num(f, j ? ", " : "", m[i * n + j]);
        fprintf(f, "]");
    }
    fprintf(f, "]");
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

static int write_json(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    int n = r->n;
    if (write_outliers(o, r) || cbt_as_json_bisect_coll(o, r))
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
            cbt_as_json_num(f, h ? ", " : "", r->d2d[h]);
        fprintf(f, "],\n \"gflops_fp64\": [");
        for (int h = 0; h < n; h++)
            cbt_as_json_num(f, h ? ", " : "", r->gflops[h]);
        fprintf(f, "]");
        cbt_as_json_shm(f, r);
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
                cbt_as_json_num(f, h ? ", " : "", r->ring[g * n + h]);
            fprintf(f, "]}");
        }
        fprintf(f, "]}\n");
        if (fclose(f))
            return -1;
    }
    return 0;
}

int cbt_as_report(const cbt_as_opts_t *o, const cbt_as_result_t *r)
{
    int n = r->n, cnt = 0;
    printf("collbench assess: %d host%s (launch %s), threshold %.2f\n", n, n == 1 ? "" : "s", o->launch, o->threshold);
    for (int h = 0; h < n; h++)
        printf("Host %d: %s (speaker rank %d, %d rank%s)\n", h, r->hosts[h].name, r->hosts[h].speaker,
               r->hosts[h].nranks, r->hosts[h].nranks == 1 ? "" : "s");
    printf("\n");
    fig_t figs[3];
    figs_of(r, figs);
    if ((o->tests & CBT_AS_PAIRS) && n > 1)
        for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
            matrix(r, &figs[i], o);
    if ((o->tests & CBT_AS_RING) && r->nrings)
        print_ring(r, o);
    if (r->node_done)
        print_node(r);
    if (r->nhalv)
        cbt_as_print_bisect(o, r);
    if (r->ngroups)
        cbt_as_print_coll(o, r);
    if (n < 2 && (o->tests & (CBT_AS_PAIRS | CBT_AS_RING)))
        printf("collbench assess: one host: pairs and ring need two or more\n");
    if (r->node_done && n > 1)
        cnt += node_outliers(r, o->threshold);
    if (r->node_done) /* node-shm: hosts with several ranks, however many hosts */
        cnt += cbt_as_shm_outliers(r, o->threshold, o->lat_threshold > 0 ? o->lat_threshold : o->threshold);
    if ((o->tests & CBT_AS_PAIRS) && n > 1)
        for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
            cnt += pair_outliers(r, &figs[i], o->threshold);
    if ((o->tests & CBT_AS_RING) && r->nrings)
        cnt += ring_outliers(r, o->threshold);
    if (r->nhalv)
        cnt += cbt_as_bisect_outliers(r, o->threshold);
    if (r->ngroups > 1)
        cnt += cbt_as_coll_outliers(r, o->threshold);
    if ((o->tests & CBT_AS_PAIRS) && n > 1) {
        printf("collbench assess: %d suspect pair%s measured again", r->nconfirm, r->nconfirm == 1 ? "" : "s");
        if (r->pairs_ref >= 0)
            printf(", each after the reference pair %s<->%s (its change since the first pass scales them)",
                   r->hosts[r->pairs_ref / n].name, r->hosts[r->pairs_ref % n].name);
        printf("\n");
    }
    printf("collbench assess: %d outlier%s\n", cnt, cnt == 1 ? "" : "s");
    fflush(stdout);
    int bad_json = o->json_dir && write_json(o, r);
    free(notes);
    notes = NULL, nnotes = cap_notes = 0;
    return bad_json ? -1 : cnt;
}
