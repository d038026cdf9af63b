#!/usr/bin/env bash
# timeout: 120
# parallel: yes
# collbench-report: every input format (hccl_test, nccl-tests and collbench
# table logs, collbench JSON and CSV) parsed into report.md / results.csv with
# the right numbers, failed rows marked, real PNG plots, and a clear message
# (tables still written) when matplotlib cannot be imported; the operator taken
# from the file name (or its directory) when the log does not name it.
set -u
. "$(dirname "$0")/../lib/common.sh"
ROOT=$CB_ROOT
R=$ROOT/scripts/collbench-report
FX=$ROOT/tests/fixtures
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
csvrow() { # csvrow RUN BYTES -> the results.csv line of that run and size
    awk -F, -v r="$1" -v b="$2" '$1 == r && $11 == b' "$T/out/results.csv"; }
field() { # field RUN BYTES COLUMN-NAME
    awk -F, -v r="$1" -v b="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $1 == r && $11 == b { print $(col[c]) }' "$T/out/results.csv"; }
expect() { # expect RUN BYTES COLUMN VALUE
    local v; v=$(field "$1" "$2" "$3")
    if [ "$v" = "$4" ]; then pass "$1 $2 $3 = $4"; else fail "$1 $2 $3: got '$v', want '$4'"; fi; }

for f in hccl_test-all_reduce.log hccl_test-check-failed.log nccl-tests-all_reduce_perf.log \
         all_reduce_test.log all_gather_test.json broadcast_test.csv; do
    [ -s "$FX/$f" ] || { echo "missing fixture $FX/$f"; exit 1; }
done

# --- 1. everything at once, with Debian's python (shebang) and matplotlib
"$R" "$FX"/hccl_test-all_reduce.log "$FX"/hccl_test-check-failed.log "$FX"/nccl-tests-all_reduce_perf.log \
    "$FX"/all_reduce_test.log "$FX"/all_gather_test.json "$FX"/broadcast_test.csv \
    --ranks 4 --title "parser test" -o "$T/out" >"$T/stdout" 2>"$T/stderr"
rc=$?
[ $rc -eq 0 ] && pass "report exit 0" || { fail "report exit $rc"; cat "$T/stderr"; }
for f in report.md results.csv index.html; do [ -s "$T/out/$f" ] && pass "$f written" || fail "$f missing"; done
[ -s "$T/out/results.csv" ] || { echo "no results.csv, giving up"; exit 1; }
n=$(($(wc -l <"$T/out/results.csv") - 1))
[ "$n" -eq 48 ] && pass "48 result lines" || fail "results.csv has $n lines, want 48 (14+3+5+8+4+8+6)"
runs=$(tail -n +2 "$T/out/results.csv" | cut -d, -f1 | sort -u | tr '\n' ' ')
[ "$runs" = "all_gather_test all_reduce_test-1 all_reduce_test-2 broadcast_test hccl_test-all_reduce hccl_test-check-failed nccl-tests-all_reduce_perf " ] \
    && pass "run ids" || fail "run ids: $runs"

# hccl_test sample: numbers as printed, busbw computed with 2(n-1)/n for 4 ranks
M=$T/out/report.md
has "$M" "| 8K | 8192 | 25.07 | 0.32676 | 0.49014* | success |" "hccl 8192 row in report.md"
has "$M" "| 64M | 67108864 | 7840.77 | 8.55895 | 12.83842* | success |" "hccl 64M row in report.md"
expect hccl_test-all_reduce 8192 algbw_gbs 0.32676
expect hccl_test-all_reduce 8192 time_us 25.07
expect hccl_test-all_reduce 8192 busbw_gbs 0.49014
expect hccl_test-all_reduce 8192 busbw_note computed
expect hccl_test-all_reduce 8192 collective allreduce
expect hccl_test-all_reduce 8192 format hccl_test
# hccl_test failure lines: root row failed with 3 wrong, rank 3 line is no extra row
expect hccl_test-check-failed 1048576 check_result failed
expect hccl_test-check-failed 1048576 wrong 3
expect hccl_test-check-failed 1048576 algbw_gbs 6.89389
expect hccl_test-check-failed 2097152 check_result success
expect hccl_test-check-failed 1048576 busbw_gbs ""     # operator unknown from its name
[ "$(csvrow hccl_test-check-failed 1048576 | wc -l)" -eq 1 ] && pass "one 1M row" || fail "rank-3 line added a row"
has "$M" "| 1M | 1048576 | 152.10 | 6.89389 |  | **failed** (3 wrong) |" "failed row marked in report.md"
has "$M" "rank 3 reported check failed at 1M" "rank 3 failure noted"
has "$M" "check buf[1023] error, exp:16.000000, act:14.000000" "check buf line kept"
has "$M" "cannot be computed: operator unknown (use --name)" "why busbw is blank"
# nccl-tests sample: out-of-place + in-place, ranks from the Rank lines
expect nccl-tests-all_reduce_perf 134217728 busbw_gbs 43.32
expect nccl-tests-all_reduce_perf 134217728 algbw_gbs 43.32
expect nccl-tests-all_reduce_perf 134217728 time_us 3098.44
expect nccl-tests-all_reduce_perf 134217728 inplace_busbw_gbs 43.36
expect nccl-tests-all_reduce_perf 134217728 inplace_time_us 3095.1
expect nccl-tests-all_reduce_perf 134217728 ranks 2
expect nccl-tests-all_reduce_perf 134217728 dtype fp32
expect nccl-tests-all_reduce_perf 134217728 collective allreduce
expect nccl-tests-all_reduce_perf 8 check_result success
has "$M" "| 128M | 134217728 | 3098.44 | 43.32000 | 43.32000 | success | 3095.10 | 43.36000 | 43.36000 |" "nccl 128M row"
has "$M" "avg bus bandwidth 22.8742 GB/s" "nccl avg bus bandwidth"
# collbench table log: two runs, measured busbw, failure details
expect all_reduce_test-1 1048576 busbw_gbs 10.29563
expect all_reduce_test-1 1048576 busbw_note ""
expect all_reduce_test-1 8192 algbw_gbs 0.32677
expect all_reduce_test-2 32768 check_result failed
expect all_reduce_test-2 32768 wrong 7
expect all_reduce_test-2 65536 time_us 36.43
expect all_reduce_test-2 65536 format collbench-table
# collbench JSON: operator, dtype, ranks from the content; time = max over ranks
expect all_gather_test 1048576 algbw_gbs 4.80007
expect all_gather_test 1048576 busbw_gbs 3.60005
expect all_gather_test 1048576 time_us 218.45
expect all_gather_test 1048576 time_min_us 207.53
expect all_gather_test 1048576 collective allgather
expect all_gather_test 262144 check_result failed
expect all_gather_test 262144 wrong 5
has "$M" "| 256K | 262144 | 80.00 | 3.27680 | 2.45760 | **failed** (5 wrong) |" "JSON failed row in report.md"
# collbench CSV
expect broadcast_test 67108864 algbw_gbs 12.28801
expect broadcast_test 67108864 time_us 5461.33
expect broadcast_test 67108864 dtype fp16
expect broadcast_test 67108864 ranks 2
expect broadcast_test 67108864 algorithm pipeline
has "$M" "| broadcast_test | Broadcast | collbench-csv | 2 | fp16 | 64K..64M (6) | 12.28801 @ 64M | 12.28801 @ 64M | PASS |" "summary line"
has "$M" "| hccl_test-check-failed | ? | hccl_test | 4 |  | 1M..4M (3) | 8.02891 @ 4M |  | **FAIL** |" "FAIL in summary"

# plots: real PNGs (magic bytes) and SVGs, linked from index.html
png_ok() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }
for run in hccl_test-all_reduce nccl-tests-all_reduce_perf all_reduce_test-1 all_reduce_test-2 \
           all_gather_test broadcast_test summary; do
    for m in algbw busbw; do
        p=$T/out/${run}_$m.png
        png_ok "$p" && pass "${run}_$m.png is a PNG ($(stat -c %s "$p") bytes)" || fail "${run}_$m.png missing or not a PNG"
        grep -q '<svg' "$T/out/${run}_$m.svg" 2>/dev/null && pass "${run}_$m.svg" || fail "${run}_$m.svg missing"
        has "$T/out/index.html" "${run}_$m.png" "index links ${run}_$m.png"
    done
done
png_ok "$T/out/hccl_test-check-failed_algbw.png" && pass "check-failed algbw plot" || fail "check-failed algbw plot"
[ ! -e "$T/out/hccl_test-check-failed_busbw.png" ] && pass "no busbw plot without busbw" || fail "empty busbw plot written"
has "$T/out/index.html" 'href="report.md"' "index links report.md"
has "$T/out/index.html" 'href="results.csv"' "index links results.csv"
grep -q 'plots skipped' "$T/stderr" && fail "plots skipped with Debian python: $(cat "$T/stderr")" || pass "matplotlib used"

# --- 2. --name / --ranks: hccl_test log gets busbw 2(n-1)/n = 1.75 for 8 ranks
"$R" "$FX/hccl_test-check-failed.log" --name allreduce --ranks 8 -o "$T/out" >/dev/null 2>&1 || fail "--name run"
expect hccl_test-check-failed 1048576 busbw_gbs 12.06431
expect hccl_test-check-failed 1048576 collective allreduce

# --- 3. several runs in one log (hccl_test + nccl-tests + hccl_test), and a
#        failure reported only by a non-root rank (rank line before the root row)
{ cat "$FX/hccl_test-all_reduce.log" "$FX/nccl-tests-all_reduce_perf.log"
  echo "the minbytes is 2097152, maxbytes is 2097152, iters is 5, warmup_iters is 1"
  echo "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:"
  echo "rank id 2, check result failed, 2097152 | 280.00 | 7.48983 | failed"
  echo "2097152           | 276.40         | 7.58738              | success"; } >"$T/mixed_broadcast.log"
"$R" "$T/mixed_broadcast.log" --ranks 2 -f csv -o "$T/out" >/dev/null 2>&1 || fail "mixed log"
[ "$(tail -n +2 "$T/out/results.csv" | cut -d, -f1 | sort -u | wc -l)" -eq 3 ] && pass "3 runs in one log" || fail "runs in mixed log: $(cut -d, -f1 "$T/out/results.csv" | sort -u | tr '\n' ' ')"
expect mixed_broadcast-1 8192 format hccl_test
expect mixed_broadcast-1 8192 busbw_gbs 0.32676          # broadcast: factor 1
expect mixed_broadcast-2 134217728 format nccl-tests
expect mixed_broadcast-3 2097152 check_result failed
expect mixed_broadcast-3 2097152 time_us 276.4

# --- 3b. collbench table with -a all (min/avg/max columns) and per-rank error lines
{ echo "the minbytes is 8192, maxbytes is 16384, iters is 20, warmup_iters is 10"
  echo "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result: | bus_bandwidth(GB/s): | min_time(us): | avg_time(us): | max_time(us):"
  echo "8192              | 25.07          | 0.32677              | success       | 0.49015 | 20.10         | 22.50         | 25.07"
  echo "check buf[7] error, exp:2.000000, act:0.000000 (rank 1)"
  echo "total err is 2 (rank 1)"
  echo "total err is 4 (rank 3)"
  echo "16384             | 26.41          | 0.62037              | failed        | 0.93056 | 21.00         | 23.75         | 26.41"; } >"$T/all_reduce_agg.log"
"$R" "$T/all_reduce_agg.log" -f csv -o "$T/out" >/dev/null 2>&1 || fail "agg log"
expect all_reduce_agg 8192 time_us 25.07
expect all_reduce_agg 8192 time_min_us 20.1
expect all_reduce_agg 8192 time_avg_us 22.5
expect all_reduce_agg 8192 busbw_gbs 0.49015
expect all_reduce_agg 16384 check_result failed
expect all_reduce_agg 16384 wrong 6

# --- 3c. a collbench JSON of a test that failed before its first size: kept as a FAIL run
cat >"$T/alltoall_test.json" <<'JSON'
{"schema": "collbench-result/1",
 "header": {"tool": "alltoall_test", "ranks": 2, "collective": "alltoall", "dtype": "fp32", "iters": 20, "warmup_iters": 10},
 "results": [],
 "status": {"exit_code": 3, "error": "rank 0: shm segment: out of memory"}}
JSON
"$R" "$T/alltoall_test.json" "$FX/broadcast_test.csv" -o "$T/empty" >/dev/null 2>"$T/e6"; rc=$?
[ $rc -eq 0 ] && pass "empty-results JSON accepted" || fail "empty-results JSON: exit $rc: $(cat "$T/e6")"
has "$T/empty/report.md" "| alltoall_test | AlltoAll | collbench-json | 2 | fp32 | none |  |  | **FAIL** |" "empty run is a FAIL in the summary"
has "$T/empty/report.md" "no result rows: exit code 3: rank 0: shm segment: out of memory" "why it has no rows"

# --- 3d. operator from the file name when the log does not say (never "unknown op"):
#         all_reduce, allreduce, AllReduceTest, hccl prefix, all_gather..., then the directory
mkdir -p "$T/names/all_reduce" "$T/names/x/allgather_runs/r1"
for n in all_reduce allreduce AllReduceTest hcclallreduce8p allreduce_fp32 all-reduce_16p \
         all_gather AllGatherResult all_gatherv_test ReduceScatter reduce_scatter_v alltoallv all2all \
         Broadcast-16npu output all_reduce/rank0 x/allgather_runs/r1/out; do
    cp "$FX/hccl_test-all_reduce.log" "$T/names/$n.log"
done
opof() { # opof FILE -> the operator collbench-report gives it
    "$R" "$T/names/$1.log" -f csv -o "$T/nout" >/dev/null 2>&1 || { echo "(exit $?)"; return; }
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "collective") c = i; next } { print $c; exit }' "$T/nout/results.csv"; }
for pair in all_reduce=allreduce allreduce=allreduce AllReduceTest=allreduce hcclallreduce8p=allreduce \
            allreduce_fp32=allreduce all-reduce_16p=allreduce all_gather=allgather AllGatherResult=allgather \
            all_gatherv_test=allgatherv ReduceScatter=reducescatter reduce_scatter_v=reducescatterv \
            alltoallv=alltoallv all2all=alltoall Broadcast-16npu=broadcast output= \
            all_reduce/rank0=allreduce x/allgather_runs/r1/out=allgather; do
    f=${pair%%=*} want=${pair#*=}
    got=$(opof "$f")
    [ "$got" = "$want" ] && pass "operator of $f.log: '${want}'" || fail "operator of $f.log: got '$got', want '$want'"
done
cp "$FX/hccl_test-all_reduce.log" "$T/names/all_reduce_fp32.log"
"$R" "$T/names/all_reduce_fp32.log" "$T/names/all_reduce/rank0.log" -o "$T/nout2" >/dev/null 2>&1
grep -q "unknown op" "$T/nout2/report.md" && fail "'unknown op' in a report of all_reduce logs" || pass "no 'unknown op' for all_reduce logs"
has "$T/nout2/report.md" "## all_reduce_fp32: AllReduce" "label from the file name"
has "$T/nout2/report.md" "operator from file name" "where the operator came from"
"$R" "$T/names/output.log" -o "$T/nout3" >/dev/null 2>&1
has "$T/nout3/report.md" "## output: unknown op" "a name that says nothing stays unknown"

# --- 4. markdown on stdout (like parse-hccl-result.py -f markdown)
"$R" "$FX/hccl_test-all_reduce.log" -f markdown >"$T/md" 2>&1 || fail "-f markdown to stdout"
has "$T/md" "| 8K | 8192 | 25.07 | 0.32676 |  | success |" "stdout markdown row"

# --- 5. without matplotlib: tables written, clear message, exit 0.
#   a) the first python3 on PATH (pyenv here: no matplotlib), as a user would type it
if ! python3 -c 'import matplotlib' 2>/dev/null; then
    python3 "$R" "$FX/hccl_test-all_reduce.log" "$FX/all_gather_test.json" -o "$T/nompl1" >"$T/o1" 2>"$T/e1"; rc=$?
    [ $rc -eq 0 ] && pass "python3 without matplotlib: exit 0" || fail "python3 without matplotlib: exit $rc"
    has "$T/e1" "plots skipped: install python3-matplotlib (apt-get install python3-matplotlib)" "message on stderr (python3 on PATH)"
    [ -s "$T/nompl1/report.md" ] && [ -s "$T/nompl1/results.csv" ] && pass "tables written" || fail "tables not written"
else
    echo "note: python3 on PATH has matplotlib; case b) covers the missing-module path"
fi
#   b) any interpreter with matplotlib hidden by a module that fails to import
mkdir -p "$T/fake/matplotlib"
echo 'raise ImportError("matplotlib hidden by test")' >"$T/fake/matplotlib/__init__.py"
PYTHONPATH=$T/fake python3 "$R" "$FX/hccl_test-all_reduce.log" "$FX/all_gather_test.json" -o "$T/nompl2" >"$T/o2" 2>"$T/e2"; rc=$?
[ $rc -eq 0 ] && pass "hidden matplotlib: exit 0" || fail "hidden matplotlib: exit $rc"
has "$T/e2" "plots skipped: install python3-matplotlib (apt-get install python3-matplotlib)" "message on stderr (hidden)"
has "$T/nompl2/report.md" "| 8K | 8192 | 25.07 | 0.32676 |" "report.md without matplotlib"
has "$T/nompl2/results.csv" "hccl_test-all_reduce" "results.csv without matplotlib"
[ -z "$(ls "$T/nompl2"/*.png 2>/dev/null)" ] && pass "no PNGs without matplotlib" || fail "PNGs without matplotlib?"
head -1 "$R" | grep -qx '#!/usr/bin/python3' && pass "shebang is Debian's python" || fail "shebang: $(head -1 "$R")"

# --- 6. bad input: exit 2 with a message
"$R" "$T/does-not-exist.log" -o "$T/x" 2>"$T/e3"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot read" "$T/e3" && pass "unreadable file -> 2" || fail "unreadable file: exit $rc: $(cat "$T/e3")"
echo "hello world" >"$T/garbage.txt"
"$R" "$T/garbage.txt" -o "$T/x" 2>"$T/e4"; rc=$?
[ $rc -eq 2 ] && grep -q "no results found" "$T/e4" && pass "unrecognised file -> 2" || fail "garbage: exit $rc: $(cat "$T/e4")"
echo '{"results": 3' >"$T/broken.json"
"$R" "$T/broken.json" -o "$T/x" 2>"$T/e5"; rc=$?
[ $rc -eq 2 ] && grep -q "invalid JSON" "$T/e5" && pass "broken JSON -> 2" || fail "broken JSON: exit $rc: $(cat "$T/e5")"

finish
