/*
 * util.c - small helpers shared by the collbench subcommands: option value
 * parsing with one-line errors, clocks, CPU lists and pinning, /proc readers.
 */
#include "cb.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/coll_internal.h"

double cbt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void vmsg(const char *tool, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "collbench%s%s: %s\n", *tool ? " " : "", tool, line);
}

int cbt_usage_error(const char *tool, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(tool, fmt, ap);
    va_end(ap);
    return CBT_EXIT_USAGE;
}

int cbt_error(const char *tool, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(tool, fmt, ap);
    va_end(ap);
    return code;
}

int cbt_call_failed(const char *tool, int rank, const char *prefix, const char *call, coll_status_t st,
                    coll_comm_t abort_comm)
{
    cbt_error(tool, cbt_exit_of(st), "rank %d: %s%s: %s: %s", rank, prefix, call, coll_strerror(st), coll_last_error());
    if (abort_comm)
        coll_comm_abort(abort_comm);
    return cbt_exit_of(st);
}

int cbt_launch(cb_launch_t *l, const char *prog, int npus, int npus_set, int max_ranks)
{
    char err[512];
    int rc = cb_launch_detect(l, prog, npus, err, sizeof err);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return rc;
    }
    if (l->kind != CB_LAUNCH_STANDALONE && npus_set && npus != l->nranks)
        fprintf(stderr, "%s: warning: -p %d but %d ranks were started by %s; using %d\n", prog, npus, l->nranks,
                l->name, l->nranks);
    if (max_ranks > 0 && l->nranks > max_ranks) {
        fprintf(stderr, "%s: %d ranks: at most %d are supported\n", prog, l->nranks, max_ranks);
        return CBT_EXIT_USAGE;
    }
    return 0;
}

const char *cbt_optval(const char *tool, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        cbt_usage_error(tool, "option %s needs a value (see collbench %s --help)", argv[*i], tool);
        return NULL;
    }
    *i += 1;
    return argv[*i];
}

int cbt_parse_size(const char *tool, const char *opt, const char *val, unsigned long long lo, unsigned long long hi,
                   unsigned long long *out)
{
    unsigned long long v;
    if (coll_parse_size(val, &v) != 0 || v < lo || v > hi) {
        char a[32], b[32];
        cbt_fmt_bytes(a, sizeof a, lo);
        cbt_fmt_bytes(b, sizeof b, hi);
        cbt_usage_error(tool, "invalid %s '%s' (allowed: %llu..%llu bytes = %s..%s; suffixes K, M, G)", opt, val, lo,
                        hi, a, b);
        return -1;
    }
    *out = v;
    return 0;
}

int cbt_parse_ll(const char *tool, const char *opt, const char *val, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    if (errno || end == val || *end != '\0' || v < lo || v > hi) {
        cbt_usage_error(tool, "invalid %s '%s' (allowed: integer %lld..%lld)", opt, val, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int cbt_parse_double(const char *tool, const char *opt, const char *val, double lo, double hi, const char *unit,
                     double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(val, &end);
    if (errno || end == val || *end != '\0' || !isfinite(v) || v < lo || v > hi) {
        cbt_usage_error(tool, "invalid %s '%s' (allowed: %g..%g%s%s)", opt, val, lo, hi, unit && *unit ? " " : "",
                        unit ? unit : "");
        return -1;
    }
    *out = v;
    return 0;
}

static long read_long_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long v = -1;
    if (fscanf(f, "%ld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

long cbt_cpu_core_key(int cpu)
{
    char p[128];
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
    long core = read_long_file(p);
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
    long pkg = read_long_file(p);
    if (core < 0)
        return 1L << 40 | cpu; /* unknown: every CPU its own core */
    return (pkg < 0 ? 0 : pkg) << 20 | core;
}

int cbt_cpu_list(int *cpus, int max, int *ncores)
{
    cpu_set_t set;
    int all[CPU_SETSIZE], n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                all[n++] = c;
    }
    if (n == 0)
        all[n++] = 0;
    long keys[CPU_SETSIZE];
    int first[CPU_SETSIZE];
    int nc = 0;
    for (int i = 0; i < n; i++) {
        keys[i] = cbt_cpu_core_key(all[i]);
        first[i] = 1;
        for (int j = 0; j < i; j++)
            if (keys[j] == keys[i]) {
                first[i] = 0;
                break;
            }
        nc += first[i];
    }
    int w = 0;
    for (int pass = 1; pass >= 0; pass--)
        for (int i = 0; i < n && w < max; i++)
            if (first[i] == pass)
                cpus[w++] = all[i];
    if (ncores)
        *ncores = nc;
    return w;
}

int cbt_pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

unsigned long long cbt_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024ULL;
}

static int cpuinfo_field(const char *key, char *buf, size_t n)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -1;
    char line[512];
    size_t kl = strlen(key);
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) != 0)
            continue;
        char *c = strchr(line, ':');
        if (!c)
            continue;
        c++;
        while (*c == ' ' || *c == '\t')
            c++;
        c[strcspn(c, "\n")] = '\0';
        snprintf(buf, n, "%s", c);
        found = 0;
        break;
    }
    fclose(f);
    return found;
}

void cbt_cpu_model(char *buf, size_t n)
{
    if (cpuinfo_field("model name", buf, n) != 0 && cpuinfo_field("Model", buf, n) != 0)
        snprintf(buf, n, "unknown");
}

double cbt_cpu_mhz(const char **source)
{
    long khz = read_long_file("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    if (khz > 0) {
        *source = "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq";
        return (double)khz / 1000.0;
    }
    char buf[64];
    if (cpuinfo_field("cpu MHz", buf, sizeof buf) == 0) {
        double mhz = strtod(buf, NULL);
        if (mhz > 0) {
            *source = "/proc/cpuinfo 'cpu MHz'";
            return mhz;
        }
    }
    *source = "unknown";
    return 0;
}
