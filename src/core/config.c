/*
 * config.c - the configuration table's values. The only getenv() in collbench.
 * Each value is checked when read (its type, and for some knobs what it
 * names: algorithms, log levels, address families, ports), so that a tool can
 * refuse a bad one before any rank starts (coll_cfg_check). HCCL_* names are
 * translated (config_hccl.c) onto the COLL_ knobs the environment leaves unset.
 */
#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config_hccl.h"
#include "core/log.h"

extern char **environ;

static const coll_cfg_entry_t cfg_table[COLL_CFG_COUNT] = {
#define COLL_CFG_ROW(id, env, type, def, unit, doc) {env, CFG_T_##type, def, unit, doc},
    COLL_CONFIG_TABLE(COLL_CFG_ROW)
#undef COLL_CFG_ROW
};

enum { SRC_DEFAULT, SRC_ENV, SRC_HCCL, SRC_SET };

typedef struct {
    char *str;          /* current textual value (env, HCCL_*, override or default) */
    int set;            /* from the environment (its own name or an HCCL_* one) or coll_cfg_set */
    int src;            /* SRC_*: where the value came from */
    coll_cfg_id_t from; /* SRC_HCCL: the HCCL_* entry */
    int bad;            /* did not parse or names nothing valid: default used */
    char *err;          /* bad: "invalid NAME='value': expected ..." */
    long long i;
    double d;
    size_t sz;
} cfg_val_t;

static cfg_val_t cfg_vals[COLL_CFG_COUNT];
static int cfg_loaded;
static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static char cfg_err[1024];
static char cfg_notes[4096];   /* WARN lines for coll_cfg_report */
static char cfg_info[2048];    /* INFO lines for coll_cfg_report */
static char cfg_unknown[1024]; /* HCCL_* names not in the table, one per line */
/* COLL_ALGO resolved (coll_cfg_algo): the registry's index per collective, -1
 * automatic; cfg_algo_new holds the value being checked until it is stored */
static int cfg_algo[COLL_KIND_COUNT]; /* set by every load (cfg_store) */
static int cfg_algo_new[COLL_KIND_COUNT];

const coll_cfg_entry_t *coll_cfg_entry(coll_cfg_id_t id)
{
    return (unsigned)id < COLL_CFG_COUNT ? &cfg_table[id] : NULL;
}

int coll_parse_size(const char *s, unsigned long long *out)
{
    if (!s || !*s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    case 't':
    case 'T':
        shift = 40;
        end++;
        break;
    default: break;
    }
    if (shift && (*end == 'b' || *end == 'B'))
        end++;
    if (*end != '\0')
        return -1;
    if (shift && v > (~0ULL >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

static int parse_bool(const char *s, long long *out)
{
    if (!strcmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on")) {
        *out = 1;
        return 0;
    }
    if (!strcmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off") || !*s) {
        *out = 0;
        return 0;
    }
    return -1;
}

/* Parse text into v according to type; -1 if it does not parse. */
static int cfg_parse(coll_cfg_type_t type, const char *s, cfg_val_t *v)
{
    char *end;
    switch (type) {
    case CFG_T_STR: return 0;
    case CFG_T_BOOL: return parse_bool(s, &v->i);
    case CFG_T_INT:
        errno = 0;
        v->i = strtoll(s, &end, 10);
        return (errno || end == s || *end) ? -1 : 0;
    case CFG_T_DOUBLE:
        errno = 0;
        v->d = strtod(s, &end);
        return (errno || end == s || *end || v->d < 0) ? -1 : 0;
    case CFG_T_SIZE: {
        unsigned long long u;
        if (coll_parse_size(s, &u))
            return -1;
        v->sz = (size_t)u;
        return 0;
    }
    }
    return -1;
}

static const char *type_allowed(coll_cfg_type_t t)
{
    switch (t) {
    case CFG_T_BOOL: return "0/1, true/false, yes/no, on/off";
    case CFG_T_INT: return "an integer";
    case CFG_T_DOUBLE: return "a non-negative number";
    case CFG_T_SIZE: return "a size like 512, 64K, 8M, 1G";
    default: return "a string";
    }
}

static int one_of(const char *s, const char *const *names)
{
    for (; *names; names++)
        if (!strcasecmp(s, *names))
            return 1;
    return 0;
}

/* What a knob's value names, beyond its type: 0, or -1 with err. */
static int cfg_validate(coll_cfg_id_t id, const char *name, const char *s, char *err, size_t errlen)
{
    static const char *const levels[] = {"NONE", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "VERSION", NULL};
    static const char *const subs[] = {"INIT", "BOOTSTRAP", "SHM", "TCP", "NET", "COLL", "TUNING", "ENV", "ALL", NULL};
    static const char *const fams[] = {"AF_INET", "inet", "ipv4", "4", "AF_INET6", "inet6", "ipv6", "6", NULL};
    char msg[768];
    switch (id) {
    case COLL_CFG_ALGO: /* resolved here, once: cfg_store keeps cfg_algo_new */
        for (int k = 0; k < COLL_KIND_COUNT; k++)
            cfg_algo_new[k] = -1;
        if (coll_cfg_algo_names()->resolve && coll_cfg_algo_names()->resolve(s, cfg_algo_new, msg, sizeof msg) != 0) {
            snprintf(err, errlen, "invalid %s='%s': %s", name, s, msg);
            return -1;
        }
        return 0;
    case COLL_CFG_DEBUG:
        if (!one_of(s, levels)) {
            snprintf(err, errlen, "invalid %s='%s': expected NONE, ERROR, WARN, INFO, DEBUG or TRACE", name, s);
            return -1;
        }
        return 0;
    case COLL_CFG_DEBUG_SUBSYS: {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", s);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if (!one_of(t + (*t == '^'), subs)) {
                snprintf(err, errlen,
                         "invalid %s='%s': unknown subsystem '%s'; allowed: ALL INIT BOOTSTRAP SHM TCP "
                         "NET COLL TUNING ENV (^X excludes)",
                         name, s, t);
                return -1;
            }
        return 0;
    }
    case COLL_CFG_SOCKET_FAMILY:
        if (*s && !one_of(s, fams)) {
            snprintf(err, errlen, "invalid %s='%s': expected AF_INET or AF_INET6", name, s);
            return -1;
        }
        return 0;
    case COLL_CFG_BUF_HUGE:
        if (strcmp(s, "auto") && strcmp(s, "0") && strcmp(s, "1")) {
            snprintf(err, errlen, "invalid %s='%s': expected auto, 0 or 1", name, s);
            return -1;
        }
        return 0;
    case COLL_CFG_A2A_WINDOW: {
        long long w = strtoll(s, NULL, 10);
        if (w < 1 || w > COLL_A2A_WINDOW_MAX) {
            snprintf(err, errlen, "invalid %s='%s': expected 1..%d steps in flight", name, s, COLL_A2A_WINDOW_MAX);
            return -1;
        }
        return 0;
    }
    case COLL_CFG_IF_BASE_PORT: {
        char *end;
        long long p = strtoll(s, &end, 10);
        if (p < 0 || p > 65535) {
            snprintf(err, errlen, "invalid %s='%s': expected a port, 0..65535 (0 = any free port)", name, s);
            return -1;
        }
        return 0;
    }
    default: return 0;
    }
}

/* Type and meaning of text as a value of knob id (messages name `name`). */
static int cfg_check_text(coll_cfg_id_t id, const char *name, const char *text, char *err, size_t errlen)
{
    cfg_val_t tmp;
    memset(&tmp, 0, sizeof tmp);
    if (cfg_parse(cfg_table[id].type, text, &tmp)) {
        snprintf(err, errlen, "invalid %s='%s': expected %s", name, text, type_allowed(cfg_table[id].type));
        return -1;
    }
    return cfg_validate(id, name, text, err, errlen);
}

/* COLL_ALGO's resolved form back to automatic (its default, ""). */
static void cfg_algo_clear(void)
{
    for (int k = 0; k < COLL_KIND_COUNT; k++)
        cfg_algo[k] = -1;
}

/* text as knob id's value from src, checked (cfg_check_text) or bad (err). */
static void cfg_store(coll_cfg_id_t id, const char *text, int src, const char *err)
{
    cfg_val_t *v = &cfg_vals[id];
    free(v->str);
    free(v->err);
    v->str = strdup(text ? text : "");
    v->err = err ? strdup(err) : NULL;
    v->set = src != SRC_DEFAULT;
    v->src = src;
    v->bad = err != NULL;
    if (err) {
        if (!cfg_err[0])
            snprintf(cfg_err, sizeof cfg_err, "%s", err);
        cfg_parse(cfg_table[id].type, cfg_table[id].def, v);
    } else {
        cfg_parse(cfg_table[id].type, v->str, v);
    }
    if (id == COLL_CFG_ALGO && err)
        cfg_algo_clear();
    else if (id == COLL_CFG_ALGO)
        memcpy(cfg_algo, cfg_algo_new, sizeof cfg_algo);
}

static void cfg_assign(coll_cfg_id_t id, const char *text, int src)
{
    char err[1024];
    text = text ? text : "";
    cfg_store(id, text, src, cfg_check_text(id, cfg_table[id].env, text, err, sizeof err) ? err : NULL);
}

static void cfg_mark_bad(coll_cfg_id_t id, const char *err)
{
    if (id == COLL_CFG_ALGO)
        cfg_algo_clear(); /* the default used, as for a value that does not parse */
    cfg_vals[id].bad = 1;
    free(cfg_vals[id].err);
    cfg_vals[id].err = strdup(err);
    if (!cfg_err[0])
        snprintf(cfg_err, sizeof cfg_err, "%s", err);
}

/* HCCL_* values onto the COLL_ knobs the environment leaves unset. */
static void cfg_apply_hccl(void)
{
    for (int id = 0; id < COLL_CFG_COUNT; id++) {
        if (!coll_hccl_is((coll_cfg_id_t)id) || !cfg_vals[id].set)
            continue;
        char out[1024], notes[1536] = "", info[512] = "", err[1024];
        const char *env = cfg_table[id].env;
        if (coll_hccl_translate((coll_cfg_id_t)id, cfg_vals[id].str, out, sizeof out, notes, sizeof notes, info,
                                sizeof info, err, sizeof err)) {
            cfg_mark_bad((coll_cfg_id_t)id, err);
            continue;
        }
        coll_cfg_id_t t = coll_hccl_target((coll_cfg_id_t)id);
        if (t != COLL_CFG_COUNT && out[0] && cfg_check_text(t, env, out, err, sizeof err)) {
            cfg_mark_bad((coll_cfg_id_t)id, err);
            continue;
        }
        if (t != COLL_CFG_COUNT && cfg_vals[t].src == SRC_ENV) {
            size_t o = strlen(cfg_info);
            snprintf(cfg_info + o, sizeof cfg_info - o, "%s='%s' not used: %s='%s' is set and wins\n", env,
                     cfg_vals[id].str, cfg_table[t].env, cfg_vals[t].str);
            continue;
        }
        size_t o = strlen(cfg_notes);
        snprintf(cfg_notes + o, sizeof cfg_notes - o, "%s", notes);
        o = strlen(cfg_info);
        snprintf(cfg_info + o, sizeof cfg_info - o, "%s", info);
        if (t == COLL_CFG_COUNT)
            continue;
        if (!out[0]) {
            o = strlen(cfg_info);
            snprintf(cfg_info + o, sizeof cfg_info - o, "%s='%s': %s stays automatic\n", env, cfg_vals[id].str,
                     cfg_table[t].env);
            continue;
        }
        cfg_store(t, out, SRC_HCCL, NULL); /* checked above */
        cfg_vals[t].from = (coll_cfg_id_t)id;
    }
    /* HCCL_* names we do not know */
    cfg_unknown[0] = '\0';
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "HCCL_", 5))
            continue;
        size_t n = strcspn(*e, "=");
        int known = 0;
        for (int id = 0; id < COLL_CFG_COUNT && !known; id++)
            known = strlen(cfg_table[id].env) == n && !strncmp(cfg_table[id].env, *e, n);
        size_t o = strlen(cfg_unknown);
        if (!known && o + n + 2 < sizeof cfg_unknown)
            snprintf(cfg_unknown + o, sizeof cfg_unknown - o, "%.*s\n", (int)n, *e);
    }
}

/* Does the resolved COLL_ALGO force a reducing algorithm COLL_DETERMINISTIC=1
 * excludes? 0, else -1 with why. */
static int cfg_algo_determ(const int *forced, char *msg, size_t len)
{
    const coll_cfg_algo_names_t *n = coll_cfg_algo_names();
    return n->check_determ ? n->check_determ(forced, msg, len) : 0;
}

static void cfg_load_locked(void)
{
    cfg_err[0] = cfg_notes[0] = cfg_info[0] = '\0';
    for (int id = 0; id < COLL_CFG_COUNT; id++) {
        const char *e = getenv(cfg_table[id].env);
        if (e)
            cfg_assign((coll_cfg_id_t)id, e, SRC_ENV);
        else
            cfg_assign((coll_cfg_id_t)id, cfg_table[id].def, SRC_DEFAULT);
    }
    cfg_apply_hccl();
    /* COLL_DETERMINISTIC=1 (or HCCL_DETERMINISTIC=true): a forced reducing
     * algorithm must honour it (checked once both are known) */
    char msg[768], err[1024];
    if (cfg_vals[COLL_CFG_DETERMINISTIC].i && !cfg_vals[COLL_CFG_ALGO].bad
        && cfg_algo_determ(cfg_algo, msg, sizeof msg)) {
        snprintf(err, sizeof err, "invalid COLL_ALGO='%s': %s", cfg_vals[COLL_CFG_ALGO].str, msg);
        cfg_mark_bad(COLL_CFG_ALGO, err);
    }
    cfg_loaded = 1;
}

static void cfg_load(void)
{
    if (__atomic_load_n(&cfg_loaded, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&cfg_lock);
    if (!cfg_loaded)
        cfg_load_locked();
    pthread_mutex_unlock(&cfg_lock);
}

void coll_cfg_reload(void)
{
    pthread_mutex_lock(&cfg_lock);
    cfg_load_locked();
    pthread_mutex_unlock(&cfg_lock);
}

void coll_cfg_set(coll_cfg_id_t id, const char *value)
{
    if ((unsigned)id >= COLL_CFG_COUNT)
        return;
    cfg_load();
    pthread_mutex_lock(&cfg_lock);
    cfg_assign(id, value ? value : cfg_table[id].def, value ? SRC_SET : SRC_DEFAULT);
    pthread_mutex_unlock(&cfg_lock);
}

int coll_cfg_try_set(coll_cfg_id_t id, const char *value, char *why, size_t len)
{
    if ((unsigned)id >= COLL_CFG_COUNT) {
        snprintf(why, len, "no such setting (%d)", (int)id);
        return -1;
    }
    cfg_load();
    const char *text = value ? value : cfg_table[id].def, *name = cfg_table[id].env;
    char err[1024], msg[768], head[512];
    int bad = 0;
    pthread_mutex_lock(&cfg_lock);
    if (cfg_check_text(id, name, text, err, sizeof err)) {
        bad = 1; /* "invalid NAME='value': why": why alone */
        size_t h = (size_t)snprintf(head, sizeof head, "invalid %s='%s': ", name, text);
        snprintf(why, len, "%s", strncmp(err, head, h) ? err : err + h);
    } else if (id == COLL_CFG_ALGO && cfg_vals[COLL_CFG_DETERMINISTIC].i
               && cfg_algo_determ(cfg_algo_new, msg, sizeof msg)) {
        bad = 1;
        snprintf(why, len, "%s", msg);
    }
    if (!bad)
        cfg_store(id, text, value ? SRC_SET : SRC_DEFAULT, NULL);
    pthread_mutex_unlock(&cfg_lock);
    return bad ? -1 : 0;
}

int coll_cfg_algo(coll_kind_t kind)
{
    cfg_load();
    return (unsigned)kind < COLL_KIND_COUNT ? cfg_algo[kind] : -1;
}

coll_status_t coll_cfg_check(void)
{
    cfg_load();
    for (int id = 0; id < COLL_CFG_COUNT; id++)
        if (cfg_vals[id].bad) {
            snprintf(cfg_err, sizeof cfg_err, "%s", cfg_vals[id].err ? cfg_vals[id].err : "invalid configuration");
            return COLL_ERR_INVALID_ARG;
        }
    return COLL_SUCCESS;
}

const char *coll_cfg_check_message(void) { return cfg_err; }

const char *coll_cfg_str(coll_cfg_id_t id)
{
    cfg_load();
    return (unsigned)id < COLL_CFG_COUNT && cfg_vals[id].str ? cfg_vals[id].str : "";
}

long long coll_cfg_int(coll_cfg_id_t id)
{
    cfg_load();
    return (unsigned)id < COLL_CFG_COUNT ? cfg_vals[id].i : 0;
}

size_t coll_cfg_size(coll_cfg_id_t id)
{
    cfg_load();
    return (unsigned)id < COLL_CFG_COUNT ? cfg_vals[id].sz : 0;
}

int coll_cfg_bool(coll_cfg_id_t id)
{
    cfg_load();
    return (unsigned)id < COLL_CFG_COUNT ? (int)cfg_vals[id].i : 0;
}

double coll_cfg_double(coll_cfg_id_t id)
{
    cfg_load();
    return (unsigned)id < COLL_CFG_COUNT ? cfg_vals[id].d : 0.0;
}

int coll_cfg_is_set(coll_cfg_id_t id)
{
    cfg_load();
    return (unsigned)id < COLL_CFG_COUNT ? cfg_vals[id].set : 0;
}

/* Values never shown: printed as "set", left out of results and logs. */
static int is_sensitive(int id) { return id == COLL_CFG_SECRET; }

static const char *shown(int id, const char *v) { return is_sensitive(id) ? "set" : v; }

static coll_status_t secret_file(const char *path, char *out, size_t len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return coll_error_errno(COLL_ERR_INVALID_ARG, COLL_SUB_ENV, "COLL_SECRET_FILE '%s' cannot be opened", path);
    struct stat sb;
    coll_status_t st = COLL_SUCCESS;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 077))
        st = coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_ENV,
                        "COLL_SECRET_FILE '%s' must be a regular file of yours that only you can read (mode "
                        "%03o: allowed 0600 or 0400)",
                        path, (unsigned)(sb.st_mode & 0777));
    ssize_t n = st == COLL_SUCCESS ? read(fd, out, len - 1) : 0;
    close(fd);
    if (st != COLL_SUCCESS)
        return st;
    if (n < 0)
        return coll_error_errno(COLL_ERR_INVALID_ARG, COLL_SUB_ENV, "COLL_SECRET_FILE '%s' cannot be read", path);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
        n--;
    out[n] = '\0';
    if (n == 0)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_ENV, "COLL_SECRET_FILE '%s' is empty: allowed a secret string",
                          path);
    return COLL_SUCCESS;
}

coll_status_t coll_cfg_secret(char *out, size_t len, int *found)
{
    *found = 0;
    out[0] = '\0';
    const char *s = coll_cfg_str(COLL_CFG_SECRET), *f = coll_cfg_str(COLL_CFG_SECRET_FILE);
    if (s[0]) {
        snprintf(out, len, "%s", s);
    } else if (f[0]) {
        COLL_CHECK(secret_file(f, out, len));
    } else {
        return COLL_SUCCESS;
    }
    *found = 1;
    return COLL_SUCCESS;
}

/* 0 = COLL_ knob, 1 = HCCL_* name, 2 = set by launchers */
static int var_class(const char *env) { return !strncmp(env, "COLL_", 5) ? 0 : !strncmp(env, "HCCL_", 5) ? 1 : 2; }

static int is_launcher_var(const char *env) { return var_class(env) != 0; }

void coll_cfg_print(FILE *out)
{
    static const char *const head[] = {"# knobs:\n", "# HCCL's names (used where the COLL_ knob is unset):\n",
                                       "# set by launchers (read, never required):\n"};
    cfg_load();
    fprintf(out, "%-22s %-12s %-10s %s\n", "# variable", "value", "default", "description");
    for (int pass = 0; pass < 3; pass++) {
        fputs(head[pass], out);
        for (int id = 0; id < COLL_CFG_COUNT; id++) {
            const coll_cfg_entry_t *e = &cfg_table[id];
            const cfg_val_t *v = &cfg_vals[id];
            if (var_class(e->env) != pass)
                continue;
            char def[64], src[1200] = "";
            snprintf(def, sizeof def, "%s%s%s", *e->def ? e->def : "\"\"", *e->unit ? " " : "", e->unit);
            if (v->bad)
                snprintf(src, sizeof src, "  [INVALID: default used]");
            else if (v->src == SRC_HCCL)
                snprintf(src, sizeof src, "  [from %s='%s']", cfg_table[v->from].env, cfg_vals[v->from].str);
            else if (v->src == SRC_SET)
                snprintf(src, sizeof src, "  [set by the tool]");
            else if (pass == 1 && v->set) {
                coll_cfg_id_t t = coll_hccl_target((coll_cfg_id_t)id);
                if (t == COLL_CFG_COUNT)
                    snprintf(src, sizeof src, "  [accepted, not honoured yet]");
                else if (cfg_vals[t].src == SRC_HCCL && cfg_vals[t].from == (coll_cfg_id_t)id)
                    snprintf(src, sizeof src, "  [used as %s='%s']", cfg_table[t].env, cfg_vals[t].str);
                else if (cfg_vals[t].set)
                    snprintf(src, sizeof src, "  [not used: %s is set]", cfg_table[t].env);
                else
                    snprintf(src, sizeof src, "  [%s stays automatic]", cfg_table[t].env);
            }
            fprintf(out, "%-22s %-12s %-10s %s%s\n", e->env, v->set ? shown(id, v->str) : "-", def, e->doc, src);
        }
    }
}

static const char *src_name(const cfg_val_t *v, char *buf, size_t len)
{
    if (v->src == SRC_HCCL)
        snprintf(buf, len, "from %s='%s'", cfg_table[v->from].env, cfg_vals[v->from].str);
    else
        snprintf(buf, len, "%s", v->src == SRC_SET ? "set by the tool" : "environment");
    return buf;
}

/* Prints each line of text at lvl. */
static void log_lines(coll_log_level_t lvl, const char *text)
{
    char line[1200];
    while (*text) {
        size_t n = strcspn(text, "\n");
        snprintf(line, sizeof line, "%.*s", (int)n, text);
        if (lvl == COLL_LOG_WARN)
            COLL_WARN(COLL_SUB_ENV, "%s", line);
        else
            COLL_INFO(COLL_SUB_ENV, "%s", line);
        text += n + (text[n] == '\n');
    }
}

void coll_cfg_report(int rank)
{
    static int reported;
    if (__atomic_exchange_n(&reported, 1, __ATOMIC_ACQ_REL) || rank > 0)
        return;
    cfg_load();
    coll_log_init();
    char b[600];
    for (int id = 0; id < COLL_CFG_COUNT; id++)
        if (cfg_vals[id].set && var_class(cfg_table[id].env) == 0)
            COLL_INFO(COLL_SUB_ENV, "%s='%s' (%s)", cfg_table[id].env, shown(id, cfg_vals[id].str),
                      src_name(&cfg_vals[id], b, sizeof b));
    log_lines(COLL_LOG_INFO, cfg_info);
    if (cfg_vals[COLL_CFG_ALGO].src != SRC_HCCL) {
        /* HCCL_ALGO's substitutions do not matter when COLL_ALGO or --algo won */
        char other[sizeof cfg_notes] = "";
        for (const char *l = cfg_notes; *l;) {
            size_t n = strcspn(l, "\n");
            if (strncmp(l, "HCCL_ALGO", 9))
                snprintf(other + strlen(other), sizeof other - strlen(other), "%.*s\n", (int)n, l);
            l += n + (l[n] == '\n');
        }
        log_lines(COLL_LOG_WARN, other);
    } else {
        log_lines(COLL_LOG_WARN, cfg_notes);
    }
    for (const char *l = cfg_unknown; *l;) {
        size_t n = strcspn(l, "\n");
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)n, l);
        const char *hint = coll_hccl_hint(name);
        COLL_WARN(COLL_SUB_ENV,
                  "%s is not an HCCL setting collbench knows: ignored%s%s (known: HCCL_ALGO "
                  "HCCL_BUFFSIZE HCCL_CONNECT_TIMEOUT HCCL_EXEC_TIMEOUT HCCL_SOCKET_IFNAME HCCL_IF_IP "
                  "HCCL_SOCKET_FAMILY HCCL_IF_BASE_PORT HCCL_DETERMINISTIC)",
                  name, hint ? "; instead: " : "", hint ? hint : "");
        l += n + (l[n] == '\n');
    }
}

int coll_cfg_env_rank(void)
{
    static const coll_cfg_id_t ids[] = {COLL_CFG_ENV_RANK, COLL_CFG_ENV_SLURM_PROCID, COLL_CFG_ENV_OMPI_RANK,
                                        COLL_CFG_ENV_PMI_RANK};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (coll_cfg_is_set(ids[i]) && coll_cfg_int(ids[i]) >= 0)
            return (int)coll_cfg_int(ids[i]);
    return -1;
}

char *coll_cfg_nondefault(const char *sep)
{
    cfg_load();
    size_t cap = 1, len = 0;
    for (int id = 0; id < COLL_CFG_COUNT; id++)
        if (cfg_vals[id].set && !is_launcher_var(cfg_table[id].env) && !is_sensitive(id))
            cap += strlen(cfg_table[id].env) + strlen(cfg_vals[id].str) + strlen(sep) + 2;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int id = 0; id < COLL_CFG_COUNT; id++) {
        if (!cfg_vals[id].set || is_launcher_var(cfg_table[id].env) || is_sensitive(id))
            continue; /* a secret never goes into results */
        len += (size_t)snprintf(s + len, cap - len, "%s%s=%s", len ? sep : "", cfg_table[id].env, cfg_vals[id].str);
    }
    return s;
}

static const coll_cfg_algo_names_t *algo_names;
static const coll_cfg_algo_names_t no_names = {NULL, NULL, NULL};

void coll_cfg_set_algo_names(const coll_cfg_algo_names_t *names) { algo_names = names; }

const coll_cfg_algo_names_t *coll_cfg_algo_names(void) { return algo_names ? algo_names : &no_names; }
