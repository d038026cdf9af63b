/*
 * tuning_rules.c - measured rules for automatic selection, consulted after a
 * forced choice and before the cost model (ARCHITECTURE: forced -> rules ->
 * cost model). Each rule: collective, scope, rank range, size range, algorithm.
 * A rule applies only when its algorithm is usable for the call.
 *
 * Source: bench/tune.sh on the development VM (2 vCPU Xeon Sapphire Rapids,
 * KVM, Debian 12, CMA available), fp32, 2 and 4 local ranks; see
 * bench/results/tune-*.md for the tables these rows summarise.
 */
#include "coll/tuning_rules.h"

#include <stddef.h>

#define KB(x) ((size_t)(x) << 10)
#define MB(x) ((size_t)(x) << 20)
#define ANY_SIZE ((size_t)-1)

const coll_tuning_rule_t coll_tuning_rules[] = {
    /* kind, scope, pmin, pmax, bytes_min, bytes_max, algorithm */
    {COLL_ALLREDUCE, COLL_RULE_HOST, 2, 1024, 0, KB(32), "direct"},
    {COLL_ALLREDUCE, COLL_RULE_HOST, 2, 1024, KB(32) + 1, ANY_SIZE, "cma"},
    {COLL_KIND_COUNT, 0, 0, 0, 0, 0, NULL},
};
