/*
 * topo.c - `collbench topo`: what libcoll detects and decides for a set of ranks
 * (started like the other multi-rank tools: forked here with -p N, default the
 * online CPUs, or by mpirun / torchrun / srun):
 *   hosts       ranks per host, CPU packages, cores, PUs and NUMA nodes (hwloc
 *               when built with it, else sysfs)
 *   ranks       host, local rank, pid, CPU it runs on, its NUMA node, affinity,
 *               the interface/address libcoll's netif rules choose
 *   transports  per pair (self, shm, tcp) as the communicator set them up
 *   algorithms  per collective and size, what coll_algo_select picks on the
 *               whole communicator (COLL_ALGO forcing included)
 * Rank 0 prints; nothing but the init and one allgather is sent.
 */
#include <dirent.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

#include "../../launch/launch.h"
#include "../cb.h"
#include "../../common/coll_internal.h"

static const char *TOOL = "topo";

#define TOPO_MAX_RANKS 64
#define TOPO_MAX_SIZES 16

typedef struct {
    char host[64];
    int32_t pid, local_rank, local_size, cpu, numa;
    int32_t packages, cores, pus, numas;
    char topo_src[24];
    char affinity[64];
    char ifname[32], addr[COLL_SOCKADDR_STRLEN];
    char tp[TOPO_MAX_RANKS][8];
} rank_info_t;

typedef struct {
    int npus, npus_set, json, quiet;
    coll_dtype_t dt;
    unsigned long long sizes[TOPO_MAX_SIZES];
    int nsizes;
    const char *launch;
} topo_opts_t;

/* ------------------------------------------------------------ node facts */

static int count_dir(const char *path, const char *prefix)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    size_t pl = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, pl) && e->d_name[pl] >= '0' && e->d_name[pl] <= '9')
            n++;
    closedir(d);
    return n;
}

static int numa_of_cpu(int cpu)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int node = -1;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9')
            node = atoi(e->d_name + 4);
    closedir(d);
    return node < 0 ? 0 : node;
}

static void node_facts(rank_info_t *me)
{
    int cpus[CBT_MAX_CPUS], ncores = 0;
    me->cpu = sched_getcpu();
    me->numa = me->cpu >= 0 ? numa_of_cpu(me->cpu) : -1;
#ifdef HAVE_HWLOC
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) == 0) {
        hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
        if (hwloc_topology_load(t) == 0) {
            me->packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
            me->cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
            me->pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
            me->numas = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
            snprintf(me->topo_src, sizeof me->topo_src, "hwloc (API %u.%u)", (hwloc_get_api_version() >> 16) & 0xff,
                     (hwloc_get_api_version() >> 8) & 0xff);
            hwloc_topology_destroy(t);
            return;
        }
        hwloc_topology_destroy(t);
    }
#endif
    /* sysfs: the CPUs this process may use, grouped by physical core and package */
    int n = cbt_cpu_list(cpus, CBT_MAX_CPUS, &ncores);
    long pk[CBT_MAX_CPUS];
    int npk = 0;
    for (int i = 0; i < n; i++) {
        long k = cbt_cpu_core_key(cpus[i]) >> 16, seen = 0;
        for (int j = 0; j < npk && !seen; j++)
            seen = pk[j] == k;
        if (!seen)
            pk[npk++] = k;
    }
    me->packages = npk;
    me->cores = ncores;
    me->pus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    me->numas = count_dir("/sys/devices/system/node", "node");
    if (me->numas == 0)
        me->numas = 1;
    snprintf(me->topo_src, sizeof me->topo_src, "sysfs");
}

static void affinity_str(char *buf, size_t n)
{
    cpu_set_t set;
    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(buf, n, "?");
        return;
    }
    size_t len = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set))
            e++;
        int w = e > c ? snprintf(buf + len, n - len, "%s%d-%d", len ? "," : "", c, e)
                      : snprintf(buf + len, n - len, "%s%d", len ? "," : "", c);
        if (w < 0 || (size_t)w >= n - len) {
            if (n > 4)
                snprintf(buf + n - 4, 4, "...");
            return;
        }
        len += (size_t)w;
        c = e;
    }
}

/* ------------------------------------------------------------ output */

static const coll_kind_t KINDS[] = {COLL_ALLREDUCE,       COLL_ALLGATHER, COLL_ALLGATHERV, COLL_REDUCE_SCATTER,
                                    COLL_REDUCE_SCATTERV, COLL_REDUCE,    COLL_BROADCAST,  COLL_SCATTER,
                                    COLL_GATHER,          COLL_ALLTOALL,  COLL_ALLTOALLV,  COLL_BARRIER};
#define NKINDS (int)(sizeof KINDS / sizeof KINDS[0])

/* Whether rank r is the first rank of its host (the one that speaks for it). */
static int first_of_host(const rank_info_t *ri, int r)
{
    for (int q = 0; q < r; q++)
        if (!strcmp(ri[q].host, ri[r].host))
            return 0;
    return 1;
}

/* The Hosts table (one row a host, from its first rank), then the Ranks table. */
static void print_hosts_ranks(const rank_info_t *ri, int n)
{
    printf("\nHosts\n%6s  %-20s %6s %9s %6s %5s %5s  %s\n", "host", "name", "ranks", "packages", "cores", "PUs", "NUMA",
           "source");
    for (int h = 0, r0 = 0; r0 < n; r0++) {
        if (!first_of_host(ri, r0))
            continue;
        const rank_info_t *x = &ri[r0];
        printf("%6d  %-20s %6d %9d %6d %5d %5d  %s\n", h++, x->host, x->local_size, x->packages, x->cores, x->pus,
               x->numas, x->topo_src);
    }
    printf("\nRanks\n%6s  %-20s %7s %8s %4s %5s  %-16s %s\n", "rank", "host", "local", "pid", "cpu", "numa", "affinity",
           "interface (netif)");
    for (int r = 0; r < n; r++) {
        char local[24];
        snprintf(local, sizeof local, "%d/%d", ri[r].local_rank, ri[r].local_size);
        printf("%6d  %-20s %7s %8d %4d %5d  %-16s %s %s\n", r, ri[r].host, local, ri[r].pid, ri[r].cpu, ri[r].numa,
               ri[r].affinity, ri[r].ifname, ri[r].addr);
    }
}

/* The transport each rank uses to each other rank (row: from, column: to). */
static void print_transports(const rank_info_t *ri, int n)
{
    printf("\nTransports (row: from, column: to)\n%8s", "from\\to");
    for (int j = 0; j < n; j++)
        printf("%6d", j);
    printf("\n");
    for (int i = 0; i < n; i++) {
        printf("%8d", i);
        for (int j = 0; j < n; j++)
            printf("%6s", ri[i].tp[j]);
        printf("\n");
    }
}

/* What selection sees of the job: ranks per core, and the network's cost and where it came from. */
static void print_load_net(coll_comm_t comm, int nhosts)
{
    int crowded;
    double rpc = coll_comm_ranks_per_core(comm, &crowded);
    printf("\nLoad: %.1f rank%s per core on the busiest host%s\n", rpc, rpc == 1.0 ? "" : "s",
           crowded         ? " (more than 2: selection uses the crowded-host rules)"
               : rpc > 1.0 ? " (ranks share cores: waiting ranks spin briefly, then yield and sleep)"
                           : "");
    coll_net_cost_t net;
    coll_comm_net_cost(comm, &net);
    printf("\nNetwork (between hosts, as selection sees it): latency %.1f us + %.1f us a step, %.2f GB/s (%s)\n",
           net.lat_us, net.step_us, net.gbps,
           !strcmp(net.source, "probe")      ? "measured at init between the leaders of hosts 0 and 1"
               : !strcmp(net.source, "file") ? "COLL_TUNING_FILE"
               : nhosts > 1                  ? "built-in: COLL_NET_PROBE=0"
                                             : "built-in; one host, not measured");
}

/* The algorithm selection would take, collective by size (the column heads
 * 64M-style: a whole number of G, M or K where the size is one). */
static void print_algorithms(const topo_opts_t *o, coll_comm_t comm)
{
    int huge = ((const coll_comm *)comm)->buf_huge;
    printf("\nAlgorithms (%s, sum, root 0; size = nccl-tests/hccl_test convention; buffers on %s pages%s)\n%-16s",
           coll_dtype_name(o->dt), huge ? "2 MiB" : "4 KiB",
           huge ? "" : ": the test executables' huge-first ones select as with COLL_BUF_HUGE=1", "collective");
    for (int s = 0; s < o->nsizes; s++) {
        unsigned long long v = o->sizes[s];
        const char *u = "";
        if (v && v % CBT_GIB == 0)
            v /= CBT_GIB, u = "G";
        else if (v && v % CBT_MIB == 0)
            v /= CBT_MIB, u = "M";
        else if (v && v % CBT_KIB == 0)
            v /= CBT_KIB, u = "K";
        char b[32];
        snprintf(b, sizeof b, "%llu%s", v, u);
        printf(" %-17s", b);
    }
    printf("\n");
    for (int k = 0; k < NKINDS; k++) {
        printf("%-16s", coll_kind_name(KINDS[k]));
        for (int s = 0; s < o->nsizes; s++) {
            coll_explain_t e;
            coll_status_t st = coll_comm_explain(comm, KINDS[k], (size_t)o->sizes[s], o->dt, &e);
            printf(" %-17s", st == COLL_SUCCESS ? e.algo : "-");
            if (KINDS[k] == COLL_BARRIER)
                break;
        }
        printf("\n");
    }
}

static void print_text(const topo_opts_t *o, coll_comm_t comm, const rank_info_t *ri, int n, int nhosts)
{
    printf("collbench topo: %d rank%s on %d host%s (launch %s)\n", n, n > 1 ? "s" : "", nhosts, nhosts > 1 ? "s" : "",
           o->launch);
    print_hosts_ranks(ri, n);
    print_transports(ri, n);
    print_load_net(comm, nhosts);
    print_algorithms(o, comm);
    if (!o->quiet)
        printf("\nCOLL_ALGO forces a choice (names: all_reduce_test --list-algos); COLL_DEBUG=INFO "
               "COLL_DEBUG_SUBSYS=TUNING logs each decision.\n");
}

static void print_json(const topo_opts_t *o, coll_comm_t comm, const rank_info_t *ri, int n, int nhosts)
{
    printf("{\"schema\": \"collbench-topo/1\", \"launch\": ");
    cbt_json_str(stdout, o->launch);
    int crowded;
    double rpc = coll_comm_ranks_per_core(comm, &crowded);
    coll_net_cost_t net;
    coll_comm_net_cost(comm, &net);
    printf(", \"nranks\": %d, \"nhosts\": %d, \"ranks_per_core\": %.2f, \"crowded\": %s,\n \"network\": "
           "{\"latency_us\": %.2f, \"step_us\": %.2f, \"gbps\": %.3f, \"source\": \"%s\"},\n \"hosts\": [",
           n, nhosts, rpc, crowded ? "true" : "false", net.lat_us, net.step_us, net.gbps, net.source);
    int nh = 0;
    for (int r0 = 0; r0 < n; r0++) {
        if (!first_of_host(ri, r0))
            continue;
        const rank_info_t *x = &ri[r0];
        printf("%s{\"name\": ", nh++ ? ", " : "");
        cbt_json_str(stdout, x->host);
        printf(", \"ranks\": %d, \"packages\": %d, \"cores\": %d, \"pus\": %d, \"numa_nodes\": %d, \"source\": ",
               x->local_size, x->packages, x->cores, x->pus, x->numas);
        cbt_json_str(stdout, x->topo_src);
        printf("}");
    }
    printf("],\n \"ranks\": [");
    for (int r = 0; r < n; r++) {
        printf("%s\n  {\"rank\": %d, \"host\": ", r ? "," : "", r);
        cbt_json_str(stdout, ri[r].host);
        printf(", \"local_rank\": %d, \"local_size\": %d, \"pid\": %d, \"cpu\": %d, \"numa\": %d, \"affinity\": ",
               ri[r].local_rank, ri[r].local_size, ri[r].pid, ri[r].cpu, ri[r].numa);
        cbt_json_str(stdout, ri[r].affinity);
        printf(", \"interface\": ");
        cbt_json_str(stdout, ri[r].ifname);
        printf(", \"address\": ");
        cbt_json_str(stdout, ri[r].addr);
        printf(", \"transports\": [");
        for (int j = 0; j < n; j++)
            printf("%s\"%s\"", j ? ", " : "", ri[r].tp[j]);
        printf("]}");
    }
    printf("],\n \"dtype\": \"%s\", \"algorithms\": [", coll_dtype_name(o->dt));
    int na = 0;
    for (int k = 0; k < NKINDS; k++)
        for (int s = 0; s < o->nsizes; s++) {
            coll_explain_t e;
            size_t bytes = KINDS[k] == COLL_BARRIER ? 0 : (size_t)o->sizes[s];
            if (coll_comm_explain(comm, KINDS[k], bytes, o->dt, &e) != COLL_SUCCESS)
                e.algo = NULL, e.cost_us = -1;
            printf("%s\n  {\"collective\": \"%s\", \"bytes\": %zu, \"algorithm\": ", na++ ? "," : "",
                   coll_kind_name(KINDS[k]), bytes);
            if (e.algo)
                cbt_json_str(stdout, e.algo);
            else
                printf("null");
            if (e.cost_us >= 0)
                printf(", \"cost_us\": %.3f}", e.cost_us);
            else
                printf(", \"cost_us\": null}");
            if (KINDS[k] == COLL_BARRIER)
                break;
        }
    printf("]}\n");
}

/* ------------------------------------------------------------ ranks */

static int rank_body(void *arg, coll_comm_t comm, int rank, int nranks)
{
    const topo_opts_t *o = arg;
    int rc = CBT_EXIT_OK;
    rank_info_t me;
    memset(&me, 0, sizeof me);
    if (gethostname(me.host, sizeof me.host - 1) != 0)
        snprintf(me.host, sizeof me.host, "unknown");
    int lr = 0, ls = 1, nhosts = 1;
    coll_comm_local(comm, &lr, &ls);
    coll_comm_nhosts(comm, &nhosts);
    me.pid = (int32_t)getpid();
    me.local_rank = lr, me.local_size = ls;
    node_facts(&me);
    affinity_str(me.affinity, sizeof me.affinity);
    struct sockaddr_storage ss;
    if (coll_netif_select(AF_UNSPEC, &ss, me.ifname, sizeof me.ifname) == COLL_SUCCESS) {
        coll_sockaddr_str(&ss, me.addr, sizeof me.addr);
    } else {
        snprintf(me.ifname, sizeof me.ifname, "-");
        snprintf(me.addr, sizeof me.addr, "(%s)", coll_last_error());
    }
    for (int j = 0; j < nranks; j++)
        snprintf(me.tp[j], sizeof me.tp[j], "%s", coll_comm_transport_name(comm, j));
    rank_info_t *all = rank == 0 ? calloc((size_t)nranks, sizeof *all) : NULL;
    coll_status_t st;
    if (rank == 0 && !all) {
        rc = cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
        coll_comm_abort(comm);
    } else if ((st = coll_gather(&me, all, sizeof me, COLL_UINT8, 0, comm)) != COLL_SUCCESS) {
        rc = cbt_error(TOOL, st == COLL_ERR_TIMEOUT ? CBT_EXIT_TIMEOUT : CBT_EXIT_CONN, "rank %d: gather: %s: %s", rank,
                       coll_strerror(st), coll_last_error());
    } else if (rank == 0) {
        if (o->json)
            print_json(o, comm, all, nranks, nhosts);
        else
            print_text(o, comm, all, nranks, nhosts);
        fflush(stdout);
    }
    free(all);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collbench topo [-p N] [--sizes LIST] [-d DTYPE] [-fmt normal|json] [-q]\n"
            "  -p N             standalone: ranks forked here, 1..%d (default: online CPUs); under mpirun /\n"
            "                   torchrun / srun the launcher's ranks\n"
            "  --sizes LIST     message sizes for the algorithm table (default 1K,64K,1M,16M,256M)\n"
            "  -d, --dtype T    datatype for selection (default fp32)\n"
            "  -fmt F           normal or json (--json)\n"
            "  -q, --quiet      no trailing notes\n",
            TOPO_MAX_RANKS);
}

static int parse_sizes(const char *v, topo_opts_t *o)
{
    char buf[512];
    if (strlen(v) >= sizeof buf)
        return cbt_usage_error(TOOL, "invalid --sizes: too long");
    snprintf(buf, sizeof buf, "%s", v);
    o->nsizes = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nsizes == TOPO_MAX_SIZES)
            return cbt_usage_error(TOOL, "invalid --sizes '%s': at most %d sizes", v, TOPO_MAX_SIZES);
        if (cbt_parse_size(TOOL, "--sizes", t, 0, 1ULL << 40, &o->sizes[o->nsizes]))
            return CBT_EXIT_USAGE;
        o->nsizes++;
    }
    if (!o->nsizes)
        return cbt_usage_error(TOOL, "invalid --sizes '%s' (allowed: a comma list like 1K,1M)", v);
    return 0;
}

int cbt_topo_main(int argc, char **argv)
{
    long on = sysconf(_SC_NPROCESSORS_ONLN);
    topo_opts_t o = {.npus = on < 1 ? 1 : on > TOPO_MAX_RANKS ? TOPO_MAX_RANKS : (int)on, .dt = COLL_FP32};
    if (parse_sizes("1K,64K,1M,16M,256M", &o))
        return CBT_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        long long ll;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--topo")) {
            continue;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--npus")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)) || cbt_parse_ll(TOOL, "-p", v, 1, TOPO_MAX_RANKS, &ll))
                return CBT_EXIT_USAGE;
            o.npus = (int)ll, o.npus_set = 1;
        } else if (!strcmp(a, "--sizes")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)) || parse_sizes(v, &o))
                return CBT_EXIT_USAGE;
        } else if (!strcmp(a, "-d") || !strcmp(a, "--dtype")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)))
                return CBT_EXIT_USAGE;
            if (coll_dtype_from_name(v, &o.dt) != COLL_SUCCESS)
                return cbt_usage_error(TOOL,
                                       "invalid -d '%s' (allowed: int8, int16, int32, int64, uint8, uint16, "
                                       "uint32, uint64, fp16, bf16, fp32, fp64)",
                                       v);
        } else if (!strcmp(a, "-fmt") || !strcmp(a, "--fmt") || !strcmp(a, "--format")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)))
                return CBT_EXIT_USAGE;
            if (strcmp(v, "json") && strcmp(v, "normal") && strcmp(v, "table"))
                return cbt_usage_error(TOOL, "invalid %s '%s' (allowed: normal, json)", a, v);
            o.json = !strcmp(v, "json");
        } else if (!strcmp(a, "--json")) {
            o.json = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.quiet = 1;
        } else {
            return cbt_usage_error(TOOL, "unknown option '%s' (see collbench topo --help)", a);
        }
    }
    cb_launch_t l;
    int rc = cbt_launch(&l, "collbench topo", o.npus, o.npus_set, TOPO_MAX_RANKS);
    if (rc)
        return rc;
    o.launch = l.name;
    cbt_rank_job_t job = {.tool = TOOL, .body = rank_body, .arg = &o};
    return cbt_rank_run(&l, &job);
}
