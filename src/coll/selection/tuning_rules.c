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
#include "coll/selection/tuning_rules.h"

#include <stddef.h>

#define KB(x) ((size_t)(x) << 10)
#define MB(x) ((size_t)(x) << 20)
#define ANY_SIZE ((size_t)-1)

const coll_tuning_rule_t coll_tuning_rules[] = {
    /* kind, scope, pmin, pmax, bytes_min, bytes_max, algorithm */
    /* Callers' buffers on 2 MiB pages (COLL_BUF_HUGE; the test tools' huge-first buffers, or
     * transparent_hugepage=always): process_vm_readv pins one page per 2 MiB instead of 512,
     * and the single-copy algorithms beat the staged ones they lose to on 4 KiB pages.
     * bench/results/huge-rules-20261204.md (`bench/env-ab.sh ... -s 64K,256K,1M,4M,16M,64M -R 3
     * 'auto=' 'cma=COLL_ALGO=...=cma'`, private huge-page buffers, medians of 3 interleaved
     * rounds; auto = the rules below). First: they override the 4 KiB-page rows. */
    /* (AllReduce 2 ranks 32K-256K was cma here, 64K 7.0 vs direct 9.6 us, until the direct
     * algorithms' small calls took rotating stage windows, coll_stage_rot: direct 3.9 vs cma 6.8 us
     * at 64K, 7.1 vs 10.3 at 128K, 13.5 vs 21.0 at 256K, 5 rounds, stage-ring-20261205.md) */
    {COLL_ALLGATHER, COLL_RULE_HUGE, 2, 2, KB(64) + 1, ANY_SIZE, "cma"}, /* 1M 34 vs direct 43 us, 16M 1.37 vs 2.01 ms,
                                                                          64M 6.5 vs 8.6; 64K direct since the small
                                                                          exchanges rotate (2.77 vs 3.39 us, 5 rounds,
                                                                          stage-ring-20261205.md), 128K a tie */
    {COLL_ALLTOALL, COLL_RULE_HUGE, 2, 2, KB(64), ANY_SIZE, "cma"},      /* 64K 3.4 vs pairwise 5.6 us, 4M 132 vs 361,
                                                                         64M 7.2 vs direct 7.5 ms */
    {COLL_BROADCAST, COLL_RULE_HUGE, 2, 2, KB(64), ANY_SIZE, "cma"},     /* 64M 3.7 vs direct 4.4 ms */
    {COLL_SCATTER, COLL_RULE_HUGE, 2, 2, KB(64), ANY_SIZE, "cma"},       /* 64M 3.5 vs direct 4.0 ms */
    {COLL_GATHER, COLL_RULE_HUGE, 2, 2, KB(64) + 1, ANY_SIZE, "cma"},    /* 128K 3.96 vs direct 4.26 us, 256K 6.0 vs
                                                                       binomial 12.8, 64M 3.4 vs direct 3.9 ms */
    {COLL_ALLGATHER, COLL_RULE_HUGE, 4, 4, MB(1), ANY_SIZE, "cma"},      /* 1M 95 vs direct 114 us, 4M 365 vs 494;
                                                                         8M 0.76 vs 2.68 ms, 64M 10.4 vs 21.6 (5
                                                                         rounds, huge-rules section 7; direct's
                                                                         best 12.1): 16M/64M had been direct's
                                                                         0.91-0.92x, cma's best better then too */
    {COLL_ALLTOALL, COLL_RULE_HUGE, 4, 4, KB(256), ANY_SIZE, "cma"},     /* 256K 36 vs direct 52 us, 4M 0.53 vs 1.08 ms,
                                                                         64M 15.1 vs 16.7; 64K 20 vs 17 us */
    {COLL_SCATTER, COLL_RULE_HUGE, 4, 4, MB(1), ANY_SIZE, "cma"},        /* 1M 35 vs linear 65 us (5 rounds), 16M 0.61
                                                                         vs direct 0.97 ms, 64M 3.7 vs 4.6 */
    {COLL_BROADCAST, COLL_RULE_HUGE, 4, 4, MB(1), MB(16), "cma"},        /* 16M 1.9 vs direct 2.8 ms; 64M 11.1 vs 9.9 */
    {COLL_GATHER, COLL_RULE_HUGE, 4, 4, MB(1), ANY_SIZE, "cma"},         /* 1M 36 vs linear 43 us (5 rounds), 4M 100 vs
                                                                         138, 16M 0.59 vs direct 0.92 ms, 64M 3.8 vs 4.1;
                                                                         256K linear 12 vs 18 us */
    /* bench/results/tune-20261203.md (AMD EPYC VM, 2 vCPU): 6, 8, 16 and 32 ranks (3 to
     * 16 per core). cma and the trees' single-copy sends want a core per rank; here
     * the staged direct algorithm wins for AllReduce at every size, and the
     * trees win small rooted calls by 3-13x. First, so they override the rows
     * below; from 5 ranks up, since every gap grew with the ranks per core. */
    {COLL_ALLREDUCE, COLL_RULE_CROWDED, 5, 1024, 0, ANY_SIZE, "direct"},  /* 8 ranks 128K: 122 vs cma 356 us */
    {COLL_BROADCAST, COLL_RULE_CROWDED, 5, 1024, 0, KB(128), "binomial"}, /* 8 ranks 8K: 11.7 vs direct 72.8 us */
    {COLL_BROADCAST, COLL_RULE_CROWDED, 5, 1024, KB(128) + 1, ANY_SIZE, "direct"}, /* 8 ranks 1M: 344 vs binomial 524 */
    {COLL_REDUCE, COLL_RULE_CROWDED, 5, 1024, 0, KB(128), "binomial"},       /* 16 ranks 8K: 28 vs direct 311 us */
    {COLL_SCATTER, COLL_RULE_CROWDED, 5, 1024, 0, KB(16), "binomial"},       /* 8 ranks 8K: 11.9 vs direct 65.6 us */
    {COLL_SCATTER, COLL_RULE_CROWDED, 5, 1024, KB(16) + 1, MB(8), "linear"}, /* 8 ranks 1M: 46 vs direct 114 us */
    {COLL_GATHER, COLL_RULE_CROWDED, 5, 1024, 0, MB(8), "linear"},           /* 8 ranks 1M: 49 vs direct 121 us */
    /* The single-copy algorithms (src/coll/<collective>/<collective>_cma.c) where they beat
     * what these rules chose before, 3 interleaved rounds on the quiet EPYC VM, medians
     * (bench/results/cma-ab-20261204.md, cma-ab-small-20261204.md, cma-ab-gather2-20261204.md);
     * first, so they override the 2-4 rank rows below. Their process_vm_readv costs ~0.3 us a
     * page over a memcpy (cma.h), so small blocks stay with the trees and the staged copies. */
    /* 2 ranks 16K-64K, the staged direct algorithms, since their calls take rotating stage windows
     * and small-exchange rings (coll_stage_rot; env-ab, 5 rounds, 2026-12-05, stage-ring-20261205.md):
     * broadcast 16K 1.13 vs binomial 2.13 us, 32K 2.03 vs cma 2.21 (64K cma 2.71 vs 3.66); gather 16K
     * 0.79 vs binomial 1.00, 32K 1.28 vs 2.20, 64K 2.09 vs cma 3.04 (8K binomial 0.47 vs 0.77) */
    {COLL_BROADCAST, COLL_RULE_HOST, 2, 2, KB(16), KB(32), "direct"},
    {COLL_GATHER, COLL_RULE_HOST, 2, 2, KB(16), KB(64), "direct"},
    {COLL_BROADCAST, COLL_RULE_HOST, 2, 2, KB(32), MB(16), "cma"}, /* 32K 3.9 vs binomial 5.4 us, 1M 52 vs 116, 16M
                                                                       1.53 vs 2.01 ms; 16K 3.1 vs 2.9, 64M a tie */
    /* 2 ranks from 32M: the staged direct algorithms with their streamed copy-out (perf4-20261204.md,
     * 6 rounds): broadcast 32M 4.5 vs binomial 7.3 ms, 64M 9.5 vs 14.5; scatter 32M 3.5 vs cma 4.8,
     * 64M 7.5 vs 10.2; gather 32M 3.8 vs cma 5.1, 64M 7.2 vs 10.2 (1.34-1.6x, every round faster). */
    {COLL_BROADCAST, COLL_RULE_HOST, 2, 2, MB(32), ANY_SIZE, "direct"},
    {COLL_SCATTER, COLL_RULE_HOST, 2, 2, MB(32), ANY_SIZE, "direct"},
    {COLL_GATHER, COLL_RULE_HOST, 2, 2, MB(32), ANY_SIZE, "direct"},
    {COLL_SCATTER, COLL_RULE_HOST, 2, 2, KB(64), ANY_SIZE, "cma"}, /* 64K 4.7 vs binomial 8.5 us, 1M 42 vs 79, 16M 0.98
                                                                     vs 2.21 ms; 32K 3.6 vs 3.5; with non-temporal copies
                                                                     (perf4-20261204.md) 32M 2.9 vs 6.3 ms, 64M 5.9 vs 8.6 */
    {COLL_GATHER, COLL_RULE_HOST, 2, 2, MB(4), ANY_SIZE, "cma"},   /* 4M 144 vs binomial 236 us, 64M 7.3 vs 8.1 ms */
    {COLL_GATHER, COLL_RULE_HOST, 2, 2, 0, MB(4) - 1, "binomial"}, /* 1M 29.8 vs cma 38.5 us, 8K 0.52 vs 2.8 */
    /* 4 ranks from 16M: the staged direct algorithms with their streamed copy-out (perf4-20261204.md,
     * two runs of 5 rounds, loaded): broadcast 16M 3.0-3.4 vs cma 10.3 ms, 64M 13-15 vs 39-41;
     * alltoall 16M 9.6-10.0 vs cma 11.9-13.6, 64M 39 vs 45; scatter 16M 2.2-2.3 vs cma 2.5-2.9,
     * 64M 7.6-8.9 vs linear 9.3-9.5 (medians 1.08-3.2x). Gather, once the stages were capped at
     * L3 / (2 x local ranks) (gather4-20261204.md, 5 rounds): 16M 1.23 vs linear 1.47 ms, 32M 2.5
     * vs 3.2, 64M 4.9 vs 6.2 (-z 64M 3.1 vs 4.2; 1.12-1.45x); 4M a tie private (1.13x [0.80-1.54]). */
    {COLL_BROADCAST, COLL_RULE_HOST, 4, 4, MB(16), ANY_SIZE, "direct"},
    {COLL_GATHER, COLL_RULE_HOST, 4, 4, MB(16), ANY_SIZE, "direct"},
    {COLL_ALLTOALL, COLL_RULE_HOST, 4, 4, MB(16), ANY_SIZE, "direct"},
    {COLL_SCATTER, COLL_RULE_HOST, 4, 4, MB(16), ANY_SIZE, "direct"},
    {COLL_BROADCAST, COLL_RULE_HOST, 4, 4, MB(1), ANY_SIZE, "cma"}, /* 1M 148 vs binomial 194 us, 4M 0.61 vs 1.08 ms,
                                                                        64M 19.6 vs 20.8 ms; 256K 58 vs 45 us */
    {COLL_SCATTER, COLL_RULE_HOST, 4, 4, MB(4), MB(16), "cma"},     /* 4M 211 vs linear 257 us, 16M 1.37 vs 2.02 ms; 1M
                                                                    66 vs 46 us, 64M 6.8 vs 6.5 ms */
    {COLL_ALLGATHER, COLL_RULE_HOST, 4, 4, MB(1), ANY_SIZE, "direct"}, /* 1M 128 vs cma 184 us, 64M 22.4 vs 25.7 ms
                                                                         (the cost model prefers cma with a core a rank) */
    {COLL_ALLTOALL, COLL_RULE_HOST, 4, 4, MB(4) + 1, ANY_SIZE, "cma"}, /* 16M 6.4 vs direct 7.4 ms, 64M 25.3 vs 30.3;
                                                                           4M a tie, 1M 182 vs 114 us */
    {COLL_ALLREDUCE, COLL_RULE_HOST, 2, 1024, 0, KB(32), "direct"},
    /* 2-4 ranks, bench/results/perf-2ranks-20261203.md (AMD EPYC VM, 3-5 interleaved rounds,
     * loaded): 2 ranks 1M 447 vs cma 999 us, 64M 49 vs 64 ms; 4 ranks 1M 423 vs 971 us, 8M 9.1
     * vs 15.0 ms, 64M 66 vs 112 ms (256K a tie). A process_vm_readv copy costs ~5x a memcpy in
     * cache here (45-50 vs 10 us per 512K): the staged copies win. */
    {COLL_ALLREDUCE, COLL_RULE_HOST, 2, 4, KB(32) + 1, ANY_SIZE, "direct"},
    {COLL_ALLREDUCE, COLL_RULE_HOST, 5, 1024, KB(32) + 1, ANY_SIZE, "cma"},
    /* bench/results/tune-20261202.md, second table (after the cooperative CMA
     * copy: a root's sends now use two cores), 2 and 4 ranks; kept to the rank
     * counts measured */
    {COLL_BROADCAST, COLL_RULE_HOST, 2, 4, 0, ANY_SIZE, "binomial"}, /* 2 ranks 64M: 3.2 vs direct 5.3 ms */
    {COLL_SCATTER, COLL_RULE_HOST, 2, 2, 0, ANY_SIZE, "binomial"},   /* 2 ranks 8M: 214 vs direct 895 us */
    {COLL_SCATTER, COLL_RULE_HOST, 3, 4, 0, ANY_SIZE, "linear"},     /* 4 ranks 1M: 50 vs binomial 66 us */
    /* Reduce, 2-4 ranks up to 512K: the binomial tree (one receive-reduce of the whole vector per round)
     * beats the staged direct algorithm's two barriers and copies (env-ab, 5 interleaved rounds,
     * 2026-12-04, bench/results/huge-rules-20261204.md section 5; 4 KiB and 2 MiB pages alike): 2 ranks
     * 128K 13.5 vs 17.8 us, 512K 29.7 vs 49.9; 4 ranks 128K 23.5 vs 45, 256K 46 vs 71, 512K 73 vs 111
     * (4 KiB pages 70 vs 87); 1M and up direct (2 ranks 57 vs 65-75 us, 4 ranks 2M 227 vs 385). */
    /* 2 ranks 16K-4M: direct, since its small calls take rotating stage windows (coll_stage_rot;
     * env-ab, 5 rounds, 2026-12-05, stage-ring-20261205.md): 16K 1.39 vs binomial 2.10 us, 64K 3.8
     * vs 8.0, 256K 11.9 vs 20.9, 512K 22.4 vs 29.9, 1M 40.9 vs 61.9; 8K a tie, 1K binomial (0.20 vs
     * 0.53) */
    {COLL_REDUCE, COLL_RULE_HOST, 2, 2, KB(16), MB(4) - 1, "direct"},
    {COLL_REDUCE, COLL_RULE_HOST, 2, 4, 0, KB(512), "binomial"}, /* 4 ranks 8K: 9.0 vs rs_gather 36.8 us */
    /* 2 ranks 4M-16M: the pipeline (chain in COLL_CHUNK pieces; with 2 ranks the member streams its
     * input to the root, which reduces each piece as it lands): 8M 595 vs direct 732 us (4 KiB pages
     * 607 vs 783), 4M a tie (259 vs 271), 2M direct (95 vs 131) */
    {COLL_REDUCE, COLL_RULE_HOST, 2, 2, MB(4), MB(16) - 1, "pipeline"},
    /* 2 ranks from 16M: the staged direct algorithms, since their copies into the result stream
     * (coll_direct_copy_out, COLL_COPY_NT_MIN): a process_vm_readv copy runs at about half the rate
     * of a non-temporal memcpy here (perf: _copy_to_iter 35% vs coll_copy_nt 17% of allgather_cma's
     * time for the same bytes, page pinning 15% more). bench/results/perf4-20261204.md, 5 rounds:
     * alltoall 16M 2.18 vs cma 2.93 vs pairwise 2.98 ms, 32M 4.5 vs 5.2, 64M 9.5 vs 11.4;
     * allgather (the direct rule below) 16M 2.37 vs cma 2.79, 32M 4.8 vs 5.5, 64M 10.1 vs 11.8. */
    {COLL_ALLTOALL, COLL_RULE_HOST, 2, 2, MB(16), ANY_SIZE, "direct"},
    /* reduce_scatter 2 ranks 256K-16M: the ring (one chunked exchange, each half reduced as it lands)
     * beats staging half and reducing after a barrier (env-ab, 5 rounds, 2026-12-04,
     * huge-rules-20261204.md section 6; 4 KiB pages alike): 256K 15.1 vs 21.3 us, 1M 37.4 vs 47.7, 8M
     * 401 vs 547, 16M 1061 vs 1808; 128K a tie, 64M direct (5687 vs 5884) */
    /* ... but 64K-1M (totals) direct since its small calls take rotating stage windows
     * (coll_stage_rot; env-ab, 5 rounds, 2026-12-05, stage-ring-20261205.md): 128K 5.5 vs ring 10.0
     * us, 256K 9.8 vs 14.4, 1M 29.9 vs 36.4; 2M the ring (73.8 vs 90.9), 4M a tie; 64K and below
     * direct posts to the small slots, which do not rotate: the ring (5.3 vs 5.9) */
    {COLL_REDUCE_SCATTER, COLL_RULE_HOST, 2, 2, KB(64) + 1, MB(1), "direct"},
    {COLL_REDUCE_SCATTER, COLL_RULE_HOST, 2, 2, MB(1) + 1, MB(16), "ring"},
    /* ... and up to 16K the staged direct one (one synchronisation, small slots): env-ab, 7 rounds,
     * 2026-12-05 (bench/results/huge-rules-20261204.md section 7): 1K 0.26 vs ring 0.49 us, 8K 0.63 vs
     * 0.95, 16K 1.50 vs 1.67; 32K-64K the ring (2.94 vs 2.98, 5.43 vs 5.77) */
    {COLL_REDUCE_SCATTER, COLL_RULE_HOST, 2, 2, 0, KB(16), "direct"},
    /* reduce 2 ranks from 16M: direct with its streamed copy-out (perf4-20261204.md, 5 rounds):
     * 16M 2.6 vs rs_gather 3.6 ms, 32M 5.5 vs 9.3, 64M 11.2 vs 16.6 (1.31x, 1.66x, 1.47x) */
    {COLL_REDUCE, COLL_RULE_HOST, 2, 2, MB(16), ANY_SIZE, "direct"},
    /* 2 ranks, small: the staged direct copy, one synchronisation (env-ab, 5 rounds, 2026-12-04 21:45,
     * bench/results/huge-rules-20261204.md section 4): 1K 0.27 vs pairwise 0.56 us, 8K 0.89 vs 1.14
     * (MPICH 1.23; 4 KiB pages alike: 0.25 vs 0.54, 0.70 vs 1.11); 32K-48K a tie */
    {COLL_ALLTOALL, COLL_RULE_HOST, 2, 2, 0, KB(16), "direct"},
    {COLL_ALLTOALL, COLL_RULE_HOST, 2, 2, KB(64), ANY_SIZE, "pairwise"}, /* 2 ranks 8M: 453 vs direct 686 us */
    {COLL_ALLTOALL, COLL_RULE_HOST, 3, 4, 0, ANY_SIZE, "direct"},        /* 4 ranks 64K: 16 vs pairwise 31 us */
    {COLL_GATHER, COLL_RULE_HOST, 3, 4, 0, ANY_SIZE, "linear"}, /* tune-20261203.md: 4 ranks 4M: 147 vs direct 417 us */
    /* 2 ranks 1M: 44 vs ring 64 us; 64M: 43 vs ring 102 ms (CPU per call 16 vs 42 ms), -z 29 vs
     * 108 ms: medians of 6 interleaved rounds on the loaded VM, bench/results/roofline-20261203.md;
     * the ring rule above 16M it replaces had 6.7 vs direct 7.1 ms on a quiet one */
    {COLL_ALLGATHER, COLL_RULE_HOST, 2, 2, 0, ANY_SIZE, "direct"},
    {COLL_KIND_COUNT, 0, 0, 0, 0, 0, NULL},
};
