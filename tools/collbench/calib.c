/*
 * calib.c - the calibration file of `collbench sim` (calib.h,
 * docs/sim-calibration.md): its keys, the reader (line-numbered errors) and
 * the writer that measuring runs use to set the keys they measured.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib.h"
#include "cb.h"
#include "../common/safe_file.h"

static const struct {
    const char *key;
    size_t off;
    double lo, hi;
    const char *unit;
} keys[] = {
    {"net_gbps", offsetof(coll_sim_params_t, net_gbps), 1e-3, 1e6, "Gbit/s"},
    {"net_us", offsetof(coll_sim_params_t, net_us), 0, 1e6, "us"},
    {"net_overhead_us", offsetof(coll_sim_params_t, net_ovh_us), 0, 1e6, "us"},
    {"shm_gbps", offsetof(coll_sim_params_t, shm_gbps), 1e-3, 1e6, "Gbit/s"},
    {"shm_us", offsetof(coll_sim_params_t, shm_us), 0, 1e6, "us"},
    {"shm_overhead_us", offsetof(coll_sim_params_t, shm_ovh_us), 0, 1e6, "us"},
    {"reduce_gbps", offsetof(coll_sim_params_t, reduce_gbps), 1e-3, 1e6, "Gbit/s"},
    {"cores_per_host", offsetof(coll_sim_params_t, cores_per_host), 0, 1e6, "cores (0: one per rank)"},
    {"net_step_us", offsetof(coll_sim_params_t, net_step_us), 0, 1e7, "us"},
    {"net_step_bytes", offsetof(coll_sim_params_t, net_step_bytes), 1, 1e12, "bytes"},
    {"net_cpu_gbps", offsetof(coll_sim_params_t, net_cpu_gbps), 0, 1e6, "Gbit/s per core (0: no limit)"},
    {"copy_core_gbps", offsetof(coll_sim_params_t, copy_core_gbps), 0, 1e6, "Gbit/s per core (0: no limit)"},
    {"probe_us", offsetof(coll_sim_params_t, probe_us), 0, 1e6, "us (0: net_us)"},
    {"probe_gbps", offsetof(coll_sim_params_t, probe_gbps), 0, 1e6, "Gbit/s (0: net_gbps)"},
    {"net_burst_bytes", offsetof(coll_sim_params_t, net_burst_bytes), 0, 1e12, "bytes (0: no bucket)"},
    {"cache_bytes", offsetof(coll_sim_params_t, cache_bytes), 0, 1e15, "bytes (0: no cache model)"},
};
#define NKEYS (int)(sizeof keys / sizeof keys[0])
#define LINE_MAX_LEN 512

unsigned cbt_calib_bit(const char *key)
{
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].key, key))
            return 1u << i;
    return 0;
}

static int key_index(const char *k)
{
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].key, k))
            return i;
    return -1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* Splits "key = value" (comment and blanks stripped) in place; 0 for a blank
 * or comment line, 1 with *k, *v set, -1 when there is no '='. */
static int split_line(char *line, char **k, char **v)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *t = trim(line);
    if (!*t)
        return 0;
    char *eq = strchr(t, '=');
    if (!eq)
        return -1;
    *eq = '\0';
    *k = trim(t);
    *v = trim(eq + 1);
    return 1;
}

static void allowed_keys(char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < NKEYS && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? " " : "", keys[i].key);
}

int cbt_calib_read(const char *tool, const char *path, coll_sim_params_t *p, unsigned keep)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cbt_usage_error(tool, "cannot read --calibration '%s': %s", path, strerror(errno)), -1;
    char line[LINE_MAX_LEN + 2], names[256];
    unsigned seen = 0;
    int ln = 0, rc = 0;
    allowed_keys(names, sizeof names);
    while (fgets(line, sizeof line, f)) {
        ln++;
        size_t len = strlen(line);
        if (len > LINE_MAX_LEN && line[len - 1] != '\n') {
            rc = cbt_usage_error(tool, "%s:%d: line longer than %d characters (allowed: key = value)", path, ln,
                                 LINE_MAX_LEN);
            break;
        }
        char *k, *v;
        int s = split_line(line, &k, &v);
        if (s == 0)
            continue;
        if (s < 0) {
            rc = cbt_usage_error(tool, "%s:%d: invalid line '%s' (allowed: key = value, # comments)", path, ln,
                                 trim(line));
            break;
        }
        int i = key_index(k);
        if (i < 0) {
            rc = cbt_usage_error(tool, "%s:%d: unknown key '%s' (allowed: %s)", path, ln, k, names);
            break;
        }
        if (seen & (1u << i)) {
            rc = cbt_usage_error(tool, "%s:%d: %s given twice (allowed: once)", path, ln, k);
            break;
        }
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (!*v || *end || errno || !isfinite(d) || d < keys[i].lo || d > keys[i].hi) {
            rc = cbt_usage_error(tool, "%s:%d: invalid %s '%s' (allowed: %g..%g %s)", path, ln, k, v, keys[i].lo,
                                 keys[i].hi, keys[i].unit);
            break;
        }
        seen |= 1u << i;
        if (!(keep & (1u << i)))
            *(double *)((char *)p + keys[i].off) = d;
    }
    if (!rc && ferror(f))
        rc = cbt_usage_error(tool, "cannot read --calibration '%s': %s", path, strerror(errno));
    if (!rc && !seen)
        rc = cbt_usage_error(tool, "%s: no parameters in the file (allowed keys: %s)", path, names);
    fclose(f);
    return rc ? -1 : 0;
}

int cbt_calib_get(const char *path, const char *key, double *out)
{
    FILE *f = fopen(path, "r");
    char line[LINE_MAX_LEN + 2];
    int rc = -1;
    if (!f)
        return -1;
    while (rc && fgets(line, sizeof line, f)) {
        char *k, *v, *end;
        if (split_line(line, &k, &v) == 1 && !strcmp(k, key)) {
            *out = strtod(v, &end);
            rc = *v && !*end && *out > 0 ? 0 : -1;
            break;
        }
    }
    fclose(f);
    return rc;
}

int cbt_calib_write(const char *tool, const char *path, const char *by, const cbt_calib_kv_t *kv, int n)
{
    char line[LINE_MAX_LEN + 2], copy[LINE_MAX_LEN + 2];
    cb_safe_file_t sf;
    if (strlen(path) > 4000)
        return cbt_usage_error(tool, "invalid --calibration-out '%s' (allowed: a path under 4000 characters)", path);
    for (int i = 0; i < n; i++)
        if (key_index(kv[i].key) < 0)
            return cbt_error(tool, CBT_EXIT_FAIL, "calibration: no key '%s'", kv[i].key);
    FILE *old = fopen(path, "r");
    if (!old && errno != ENOENT)
        return cbt_error(tool, CBT_EXIT_FAIL, "cannot read --calibration-out '%s': %s", path, strerror(errno));
    if (cb_safe_open(&sf, path, CB_RESULT_MODE) != 0) {
        int e = errno;
        if (old)
            fclose(old);
        return cbt_error(tool, CBT_EXIT_FAIL, "cannot write --calibration-out '%s': %s", path, strerror(e));
    }
    FILE *f = sf.f;
    int *done = calloc((size_t)n + 1, sizeof(int));
    if (!done) {
        cb_safe_abort(&sf);
        if (old)
            fclose(old);
        return cbt_error(tool, CBT_EXIT_FAIL, "out of memory");
    }
    time_t now = time(NULL);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    if (!old)
        fprintf(f, "# collbench sim calibration (docs/sim-calibration.md): key = value, units as the sim's flags\n");
    /* keep the old lines, replacing those of the keys measured now */
    while (old && fgets(line, sizeof line, old)) {
        memcpy(copy, line, sizeof line);
        char *k, *v;
        int j = -1;
        if (split_line(copy, &k, &v) == 1)
            for (int i = 0; i < n; i++)
                if (!strcmp(k, kv[i].key))
                    j = i;
        if (j >= 0 && !done[j]) {
            fprintf(f, "%s = %.10g\n", kv[j].key, kv[j].value);
            done[j] = 1;
        } else if (j < 0) {
            fputs(line, f);
            if (!strchr(line, '\n'))
                fputc('\n', f);
        }
    }
    fprintf(f, "# %s: %s\n", when, by);
    for (int i = 0; i < n; i++)
        if (!done[i])
            fprintf(f, "%s = %.10g\n", kv[i].key, kv[i].value);
    free(done);
    int bad = old && ferror(old);
    if (old)
        fclose(old);
    if (bad) {
        cb_safe_abort(&sf);
        return cbt_error(tool, CBT_EXIT_FAIL, "cannot read --calibration-out '%s'", path);
    }
    if (cb_safe_commit(&sf) != 0)
        return cbt_error(tool, CBT_EXIT_FAIL, "cannot write --calibration-out '%s': %s (left as it was)", path,
                         strerror(errno));
    fprintf(stderr, "collbench %s: calibration written to %s\n", tool, path);
    return 0;
}

/* One pass: a[i] += b[i] (what the executor's sink does for fp32 sum). */
static void __attribute__((noinline)) sum_f32(float *restrict a, const float *restrict b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] += b[i];
}

double cbt_calib_reduce_gbps(size_t bytes, double seconds)
{
    size_t n = bytes / sizeof(float);
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    if (!a || !b || !n) {
        free(a);
        free(b);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = 0, b[i] = (float)(i & 7);
    sum_f32(a, b, n); /* touch */
    double t0 = cbt_now(), t;
    unsigned long long passes = 0;
    do {
        sum_f32(a, b, n);
        passes++;
        t = cbt_now() - t0;
    } while (t < seconds);
    volatile float sink = a[n / 2];
    (void)sink;
    free(a);
    free(b);
    return (double)passes * (double)(n * sizeof(float)) * 8 / t / 1e9;
}
