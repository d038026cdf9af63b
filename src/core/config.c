/*
 * config.c - the configuration table's values. The only getenv() in collbench.
 */
#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const coll_cfg_entry_t cfg_table[COLL_CFG_COUNT] = {
#define COLL_CFG_ROW(id, env, type, def, unit, doc) {env, CFG_T_##type, def, unit, doc},
    COLL_CONFIG_TABLE(COLL_CFG_ROW)
#undef COLL_CFG_ROW
};

typedef struct {
    char *str;          /* current textual value (env, override or default) */
    int set;            /* from the environment or coll_cfg_set */
    int bad;            /* did not parse: default used */
    long long i;
    double d;
    size_t sz;
} cfg_val_t;

static cfg_val_t cfg_vals[COLL_CFG_COUNT];
static int cfg_loaded;
static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static char cfg_err[512];

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
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
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
    case CFG_T_STR:
        return 0;
    case CFG_T_BOOL:
        return parse_bool(s, &v->i);
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

static void cfg_assign(coll_cfg_id_t id, const char *text, int set)
{
    cfg_val_t *v = &cfg_vals[id];
    free(v->str);
    v->str = strdup(text ? text : "");
    v->set = set;
    v->bad = 0;
    if (cfg_parse(cfg_table[id].type, v->str, v)) {
        v->bad = 1;
        if (!cfg_err[0])
            snprintf(cfg_err, sizeof cfg_err, "invalid %s='%s': expected %s", cfg_table[id].env,
                     v->str, type_allowed(cfg_table[id].type));
        cfg_parse(cfg_table[id].type, cfg_table[id].def, v);
    }
}

static void cfg_load_locked(void)
{
    cfg_err[0] = '\0';
    for (int id = 0; id < COLL_CFG_COUNT; id++) {
        const char *e = getenv(cfg_table[id].env);
        if (e)
            cfg_assign((coll_cfg_id_t)id, e, 1);
        else
            cfg_assign((coll_cfg_id_t)id, cfg_table[id].def, 0);
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
    cfg_assign(id, value, value != NULL);
    if (!value)
        cfg_assign(id, cfg_table[id].def, 0);
    pthread_mutex_unlock(&cfg_lock);
}

coll_status_t coll_cfg_check(void)
{
    cfg_load();
    for (int id = 0; id < COLL_CFG_COUNT; id++)
        if (cfg_vals[id].bad) {
            snprintf(cfg_err, sizeof cfg_err, "invalid %s='%s': expected %s", cfg_table[id].env,
                     cfg_vals[id].str, type_allowed(cfg_table[id].type));
            return COLL_ERR_INVALID_ARG;
        }
    return COLL_SUCCESS;
}

const char *coll_cfg_check_message(void)
{
    return cfg_err;
}

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

static int is_launcher_var(const char *env)
{
    return strncmp(env, "COLL_", 5) != 0;
}

void coll_cfg_print(FILE *out)
{
    cfg_load();
    fprintf(out, "%-22s %-12s %-10s %s\n", "# variable", "value", "default", "description");
    for (int pass = 0; pass < 2; pass++) {
        fprintf(out, pass ? "# set by launchers (read, never required):\n" : "# knobs:\n");
        for (int id = 0; id < COLL_CFG_COUNT; id++) {
            const coll_cfg_entry_t *e = &cfg_table[id];
            if (is_launcher_var(e->env) != pass)
                continue;
            char def[64];
            snprintf(def, sizeof def, "%s%s%s", *e->def ? e->def : "\"\"", *e->unit ? " " : "", e->unit);
            fprintf(out, "%-22s %-12s %-10s %s%s\n", e->env,
                    cfg_vals[id].set ? cfg_vals[id].str : "-", def, e->doc,
                    cfg_vals[id].bad ? "  [INVALID: default used]" : "");
        }
    }
}

char *coll_cfg_nondefault(const char *sep)
{
    cfg_load();
    size_t cap = 1, len = 0;
    for (int id = 0; id < COLL_CFG_COUNT; id++)
        if (cfg_vals[id].set && !is_launcher_var(cfg_table[id].env))
            cap += strlen(cfg_table[id].env) + strlen(cfg_vals[id].str) + strlen(sep) + 2;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int id = 0; id < COLL_CFG_COUNT; id++) {
        if (!cfg_vals[id].set || is_launcher_var(cfg_table[id].env))
            continue;
        len += (size_t)snprintf(s + len, cap - len, "%s%s=%s", len ? sep : "", cfg_table[id].env,
                                cfg_vals[id].str);
    }
    return s;
}
