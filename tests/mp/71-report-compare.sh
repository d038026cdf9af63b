#!/usr/bin/env bash
# timeout: 60
# parallel: yes
# collbench-report compare: a 20% busbw drop at one size is flagged and gives
# exit 1; changes within the threshold give exit 0; bad input gives exit 2.
set -u
. "$(dirname "$0")/../lib/common.sh"
ROOT=$CB_ROOT
R=$ROOT/scripts/collbench-report
FX=$ROOT/tests/fixtures
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
run() { # run EXPECTED-RC ARGS... ; output in $T/out, $T/err
    local want=$1; shift
    "$R" compare "$@" >"$T/out" 2>"$T/err"; local rc=$?
    if [ $rc -eq "$want" ]; then pass "compare $* -> $rc"
    else fail "compare $* -> $rc, want $want"; sed 's/^/   | /' "$T/out" "$T/err"; fi
}
has() { grep -qE -- "$2" "$T/$1" && pass "$3" || { fail "$3: /$2/ not in $1"; sed 's/^/   | /' "$T/$1"; }; }
hasnt() { grep -qE -- "$2" "$T/$1" && { fail "$3: /$2/ in $1"; sed 's/^/   | /' "$T/$1"; } || pass "$3"; }

B=$FX/compare-baseline.json
# 1. current has 1M 25% slower (busbw -20%), other sizes within +-5%
run 1 "$B" "$FX/compare-current.json"
has out '^\| 1M +\| +1048576 \| +10\.29564 \| +8\.23662 \| +-20\.0% \| REGRESSION' "1M flagged with -20.0%"
[ "$(grep -c REGRESSION "$T/out")" -eq 1 ] && pass "only one size flagged" || fail "flagged: $(grep REGRESSION "$T/out")"
has out '^\| 4M .*\| +-2\.0% \| ok' "4M within threshold"
has out '^compare: 1 regression\(s\) beyond 10%.*allreduce 1M \(-20\.0%\)' "summary line names the size"
# same with algbw and time
run 1 "$B" "$FX/compare-current.json" --metric algbw
has out '1048576 .*-20\.0% \| REGRESSION' "algbw: 1M flagged"
run 1 "$B" "$FX/compare-current.json" --metric time
has out '1048576 .*\+25\.0% \| REGRESSION' "time: 1M +25% flagged"
# a threshold above the drop: no regression
run 0 "$B" "$FX/compare-current.json" --threshold 25%
run 0 "$B" "$FX/compare-current.json" --threshold 30 --metric time
# 2. within the threshold (worst -4.8%)
run 0 "$B" "$FX/compare-current-ok.json"
has out '^compare: no regression beyond 10% \(7 size\(s\) in 1 run pair\(s\)\)' "ok summary"
hasnt out 'REGRESSION' "nothing flagged"
run 1 "$B" "$FX/compare-current-ok.json" --threshold 4%
# an improvement is not a regression
run 0 "$FX/compare-current.json" "$B"
has out '1048576 .*\+25\.0% \| improved' "improvement shown"
# 3. across formats: hccl_test log (busbw computed with --ranks) vs collbench table log
run 0 "$FX/hccl_test-all_reduce.log" "$FX/all_reduce_test.log" --ranks 4
has out '^\| 8K +\| +8192 \| +0\.49014 \| +0\.49015 \|' "busbw compared across formats"
# a check that fails only in CURRENT counts as a regression
sed 's/"check_result": "success"/"check_result": "failed"/; 0,/"wrong": 0/s//"wrong": 2/' \
    "$FX/compare-current-ok.json" >"$T/cur-failed.json"
run 1 "$B" "$T/cur-failed.json"
has out 'CHECK FAILED' "failed check flagged"
# 4. bad input -> 2 with a clear message
run 2 "$B" "$T/missing.json"
has err 'cannot read .*missing.json' "missing file message"
echo "not a result" >"$T/junk.log"
run 2 "$T/junk.log" "$B"
has err 'no results found' "junk file message"
# no common sizes: same operator, disjoint sizes
{ echo "the minbytes is 8, maxbytes is 16, iters is 20, warmup_iters is 10"
  echo "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:"
  echo "8                 | 10.00          | 0.00080              | success"
  echo "16                | 10.00          | 0.00160              | success"; } >"$T/all_reduce_small.log"
run 2 "$B" "$T/all_reduce_small.log"
has err 'no sizes in common' "no common sizes message"
# no common operator
run 2 "$B" "$FX/broadcast_test.csv"
has err 'no runs to compare' "no common operator message"
run 2 "$B" "$FX/compare-current.json" --threshold lots
run 2 "$B"

finish
