/*
 * main.c - `collbench`: CPU and host benchmarks of a cluster node, in the spirit
 * of ascend-dmi (peak FLOPS, copy bandwidth) and perftest (network bandwidth).
 *
 *   collbench flops [...]   peak arithmetic throughput  (ascend-dmi: -f)
 *   collbench bw -t d2d     host memory copy bandwidth  (ascend-dmi: --bw)
 *   collbench net [HOST]    TCP bandwidth / latency, ib_send_bw style
 *   collbench topo          what libcoll detects and chooses for a set of ranks
 *   collbench sim           predicted collective time on a simulated cluster
 *   collbench assess        every host and link of a job; names the slow ones
 */
#include <stdio.h>
#include <string.h>

#include "cb.h"
#include "coll.h"
#include "../common/coll_internal.h"

int cbt_topo_main(int argc, char **argv);   /* topo/topo.c */
int cbt_assess_main(int argc, char **argv); /* assess/main.c */

typedef struct {
    const char *name;
    const char *alias[4]; /* ascend-dmi spellings */
    int (*run)(int argc, char **argv);
    const char *doc;
} subcmd_t;

static const subcmd_t subcmds[] = {
    {"flops",
     {"-f", "--flops", "--flop"},
     cbt_flops_main,
     "peak arithmetic throughput of the CPU (fp64/fp32/fp16/bf16/int8)"},
    {"bw", {"--bw", "-bw", "--bandwidth"}, cbt_bw_main, "bandwidth: -t d2d host memory copy; -t p2p between nodes"},
    {"net", {"--net"}, cbt_net_main, "TCP bandwidth and latency between two hosts (perftest ib_send_bw/lat style)"},
    {"topo",
     {"--topo"},
     cbt_topo_main,
     "hosts, cores, NUMA, interfaces, transports and algorithm choices of a set of ranks"},
    {"sim",
     {"--sim"},
     cbt_sim_main,
     "predicted collective time on H hosts x L ranks (real algorithms, simulated transport)"},
    {"assess",
     {"--assess"},
     cbt_assess_main,
     "every pair and ring of hosts of a job; names the slow host and link (exit 1)"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: collbench SUBCOMMAND [options]   (collbench SUBCOMMAND --help for its options)\n");
    for (size_t i = 0; i < sizeof subcmds / sizeof subcmds[0]; i++)
        fprintf(f, "  %-6s %-6s %s\n", subcmds[i].name, subcmds[i].alias[0], subcmds[i].doc);
    fprintf(
        f,
        "collbench %s. Exit codes: 0 ok, 1 failed (assess: outliers), 2 bad command line, 3 network error, 4 timeout.\n",
        COLL_VERSION_STRING);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CBT_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-v")) {
        printf("collbench %s\n", COLL_VERSION_STRING);
        return 0;
    }
    /* the whole configuration (COLL_*, HCCL_*) before anything starts */
    if (coll_cfg_check() != COLL_SUCCESS) {
        fprintf(stderr, "collbench: %s\n", coll_cfg_check_message());
        return CBT_EXIT_USAGE;
    }
    coll_cfg_report(coll_cfg_env_rank());
    for (size_t i = 0; i < sizeof subcmds / sizeof subcmds[0]; i++) {
        const subcmd_t *s = &subcmds[i];
        int match = !strcmp(cmd, s->name);
        for (int a = 0; a < 4 && s->alias[a] && !match; a++)
            match = !strcmp(cmd, s->alias[a]);
        if (!match)
            continue;
        if (!s->run)
            return cbt_usage_error(s->name, "not yet implemented in this version");
        return s->run(argc - 1, argv + 1);
    }
    return cbt_usage_error("", "unknown subcommand '%s' (allowed: flops, bw, net, topo, sim, assess; -f, --bw)", cmd);
}
