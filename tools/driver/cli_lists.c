/*
 * cli_lists.c - the options that make one launch cover more: -d and -o with
 * a comma list or "all" (one table each), --sizes LIST (exact sizes),
 * --duration SEC / --cycles N (burn-in: the sweep again and again) and
 * --off-cache. Flag letters stay hccl_test's (-d -o); the rest are long
 * options only, so none clashes with hccl_test's or nccl-tests' letters.
 * Every bad value: one line naming the option, the value and what is allowed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../common/coll_internal.h"
#include "driver.h"

static const char DTYPE_NAMES[] = "int8 int16 int32 int64 uint8 uint16 uint32 uint64 fp16 fp32 fp64 bfp16";
static const char OP_NAMES[] = "sum prod max min";

static int lfail(const cb_opts_t *o, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cb_cli_vfail(o->prog, err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

void cb_cli_list_defaults(cb_opts_t *o)
{
    o->ndt = 1;
    o->dts[0] = o->dt;
    o->nop = 1;
    o->ops[0] = o->op;
    o->nsizes = 0;
    o->duration = -1;
    o->cycles = -1;
    o->off_cache = 0;
}

/* -d: one name, a comma list, or all. */
static int dtype_list(const char *arg, cb_opts_t *o, char *err, size_t errlen)
{
    char buf[256], *save = NULL;
    int all = !strcmp(arg, "all");
    const char *sep = all ? " " : ",";
    snprintf(buf, sizeof(buf), "%s", all ? DTYPE_NAMES : arg);
    o->ndt = 0;
    for (char *t = strtok_r(buf, sep, &save); t; t = strtok_r(NULL, sep, &save)) {
        if (o->ndt == COLL_NUM_DTYPES_MAX || coll_dtype_from_name(t, &o->dts[o->ndt]) != COLL_SUCCESS) {
            if (!strcmp(t, arg))
                return lfail(o, err, errlen, "invalid -d '%s': allowed %s, a comma list of them, or all", t,
                             DTYPE_NAMES);
            return lfail(o, err, errlen, "invalid -d '%s' in '%s': allowed %s, a comma list of them, or all", t, arg,
                         DTYPE_NAMES);
        }
        o->ndt++;
    }
    if (!o->ndt)
        return lfail(o, err, errlen, "invalid -d '%s': allowed %s, a comma list of them, or all", arg, DTYPE_NAMES);
    o->dt = o->dts[0];
    return 0;
}

/* -o: one op, a comma list, or all (lists refused where nothing reduces). */
static int op_list(const cb_desc_t *d, const char *arg, cb_opts_t *o, char *err, size_t errlen)
{
    char buf[128], *save = NULL;
    const char *spec = strcmp(arg, "all") ? arg : "sum,prod,max,min";
    snprintf(buf, sizeof(buf), "%s", spec);
    o->nop = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nop == 4 || coll_op_from_name(t, &o->ops[o->nop]) != COLL_SUCCESS)
            return lfail(o, err, errlen, "invalid -o '%s': allowed %s, a comma list of them, or all", arg, OP_NAMES);
        o->nop++;
    }
    if (!o->nop)
        return lfail(o, err, errlen, "invalid -o '%s': allowed %s, a comma list of them, or all", arg, OP_NAMES);
    if (o->nop > 1 && !(d->flags & CB_F_REDUCE))
        return lfail(o, err, errlen, "invalid -o '%s': %s does not reduce: allowed one op (ignored), not a list", arg,
                     o->prog);
    o->op = o->ops[0];
    return 0;
}

/* --sizes 8K,1M,64M: exact sizes, in the order given. */
static int size_list(const char *arg, cb_opts_t *o, char *err, size_t errlen)
{
    char buf[4096], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", arg);
    o->nsizes = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        unsigned long long v;
        if (o->nsizes == CB_MAX_SIZES || t[0] < '0' || t[0] > '9' || coll_parse_size(t, &v) != COLL_SUCCESS)
            return lfail(o, err, errlen,
                         "invalid --sizes '%s': allowed up to %d byte counts with optional K/M/G suffix, "
                         "comma-separated (e.g. 8K,1M,64M)",
                         t, CB_MAX_SIZES);
        o->sizes[o->nsizes++] = v;
    }
    if (!o->nsizes)
        return lfail(o, err, errlen, "invalid --sizes '%s': allowed byte counts, comma-separated (e.g. 8K,1M)", arg);
    return 0;
}

int cb_cli_list_opt(const cb_desc_t *d, int c, const char *arg, cb_opts_t *o, char *err, size_t errlen)
{
    char *end;
    switch (c) {
    case 'd': return dtype_list(arg, o, err, errlen);
    case 'o': return op_list(d, arg, o, err, errlen);
    case CB_OPT_SIZES: return size_list(arg, o, err, errlen);
    case CB_OPT_DURATION:
        errno = 0;
        o->duration = strtod(arg, &end);
        if (!*arg || *end || errno || !(o->duration > 0) || o->duration > 1e7)
            return lfail(o, err, errlen, "invalid --duration '%s': allowed seconds > 0 (at most 10000000)", arg);
        return 0;
    case CB_OPT_CYCLES:
        errno = 0;
        o->cycles = strtoll(arg, &end, 10);
        if (!*arg || *end || errno || arg[0] == '-' || arg[0] == '+' || o->cycles < 0)
            return lfail(o, err, errlen,
                         "invalid --cycles '%s': allowed a whole number of passes >= 0 (0 = until "
                         "SIGINT/SIGTERM)",
                         arg);
        return 0;
    default: /* CB_OPT_OFF_CACHE */ o->off_cache = 1; return 0;
    }
}

int cb_cli_list_check(cb_opts_t *o, char *err, size_t errlen)
{
    if (o->duration > 0 && o->cycles >= 0)
        return lfail(o, err, errlen, "invalid --cycles '%lld' with --duration: allowed one of them", o->cycles);
    if (o->off_cache && o->zero_copy)
        return lfail(o, err, errlen, "invalid --off-cache with -z 1: allowed with private buffers only (-z 0)");
    if (o->nsizes) {
        o->minbytes = o->maxbytes = o->sizes[0];
        for (int i = 1; i < o->nsizes; i++) {
            if (o->sizes[i] < o->minbytes)
                o->minbytes = o->sizes[i];
            if (o->sizes[i] > o->maxbytes)
                o->maxbytes = o->sizes[i];
        }
    }
    return 0;
}
