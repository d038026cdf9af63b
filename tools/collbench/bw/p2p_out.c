/*
 * p2p_out.c - output of `collbench bw -t p2p`: ascend-dmi's tables
 *
 *   Unidirectional Peer to Peer Test
 *   Pod: rank 0 device id: 0 to Pod: rank 1 device id: 0
 *   ----------------------------------------------------------------
 *     Size(Bytes)  Execute Times  Bandwidth(GB/s)  Elapsed Time(us)
 *   ----------------------------------------------------------------
 *      536870912         40          164.500657       3263.64
 *   ----------------------------------------------------------------
 *
 * (Bidirectional: "... and Pod: ..."), the two matrices of the every-pair run,
 * and the JSON document (schema collbench-bw/1, type p2p).
 * "Pod" names a rank ("rank N") or, in shared-directory mode, its address;
 * "device id" is the rank's local rank on its host.
 */
#include <stdio.h>

#include "p2p.h"
#include "../cb.h"

static void footer(const cbt_p2p_report_t *r)
{
    if (r->o->bw->quiet)
        return;
    printf("\nBandwidth = Size / Elapsed Time (bidirectional: 2 x Size, both directions at once); Elapsed Time = "
           "mean time of one execution.\nlaunch %s, %d ranks, transport %s.\n",
           r->o->launch, r->nranks, r->transport);
}

void cbt_p2p_print_pair(const cbt_p2p_report_t *r, int first, int count)
{
    for (int i = first; i < first + count && i < r->nres; i++) {
        const cbt_p2p_result_t *x = &r->res[i];
        char title[256];
        snprintf(title, sizeof title, "%s Peer to Peer Test\nPod: %s device id: %d %s Pod: %s device id: %d",
                 x->bidi ? "Bidirectional" : "Unidirectional", r->pod[x->src], r->ranks[x->src].device,
                 x->bidi ? "and" : "to", r->pod[x->dst], r->ranks[x->dst].device);
        if (i > first)
            printf("\n");
        cbt_bw_table_head(title);
        cbt_bw_table_row(r->o->bw->size, r->o->bw->exec_times, x->gbs, x->us);
        cbt_bw_table_foot();
    }
    footer(r);
}

/* The figure of the pair (i, j) in the uni- or bidirectional matrix (a
 * bidirectional pair is measured once, either way round); -1 not measured. */
typedef struct {
    const cbt_p2p_report_t *r;
    int bidi;
} cell_of_t;

static double cell(const void *arg, int i, int j)
{
    const cell_of_t *c = arg;
    for (int k = 0; k < c->r->nres; k++) {
        const cbt_p2p_result_t *y = &c->r->res[k];
        if (y->bidi == c->bidi && ((y->src == i && y->dst == j) || (c->bidi && y->src == j && y->dst == i)))
            return y->gbs;
    }
    return -1;
}

static void matrix(const cbt_p2p_report_t *r, int bidi)
{
    cell_of_t c = {r, bidi};
    char title[128];
    snprintf(title, sizeof title, "%s Peer to Peer Bandwidth Matrix (GB/s%s)",
             bidi ? "Bidirectional" : "Unidirectional", bidi ? "" : ", row: source, column: destination");
    cbt_print_matrix(title, r->o->bw->size, r->o->bw->exec_times, r->nranks, cell, &c);
}

void cbt_p2p_print_matrix(const cbt_p2p_report_t *r)
{
    if (!r->o->bw->quiet)
        for (int i = 0; i < r->nranks; i++)
            printf("Pod: %s host %s device id: %d\n", r->pod[i], r->ranks[i].host, r->ranks[i].device);
    if (!r->o->bw->quiet)
        printf("\n");
    matrix(r, 0);
    printf("\n");
    matrix(r, 1);
    footer(r);
}

static void json_rank(const cbt_p2p_report_t *r, int k)
{
    printf("{\"rank\": %d, \"pod\": ", k);
    cbt_json_str(stdout, r->pod[k]);
    printf(", \"host\": ");
    cbt_json_str(stdout, r->ranks[k].host);
    printf(", \"device\": %d}", r->ranks[k].device);
}

void cbt_p2p_print_json(const cbt_p2p_report_t *r, int first, int count)
{
    const cbt_p2p_opts_t *o = r->o;
    printf("{\"schema\": \"collbench-bw/1\", \"type\": \"p2p\", \"mode\": \"%s\", \"launch\": ",
           o->sp == 0 || o->sp == 1 ? (o->sp == 0 ? "spdir-source" : "spdir-target")
               : o->ds >= 0         ? "pair"
                                    : "matrix");
    cbt_json_str(stdout, o->launch);
    printf(", \"transport\": \"%s\", \"nranks\": %d, \"rank\": %d, \"size\": %llu, \"execute_times\": %lld,\n"
           " \"ranks\": [",
           r->transport, r->nranks, r->me, o->bw->size, o->bw->exec_times);
    for (int k = 0; k < r->nranks; k++) {
        printf("%s", k ? ", " : "");
        json_rank(r, k);
    }
    printf("],\n \"results\": [");
    int nout = 0;
    for (int i = first; i < first + count && i < r->nres; i++) {
        const cbt_p2p_result_t *x = &r->res[i];
        printf("%s\n  {\"test\": \"%s\", \"src\": %d, \"dst\": %d, \"src_pod\": ", nout++ ? "," : "",
               x->bidi ? "bidirectional" : "unidirectional", x->src, x->dst);
        cbt_json_str(stdout, r->pod[x->src]);
        printf(", \"dst_pod\": ");
        cbt_json_str(stdout, r->pod[x->dst]);
        printf(", \"bytes\": %llu, \"execute_times\": %lld, \"bandwidth_gbs\": %.6f, \"elapsed_us\": %.3f, "
               "\"check\": \"%s\"}",
               o->bw->size, o->bw->exec_times, x->gbs, x->us, x->ok ? "success" : "failed");
    }
    printf("]");
    if (o->ds < 0 && o->sp != 0 && o->sp != 1) {
        for (int bidi = 0; bidi < 2; bidi++) {
            cell_of_t c = {r, bidi};
            printf(",\n \"matrix_%s_gbs\": ", bidi ? "bidirectional" : "unidirectional");
            cbt_json_matrix(stdout, r->nranks, cell, &c);
        }
    }
    printf("}\n");
}
