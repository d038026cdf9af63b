/*
 * flops.c - `collbench flops` (ascend-dmi spelling: `collbench -f`): peak
 * arithmetic throughput of the CPU for fp64, fp32, fp16, bf16 or int8.
 *
 * One pinned thread per physical core (or -c N) runs the best kernel this CPU
 * supports (flops.h: AVX-512 > AVX2 > portable C; --isa forces one) for -et
 * seconds after a short warm-up. Every kernel call checks its accumulators
 * against a closed form, so the result is validated and no work can be
 * optimised away. Operations are counted exactly (FMA = 2).
 *
 * Theoretical peak = cores x GHz x FMA units x lanes x 2, with the nominal clock
 * from /sys cpufreq cpuinfo_max_freq or /proc/cpuinfo 'cpu MHz' (--ghz
 * overrides) and 2 FMA units per core assumed (--fma-units overrides; e.g. 1 on
 * some Xeon Silver/Bronze parts). The same formula at the clock each thread
 * measured (clock.c: a dependent add chain just before and after its run)
 * gives the peak the efficiency is taken against. A nominal clock below the
 * real one (a VM's base clock, turbo) no longer shows as more than 100 %; a
 * throughput above even the measured peak means the formula's FMA units or
 * lanes are wrong for this CPU, and no efficiency is printed then.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../cb.h"
#include "flops.h"

static const char *TOOL = "flops";
static const char *type_names[CBT_FTYPE_COUNT] = {"fp64", "fp32", "fp16", "bf16", "int8"};

typedef struct {
    cbt_ftype_t type;
    int threads; /* 0 = one per physical core */
    double seconds;
    const char *isa; /* NULL = best */
    int fma_units;
    double ghz; /* 0 = detect */
    int json, quiet, list;
} flops_opts_t;

typedef struct {
    const cbt_fkern_t *k;
    int cpu;
    double seconds, warmup;
    pthread_barrier_t *bar;
    uint64_t steps, ops, bad;
    double elapsed;
    int pinned;
    double ghz; /* measured clock: dependent add chain before and after the run */
} flops_thread_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collbench flops [-t fp64|fp32|fp16|bf16|int8] [-c N] [-et SECONDS] [--isa NAME]\n"
            "                       [--fma-units N] [--ghz GHZ] [-fmt normal|json] [-q] [--list]\n"
            "       (ascend-dmi spelling: collbench -f -t fp16 ...)\n"
            "  -t, --type T        data type (default fp32); int8 is reported in TOPS\n"
            "  -c, --cores N       threads, pinned one per physical core first (default: all cores)\n"
            "  -et, --et SECONDS   measured time per thread, 0.01..3600 (default 1)\n"
            "  --isa NAME          force a kernel: avx512, avx2, generic or a name from --list\n"
            "  --fma-units N       FMA units per core for the theoretical peak, 1..4 (default 2)\n"
            "  --ghz GHZ           nominal clock for the theoretical peak (default: cpufreq max or\n"
            "                      cpu MHz); the efficiency is taken against the peak at the clock\n"
            "                      each thread measured (dependent add chain), never shown over 100 %%\n"
            "  -fmt, --format F    normal (table) or json; --json = -fmt json\n"
            "  -q, --quiet         tables only\n"
            "  --list              list the kernels and whether this CPU runs them\n");
}

#if defined(__x86_64__) || defined(__i386__)
/* One CPUID bit (reg 0..3 = EAX, EBX, ECX, EDX of leaf/sub): for the features
 * clang 14's __builtin_cpu_supports does not know (f16c, avxvnni, avx512fp16). */
static int cpuid_bit(unsigned leaf, unsigned sub, int reg, unsigned mask)
{
    unsigned r[4];
    if (!__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]))
        return 0;
    return (r[reg] & mask) != 0;
}
#endif

static unsigned cpu_features(void)
{
    unsigned f = 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f |= __builtin_cpu_supports("avx2") ? CBT_CPU_AVX2 : 0;
    f |= __builtin_cpu_supports("fma") ? CBT_CPU_FMA : 0;
    f |= cpuid_bit(1, 0, 2, bit_F16C) ? CBT_CPU_F16C : 0;
    f |= cpuid_bit(7, 1, 0, bit_AVXVNNI) ? CBT_CPU_AVXVNNI : 0;
    f |= __builtin_cpu_supports("avx512f") ? CBT_CPU_AVX512F : 0;
    f |= __builtin_cpu_supports("avx512bw") ? CBT_CPU_AVX512BW : 0;
    f |= __builtin_cpu_supports("avx512vl") ? CBT_CPU_AVX512VL : 0;
    f |= __builtin_cpu_supports("avx512bf16") ? CBT_CPU_AVX512BF16 : 0;
    f |= __builtin_cpu_supports("avx512vnni") ? CBT_CPU_AVX512VNNI : 0;
    f |= cpuid_bit(7, 0, 3, bit_AVX512FP16) ? CBT_CPU_AVX512FP16 : 0;
#endif
    return f;
}

/* The n-th kernel of all ISA tables, best ISA first (avx512, avx2, generic),
 * with the ISA level --isa may name; NULL past the last one. */
static const cbt_fkern_t *kernel_at(size_t n, const char **level)
{
    const struct {
        const cbt_fkern_t *tab;
        size_t count;
        const char *level;
    } t[] = {{cbt_fk_avx512, cbt_fk_avx512_count, "avx512"},
             {cbt_fk_avx2, cbt_fk_avx2_count, "avx2"},
             {cbt_fk_generic, cbt_fk_generic_count, "generic"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; n -= t[i].count, i++)
        if (n < t[i].count) {
            *level = t[i].level;
            return &t[i].tab[n];
        }
    return NULL;
}

static int kernel_ok(const cbt_fkern_t *k, unsigned feat) { return (k->requires & feat) == k->requires; }

/* A kernel --isa accepts: no --isa, its level (avx2) or its own name (avx2-f16c). */
static int isa_names(const flops_opts_t *o, const char *level, const cbt_fkern_t *k)
{
    return !o->isa || !strcmp(o->isa, level) || !strcmp(o->isa, k->name);
}

/* Best supported kernel for the type, or the one --isa names. */
static const cbt_fkern_t *pick_kernel(const flops_opts_t *o, unsigned feat, int *rc)
{
    *rc = 0;
    const cbt_fkern_t *k;
    const char *level;
    for (size_t n = 0; (k = kernel_at(n, &level)); n++)
        if (k->type == o->type && isa_names(o, level, k) && kernel_ok(k, feat))
            return k;
    /* Nothing: list what is allowed here. */
    char allowed[512] = "";
    int known = 0;
    for (size_t n = 0; (k = kernel_at(n, &level)); n++) {
        if (k->type != o->type)
            continue;
        if (o->isa && isa_names(o, level, k))
            known = 1;
        if (kernel_ok(k, feat)) {
            size_t l = strlen(allowed);
            snprintf(allowed + l, sizeof allowed - l, "%s%s", l ? ", " : "", k->name);
        }
    }
    *rc = cbt_usage_error(TOOL, "invalid --isa '%s' for -t %s: %s (allowed here: %s)", o->isa, type_names[o->type],
                          known ? "this CPU lacks the instructions" : "no such kernel", allowed);
    return NULL;
}

static void *flops_thread(void *arg)
{
    flops_thread_t *t = arg;
    const cbt_fkern_t *k = t->k;
    const cbt_fk_args_t args = {.a = 1.0, .b = 1.0, .fp16_a = 0x3C00, .bf16_a = 0x3F80, .i8_a = 1, .i8_b = 1};
    t->pinned = t->cpu >= 0 && cbt_pin_self(t->cpu) == 0;
    if (t->bar)
        pthread_barrier_wait(t->bar);

    /* Warm-up (clock and power licence settle) and sizing: one call ~0.25 ms. */
    uint64_t steps = k->max_steps < 64 ? k->max_steps : 64;
    double w0 = cbt_now(), wend = w0 + t->warmup;
    uint64_t bad = 0;
    for (;;) {
        double c0 = cbt_now();
        bad += k->run(steps, &args);
        double c1 = cbt_now();
        if (c1 - c0 < 250e-6 && steps * 2 <= k->max_steps)
            steps *= 2;
        if (c1 >= wend)
            break;
    }
    double ghz0 = cbt_flops_clock_ghz(); /* the clock around the run (~2 ms each) */
    uint64_t done = 0;
    double start = cbt_now(), end = start + t->seconds, now;
    do {
        bad += k->run(steps, &args);
        done += steps;
        now = cbt_now();
    } while (now < end);
    t->elapsed = now - start;
    double ghz1 = cbt_flops_clock_ghz();
    t->ghz = ghz0 > 0 && ghz1 > 0 ? (ghz0 + ghz1) / 2 : 0;
    t->steps = done;
    t->ops = done * (uint64_t)k->ops_per_step;
    t->bad = bad;
    return NULL;
}

double cbt_flops_probe(double warmup, double seconds)
{
    flops_opts_t o = {.type = CBT_FP64};
    int rc;
    const cbt_fkern_t *k = pick_kernel(&o, cpu_features(), &rc);
    if (!k)
        return -1;
    flops_thread_t t = {.k = k, .cpu = -1, .seconds = seconds, .warmup = warmup};
    flops_thread(&t);
    return t.bad || t.elapsed <= 0 ? -1 : (double)t.ops / t.elapsed / 1e9;
}

static void list_kernels(unsigned feat)
{
    printf("%-6s %-14s %-5s %-6s %s\n", "type", "--isa", "runs", "lanes", "kernel");
    const cbt_fkern_t *k;
    const char *level;
    for (int ty = 0; ty < CBT_FTYPE_COUNT; ty++)
        for (size_t n = 0; (k = kernel_at(n, &level)); n++)
            if (k->type == (cbt_ftype_t)ty)
                printf("%-6s %-14s %-5s %-6d %s\n", type_names[ty], k->name, kernel_ok(k, feat) ? "yes" : "no",
                       k->peak_lanes, k->desc);
}

static int parse_args(int argc, char **argv, flops_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        long long ll;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "-f") || !strcmp(a, "--flops")) {
            continue; /* ascend-dmi spelling repeated */
        } else if (!strcmp(a, "-t") || !strcmp(a, "--type")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)))
                return -1;
            int found = -1;
            for (int t = 0; t < CBT_FTYPE_COUNT; t++)
                if (!strcasecmp(v, type_names[t]))
                    found = t;
            if (found < 0) {
                cbt_usage_error(TOOL, "invalid -t '%s' (allowed: fp64, fp32, fp16, bf16, int8)", v);
                return -1;
            }
            o->type = (cbt_ftype_t)found;
        } else if (!strcmp(a, "-c") || !strcmp(a, "--cores")) {
            int cpus[CBT_MAX_CPUS];
            int n = cbt_cpu_list(cpus, CBT_MAX_CPUS, NULL);
            if (!(v = cbt_optval(TOOL, argc, argv, &i)) || cbt_parse_ll(TOOL, a, v, 1, n, &ll))
                return -1;
            o->threads = (int)ll;
        } else if (!strcmp(a, "-et") || !strcmp(a, "--et") || !strcmp(a, "--execute-time")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i))
                || cbt_parse_double(TOOL, a, v, 0.01, 3600, "seconds", &o->seconds))
                return -1;
        } else if (!strcmp(a, "--isa")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)))
                return -1;
            o->isa = v;
        } else if (!strcmp(a, "--fma-units")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)) || cbt_parse_ll(TOOL, a, v, 1, 4, &ll))
                return -1;
            o->fma_units = (int)ll;
        } else if (!strcmp(a, "--ghz")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)) || cbt_parse_double(TOOL, a, v, 0.1, 10, "GHz", &o->ghz))
                return -1;
        } else if (!strcmp(a, "-fmt") || !strcmp(a, "--fmt") || !strcmp(a, "--format")) {
            if (!(v = cbt_optval(TOOL, argc, argv, &i)))
                return -1;
            if (!strcmp(v, "json"))
                o->json = 1;
            else if (!strcmp(v, "normal") || !strcmp(v, "table"))
                o->json = 0;
            else {
                cbt_usage_error(TOOL, "invalid %s '%s' (allowed: normal, json)", a, v);
                return -1;
            }
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "--list")) {
            o->list = 1;
        } else {
            cbt_usage_error(TOOL, "unknown option '%s' (see collbench flops --help)", a);
            return -1;
        }
    }
    return 0;
}

static void upper(char *dst, const char *s)
{
    while ((*dst++ = (char)((*s >= 'a' && *s <= 'z') ? *s - 32 : *s)))
        s++;
}

/* A measurement: the threads' results and what the report derives from them. */
typedef struct {
    const cbt_fkern_t *k;
    const int *cpus;
    int nt, used_cores; /* threads, physical cores they ran on */
    flops_thread_t *th;
    double warm, maxel; /* warm-up and longest thread's seconds */
    uint64_t bad, ops;
    int tops; /* int8: TOPS, else GFLOPS */
    double scale, total;
    const char *unit, *clk_src;
    double ghz, peak;   /* nominal clock and peak; peak 0: not computed */
    double mghz, mpeak; /* measured clock (mean over threads) and peak; 0: unknown */
    char model[256], tname[8];
} flops_run_t;

/* Physical cores among the first nt CPUs (for the peak formula). */
static int count_cores(const int *cpus, int nt)
{
    int used_cores = 0;
    for (int i = 0; i < nt; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= cbt_cpu_core_key(cpus[j]) == cbt_cpu_core_key(cpus[i]);
        used_cores += !dup;
    }
    return used_cores;
}

/* One kernel thread per CPU, started together (barrier), joined; totals in r. */
static int run_threads(const flops_opts_t *o, flops_run_t *r, pthread_t *tid)
{
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)r->nt);
    r->warm = o->seconds * 0.1;
    r->warm = r->warm < 0.01 ? 0.01 : r->warm > 0.2 ? 0.2 : r->warm;
    for (int i = 0; i < r->nt; i++) {
        r->th[i]
            = (flops_thread_t){.k = r->k, .cpu = r->cpus[i], .seconds = o->seconds, .warmup = r->warm, .bar = &bar};
        if (pthread_create(&tid[i], NULL, flops_thread, &r->th[i]) != 0)
            return cbt_error(TOOL, CBT_EXIT_FAIL, "cannot start thread %d of %d", i, r->nt);
    }
    for (int i = 0; i < r->nt; i++) {
        pthread_join(tid[i], NULL);
        r->bad += r->th[i].bad;
        r->ops += r->th[i].ops;
        if (r->th[i].elapsed > r->maxel)
            r->maxel = r->th[i].elapsed;
    }
    pthread_barrier_destroy(&bar);
    return 0;
}

/* Total, theoretical peak (cores x GHz x FMA units x lanes x 2), CPU model. */
static void derive(const flops_opts_t *o, flops_run_t *r)
{
    r->tops = o->type == CBT_INT8;
    r->scale = r->tops ? 1e12 : 1e9;
    r->unit = r->tops ? "TOPS" : "GFLOPS";
    r->total = (double)r->ops / r->maxel / r->scale;
    r->clk_src = "--ghz";
    r->ghz = o->ghz;
    if (r->ghz == 0)
        r->ghz = cbt_cpu_mhz(&r->clk_src) / 1000.0;
    r->peak = 0;
    double per_ghz = r->used_cores * 1e9 * o->fma_units * r->k->peak_lanes * 2 / r->scale;
    if (r->k->peak_lanes > 0 && r->ghz > 0)
        r->peak = r->ghz * per_ghz;
    r->mghz = 0;
    for (int i = 0; i < r->nt; i++) {
        if (r->th[i].ghz <= 0) { /* one thread without a clock: none */
            r->mghz = 0;
            break;
        }
        r->mghz += r->th[i].ghz / r->nt;
    }
    r->mpeak = r->k->peak_lanes > 0 ? r->mghz * per_ghz : 0;
    cbt_cpu_model(r->model, sizeof r->model);
    upper(r->tname, type_names[o->type]);
}

/* The throughput as a fraction of the peak at the measured clock (else the
 * nominal one); -1 when there is none, or when it is over 1: then the peak
 * formula does not describe this CPU (FMA units, lanes), and a figure over
 * 100 % is never reported as an efficiency. */
static double efficiency(const flops_run_t *r)
{
    double peak = r->mpeak > 0 ? r->mpeak : r->peak;
    if (peak <= 0 || r->total > peak)
        return -1;
    return r->total / peak;
}

static void print_json(const flops_opts_t *o, const flops_run_t *r)
{
    const flops_thread_t *th = r->th;
    printf("{\"schema\": \"collbench-flops/1\", \"type\": \"%s\", \"isa\": ", type_names[o->type]);
    cbt_json_str(stdout, r->k->name);
    printf(", \"kernel\": ");
    cbt_json_str(stdout, r->k->desc);
    printf(", \"cpu_model\": ");
    cbt_json_str(stdout, r->model);
    printf(", \"threads\": %d, \"cores\": %d, \"ops_per_step\": %.0f, \"seconds\": %.6f, \"unit\": \"%s\",\n", r->nt,
           r->used_cores, r->k->ops_per_step, o->seconds, r->unit);
    printf(" \"per_core\": [");
    for (int i = 0; i < r->nt; i++)
        printf(
            "%s\n  {\"cpu\": %d, \"pinned\": %s, \"steps\": %llu, \"ops\": %llu, \"seconds\": %.6f, \"value\": %.6f, \"validated\": %s}",
            i ? "," : "", th[i].cpu, th[i].pinned ? "true" : "false", (unsigned long long)th[i].steps,
            (unsigned long long)th[i].ops, th[i].elapsed, (double)th[i].ops / th[i].elapsed / r->scale,
            th[i].bad ? "false" : "true");
    printf("],\n \"total\": %.6f, \"validated\": %s, \"bad_lanes\": %llu,\n \"peak\": ", r->total,
           r->bad ? "false" : "true", (unsigned long long)r->bad);
    if (r->peak > 0 || r->mpeak > 0) {
        printf(
            "{\"formula\": \"cores x GHz x FMA units x lanes x 2\", \"cores\": %d, \"fma_units\": %d, \"lanes\": %d,\n"
            "  \"ghz\": %.4f, \"clock_source\": \"%s\", \"value\": %.6f,\n"
            "  \"measured_ghz\": %.4f, \"measured_clock\": \"dependent add chain per thread, before and after the run\", "
            "\"measured_value\": %.6f,\n  \"fraction\": ",
            r->used_cores, o->fma_units, r->k->peak_lanes, r->ghz, r->clk_src, r->peak, r->mghz, r->mpeak);
        double f = efficiency(r);
        if (f >= 0)
            printf("%.6f, \"fraction_of\": \"%s\"}}\n", f, r->mpeak > 0 ? "measured" : "nominal");
        else
            printf("null, \"fraction_of\": null}}\n");
    } else {
        printf("null}\n");
    }
}

/* Without -q: the CPUs, the kernel and the duration above the table. */
static void print_intro(const flops_opts_t *o, const flops_run_t *r)
{
    char cl[256] = "";
    for (int i = 0; i < r->nt && strlen(cl) < 200; i++)
        snprintf(cl + strlen(cl), sizeof cl - strlen(cl), "%s%d", i ? "," : "", r->cpus[i]);
    printf("CPU      : %s, %d thread%s on cpu %s (%d physical core%s)\n", r->model, r->nt, r->nt > 1 ? "s" : "", cl,
           r->used_cores, r->used_cores > 1 ? "s" : "");
    printf("Kernel   : %s - %s (%.0f ops per step; FMA = 2 ops)\n", r->k->name, r->k->desc, r->k->ops_per_step);
    printf("Duration : %.2f s per thread after %.2f s warm-up; every call validated against its closed form\n",
           o->seconds, r->warm);
}

/* Without -q: the theoretical peak and the efficiency below the table. */
static void print_peak(const flops_opts_t *o, const flops_run_t *r)
{
    if (r->peak > 0 || r->mpeak > 0) {
        if (r->peak > 0)
            printf(
                "Theoretical peak (nominal clock, %s) = cores x GHz x FMA units x lanes x 2 = %d x %.3f x %d x %d x 2 "
                "= %.*f %s\n",
                r->clk_src, r->used_cores, r->ghz, o->fma_units, r->k->peak_lanes, r->tops ? 4 : 2, r->peak, r->unit);
        if (r->mpeak > 0)
            printf("Peak at the measured clock (dependent add chain per thread) = %d x %.3f x %d x %d x 2 = %.*f %s\n",
                   r->used_cores, r->mghz, o->fma_units, r->k->peak_lanes, r->tops ? 4 : 2, r->mpeak, r->unit);
        printf("  (%d FMA units per core assumed, --fma-units N to change)\n", o->fma_units);
        double f = efficiency(r);
        if (f >= 0)
            printf("Efficiency: %.1f %% of the peak at the %s clock\n", 100.0 * f,
                   r->mpeak > 0 ? "measured" : "nominal");
        else
            printf("Efficiency: not reported: the throughput exceeds the peak formula at the %s clock, so its FMA "
                   "units or lanes do not describe this CPU (--fma-units N)\n",
                   r->mpeak > 0 ? "measured" : "nominal");
    } else if (r->k->peak_lanes == 0) {
        printf("Theoretical peak: not computed for the portable kernel\n");
    } else {
        printf("Theoretical peak: clock unknown (give --ghz)\n");
    }
}

static void print_table(const flops_opts_t *o, const flops_run_t *r)
{
    const flops_thread_t *th = r->th;
    int tops = r->tops;
    if (!o->quiet)
        print_intro(o, r);
    printf("Peak %s Throughput Test\n", r->tname);
    const char *line = "----------------------------------------------------------------------------";
    char col[32];
    snprintf(col, sizeof col, "%s@%s", r->unit, r->tname);
    printf("%s\n%6s  %16s  %14s  %14s  %9s\n%s\n", line, "CPU", "Execute Times", "Duration(ms)", col, "Validated",
           line);
    for (int i = 0; i < r->nt; i++)
        printf("%6d  %16llu  %14.2f  %14.*f  %9s\n", th[i].cpu, (unsigned long long)th[i].steps, th[i].elapsed * 1e3,
               tops ? 4 : 2, (double)th[i].ops / th[i].elapsed / r->scale, th[i].bad ? "NO" : "yes");
    printf("%6s  %16s  %14.2f  %14.*f  %9s\n%s\n", "Total", "", r->maxel * 1e3, tops ? 4 : 2, r->total,
           r->bad ? "NO" : "yes", line);
    if (!o->quiet)
        print_peak(o, r);
}

int cbt_flops_main(int argc, char **argv)
{
    flops_opts_t o = {.type = CBT_FP32, .seconds = 1.0, .fma_units = 2};
    if (parse_args(argc, argv, &o))
        return CBT_EXIT_USAGE;
    unsigned feat = cpu_features();
    if (o.list) {
        list_kernels(feat);
        return 0;
    }
    int rc;
    flops_run_t r = {.k = pick_kernel(&o, feat, &rc)};
    if (!r.k)
        return rc;

    int cpus[CBT_MAX_CPUS], ncores;
    int ncpu = cbt_cpu_list(cpus, CBT_MAX_CPUS, &ncores);
    r.cpus = cpus;
    r.nt = o.threads ? o.threads : ncores;
    if (r.nt > ncpu)
        r.nt = ncpu;
    r.used_cores = count_cores(cpus, r.nt);
    r.th = calloc((size_t)r.nt, sizeof *r.th);
    pthread_t *tid = calloc((size_t)r.nt, sizeof *tid);
    if (!r.th || !tid)
        return cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
    if ((rc = run_threads(&o, &r, tid)) != 0)
        return rc;
    derive(&o, &r);
    if (o.json)
        print_json(&o, &r);
    else
        print_table(&o, &r);
    free(r.th);
    free(tid);
    if (r.bad)
        return cbt_error(TOOL, CBT_EXIT_FAIL, "validation FAILED: %llu lanes differ from the closed-form result",
                         (unsigned long long)r.bad);
    return 0;
}
