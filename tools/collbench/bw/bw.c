/*
 * bw.c - `collbench bw -t TYPE [-s SIZE] [-et TIMES] [-fmt json] [-q]`: option
 * parsing shared by all bandwidth modes, and dispatch on -t.
 * Options follow ascend-dmi --bw: -s 1 B..4 GiB (default 536870912), -et execute
 * times 1..1000 (default 40); the table is
 *   Size(Bytes)  Execute Times  Bandwidth(GB/s)  Elapsed Time(us)
 * with Bandwidth = Size / Elapsed Time (decimal GB/s) and Elapsed Time the mean
 * time of one execution.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"
#include "p2p.h"
#include "../cb.h"

static const char *TOOL = "bw";

typedef struct {
    const char *name;
    int (*run)(const cbt_bw_opts_t *o);
    const char *doc;
} bw_mode_t;

static const bw_mode_t modes[] = {
    {"d2d", cbt_bw_d2d, "host memory copy (memcpy and non-temporal stores), one core and all cores"},
    {"p2p", cbt_bw_p2p, "between ranks: standalone (-p N), mpirun (--sp 2) or a shared directory (--sp 0/1)"},
    {"hosts", cbt_bw_hosts, "every rank of every host streams to the next host at once (TCP's CPU cost)"},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collbench bw -t TYPE [-s SIZE] [-et TIMES] [-fmt normal|json] [-q] [mode options]\n"
            "       (ascend-dmi spelling: collbench --bw -t d2d ...)\n"
            "  -t, --type TYPE          d2d, p2p or hosts (required)\n"
            "  -s, --size SIZE          bytes per execution, 1..4G (default 536870912; K, M, G suffixes)\n"
            "  -et, --execute-times N   timed executions, 1..1000 (default 40), after 0.5 s of untimed\n"
            "                           copies (a fresh process copies at about half speed at first)\n"
            "  -fmt, --format F         normal (table) or json; --json = -fmt json\n"
            "  -q, --quiet              tables only\n"
            "  --calibration-out FILE   d2d: set the host keys of a collbench sim calibration file\n"
            "                           (docs/sim-calibration.md): shm_gbps (one core's memcpy / 2: the\n"
            "                           shared-memory path copies in and out), reduce_gbps (one core's fp32\n"
            "                           sum), cores_per_host (the physical cores this process may use),\n"
            "                           copy_core_gbps (the all-cores memcpy / cores: memory bandwidth),\n"
            "                           cache_bytes (the last-level cache, from sysfs);\n"
            "                           p2p, 2 ranks on 2 hosts: net_us, the bidirectional exchange's time\n"
            "                           less -s at the file's net_gbps (run collbench net first; -s 256K,\n"
            "                           the ring algorithms' chunk);\n"
            "                           hosts: net_cpu_gbps, the bytes all hosts sent per second / the\n"
            "                           cores of their machines (run it where no link rate limits TCP)\n"
            "d2d options:\n"
            "  -c, --cores N            threads of the all-cores run (default: one per physical core)\n"
            "  --method M               memcpy, nt or all (default all)\n"
            "  -d D                     both buffers and the copying threads on device D (a NUMA node)\n"
            "  --ds S --dd D            source buffer on device S, destination buffer on D; the copying\n"
            "                           threads run on D's CPUs (a pull: the source is read across the\n"
            "                           interconnect once, the stores stay local), so --ds 0 --dd 1 is\n"
            "                           the cross-NUMA copy rate; -c and \"all cores\" count D's cores\n"
            "  -m, --mode device|card   as for p2p below (-m alone = -d 0); a device that does not exist\n"
            "                           exits 2 naming those present\n"
            "p2p options (ascend-dmi --bw -t p2p):\n"
            "  --ds S --dd D            device ids, as in ascend-dmi: S on the source node (rank 0), D on the\n"
            "                           target node (rank 1); the four tables 0->1, 0<->1, 1->0, 1<->0. Each\n"
            "                           end binds its buffers and copying thread to its device: a NUMA node\n"
            "                           (its CPUs and memory), so on one host --ds 0 --dd 1 measures\n"
            "                           cross-NUMA bandwidth. They are not ranks (before: source and\n"
            "                           destination rank): they need exactly 2 ranks; without them every\n"
            "                           pair of ranks is measured (unidirectional and bidirectional matrices)\n"
            "  -d D                     --ds D --dd D (shared-directory mode: this end's device; default:\n"
            "                           not bound)\n"
            "  -m, --mode device|card   what the ids name: device = NUMA node (default), card = socket\n"
            "                           (package: its CPUs and the memory of its NUMA nodes); -m alone = -d 0.\n"
            "                           A device that does not exist exits 2 naming those present\n"
            "  -p N                     standalone: ranks forked here, 2..64 (default 2)\n"
            "  --sp 2                   MPI mode: mpirun -host a:1,b:1 -n 2 collbench bw -t p2p --sp 2 --dd 0 --ds 0\n"
            "  --sp 0|1 --ip PEER --hip OWN --spp DIR\n"
            "                           two processes meeting through the shared directory DIR: --sp 0 on the\n"
            "                           source, --sp 1 on the target, started within 10 s of each other; files\n"
            "                           under DIR/collbench_check/OWN/ (on one host give the ends different\n"
            "                           loopback addresses, e.g. 127.0.0.1 and 127.0.0.2)\n"
            "hosts (under a launcher; the same ranks on every host, 2 hosts or more): local rank l of host\n"
            "  h sends -s bytes to local rank l of host h+1 and receives from host h-1, all ranks at once,\n"
            "  -et times (coll_sendrecv); prints what each host sent per second\n");
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        fprintf(f, "  -t %-5s %s\n", modes[i].name, modes[i].doc);
}

int cbt_bw_main(int argc, char **argv)
{
    cbt_bw_opts_t o = {.size = CBT_BW_SIZE_DEFAULT, .exec_times = CBT_BW_ET_DEFAULT};
    char **extra = calloc((size_t)argc + 1, sizeof *extra);
    if (!extra)
        return cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
    o.extra = extra;
    int rc = CBT_EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (!strcmp(a, "--bw") || !strcmp(a, "-bw") || !strcmp(a, "--bandwidth")) {
            continue;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--type")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)))
                goto out;
            o.type = v;
        } else if (!strcmp(a, "-s") || !strcmp(a, "--size")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i))
                || cbt_parse_size(TOOL, "-s", v, CBT_BW_SIZE_MIN, CBT_BW_SIZE_MAX, &o.size))
                goto out;
            o.size_set = 1;
        } else if (!strcmp(a, "-et") || !strcmp(a, "--et") || !strcmp(a, "--execute-times")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i))
                || cbt_parse_ll(TOOL, "-et", v, CBT_BW_ET_MIN, CBT_BW_ET_MAX, &o.exec_times))
                goto out;
        } else if (!strcmp(a, "-fmt") || !strcmp(a, "--fmt") || !strcmp(a, "--format")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)))
                goto out;
            if (!strcmp(v, "json"))
                o.json = 1;
            else if (!strcmp(v, "normal") || !strcmp(v, "table"))
                o.json = 0;
            else {
                cbt_usage_error(TOOL, "invalid %s '%s' (allowed: normal, json)", a, v);
                goto out;
            }
        } else if (!strcmp(a, "--json")) {
            o.json = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.quiet = 1;
        } else if (!strcmp(a, "--calibration-out")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)))
                goto out;
            o.calib_out = v;
        } else {
            o.extra[o.nextra++] = argv[i]; /* the mode's option (or value) */
        }
    }
    if (!o.type) {
        cbt_usage_error(TOOL, "missing -t TYPE (allowed: d2d, p2p, hosts)");
        goto out;
    }
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        if (strcmp(o.type, modes[m].name) != 0)
            continue;
        if (!modes[m].run) {
            cbt_usage_error(TOOL, "-t %s is not yet implemented in this version (available: d2d)", o.type);
            goto out;
        }
        rc = modes[m].run(&o);
        goto out;
    }
    cbt_usage_error(TOOL, "invalid -t '%s' (allowed: d2d, p2p, hosts)", o.type);
out:
    free(extra);
    return rc;
}

void cbt_bw_table_head(const char *title)
{
    printf("%s\n%s\n  Size(Bytes)  Execute Times  Bandwidth(GB/s)  Elapsed Time(us)\n%s\n", title, CBT_RULE, CBT_RULE);
}

void cbt_bw_table_row(unsigned long long bytes, long long times, double gbs, double us)
{
    printf("%12llu%11lld%20.6f%14.2f\n", bytes, times, gbs, us);
}

void cbt_bw_table_foot(void) { printf("%s\n", CBT_RULE); }
