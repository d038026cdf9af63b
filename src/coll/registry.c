/*
 * registry.c - the one table of algorithms, forcing and selection.
 * Adding an algorithm: write src/coll/<coll>/<coll>_<name>.c defining
 * `const coll_algo_t coll_algo_<coll>_<name> = COLL_ALGO(...)` (algo.h) and add ALGO(<coll>_<name>) to
 * src/coll/<coll>/algos.h (algo_list.h gathers those lists into the table).
 */
#include "coll/algo.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/config.h"
#include "core/log.h"
#include "coll/selection/tuning.h"
#include "coll/selection/tuning_rules.h"

#define ALGO(x) extern const coll_algo_t coll_algo_##x;
#include "coll/algo_list.h"
#undef ALGO

const coll_algo_t *const coll_algo_table[] = {
#define ALGO(x) &coll_algo_##x,
#include "coll/algo_list.h"
#undef ALGO
    NULL,
};

/* Other libraries' names for ours (case-insensitive, like every name here):
 * HCCL and NCCL call the hierarchical algorithms "hybrid". */
static const char *canonical_name(const char *name) { return !strcasecmp(name, "hybrid") ? "hier" : name; }

/* The table index of kind's algorithm called name, or -1. */
static int find_index(coll_kind_t kind, const char *name)
{
    name = canonical_name(name);
    for (int i = 0; coll_algo_table[i]; i++)
        if (coll_algo_table[i]->kind == kind && !strcasecmp(coll_algo_table[i]->name, name))
            return i;
    return -1;
}

const coll_algo_t *coll_algo_find(coll_kind_t kind, const char *name)
{
    int i = find_index(kind, name);
    return i < 0 ? NULL : coll_algo_table[i];
}

static int kind_from_name(const char *s, coll_kind_t *k)
{
    for (int i = 0; i < COLL_KIND_COUNT; i++) {
        const char *n = coll_kind_name((coll_kind_t)i);
        if (!strcasecmp(s, n)) {
            *k = (coll_kind_t)i;
            return 0;
        }
        /* accept hccl/nccl spellings: all_reduce, allreduce, AllReduce, reducescatter */
        char a[32], b[32];
        size_t j = 0, o = 0;
        for (; s[j] && o < sizeof a - 1; j++)
            if (s[j] != '_' && s[j] != '-')
                a[o++] = s[j];
        a[o] = '\0';
        o = 0;
        for (j = 0; n[j] && o < sizeof b - 1; j++)
            if (n[j] != '_')
                b[o++] = n[j];
        b[o] = '\0';
        if (!strcasecmp(a, b)) {
            *k = (coll_kind_t)i;
            return 0;
        }
    }
    return -1;
}

static void list_names(char *buf, size_t len, int kind)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; coll_algo_table[i] && o + 40 < len; i++) {
        const coll_algo_t *a = coll_algo_table[i];
        if (kind >= 0 && a->kind != (coll_kind_t)kind)
            continue;
        if (kind < 0) {
            int dup = 0;
            for (int j = 0; j < i; j++)
                if (!strcasecmp(coll_algo_table[j]->name, a->name))
                    dup = 1;
            if (dup)
                continue;
        }
        o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? " " : "", a->name);
    }
}

int coll_algo_kind_reduces(coll_kind_t kind)
{
    return kind == COLL_ALLREDUCE || kind == COLL_REDUCE || kind == COLL_REDUCE_SCATTER || kind == COLL_REDUCE_SCATTERV;
}

/* COLL_DETERMINISTIC=1 and al reduces in an order of its own? */
static int excluded_by_determinism(const coll_algo_t *al, int determ)
{
    return determ && coll_algo_kind_reduces(al->kind) && !(al->flags & COLL_ALGO_F_DETERMINISTIC);
}

static void list_deterministic(char *buf, size_t len, coll_kind_t kind)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; coll_algo_table[i] && o + 40 < len; i++)
        if (coll_algo_table[i]->kind == kind && !excluded_by_determinism(coll_algo_table[i], 1))
            o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? " " : "", coll_algo_table[i]->name);
}

/* Forcing an algorithm COLL_DETERMINISTIC=1 excludes is an error. */
static int check_deterministic(const coll_algo_t *al, char *err, size_t errlen)
{
    if (!excluded_by_determinism(al, 1))
        return 0;
    char names[200];
    list_deterministic(names, sizeof names, al->kind);
    snprintf(err, errlen,
             "%s algorithm '%s' in COLL_ALGO is not deterministic and COLL_DETERMINISTIC=1 is set; "
             "deterministic %s algorithms: %s",
             coll_kind_name(al->kind), al->name, coll_kind_name(al->kind), names);
    return -1;
}

/* One item of a spec: a bare name (every collective that has it) or
 * COLL=NAME, into forced[]. 0, or -1 with err set. */
static int parse_item(char *item, int *forced, char *err, size_t errlen)
{
    char names[400];
    char *eq = strchr(item, '=');
    if (!eq) {
        int found = 0;
        for (int i = 0; coll_algo_table[i]; i++)
            if (!strcasecmp(coll_algo_table[i]->name, canonical_name(item))) {
                forced[coll_algo_table[i]->kind] = i;
                found = 1;
            }
        if (found)
            return 0;
        list_names(names, sizeof names, -1);
        snprintf(err, errlen, "unknown algorithm '%s' in COLL_ALGO; allowed: %s, hybrid = hier (or COLL=NAME;...)",
                 item, names);
        return -1;
    }
    *eq = '\0';
    coll_kind_t k;
    if (kind_from_name(item, &k)) {
        snprintf(err, errlen,
                 "unknown collective '%s' in COLL_ALGO; allowed: allreduce allgather "
                 "allgatherv reduce_scatter reduce_scatterv reduce broadcast scatter gather alltoall alltoallv",
                 item);
        return -1;
    }
    int i = find_index(k, eq + 1);
    if (i < 0) {
        list_names(names, sizeof names, (int)k);
        snprintf(err, errlen, "unknown algorithm '%s' for %s in COLL_ALGO; allowed: %s%s", eq + 1, coll_kind_name(k),
                 names, coll_algo_find(k, "hier") ? ", hybrid = hier" : "");
        return -1;
    }
    forced[k] = i;
    return 0;
}

int coll_algo_resolve(const char *spec, int *forced, char *err, size_t errlen)
{
    for (int k = 0; k < COLL_KIND_COUNT; k++)
        forced[k] = -1;
    if (!spec || !*spec)
        return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ";,/ ", &save); item; item = strtok_r(NULL, ";,/ ", &save))
        if (parse_item(item, forced, err, errlen))
            return -1;
    return 0;
}

int coll_algo_check_determ(const int *forced, char *err, size_t errlen)
{
    for (int i = 0; coll_algo_table[i]; i++) /* in the table's order */
        if (forced[coll_algo_table[i]->kind] == i && check_deterministic(coll_algo_table[i], err, errlen))
            return -1;
    return 0;
}

coll_status_t coll_algo_force(const char *spec)
{
    char err[768];
    if (coll_cfg_try_set(COLL_CFG_ALGO, spec, err, sizeof err))
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_TUNING, "%s", err);
    return COLL_SUCCESS;
}

/* What COLL_ALGO (or coll_algo_force) forces for kind: resolved once, when
 * it was set (core/config.h), or NULL. */
static const coll_algo_t *forced_algo(coll_kind_t kind)
{
    int i = coll_cfg_algo(kind);
    return i < 0 ? NULL : coll_algo_table[i];
}

int coll_algo_is_usable(const coll_algo_t *al, const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    if (excluded_by_determinism(al, coll_cfg_bool(COLL_CFG_DETERMINISTIC)))
        return 0;
    if ((al->flags & COLL_ALGO_F_SINGLE_HOST) && !coll_group_is_local(comm, g))
        return 0;
    if (al->flags & COLL_ALGO_F_HIER) {
        if (g != &comm->world || comm->nhosts < 2 || comm->local_size < 1 || comm->nhosts == comm->nranks)
            return 0;
    }
    if ((al->flags & COLL_ALGO_F_POW2) && (g->size & (g->size - 1)))
        return 0;
    return al->usable ? al->usable(comm, g, a) : 1;
}

coll_status_t coll_algo_select(coll_comm *comm, const coll_group_t *g, const coll_args_t *a, const coll_algo_t **out)
{
    const coll_algo_t *f = forced_algo(a->kind);
    if (f) {
        if (coll_algo_is_usable(f, comm, g, a)) {
            *out = f;
            return COLL_SUCCESS;
        }
        static int warned[COLL_KIND_COUNT];
        if (!warned[a->kind]++ && g == &comm->world)
            COLL_WARN(COLL_SUB_TUNING, "forced %s algorithm '%s' cannot run here (%s); choosing automatically",
                      coll_kind_name(a->kind), f->name, f->desc);
    }
    /* many members across hosts: one socket per peer would not scale (a
     * pairwise AllToAll at 512 ranks opens 511 per rank), so the O(p)-peer
     * algorithms leave the automatic choice when another one can run */
    int skip_all_peers = 0;
    if (coll_tuning_too_many_peers(comm, g))
        for (int i = 0; coll_algo_table[i] && !skip_all_peers; i++)
            skip_all_peers = coll_algo_table[i]->kind == a->kind && !(coll_algo_table[i]->flags & COLL_ALGO_F_ALL_PEERS)
                && coll_algo_is_usable(coll_algo_table[i], comm, g, a);
    int determ = coll_cfg_bool(COLL_CFG_DETERMINISTIC);
    if (!coll_cfg_bool(COLL_CFG_TUNING_RULES_OFF)) {
        int host = coll_group_is_local(comm, g);
        for (int i = 0; coll_tuning_rules[i].algo; i++) {
            const coll_tuning_rule_t *r = &coll_tuning_rules[i];
            if (r->kind != a->kind || g->size < r->pmin || g->size > r->pmax || a->bytes < r->bytes_min
                || a->bytes > r->bytes_max || (r->scope == COLL_RULE_HOST && !host)
                || (r->scope == COLL_RULE_CROWDED && !(host && coll_tuning_crowded(comm)))
                || (r->scope == COLL_RULE_HUGE && !(host && comm->buf_huge)))
                continue;
            const coll_algo_t *al = coll_algo_find(a->kind, r->algo);
            if (al && !((al->flags & COLL_ALGO_F_ORDERED_ONLY) && !determ)
                && !(skip_all_peers && (al->flags & COLL_ALGO_F_ALL_PEERS)) && coll_algo_is_usable(al, comm, g, a)) {
                COLL_DEBUG(COLL_SUB_TUNING, "  rule %d: %s/%s", i, coll_kind_name(a->kind), al->name);
                *out = al;
                return COLL_SUCCESS;
            }
        }
    }
    const coll_algo_t *best = NULL, *any = NULL;
    double best_cost = 0;
    /* AllToAllV: a rank knows only its own counts, and every member must pick
     * the same algorithm, so the costs are compared at 0 bytes (their per-step
     * terms), the same on every member, as MPI libraries choose by group size. */
    coll_args_t agreed = *a;
    if (a->kind == COLL_ALLTOALLV)
        agreed.bytes = 0;
    for (int i = 0; coll_algo_table[i]; i++) {
        const coll_algo_t *al = coll_algo_table[i];
        if (al->kind != a->kind || (skip_all_peers && (al->flags & COLL_ALGO_F_ALL_PEERS))
            || ((al->flags & COLL_ALGO_F_ORDERED_ONLY) && !determ) || !coll_algo_is_usable(al, comm, g, a))
            continue;
        if (!any)
            any = al;
        if (!al->cost_us)
            continue;
        double c = al->cost_us(comm, g, &agreed);
        COLL_DEBUG(COLL_SUB_TUNING, "  candidate %s/%s: %.2f us", coll_kind_name(a->kind), al->name, c);
        if (!best || c < best_cost) {
            best = al;
            best_cost = c;
        }
    }
    if (!best)
        best = any;
    if (!best)
        return coll_error(COLL_ERR_UNSUPPORTED, COLL_SUB_TUNING, "no %s algorithm can run on this group of %d ranks",
                          coll_kind_name(a->kind), g->size);
    *out = best;
    return COLL_SUCCESS;
}

coll_status_t coll_algo_run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    const coll_algo_t *al;
    COLL_CHECK(coll_algo_select(comm, g, a, &al));
    if (g == &comm->world) {
        if (comm->last_algo != al->name || comm->last_algo_kind != a->kind
            || coll_log_enabled(COLL_LOG_DEBUG, COLL_SUB_TUNING))
            COLL_INFO(COLL_SUB_TUNING, "%s %zu bytes on %d ranks: algorithm %s%s", coll_kind_name(a->kind), a->bytes,
                      g->size, al->name, forced_algo(a->kind) == al ? " (forced)" : "");
        comm->last_algo = al->name;
        comm->last_algo_kind = a->kind;
    }
    return al->run(comm, g, a);
}

void coll_algo_list(FILE *out)
{
    fprintf(out, "%-16s %-14s %s\n", "# collective", "algorithm", "description");
    for (int i = 0; coll_algo_table[i]; i++)
        fprintf(out, "%-16s %-14s %s%s\n", coll_kind_name(coll_algo_table[i]->kind), coll_algo_table[i]->name,
                coll_algo_table[i]->desc,
                coll_algo_kind_reduces(coll_algo_table[i]->kind)
                        && (coll_algo_table[i]->flags & COLL_ALGO_F_DETERMINISTIC)
                    ? " [allowed with COLL_DETERMINISTIC=1]"
                    : "");
}

/* ---- the configuration's view of the algorithm names (core/config.h) ---- */

static const char *cfg_canonical(coll_kind_t kind, const char *name)
{
    const coll_algo_t *al = coll_algo_find(kind, name);
    return al ? al->name : NULL;
}

static const coll_cfg_algo_names_t cfg_names = {coll_algo_resolve, cfg_canonical, coll_algo_check_determ};

/* Registered when the library is loaded: the registry is linked into every
 * program that can run a collective, so the names are known before any
 * configuration is checked. */
__attribute__((constructor)) static void register_cfg_names(void) { coll_cfg_set_algo_names(&cfg_names); }
