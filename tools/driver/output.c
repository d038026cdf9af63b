/*
 * output.c - machine-readable results (docs/results-format.md): JSON and CSV,
 * written by rank 0 to a fresh FILE.tmp.XXXXXX and renamed (common/safe_file.h),
 * so no half-written file.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../common/coll_internal.h"
#include "../common/safe_file.h"
#include "driver.h"

int cb_results_add(cb_results_t *r, const cb_row_t *row)
{
    if (r->nrows == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        cb_row_t *p = realloc(r->rows, cap * sizeof(*p));
        if (!p)
            return -1;
        r->rows = p;
        r->cap = cap;
    }
    r->rows[r->nrows++] = *row;
    return 0;
}

void cb_results_free(cb_results_t *r)
{
    free(r->rows);
    free(r->hosts);
    free(r->ranks_per_host);
    free(r->rank_host);
    r->rank_host = NULL;
    r->rows = NULL;
    r->hosts = NULL;
    r->ranks_per_host = NULL;
}

void cb_straggler_name(const cb_results_t *r, int rank, char *out, size_t len)
{
    if (rank < 0)
        snprintf(out, len, "-");
    else if (r->rank_host && r->hosts && rank < r->nranks)
        snprintf(out, len, "%d@%s", rank, r->hosts[r->rank_host[rank]]);
    else
        snprintf(out, len, "%d", rank);
}

static void cpu_model(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) && strncmp(line, "Model", 5))
            continue;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(out, len, "%s", colon);
        break;
    }
    fclose(f);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch == '\t')
            fputs("\\t", f);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* CSV field: quoted when it holds a comma, quote or newline. */
static void csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (v != v || v > 1e300 || v < -1e300)
        fputs("null", f);
    else
        fprintf(f, "%.6g", v);
}

/* The environment's COLL_* settings (cfg: "KEY=value" lines) as a JSON object
 * body, COLL_SHM_PREFIX left out. */
static void json_config(FILE *f, const char *cfg)
{
    int first = 1;
    for (const char *p = cfg; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (eq && strncmp(p, "COLL_SHM_PREFIX=", 16)) {
            char key[256], val[1024];
            snprintf(key, sizeof(key), "%.*s", (int)(eq - p), p);
            snprintf(val, sizeof(val), "%.*s", (int)(len - (size_t)(eq - p) - 1), eq + 1);
            fputs(first ? "" : ", ", f);
            json_str(f, key);
            fputs(": ", f);
            json_str(f, val);
            first = 0;
        }
        p = e ? e + 1 : p + len;
    }
}

/* "\"op\": " and "\"root\": " values: null where the collective has none. */
static void json_op_root(FILE *f, const cb_results_t *r, coll_op_t op)
{
    const cb_opts_t *o = r->opts;
    if (r->desc->flags & CB_F_REDUCE)
        fprintf(f, "\"%s\"", coll_op_name(op));
    else
        fputs("null", f);
    fputs(", \"root\": ", f);
    if (r->desc->flags & CB_F_ROOTED)
        fprintf(f, "%d", o->root);
    else
        fputs("null", f);
}

static void json_header(FILE *f, const cb_results_t *r, const char *cpu, const char *cfg)
{
    const cb_opts_t *o = r->opts;
    fprintf(f, "{\n  \"schema\": \"collbench-result/1\",\n  \"header\": {\n");
    fprintf(f, "    \"version\": \"%s\", \"tool\": ", COLL_VERSION_STRING);
    json_str(f, o->prog);
    fprintf(f, ", \"command\": ");
    json_str(f, o->command);
    fprintf(f, ",\n    \"start_time\": \"%s\",\n    \"hosts\": [", r->start_time);
    for (int h = 0; h < r->nhosts && r->hosts; h++) {
        if (h)
            fputs(", ", f);
        json_str(f, r->hosts[h]);
    }
    fprintf(f, "], \"nhosts\": %d, \"ranks\": %d, \"ranks_per_host\": [", r->nhosts, r->nranks);
    for (int h = 0; h < r->nhosts && r->ranks_per_host; h++)
        fprintf(f, "%s%d", h ? ", " : "", r->ranks_per_host[h]);
    fprintf(f, "],\n    \"cpu_model\": ");
    json_str(f, cpu);
    fprintf(f, ", \"launcher\": ");
    json_str(f, r->launcher);
    fprintf(f, ",\n    \"config\": {");
    json_config(f, cfg);
    fprintf(f, "},\n    \"collective\": \"%s\", \"dtype\": \"%s\", \"op\": ", coll_kind_name(r->desc->kind),
            coll_dtype_name(o->dt));
    json_op_root(f, r, o->op);
    fprintf(f,
            ",\n    \"iters\": %d, \"warmup_iters\": %d, \"check\": %d, \"zero_copy\": %d,"
            " \"time_agg\": \"%s\", \"equal_counts\": %d, \"in_place\": \"%s\"\n  },\n  \"results\": [",
            o->iters, o->warmup, o->check, o->zero_copy,
            o->agg == CB_AGG_AVG       ? "avg"
                : o->agg == CB_AGG_MIN ? "min"
                : o->agg == CB_AGG_ALL ? "all"
                                       : "max",
            o->equal_counts,
            o->in_place == CB_IP_BOTH       ? "both"
                : o->in_place == CB_IP_ONLY ? "1"
                                            : "0");
}

/* A row's "iter_us" and "straggler" (null where not measured / none). */
static void json_iter(FILE *f, const cb_results_t *r, const cb_iter_stats_t *it)
{
    fputs(",\n     \"iter_us\": ", f);
    if (it->counted < 0) {
        fputs("null, \"straggler\": null", f);
        return;
    }
    fputs("{\"min\": ", f);
    json_num(f, it->min);
    fputs(", \"p50\": ", f);
    json_num(f, it->p50);
    fputs(", \"p99\": ", f);
    json_num(f, it->p99);
    fputs(", \"max\": ", f);
    json_num(f, it->max);
    fputs("},\n     \"straggler\": ", f);
    if (it->straggler < 0) {
        fprintf(f, "null, \"late_iters\": {\"counted\": %d}", it->counted);
        return;
    }
    fprintf(f, "{\"rank\": %d, \"host\": ", it->straggler);
    json_str(f, r->rank_host && r->hosts ? r->hosts[r->rank_host[it->straggler]] : NULL);
    fprintf(f, "}, \"late_iters\": {\"straggler\": %d, \"counted\": %d}", it->late, it->counted);
}

/* Row i of the results array (a comma before every row but the first). */
static void json_row(FILE *f, const cb_results_t *r, size_t i)
{
    const cb_row_t *w = &r->rows[i];
    fprintf(f, "%s\n    {\"collective\": \"%s\", \"dtype\": \"%s\", \"op\": ", i ? "," : "",
            coll_kind_name(r->desc->kind), coll_dtype_name(w->dt));
    json_op_root(f, r, w->op);
    fprintf(f, ", \"in_place\": %s", w->in_place ? "true" : "false");
    fprintf(f, ",\n     \"ranks\": %d, \"hosts\": %d, \"ranks_per_host\": %d, \"algorithm\": ", r->nranks, r->nhosts,
            r->local_size);
    json_str(f, w->algo);
    fprintf(f, ",\n     \"bytes\": %llu, \"count\": %llu,\n     \"time_us\": {\"avg\": ", w->bytes, w->count);
    json_num(f, w->tavg);
    fputs(", \"min\": ", f);
    json_num(f, w->tmin);
    fputs(", \"max\": ", f);
    json_num(f, w->tmax);
    fputs("},\n     \"algbw_gbs\": ", f);
    json_num(f, w->algbw);
    fputs(", \"busbw_gbs\": ", f);
    json_num(f, w->busbw);
    fprintf(f, ",\n     \"wrong\": %llu, \"check_result\": \"%s\"", (unsigned long long)w->wrong, w->check);
    json_iter(f, r, &w->it);
    fputs("}", f);
}

static void write_json(FILE *f, const cb_results_t *r, const char *cpu, const char *cfg)
{
    json_header(f, r, cpu, cfg);
    for (size_t i = 0; i < r->nrows; i++)
        json_row(f, r, i);
    fprintf(f, "%s],\n  \"cost\": ", r->nrows ? "\n  " : "");
    if (r->cost_known)
        fprintf(f, "{\"init_time_s\": %.6f, \"peak_rss_mib\": %.3f, \"shm_bytes\": %.0f, \"sockets\": %.0f}",
                r->cost.init_s, r->cost.peak_rss_mib, r->cost.shm_bytes, r->cost.sockets);
    else
        fputs("null", f);
    fprintf(f, ",\n  \"status\": {\"exit_code\": %d, \"error\": ", r->exit_code);
    json_str(f, r->error);
    fprintf(f, "}\n}\n");
}

static void write_csv(FILE *f, const cb_results_t *r, const char *cpu, const char *cfg)
{
    const cb_opts_t *o = r->opts;
    int reducing = (r->desc->flags & CB_F_REDUCE) != 0, rooted = (r->desc->flags & CB_F_ROOTED) != 0;
    const char *coll = coll_kind_name(r->desc->kind);
    fprintf(f, "# schema=collbench-result/1\n# version=%s\n# tool=%s\n# command=%s\n# start_time=%s\n",
            COLL_VERSION_STRING, o->prog, o->command, r->start_time);
    fputs("# hosts=", f);
    for (int h = 0; h < r->nhosts && r->hosts; h++)
        fprintf(f, "%s%s", h ? " " : "", r->hosts[h]);
    fprintf(f, "\n# nhosts=%d\n# ranks=%d\n# ranks_per_host=", r->nhosts, r->nranks);
    for (int h = 0; h < r->nhosts && r->ranks_per_host; h++)
        fprintf(f, "%s%d", h ? " " : "", r->ranks_per_host[h]);
    fprintf(f, "\n# cpu_model=%s\n# launcher=%s\n", cpu, r->launcher);
    for (const char *p = cfg; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (strncmp(p, "COLL_SHM_PREFIX=", 16))
            fprintf(f, "# config.%.*s\n", (int)len, p);
        p = e ? e + 1 : p + len;
    }
    fprintf(f, "# iters=%d\n# warmup_iters=%d\n# check=%d\n# zero_copy=%d\n# exit_code=%d\n", o->iters, o->warmup,
            o->check, o->zero_copy, r->exit_code);
    if (r->error[0])
        fprintf(f, "# error=%s\n", r->error);
    if (r->cost_known)
        fprintf(f, "# init_time_s=%.6f\n# peak_rss_mib=%.3f\n# shm_bytes=%.0f\n# sockets=%.0f\n", r->cost.init_s,
                r->cost.peak_rss_mib, r->cost.shm_bytes, r->cost.sockets);
    fputs("collective,dtype,op,root,ranks,hosts,ranks_per_host,algorithm,bytes,count,"
          "time_avg_us,time_min_us,time_max_us,algbw_gbs,busbw_gbs,wrong,check_result",
          f);
    fputs(o->in_place != CB_IP_OFF ? ",in_place\n" : "\n", f); /* the column only with --in-place */
    char root[16] = "";
    if (rooted)
        snprintf(root, sizeof(root), "%d", o->root);
    for (size_t i = 0; i < r->nrows; i++) {
        const cb_row_t *w = &r->rows[i];
        fprintf(f, "%s,%s,%s,%s,%d,%d,%d,", coll, coll_dtype_name(w->dt), reducing ? coll_op_name(w->op) : "", root,
                r->nranks, r->nhosts, r->local_size);
        csv_str(f, w->algo);
        fprintf(f, ",%llu,%llu,%.3f,%.3f,%.3f,%.6f,%.6f,%llu,%s", w->bytes, w->count, w->tavg, w->tmin, w->tmax,
                w->algbw, w->busbw, (unsigned long long)w->wrong, w->check);
        if (o->in_place != CB_IP_OFF)
            fprintf(f, ",%d", w->in_place);
        fputc('\n', f);
    }
}

static int write_file(const cb_results_t *r, const char *path, int json, const char *cpu, const char *cfg)
{
    cb_safe_file_t sf;
    if (cb_safe_open(&sf, path, CB_RESULT_MODE) != 0) {
        fprintf(stderr, "%s: cannot write %s: %m\n", r->opts->prog, path);
        return -1;
    }
    if (json)
        write_json(sf.f, r, cpu, cfg);
    else
        write_csv(sf.f, r, cpu, cfg);
    if (cb_safe_commit(&sf) != 0) {
        fprintf(stderr, "%s: cannot write %s: %m (nothing written)\n", r->opts->prog, path);
        return -1;
    }
    return 0;
}

int cb_results_write(const cb_results_t *r)
{
    char cpu[256];
    cpu_model(cpu, sizeof(cpu));
    char *cfg = coll_cfg_nondefault("\n");
    int rc = 0;
    if (r->opts->json && write_file(r, r->opts->json, 1, cpu, cfg))
        rc = -1;
    if (r->opts->csv && write_file(r, r->opts->csv, 0, cpu, cfg))
        rc = -1;
    free(cfg);
    return rc;
}
