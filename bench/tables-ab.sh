#!/usr/bin/env bash
# bench/tables-ab.sh - interleaved A/B of a base build (A) and this one (B, C = B with --json:
# per-iteration gathers and the stall watcher) on all_reduce_test -p 4 -b 8K -e 64M -f 2:
# wall seconds of the whole sweep and the sum of its aveg_time column. Run under the lock:
#   A=/path/base/bin/all_reduce_test ROUNDS=8 flock /tmp/collbench-bench.lock bench/tables-ab.sh
A=${A:?base build all_reduce_test (e.g. git archive 56eb239 | tar -x -C DIR; make -C DIR bin/all_reduce_test)}
B=${B:-bin/all_reduce_test}
args="-p 4 -b 8K -e 64M -f 2"
for round in $(seq 1 ${ROUNDS:-6}); do
  for v in ${VARIANTS:-A B C}; do
    case $v in A) bin=$A; extra="";; B) bin=$B; extra="";; C) bin=$B; extra="--json ${TMPDIR:-/tmp}/tables-ab.json";; esac
    t0=$(date +%s.%N)
    $bin $args $extra >${TMPDIR:-/tmp}/tables-ab.$v.out 2>&1 || echo "FAIL $v"
    t1=$(date +%s.%N)
    sumt=$(awk -F'|' '/^[0-9]+ +\|/ {s += $2} END {printf "%.1f", s}' ${TMPDIR:-/tmp}/tables-ab.$v.out)
    echo "$round $v wall_s $(echo "$t1 - $t0" | bc) sum_avg_time_us $sumt"
  done
done
