#!/usr/bin/env bash
# timeout: 120
# parallel: yes
# scripts/parse-hccl-result.py with seed 000's command lines (§6.2): the seed's
# own example text (whitespace layout, verbatim), a real-hccl_test '|' log
# (tests/fixtures), our all_reduce_test's output (bus bandwidth kept), a file
# and stdin, -f table|markdown, -s size|bandwidth|time, the no-results error
# (exit 1 + message) and a bad option (argparse: exit 2).
set -u
. "$(dirname "$0")/../lib/common.sh"
ROOT=$CB_ROOT
O=${CB_O:-$ROOT}
FX=$ROOT/tests/fixtures
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
rows() { # rows FILE -> the data_size column of the result rows, space-separated
    awk '/^ *[0-9]+ / { printf "%s ", $1 } /^\| [0-9]+ \|/ { printf "%s ", $2 }' "$1"; }
eqv() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi; }

# The seed is run from the install directory: ./scripts/parse-hccl-result.py
cd "$ROOT" || exit 1
P=./scripts/parse-hccl-result.py
[ -x "$P" ] || { echo "FAIL $P missing or not executable"; exit 1; }

# --- 1. the seed's example output (§6.1), verbatim, as output.log
cat >"$T/output.log" <<'EOF'
data_size      avg_time(us)    alg_bandwidth(GB/s)    check_result
8192           125.3           0.065                  success
16384          132.1           0.124                  success
...
EOF
"$P" "$T/output.log" >"$T/o1" 2>"$T/e1"; rc=$?
eqv "seed example: exit" "$rc" 0
[ -s "$T/e1" ] && fail "seed example: stderr not empty: $(cat "$T/e1")"
eqv "seed example: rows" "$(rows "$T/o1")" "8192 16384 "
has "$T/o1" "125.30" "seed example: time"
has "$T/o1" "Count            : 2" "seed example: count"
has "$T/o1" "Average bandwidth: 0.09450 GB/s" "seed example: average"
has "$T/o1" "Max bandwidth    : 0.12400 GB/s @ 16K (16384 bytes)" "seed example: max"
has "$T/o1" "Min bandwidth    : 0.06500 GB/s @ 8K (8192 bytes)" "seed example: min"
grep -q "bus" "$T/o1" && fail "seed example: bus bandwidth shown without one" || pass "seed example: no bus column"
"$P" "$T/output.log" -f markdown >"$T/o2"; rc=$?
eqv "seed -f markdown: exit" "$rc" 0
has "$T/o2" "| data_size(Bytes) | size | avg_time(us) | alg_bandwidth(GB/s) | check_result |" "markdown header"
has "$T/o2" "| 8192 | 8K | 125.30 | 0.06500 | success |" "markdown row"
has "$T/o2" "| Count | 2 |" "markdown count"
has "$T/o2" "| Average bandwidth | 0.09450 GB/s |" "markdown average"
has "$T/o2" "| Max bandwidth | 0.12400 GB/s @ 16K (16384 bytes) |" "markdown max"
has "$T/o2" "| Min bandwidth | 0.06500 GB/s @ 8K (8192 bytes) |" "markdown min"

# --- 2. stdin, as the seed pipes it
cat "$T/output.log" | "$P" >"$T/o3" 2>&1; rc=$?
eqv "stdin: exit" "$rc" 0
cmp -s "$T/o1" "$T/o3" && pass "stdin = file" || fail "stdin output differs from the file's"
"$P" - <"$T/output.log" >"$T/o3b" 2>&1 && cmp -s "$T/o1" "$T/o3b" && pass "'-' is stdin" || fail "'-' not read as stdin"

# --- 3. real hccl_test '|' layout, with failure lines (rank line is no row)
"$P" "$FX/hccl_test-all_reduce.log" >"$T/o4"; rc=$?
eqv "hccl_test log: exit" "$rc" 0
eqv "hccl_test log: 14 rows" "$(rows "$T/o4" | wc -w)" 14
has "$T/o4" "Max bandwidth    : 8.55895 GB/s @ 64M (67108864 bytes)" "hccl_test max"
has "$T/o4" "Min bandwidth    : 0.32676 GB/s @ 8K (8192 bytes)" "hccl_test min"
"$P" "$FX/hccl_test-check-failed.log" -f markdown >"$T/o5"; rc=$?
eqv "check-failed log: exit" "$rc" 0
eqv "check-failed: rows (rank id line skipped)" "$(rows "$T/o5")" "1048576 2097152 4194304 "
has "$T/o5" "| 1048576 | 1M | 152.10 | 6.89389 | failed |" "failed row kept"
has "$T/o5" "| Count | 3 (1 failed) |" "failed counted"

# --- 4. our all_reduce_test, live: bus bandwidth kept; and the fixture
if [ -x "$O/bin/all_reduce_test" ]; then
    timeout 60 "$O/bin/all_reduce_test" -p 2 -b 8K -e 64K -f 2 >"$T/ours.log" 2>&1 \
        || fail "all_reduce_test -p 2 failed: $(tail -3 "$T/ours.log")"
    "$O/bin/all_reduce_test" -p 2 -b 8K -e 64K -f 2 2>&1 | "$P" -f markdown >"$T/o6"; rc=$?
    eqv "all_reduce_test | parser: exit" "$rc" 0
    eqv "all_reduce_test: rows" "$(rows "$T/o6")" "8192 16384 32768 65536 "
    has "$T/o6" "| data_size(Bytes) | size | avg_time(us) | alg_bandwidth(GB/s) | bus_bandwidth(GB/s) | check_result |" "bus column from ours"
    has "$T/o6" "| Max bus bandwidth |" "bus bandwidth summary"
    # the bus bandwidth printed is the one in the log (2 ranks: = algbw)
    "$P" "$T/ours.log" >"$T/o6b"
    want=$(awk -F'|' '/^8192 / { gsub(/ /, ""); printf "%.5f", $5 }' "$T/ours.log")
    got=$(awk '$1 == 8192 { print $5 }' "$T/o6b")
    eqv "8192 busbw from the log" "$got" "$want"
else
    fail "$O/bin/all_reduce_test missing (run make)"
fi
"$P" "$FX/all_reduce_test.log" >"$T/o7"
has "$T/o7" "Max bus bandwidth    : 10.29563 GB/s @ 1M (1048576 bytes)" "fixture: max bus bandwidth"
has "$T/o7" "Count                : 12 (1 failed)" "fixture: two runs, one failed row"

# --- 5. every sort key
eqv "-s size (default)" "$(rows "$T/o7")" "8192 8192 16384 16384 32768 32768 65536 65536 131072 262144 524288 1048576 "
"$P" "$FX/hccl_test-check-failed.log" -s bandwidth >"$T/s1"
eqv "-s bandwidth: descending" "$(rows "$T/s1")" "4194304 2097152 1048576 "
"$P" "$FX/hccl_test-check-failed.log" --sort time -f markdown >"$T/s2"
eqv "--sort time: ascending" "$(rows "$T/s2")" "1048576 2097152 4194304 "
printf '8192 30.0 0.27 success\n16384 10.0 1.64 success\n32768 20.0 1.64 success\n' >"$T/ties.log"
"$P" "$T/ties.log" -s time >"$T/s3"
eqv "-s time: by time" "$(rows "$T/s3")" "16384 32768 8192 "
"$P" "$T/ties.log" -s size >"$T/s4"
eqv "-s size: ascending" "$(rows "$T/s4")" "8192 16384 32768 "
"$P" "$T/ties.log" --sort=bandwidth --format=table >"$T/s5"
eqv "-s bandwidth: ties by size" "$(rows "$T/s5")" "16384 32768 8192 "

# --- 6. nothing parses: exit 1, the message on stderr, nothing on stdout
printf 'the minbytes is 8192\nsome error\n' | "$P" >"$T/o8" 2>"$T/e8"; rc=$?
eqv "no results: exit" "$rc" 1
eqv "no results: message" "$(cat "$T/e8")" "No HCCL test results found in input."
[ -s "$T/o8" ] && fail "no results: stdout not empty" || pass "no results: stdout empty"
"$P" </dev/null 2>"$T/e9"; rc=$?
eqv "empty stdin: exit" "$rc" 1
has "$T/e9" "No HCCL test results found in input." "empty stdin: message"

# --- 7. bad options: argparse's exit 2 with usage
for args in "-x" "-f html" "--sort speed" "a.log b.log"; do
    # shellcheck disable=SC2086
    "$P" $args </dev/null >/dev/null 2>"$T/e10"; rc=$?
    eqv "'$args': exit" "$rc" 2
    grep -q "^usage: parse-hccl-result.py" "$T/e10" && pass "'$args': usage" || fail "'$args': no usage: $(cat "$T/e10")"
done
"$P" "$T/nope.log" 2>"$T/e11"; rc=$?
eqv "missing file: exit" "$rc" 2
has "$T/e11" "cannot read" "missing file: message"
"$P" -h >"$T/h" 2>&1; rc=$?
eqv "-h: exit" "$rc" 0
has "$T/h" "--format {table,markdown}" "-h names --format"

finish
