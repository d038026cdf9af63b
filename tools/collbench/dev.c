/*
 * dev.c - ascend-dmi's device ids on a CPU machine (--ds/--dd, -d, -m).
 *
 *   -m device (default)  device N = NUMA node N: the CPUs of
 *                        /sys/devices/system/node/nodeN/cpulist and its memory
 *   -m card              card N = socket (package) N: the CPUs whose
 *                        topology/physical_package_id is N and the memory of
 *                        every NUMA node that has CPUs there
 * Binding a thread to a device pins it to those CPUs (sched_setaffinity) and
 * restricts its future allocations to those nodes (set_mempolicy MPOL_BIND, a
 * raw system call: no libnuma needed); pages are placed on first touch, and
 * threads created afterwards inherit both. A kernel without
 * /sys/devices/system/node has one device, 0, with every CPU.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cb.h"

#define NODE_DIR "/sys/devices/system/node"
#define CPU_DIR "/sys/devices/system/cpu"
#define MPOL_BIND_ 2

/* "0-3,8,10-11" into set; -1 if unreadable. */
static int read_cpulist(const char *path, cpu_set_t *set)
{
    char buf[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    CPU_ZERO(set);
    for (char *p = buf; *p && *p != '\n';) {
        char *e;
        long a = strtol(p, &e, 10), b = a;
        if (e == p)
            return -1;
        if (*e == '-')
            b = strtol(e + 1, &e, 10);
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
        p = *e == ',' ? e + 1 : e;
    }
    return 0;
}

/* Ids present (NUMA nodes, or packages), ascending, at most max; returns the count. */
static int list_nodes(int *ids, int max)
{
    DIR *d = opendir(NODE_DIR);
    int n = 0;
    if (!d) {
        ids[0] = 0;
        return 1;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char *end;
        if (strncmp(e->d_name, "node", 4) != 0)
            continue;
        long v = strtol(e->d_name + 4, &end, 10);
        if (end == e->d_name + 4 || *end || n >= max)
            continue;
        int k = n++;
        for (; k > 0 && ids[k - 1] > v; k--)
            ids[k] = ids[k - 1];
        ids[k] = (int)v;
    }
    closedir(d);
    if (!n)
        ids[n++] = 0;
    return n;
}

static int node_cpus(int node, cpu_set_t *set)
{
    char path[128];
    snprintf(path, sizeof path, NODE_DIR "/node%d/cpulist", node);
    if (read_cpulist(path, set) == 0)
        return 0;
    if (node == 0 && access(NODE_DIR, F_OK) != 0) /* no NUMA in this kernel: all CPUs */
        return read_cpulist(CPU_DIR "/online", set);
    return -1;
}

static int cpu_package(int cpu)
{
    char path[128];
    snprintf(path, sizeof path, CPU_DIR "/cpu%d/topology/physical_package_id", cpu);
    FILE *f = fopen(path, "r");
    int p = 0;
    if (f) {
        if (fscanf(f, "%d", &p) != 1)
            p = 0;
        fclose(f);
    }
    return p;
}

static void join_ids(char *buf, size_t n, const int *ids, int count)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < count && at + 1 < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%d", i ? ", " : "", ids[i]);
}

int cbt_dev_lookup(int card, int id, cbt_dev_t *out, char *err, size_t errlen)
{
    int nodes[CBT_DEV_MAX], nn = list_nodes(nodes, CBT_DEV_MAX);
    memset(out, 0, sizeof *out);
    out->card = card, out->id = id;
    CPU_ZERO(&out->cpus);
    if (!card) {
        int found = 0;
        for (int i = 0; i < nn; i++)
            found |= nodes[i] == id;
        cpu_set_t s;
        if (found && node_cpus(id, &s) == 0 && CPU_COUNT(&s) > 0) {
            out->cpus = s;
            out->nodemask[id / 64] |= 1ULL << (id % 64);
            return 0;
        }
        char list[512];
        join_ids(list, sizeof list, nodes, nn);
        snprintf(err, errlen, "device %d does not exist: this machine has NUMA node(s) %s%s", id, list,
                 found ? " (it has no CPUs)" : "");
        return -1;
    }
    /* card = package: its CPUs, and the nodes holding them */
    int pkgs[CBT_DEV_MAX], np = 0;
    cpu_set_t online;
    if (read_cpulist(CPU_DIR "/online", &online) != 0)
        sched_getaffinity(0, sizeof online, &online);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &online))
            continue;
        int p = cpu_package(c), k;
        if (p == id)
            CPU_SET(c, &out->cpus);
        for (k = 0; k < np && pkgs[k] != p; k++)
            ;
        if (k == np && np < CBT_DEV_MAX) {
            for (k = np++; k > 0 && pkgs[k - 1] > p; k--)
                pkgs[k] = pkgs[k - 1];
            pkgs[k] = p;
        }
    }
    if (CPU_COUNT(&out->cpus) == 0) {
        char list[512];
        join_ids(list, sizeof list, pkgs, np);
        snprintf(err, errlen, "card %d does not exist: this machine has socket(s) %s", id, list);
        return -1;
    }
    for (int i = 0; i < nn; i++) {
        cpu_set_t s, both;
        if (node_cpus(nodes[i], &s) != 0)
            continue;
        CPU_AND(&both, &s, &out->cpus);
        if (CPU_COUNT(&both) > 0 && nodes[i] < 64 * CBT_DEV_MASK_WORDS)
            out->nodemask[nodes[i] / 64] |= 1ULL << (nodes[i] % 64);
    }
    return 0;
}

int cbt_dev_bind(const cbt_dev_t *d, char *err, size_t errlen)
{
    if (sched_setaffinity(0, sizeof d->cpus, &d->cpus) != 0) {
        snprintf(err, errlen, "%s %d: cannot run on its CPUs: %s", d->card ? "card" : "device", d->id, strerror(errno));
        return -1;
    }
    int any = 0;
    for (int i = 0; i < CBT_DEV_MASK_WORDS; i++)
        any |= d->nodemask[i] != 0;
    if (any && syscall(SYS_set_mempolicy, MPOL_BIND_, d->nodemask, (unsigned long)(64 * CBT_DEV_MASK_WORDS + 1)) != 0
        && errno != ENOSYS) { /* ENOSYS: kernel without NUMA, nothing to bind */
        snprintf(err, errlen, "%s %d: cannot bind memory to its NUMA node(s): %s", d->card ? "card" : "device", d->id,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int cbt_parse_devmode(const char *tool, const char *val)
{
    if (!strcmp(val, "device"))
        return 0;
    if (!strcmp(val, "card"))
        return 1;
    cbt_usage_error(tool, "invalid -m '%s' (allowed: device (a NUMA node), card (a socket))", val);
    return -1;
}
