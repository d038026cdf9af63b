/*
 * table.c - the table rank 0 prints on stdout, in three layouts:
 *   collbench (default): hccl_test's four columns, then bus_bandwidth, then
 *     optional columns (--time-agg all, --stats; --in-place both: the in-place
 *     group's time, algbw, check, busbw last); under it nccl-tests' footer
 *     ("# Out of bounds values : N OK|FAILED", "# Avg bus bandwidth    : X")
 *     and one line of what the run cost.
 *   hccl: exactly hccl_test's four columns, nothing under them.
 *   plain: the whitespace table of the seed skill's documentation
 *     ("data_size      avg_time(us)    alg_bandwidth(GB/s)    check_result"),
 *     which the skill's parser reads (^\s*(\d+)\s+(\d+\.?\d*)\s+(\d+\.?\d*)\s+(\w+)).
 */
#include <stdio.h>
#include "driver.h"

void cb_table_header(const cb_opts_t *o)
{
    printf("the minbytes is %llu, maxbytes is %llu, iters is %d, warmup_iters is %d\n", o->minbytes, o->maxbytes,
           o->iters, o->warmup);
    if (o->format == CB_FMT_HCCL) {
        /* hccl_test's own header, byte for byte (no trailing blank). */
        printf("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n");
    } else if (o->format == CB_FMT_PLAIN) {
        printf("data_size      avg_time(us)    alg_bandwidth(GB/s)    check_result\n");
    } else {
        printf("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result: | "
               "bus_bandwidth(GB/s):%s%s%s\n",
               o->agg == CB_AGG_ALL ? " | min_time(us): | avg_time(us): | max_time(us):" : "",
               o->stats ? " | iter_min(us): | iter_p50(us): | iter_p99(us): | iter_max(us): | straggler:" : "",
               o->in_place == CB_IP_BOTH ? " | in_place_time(us): | in_place_alg_bandwidth(GB/s): | "
                                           "in_place_check_result: | in_place_bus_bandwidth(GB/s):"
                                         : "");
    }
    fflush(stdout);
}

void cb_table_row(const cb_opts_t *o, const cb_results_t *res, const cb_row_t *row, const cb_row_t *ip)
{
    double t = row->t;
    if (o->format == CB_FMT_HCCL) {
        /* hccl_test's row format "%-17llu | %-14.2f | %-20.5f | %s": ends in the result. */
        printf("%-17llu | %-14.2f | %-20.5f | %s\n", row->bytes, t, row->algbw, row->check);
        fflush(stdout);
        return;
    }
    if (o->format == CB_FMT_PLAIN) {
        /* the seed's columns: 15, 16 and 23 wide, at least one blank between */
        printf("%-14llu %-15.2f %-22.5f %s\n", row->bytes, t, row->algbw, row->check);
        fflush(stdout);
        return;
    }
    printf("%-17llu | %-14.2f | %-20.5f | %-13s | %.5f", row->bytes, t, row->algbw, row->check, row->busbw);
    if (o->agg == CB_AGG_ALL)
        printf(" | %-13.2f | %-13.2f | %.2f", row->tmin, row->tavg, row->tmax);
    if (o->stats) {
        char who[96];
        cb_straggler_name(res, row->it.straggler, who, sizeof(who));
        if (row->it.counted < 0)
            printf(" | %-13s | %-13s | %-13s | %-13s | %s", "-", "-", "-", "-", who);
        else
            printf(" | %-13.2f | %-13.2f | %-13.2f | %-13.2f | %s", row->it.min, row->it.p50, row->it.p99, row->it.max,
                   who);
    }
    if (ip) /* --in-place both: the in-place group after the out-of-place one */
        printf(" | %-14.2f | %-20.5f | %-13s | %.5f", ip->t, ip->algbw, ip->check, ip->busbw);
    printf("\n");
    fflush(stdout);
}

void cb_table_footer(const cb_opts_t *o, const cb_results_t *res, uint64_t wrong, double avg_busbw)
{
    if (o->format != CB_FMT_COLLBENCH)
        return;
    /* nccl-tests' words: wrong elements over every row and rank, and the
     * mean of the rows' bus bandwidth (GB/s) */
    printf("# Out of bounds values : %llu %s\n", (unsigned long long)wrong, wrong ? "FAILED" : "OK");
    if (o->min_bw >= 0)
        printf("# Avg bus bandwidth    : %g %s\n", avg_busbw < 0 ? 0 : avg_busbw,
               avg_busbw >= o->min_bw ? "OK" : "FAILED");
    else
        printf("# Avg bus bandwidth    : %g\n", avg_busbw < 0 ? 0 : avg_busbw);
    if (res->cost_known)
        printf("# Run cost             : init_time_s %.3f peak_rss_mib %.1f shm_bytes %.0f sockets %.0f\n",
               res->cost.init_s, res->cost.peak_rss_mib, res->cost.shm_bytes, res->cost.sockets);
    printf("#\n");
    fflush(stdout);
}
