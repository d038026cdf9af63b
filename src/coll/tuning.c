/*
 * tuning.c - measured cost constants.
 *
 * shm: measured on the development VM (2 vCPU Xeon Sapphire Rapids, KVM,
 *      Debian 12) with bench/run-bench.sh: barrier ~1.5 us between 2 ranks,
 *      slot copy ~10 GB/s, reduce ~12 GB/s fp32 in cache.
 * tcp: veth between two network namespaces on the same VM (bench/multihost):
 *      ~25 us one-way small message, ~2 GB/s per stream.
 * Override with COLL_TUNING_FILE: lines "shm|tcp alpha_us beta_GBps gamma_GBps bar_us".
 */
#include "coll/tuning.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"

static coll_link_cost_t shm_cost = {2.5, 1.0 / 10000.0, 1.0 / 12000.0, 1.5};
static coll_link_cost_t tcp_cost = {25.0, 1.0 / 2000.0, 1.0 / 12000.0, 0.0};
static int loaded;

static void load_file(void)
{
    loaded = 1;
    const char *path = coll_cfg_str(COLL_CFG_TUNING_FILE);
    if (!*path)
        return;
    FILE *f = fopen(path, "r");
    if (!f) {
        COLL_WARN(COLL_SUB_TUNING, "cannot open COLL_TUNING_FILE %s; using built-in constants", path);
        return;
    }
    char line[256], kind[16];
    double a, b, g, bar;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || sscanf(line, "%15s %lf %lf %lf %lf", kind, &a, &b, &g, &bar) != 5 || b <= 0 || g <= 0)
            continue;
        coll_link_cost_t c = {a, 1.0 / (b * 1000.0), 1.0 / (g * 1000.0), bar};
        if (!strcmp(kind, "shm"))
            shm_cost = c;
        else if (!strcmp(kind, "tcp"))
            tcp_cost = c;
        COLL_INFO(COLL_SUB_TUNING, "tuning file: %s alpha %.2f us, %.2f GB/s, reduce %.2f GB/s, barrier %.2f us",
                  kind, a, b, g, bar);
    }
    fclose(f);
}

int coll_group_is_local(const coll_comm *comm, const coll_group_t *g)
{
    if (!comm->shm)
        return g->size <= 1;
    for (int i = 0; i < g->size; i++)
        if (comm->rank_host[g->ranks[i]] != comm->host)
            return 0;
    return 1;
}

const coll_link_cost_t *coll_tuning_link(const coll_comm *comm, const coll_group_t *g)
{
    if (!loaded)
        load_file();
    return coll_group_is_local(comm, g) ? &shm_cost : &tcp_cost;
}

double coll_tuning_oversub(const coll_comm *comm)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    double r = n > 0 ? (double)comm->local_size / (double)n : 1.0;
    return r > 1.0 ? r : 1.0;
}
