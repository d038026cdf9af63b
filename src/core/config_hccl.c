/*
 * config_hccl.c - what a user of Huawei's HCCL brings along: HCCL_* environment
 * variables, in HCCL's units and syntax, translated onto collbench's COLL_*
 * knobs (config.c applies them where the COLL_ name is unset; it stays the only
 * reader of the environment).
 *
 * HCCL_ALGO: "level0:NA;level1:<algo>" for every operator, or per operator
 * "<op>=level0:NA;level1:<algo>/<op>=...". level0 (inside a server) must be NA
 * in HCCL; level2 (between superpods) has no counterpart here. The level1
 * algorithm maps per collective through hccl_algos[] below: a plain name is
 * the same algorithm, "~name" the nearest one collbench has (warned), NULL
 * none (automatic choice).
 */
#include "core/config_hccl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
    coll_cfg_id_t hccl, coll;
} hccl_map[] = {
    {COLL_CFG_HCCL_ALGO, COLL_CFG_ALGO},
    {COLL_CFG_HCCL_BUFFSIZE, COLL_CFG_BUFFSIZE},
    {COLL_CFG_HCCL_CONNECT_TIMEOUT, COLL_CFG_CONNECT_TIMEOUT},
    {COLL_CFG_HCCL_EXEC_TIMEOUT, COLL_CFG_EXEC_TIMEOUT},
    {COLL_CFG_HCCL_SOCKET_IFNAME, COLL_CFG_SOCKET_IFNAME},
    {COLL_CFG_HCCL_IF_IP, COLL_CFG_IF_IP},
    {COLL_CFG_HCCL_SOCKET_FAMILY, COLL_CFG_SOCKET_FAMILY},
    {COLL_CFG_HCCL_IF_BASE_PORT, COLL_CFG_IF_BASE_PORT},
    {COLL_CFG_HCCL_DETERMINISTIC, COLL_CFG_DETERMINISTIC},
};
#define NMAP (sizeof hccl_map / sizeof hccl_map[0])

coll_cfg_id_t coll_hccl_target(coll_cfg_id_t id)
{
    for (size_t i = 0; i < NMAP; i++)
        if (hccl_map[i].hccl == id)
            return hccl_map[i].coll;
    return COLL_CFG_COUNT;
}

int coll_hccl_is(coll_cfg_id_t id)
{
    for (size_t i = 0; i < NMAP; i++)
        if (hccl_map[i].hccl == id)
            return 1;
    return 0;
}

/* ---- HCCL_ALGO ------------------------------------------------------------ */

/* The collectives HCCL_ALGO can name, in the column order of hccl_algos[]. */
static const coll_kind_t kinds[] = {COLL_ALLREDUCE,       COLL_ALLGATHER, COLL_ALLGATHERV, COLL_REDUCE_SCATTER,
                                    COLL_REDUCE_SCATTERV, COLL_REDUCE,    COLL_BROADCAST,  COLL_SCATTER,
                                    COLL_GATHER,          COLL_ALLTOALL,  COLL_ALLTOALLV};
#define NK (sizeof kinds / sizeof kinds[0])

/* HCCL's level1 algorithms. Columns: allreduce allgather allgatherv
 * reduce_scatter reduce_scatterv reduce broadcast scatter gather alltoall
 * alltoallv. */
static const struct {
    const char *name;
    const char *per_kind[NK];
} hccl_algos[] = {
    {"ring",
     {"ring", "ring", "ring", "ring", "ring", "~rs_gather", "~scatter_allgather", NULL, NULL, "~pairwise",
      "~pairwise"}},
    {"H-D_R",
     {"hd", "~bruck", "~bruck", NULL, "halving", "~binomial", "~binomial", "~binomial", "~binomial", "~bruck",
      "~bruck"}},
    {"NHR",
     {"~hd", "~bruck", "~bruck", NULL, "~halving", "~rs_gather", "~scatter_allgather", NULL, NULL, "~bruck", "~bruck"}},
    {"NHR_V1",
     {"~hd", "~bruck", "~bruck", NULL, "~halving", "~rs_gather", "~scatter_allgather", NULL, NULL, "~bruck", "~bruck"}},
    {"NB", {"~hd", "bruck", "bruck", NULL, "~halving", NULL, NULL, NULL, NULL, "bruck", "bruck"}},
    {"AHC", {"~hier", "~hier", NULL, "~hier", NULL, NULL, "~hier", NULL, NULL, "~hier", NULL}},
    {"pipeline", {"~hier", "~hier", NULL, "~hier", NULL, "~pipeline", "~hier", NULL, NULL, "~hier", NULL}},
    {"pairwise", {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "pairwise", "pairwise"}},
    {"NA", {NULL}},
};
#define NALGO (sizeof hccl_algos / sizeof hccl_algos[0])
#define ALGO_NAMES "ring H-D_R NHR NHR_V1 NB AHC pipeline pairwise NA"

/* HCCL's operator names (and collbench's v-collectives and gather, which HCCL
 * configures through the plain operator), each with the collectives it sets. */
static const struct {
    const char *name;
    coll_kind_t k[2];
    int n;
} hccl_ops[] = {
    {"allreduce", {COLL_ALLREDUCE}, 1},
    {"allgather", {COLL_ALLGATHER, COLL_ALLGATHERV}, 2},
    {"reducescatter", {COLL_REDUCE_SCATTER, COLL_REDUCE_SCATTERV}, 2},
    {"broadcast", {COLL_BROADCAST}, 1},
    {"reduce", {COLL_REDUCE}, 1},
    {"scatter", {COLL_SCATTER}, 1},
    {"alltoall", {COLL_ALLTOALL, COLL_ALLTOALLV}, 2},
    {"allgatherv", {COLL_ALLGATHERV}, 1},
    {"reducescatterv", {COLL_REDUCE_SCATTERV}, 1},
    {"alltoallv", {COLL_ALLTOALLV}, 1},
    {"alltoallvc", {COLL_ALLTOALLV}, 1},
    {"gather", {COLL_GATHER}, 1},
};
#define NOPS (sizeof hccl_ops / sizeof hccl_ops[0])
#define OP_NAMES \
    "allreduce allgather reducescatter broadcast reduce scatter alltoall (and allgatherv reducescatterv alltoallv gather)"

static void appendf(char *buf, size_t len, const char *fmt, ...)
{
    size_t o = strlen(buf);
    if (o + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + o, len - o, fmt, ap);
    va_end(ap);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* "all_reduce", "AllReduce", "reduce-scatter" -> "allreduce", "reducescatter" */
static int find_op(const char *s)
{
    char a[32];
    size_t o = 0;
    for (; *s && o < sizeof a - 1; s++)
        if (*s != '_' && *s != '-')
            a[o++] = (char)tolower((unsigned char)*s);
    a[o] = '\0';
    for (size_t i = 0; i < NOPS; i++)
        if (!strcmp(a, hccl_ops[i].name))
            return (int)i;
    return -1;
}

static int find_algo(const char *s)
{
    for (size_t i = 0; i < NALGO; i++)
        if (!strcasecmp(s, hccl_algos[i].name))
            return (int)i;
    return -1;
}

static int kind_col(coll_kind_t k)
{
    for (size_t i = 0; i < NK; i++)
        if (kinds[i] == k)
            return (int)i;
    return -1;
}

/* One group's "level0:NA;level1:ring" -> index into hccl_algos (level1), or -1 with err. */
static int parse_levels(char *levels, const char *v, char *notes, size_t noteslen, char *err, size_t errlen)
{
    int algo = find_algo("NA");
    char *save = NULL;
    for (char *it = strtok_r(levels, ";", &save); it; it = strtok_r(NULL, ";", &save)) {
        it = trim(it);
        if (!*it)
            continue;
        char *colon = strchr(it, ':');
        const char *name = it;
        int level = 1; /* a bare name: taken as level1 */
        if (colon) {
            *colon = '\0';
            char *lv = trim(it);
            name = trim(colon + 1);
            if (strncasecmp(lv, "level", 5) || !isdigit((unsigned char)lv[5]) || lv[6] || lv[5] > '2') {
                snprintf(err, errlen, "invalid HCCL_ALGO='%s': unknown level '%s'; allowed: level0 level1 level2", v,
                         lv);
                return -1;
            }
            level = lv[5] - '0';
        }
        int a = find_algo(name);
        if (a < 0) {
            snprintf(err, errlen, "invalid HCCL_ALGO='%s': unknown algorithm '%s'; allowed: " ALGO_NAMES, v, name);
            return -1;
        }
        if (level == 1)
            algo = a;
        else if (strcasecmp(name, "NA"))
            appendf(notes, noteslen, "HCCL_ALGO level%d:%s ignored: collbench has no level%d choice (%s)\n", level,
                    name, level, level == 0 ? "ranks of one host use shared memory" : "no superpods");
    }
    return algo;
}

/* Sets per[kind] for the collectives of op (-1: all) from hccl_algos[a]. */
static void apply(int a, int op, int explicit_op, const char **per, char *notes, size_t noteslen, char *info,
                  size_t infolen)
{
    char subst[512] = "", none[256] = "";
    for (size_t c = 0; c < NK; c++) {
        coll_kind_t k = kinds[c];
        if (op >= 0) {
            int in = 0;
            for (int j = 0; j < hccl_ops[op].n; j++)
                in |= hccl_ops[op].k[j] == k;
            if (!in)
                continue;
        }
        const char *n = hccl_algos[a].per_kind[kind_col(k)];
        int near = n && n[0] == '~';
        const char *al = n && coll_cfg_algo_names()->canonical ? coll_cfg_algo_names()->canonical(k, n + near) : NULL;
        per[k] = al;
        if (al && near)
            appendf(subst, sizeof subst, "%s%s=%s", subst[0] ? " " : "", coll_kind_name(k), al);
        else if (!al && strcasecmp(hccl_algos[a].name, "NA"))
            appendf(none, sizeof none, "%s%s", none[0] ? " " : "", coll_kind_name(k));
    }
    const char *who = op >= 0 ? hccl_ops[op].name : "every operator";
    if (subst[0])
        appendf(notes, noteslen, "HCCL_ALGO level1:%s for %s: collbench has no %s there, using the nearest: %s%s%s\n",
                hccl_algos[a].name, who, hccl_algos[a].name, subst, none[0] ? "; automatic choice for " : "", none);
    else if (none[0] && explicit_op)
        appendf(notes, noteslen, "HCCL_ALGO level1:%s for %s: collbench has no %s there, using the automatic choice\n",
                hccl_algos[a].name, who, hccl_algos[a].name);
    else if (none[0])
        appendf(info, infolen, "HCCL_ALGO level1:%s: no %s for %s (automatic choice)\n", hccl_algos[a].name,
                hccl_algos[a].name, none);
}

static int translate_algo(const char *v, char *out, size_t outlen, char *notes, size_t noteslen, char *info,
                          size_t infolen, char *err, size_t errlen)
{
    const char *per[COLL_KIND_COUNT] = {0}, *global[COLL_KIND_COUNT] = {0};
    int named[COLL_KIND_COUNT] = {0};
    char buf[1024];
    if (strlen(v) >= sizeof buf) {
        snprintf(err, errlen, "invalid HCCL_ALGO: longer than %zu characters", sizeof buf - 1);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *grp = strtok_r(buf, "/", &save); grp; grp = strtok_r(NULL, "/", &save)) {
        grp = trim(grp);
        if (!*grp)
            continue;
        char *eq = strchr(grp, '=');
        int op = -1;
        if (eq) {
            *eq = '\0';
            char *opname = trim(grp);
            if ((op = find_op(opname)) < 0) {
                snprintf(err, errlen, "invalid HCCL_ALGO='%s': unknown operator '%s'; allowed: " OP_NAMES, v, opname);
                return -1;
            }
            grp = eq + 1;
        }
        int a = parse_levels(grp, v, notes, noteslen, err, errlen);
        if (a < 0)
            return -1;
        apply(a, op, op >= 0, op >= 0 ? per : global, notes, noteslen, info, infolen);
        if (op >= 0) /* "allreduce=level1:NA" after a global one: automatic */
            for (int j = 0; j < hccl_ops[op].n; j++)
                named[hccl_ops[op].k[j]] = 1;
    }
    out[0] = '\0';
    for (size_t c = 0; c < NK; c++) {
        const char *al = named[kinds[c]] ? per[kinds[c]] : global[kinds[c]];
        if (al)
            appendf(out, outlen, "%s%s=%s", out[0] ? ";" : "", coll_kind_name(kinds[c]), al);
    }
    return 0;
}

/* ---- the others ------------------------------------------------------------ */

static int is_ip(const char *s)
{
    unsigned char b[16];
    char tmp[64];
    size_t n = strlen(s);
    if (n >= sizeof tmp)
        return 0;
    if (s[0] == '[' && n > 2 && s[n - 1] == ']') {
        memcpy(tmp, s + 1, n - 2);
        tmp[n - 2] = '\0';
    } else {
        memcpy(tmp, s, n + 1);
    }
    char *pct = strchr(tmp, '%'); /* fe80::1%eth0 */
    if (pct)
        *pct = '\0';
    return inet_pton(AF_INET, tmp, b) == 1 || inet_pton(AF_INET6, tmp, b) == 1;
}

int coll_hccl_translate(coll_cfg_id_t id, const char *v, char *out, size_t outlen, char *notes, size_t noteslen,
                        char *info, size_t infolen, char *err, size_t errlen)
{
    const char *env = coll_cfg_entry(id)->env;
    char *end;
    switch (id) {
    case COLL_CFG_HCCL_ALGO: return translate_algo(v, out, outlen, notes, noteslen, info, infolen, err, errlen);
    case COLL_CFG_HCCL_BUFFSIZE: {
        errno = 0;
        unsigned long long mb = strtoull(v, &end, 10);
        if (!isdigit((unsigned char)v[0]) || *end || errno || mb < 1 || mb > (1ULL << 24)) {
            snprintf(err, errlen,
                     "invalid %s='%s': expected a whole number of MB, 1..16777216 (HCCL's unit: 2048 = 2 GiB)", env, v);
            return -1;
        }
        snprintf(out, outlen, "%lluM", mb);
        appendf(info, infolen, "%s=%s MB = %llu bytes\n", env, v, mb << 20);
        return 0;
    }
    case COLL_CFG_HCCL_CONNECT_TIMEOUT:
    case COLL_CFG_HCCL_EXEC_TIMEOUT: {
        errno = 0;
        double d = strtod(v, &end);
        if (!*v || *end || errno || d < 0 || d != d) {
            snprintf(err, errlen, "invalid %s='%s': expected a number of seconds >= 0%s", env, v,
                     id == COLL_CFG_HCCL_EXEC_TIMEOUT ? " (0 = never)" : "");
            return -1;
        }
        snprintf(out, outlen, "%s", v);
        return 0;
    }
    case COLL_CFG_HCCL_IF_IP:
        if (!is_ip(v)) {
            snprintf(err, errlen, "invalid %s='%s': expected an IPv4 or IPv6 address of this host", env, v);
            return -1;
        }
        snprintf(out, outlen, "%s", v);
        return 0;
    case COLL_CFG_HCCL_DETERMINISTIC:
        if (strcasecmp(v, "true") && strcasecmp(v, "false") && strcmp(v, "1") && strcmp(v, "0")) {
            snprintf(err, errlen, "invalid %s='%s': expected true or false", env, v);
            return -1;
        }
        snprintf(out, outlen, "%s", !strcasecmp(v, "true") || !strcmp(v, "1") ? "1" : "0");
        return 0;
    default: /* same syntax and unit as the COLL_ knob (validated there) */ snprintf(out, outlen, "%s", v); return 0;
    }
}

const char *coll_hccl_hint(const char *name)
{
    static const struct {
        const char *hccl, *hint;
    } hints[] = {
        {"HCCL_ENTRY_LOG_ENABLE", "COLL_DEBUG=INFO logs every algorithm choice"},
        {"HCCL_TEST_USE_DEVS", "COLL_TEST_CPUS pins local ranks to cores"},
        {"HCCL_BUFF_SIZE", "HCCL_BUFFSIZE or COLL_BUFFSIZE"},
        {"HCCL_WHITELIST_DISABLE", "nothing to set: collbench has no whitelist"},
    };
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        if (!strcmp(name, hints[i].hccl))
            return hints[i].hint;
    return NULL;
}
