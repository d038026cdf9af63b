/*
 * out.c - what the subcommands print alike: JSON strings and numbers, byte
 * counts, and ascend-dmi's rank x rank bandwidth matrix (as text and as JSON),
 * which `collbench bw -t p2p` prints per rank and `collbench assess` per host.
 */
#include "cb.h"

#include <math.h>
#include <stdio.h>

const char CBT_RULE[] = "----------------------------------------------------------------";

void cbt_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void cbt_fmt_bytes(char *buf, size_t n, unsigned long long b)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024.0 && i < 4) {
        v /= 1024.0;
        i++;
    }
    if (i == 0 || v == floor(v))
        snprintf(buf, n, "%.0f %s", v, u[i]);
    else
        snprintf(buf, n, "%.1f %s", v, u[i]);
}

void cbt_json_num(FILE *f, const char *sep, double v)
{
    if (v < 0)
        fprintf(f, "%snull", sep);
    else
        fprintf(f, "%s%.6f", sep, v);
}

void cbt_json_matrix(FILE *f, int n, double (*cell)(const void *arg, int i, int j), const void *arg)
{
    fprintf(f, "[");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s[", i ? ", " : "");
        for (int j = 0; j < n; j++)
            cbt_json_num(f, j ? ", " : "", cell(arg, i, j));
        fprintf(f, "]");
    }
    fprintf(f, "]");
}

double cbt_dense_cell(const void *dense, int i, int j)
{
    const cbt_dense_t *d = dense;
    return d->m[i * d->n + j];
}

void cbt_print_matrix(const char *title, unsigned long long size, long long et, int n,
                      double (*cell)(const void *arg, int i, int j), const void *arg)
{
    printf("%s\nSize(Bytes): %llu  Execute Times: %lld\n%s\n", title, size, et, CBT_RULE);
    printf("%9s", "src\\dst");
    for (int j = 0; j < n; j++)
        printf("%12d", j);
    printf("\n");
    for (int i = 0; i < n; i++) {
        printf("%9d", i);
        for (int j = 0; j < n; j++) {
            double v = cell(arg, i, j);
            if (v < 0)
                printf("%12s", "-");
            else
                printf("%12.6f", v);
        }
        printf("\n");
    }
    printf("%s\n", CBT_RULE);
}
