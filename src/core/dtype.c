/*
 * dtype.c - datatype sizes and the names of dtypes, ops and collective kinds.
 *
 * Names use the hccl_test spellings (int8 ... fp16 fp32 fp64, and "bfp16" for
 * bfloat16). Parsing is case-insensitive and also accepts common aliases
 * (bf16, bfloat16, half, float, float32, double, char, int...).
 */
#include <stddef.h>
#include <strings.h>

#include "coll.h"

static const size_t dtype_sizes[COLL_DTYPE_COUNT] = {
    [COLL_INT8] = 1,   [COLL_INT16] = 2,  [COLL_INT32] = 4, [COLL_INT64] = 8, [COLL_UINT8] = 1, [COLL_UINT16] = 2,
    [COLL_UINT32] = 4, [COLL_UINT64] = 8, [COLL_FP16] = 2,  [COLL_BF16] = 2,  [COLL_FP32] = 4,  [COLL_FP64] = 8,
};

static const char *const dtype_names[COLL_DTYPE_COUNT] = {
    [COLL_INT8] = "int8",   [COLL_INT16] = "int16",   [COLL_INT32] = "int32",   [COLL_INT64] = "int64",
    [COLL_UINT8] = "uint8", [COLL_UINT16] = "uint16", [COLL_UINT32] = "uint32", [COLL_UINT64] = "uint64",
    [COLL_FP16] = "fp16",   [COLL_BF16] = "bfp16",    [COLL_FP32] = "fp32",     [COLL_FP64] = "fp64",
};

static const char *const op_names[COLL_OP_COUNT] = {
    [COLL_SUM] = "sum",
    [COLL_PROD] = "prod",
    [COLL_MAX] = "max",
    [COLL_MIN] = "min",
};

static const char *const kind_names[COLL_KIND_COUNT] = {
    [COLL_ALLREDUCE] = "allreduce",
    [COLL_ALLGATHER] = "allgather",
    [COLL_ALLGATHERV] = "allgatherv",
    [COLL_REDUCE_SCATTER] = "reduce_scatter",
    [COLL_REDUCE_SCATTERV] = "reduce_scatterv",
    [COLL_REDUCE] = "reduce",
    [COLL_BROADCAST] = "broadcast",
    [COLL_SCATTER] = "scatter",
    [COLL_GATHER] = "gather",
    [COLL_ALLTOALL] = "alltoall",
    [COLL_ALLTOALLV] = "alltoallv",
    [COLL_BARRIER] = "barrier",
    [COLL_SENDRECV] = "sendrecv",
};

struct name_alias {
    const char *name;
    int value;
};

/* Accepted besides the canonical names above. */
static const struct name_alias dtype_aliases[] = {
    {"char", COLL_INT8},     {"schar", COLL_INT8},     {"short", COLL_INT16},     {"int", COLL_INT32},
    {"long", COLL_INT64},    {"longlong", COLL_INT64}, {"uchar", COLL_UINT8},     {"byte", COLL_UINT8},
    {"ushort", COLL_UINT16}, {"uint", COLL_UINT32},    {"unsigned", COLL_UINT32}, {"ulong", COLL_UINT64},
    {"half", COLL_FP16},     {"float16", COLL_FP16},   {"f16", COLL_FP16},        {"bf16", COLL_BF16},
    {"bfloat16", COLL_BF16}, {"bfp", COLL_BF16},       {"float", COLL_FP32},      {"float32", COLL_FP32},
    {"f32", COLL_FP32},      {"double", COLL_FP64},    {"float64", COLL_FP64},    {"f64", COLL_FP64},
};

static const struct name_alias op_aliases[] = {
    {"add", COLL_SUM}, {"mul", COLL_PROD}, {"product", COLL_PROD}, {"maximum", COLL_MAX}, {"minimum", COLL_MIN},
};

size_t coll_dtype_size(coll_dtype_t dt)
{
    if ((unsigned)dt >= COLL_DTYPE_COUNT)
        return 0;
    return dtype_sizes[dt];
}

const char *coll_dtype_name(coll_dtype_t dt)
{
    if ((unsigned)dt >= COLL_DTYPE_COUNT)
        return "unknown";
    return dtype_names[dt];
}

const char *coll_op_name(coll_op_t op)
{
    if ((unsigned)op >= COLL_OP_COUNT)
        return "unknown";
    return op_names[op];
}

const char *coll_kind_name(coll_kind_t k)
{
    if ((unsigned)k >= COLL_KIND_COUNT)
        return "unknown";
    return kind_names[k];
}

/* The names a parser accepts: the canonical ones, indexed by value, and aliases. */
struct name_table {
    const char *const *names;
    size_t count;
    const struct name_alias *aliases;
    size_t naliases;
};

static const struct name_table dtype_table = {dtype_names, COLL_DTYPE_COUNT, dtype_aliases,
                                              sizeof dtype_aliases / sizeof dtype_aliases[0]};
static const struct name_table op_table = {op_names, COLL_OP_COUNT, op_aliases,
                                           sizeof op_aliases / sizeof op_aliases[0]};

/* The value named by name (case-insensitive) in t; -1 if unknown or NULL. */
static int lookup(const char *name, const struct name_table *t)
{
    if (name == NULL)
        return -1;
    for (size_t i = 0; i < t->count; i++)
        if (strcasecmp(name, t->names[i]) == 0)
            return (int)i;
    for (size_t i = 0; i < t->naliases; i++)
        if (strcasecmp(name, t->aliases[i].name) == 0)
            return t->aliases[i].value;
    return -1;
}

coll_status_t coll_dtype_from_name(const char *name, coll_dtype_t *dt)
{
    int v = dt ? lookup(name, &dtype_table) : -1;
    if (v < 0)
        return COLL_ERR_INVALID_ARG;
    *dt = (coll_dtype_t)v;
    return COLL_SUCCESS;
}

coll_status_t coll_op_from_name(const char *name, coll_op_t *op)
{
    int v = op ? lookup(name, &op_table) : -1;
    if (v < 0)
        return COLL_ERR_INVALID_ARG;
    *op = (coll_op_t)v;
    return COLL_SUCCESS;
}
