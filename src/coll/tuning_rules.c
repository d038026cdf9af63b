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
    /* bench/results/tune-20261202.md (2 and 4 ranks; kept to the rank counts measured) */
    {COLL_BROADCAST, COLL_RULE_HOST, 2, 4, 0, MB(4), "binomial"},        /* 4 ranks 1M: 161 vs direct 249 us */
    {COLL_BROADCAST, COLL_RULE_HOST, 2, 4, MB(8), ANY_SIZE, "direct"},   /* 2 ranks 64M: 7.7 vs binomial 14.0 ms */
    {COLL_SCATTER, COLL_RULE_HOST, 2, 4, 0, MB(4), "binomial"},          /* 4 ranks 1M: 54 vs direct 98 us */
    {COLL_SCATTER, COLL_RULE_HOST, 2, 2, MB(8), ANY_SIZE, "direct"},     /* 2 ranks 64M: 8.0 vs binomial 12.6 ms */
    {COLL_SCATTER, COLL_RULE_HOST, 3, 4, MB(8), ANY_SIZE, "linear"},     /* 4 ranks 64M: 6.7 vs direct 9.2 ms */
    {COLL_REDUCE, COLL_RULE_HOST, 2, 4, 0, KB(64), "binomial"},          /* 4 ranks 8K: 3.9 vs rs_gather 21.7 us */
    {COLL_ALLTOALL, COLL_RULE_HOST, 2, 4, KB(64), MB(4), "pairwise"},    /* 4 ranks 1M: 232 vs direct 289 us */
    {COLL_KIND_COUNT, 0, 0, 0, 0, 0, NULL},
};
