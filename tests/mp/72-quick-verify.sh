#!/usr/bin/env bash
# timeout: 280
# scripts/quick-verify.sh: bad arguments (exit 2, -b -e -n validated), FAIL detection, -b -e -n
# passed to every binary, the
# summary with stub binaries (failed row, non-zero exit), temp files cleaned,
# --report; then the real binaries ($CB_O/bin): 2 ranks quick must pass.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
O=${CB_O:-$ROOT}
QV=$ROOT/scripts/quick-verify.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$ROOT/tests/lib/common.sh"
run() { # run EXPECTED-RC ARGS...  (stdout $T/out, stderr $T/err)
    local want=$1; shift
    TMPDIR=$T/tmp "$QV" "$@" >"$T/out" 2>"$T/err"; local rc=$?
    if [ $rc -eq "$want" ]; then pass "quick-verify.sh $* -> $rc"
    else fail "quick-verify.sh $* -> $rc, want $want"; sed 's/^/   | /' "$T/out" "$T/err"; fi
}
has_re() { grep -qE -- "$2" "$T/$1" && pass "$3" || { fail "$3: /$2/ not in $1"; sed 's/^/   | /' "$T/$1"; }; }
mkdir -p "$T/tmp"

# --- 1. bad arguments -> 2 with a message
run 2;               has_re err 'missing NPUS' "no NPUS"
run 2 abc;           has_re err "NPUS must be a positive integer, got 'abc'" "NPUS abc"
run 2 0;             has_re err "NPUS must be a positive integer, got '0'" "NPUS 0"
run 2 2.5;           has_re err "positive integer" "NPUS 2.5"
run 2 -3;            has_re err "unknown option '-3'" "NPUS -3"
run 2 2 turbo;       has_re err "unknown mode 'turbo' \(allowed: quick, full\)" "mode turbo"
run 2 2 quick extra; has_re err "unexpected argument 'extra'" "extra argument"
run 2 2 --report;    has_re err "--report needs a directory" "--report without DIR"
CB_BIN=$T/nope run 2 2; has_re err "no test binaries: directory .*nope not found" "missing bin dir"
run 0 --help;        has_re out "NPUS \[quick\|full\]" "help"
run 2 2 -b;          has_re err "-b needs a value" "-b without a value"
run 2 2 -b 8X;       has_re err "-b: invalid size '8X' \(bytes with an optional K/M/G suffix" "-b 8X"
run 2 2 -b 0;        has_re err "-b: invalid size '0'" "-b 0"
run 2 2 -e 2000G;    has_re err "-e: invalid size '2000G'.*1\.\.1T" "-e too large"
run 2 2 -b 1M -e 64K; has_re err "-e \(65536 bytes\) must be >= -b \(1048576 bytes\)" "-e < -b"
run 2 2 -e 4K;       has_re err "-e \(4096 bytes\) must be >= -b \(8192 bytes\)" "-e below the default -b"
run 2 2 -n 0;        has_re err "-n: iterations must be a positive integer, got '0'" "-n 0"
run 2 2 -n x;        has_re err "-n: iterations must be a positive integer, got 'x'" "-n x"
run 2 2 -n -3;       has_re err "-n: iterations must be a positive integer, got '-3'" "-n -3"
run 0 --help;        has_re out "-b SIZE" "help names -b"

# --- 2. stub binaries: verdicts, peaks, exit code, arguments, cleanup
mkdir -p "$T/bin"
stub() { # stub NAME EXIT-CODE FAILED-SIZE
    cat >"$T/bin/$1_test" <<STUB
#!/usr/bin/env bash
echo "\$(basename "\$0") \$*" >>"$T/args"
json=; while [ \$# -gt 0 ]; do [ "\$1" = --json ] && json=\$2; shift; done
echo "the minbytes is 8192, maxbytes is 67108864, iters is 20, warmup_iters is 10"
echo "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result: | bus_bandwidth(GB/s):"
for s in 8192 65536 1048576 67108864; do
    t=\$((s / 1000 + 10)); [ \$s -eq 1048576 ] && t=100    # peak algbw at 1M
    c=success; [ \$s -eq "$3" ] && c=failed
    awk -v s=\$s -v t=\$t -v c=\$c 'BEGIN { a = s / t / 1e3; printf "%-17d | %-14.2f | %-20.5f | %-13s | %.5f\n", s, t, a, c, a * 1.5 }'
done
[ -n "\$json" ] && echo '{"schema":"collbench-result/1","header":{"collective":"allreduce","ranks":2},"results":[{"collective":"allreduce","dtype":"fp32","ranks":2,"bytes":8192,"time_us":{"max":18.0},"algbw_gbs":0.45511,"busbw_gbs":0.45511,"check_result":"success"}],"status":{"exit_code":$2}}' >"\$json"
exit $2
STUB
    chmod +x "$T/bin/$1_test"
}
stub all_reduce 0 0; stub all_gather 0 0; stub broadcast 0 65536; stub alltoall 3 0
CB_BIN=$T/bin run 1 2 --report "$T/rep"
has_re out '^AllReduce +PASS +10\.48576 @ 1M +15\.72864 @ 1M' "AllReduce PASS with peaks and sizes"
has_re out '^AllGather +PASS' "AllGather PASS"
has_re out '^Broadcast +FAIL .*1 failed check' "failed row -> FAIL"
has_re out '^AlltoAll +FAIL .*exit code 3' "exit code -> FAIL"
has_re out '^passed 2/4 \(2 ranks, quick\)' "passed line"
has_re args '^all_reduce_test -p 2 -b 8192 -e 67108864 -f 2 --json ' "arguments passed to the binary"
[ "$(wc -l <"$T/args")" -eq 4 ] && pass "4 operators run in quick mode" || fail "ran: $(cat "$T/args")"
[ -s "$T/rep/report.md" ] && [ -s "$T/rep/results.csv" ] && pass "--report wrote report.md and results.csv" || fail "--report: $(ls "$T/rep" 2>&1)"
[ -z "$(ls -A "$T/tmp")" ] && pass "temp files cleaned" || fail "left in TMPDIR: $(ls -A "$T/tmp")"
# full mode runs ten operators (missing ones are FAILs), capped sizes explained
: >"$T/args"; stub all_reduce 0 0; stub broadcast 0 0; stub alltoall 0 0
CB_BIN=$T/bin run 1 2 full
[ "$(wc -l <"$T/args")" -eq 4 ] && pass "full: present binaries run" || fail "full ran: $(cat "$T/args")"
has_re out '^ReduceScatterV +FAIL +- +- +binary .*reduce_scatterv_test missing' "full: missing binary -> FAIL"
has_re out '^passed 4/10' "full: passed 4/10"
has_re out 'sizes 8K\.\.(1G|[0-9]+M) \(-f 2\)' "full: size range shown"
CB_BIN=$T/bin run 0 1 quick
has_re out '^passed 4/4 \(1 ranks, quick\)' "all PASS -> exit 0"
# -b -e -n reach every binary (K/M/G suffixes, either case)
: >"$T/args"
CB_BIN=$T/bin run 0 1 -b 16k -n 5 quick -e 1M
has_re out 'sizes 16K\.\.1M \(-f 2\), 5 iterations' "-b -e -n in the banner"
[ "$(grep -c -- '-p 1 -b 16384 -e 1048576 -f 2 -n 5 --json ' "$T/args")" -eq 4 ] \
    && pass "-b 16k -e 1M -n 5 passed to all 4 binaries" || fail "arguments with -b -e -n: $(cat "$T/args")"
: >"$T/args"
CB_BIN=$T/bin run 1 1 full -b 64M -e 64m    # 1: six binaries missing
grep -q -- '-b 67108864 -e 67108864 -f 2 --json' "$T/args" && pass "full -b 64M -e 64m: one size, no -n" || fail "full -b 64M: $(head -1 "$T/args")"
# memory cap: with 4000 ranks 3 x 64M each cannot fit -> capped and explained
avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
if [ $((4000 * 3 * 64 * 1024)) -gt $((avail * 8 / 10)) ]; then
    : >"$T/args"
    CB_BIN=$T/bin run 0 4000 quick
    has_re out 'max size capped to [0-9]+[KM] \(wanted 64M\): MemAvailable is [0-9]+ MiB and 4000 ranks x 3 x size' "cap explained"
    grep -q -- '-e 67108864' "$T/args" && fail "cap not applied: $(head -1 "$T/args")" || pass "cap applied"
fi

# --- 3. the real binaries: 2 local ranks, quick
if ! ls "$O"/bin/*_test >/dev/null 2>&1; then
    echo "FAIL test binaries missing in $O/bin (run make first)"; exit 1
fi
CB_BIN=$O/bin run 0 2 quick --report "$T/real"
for op in AllReduce AllGather Broadcast AlltoAll; do
    has_re out "^$op +PASS +[0-9]+\.[0-9]{5} @ [0-9]+[KMG] +[0-9]+\.[0-9]{5} @ [0-9]+[KMG]" "real $op PASS with peaks"
done
has_re out '^passed 4/4 \(2 ranks, quick\)' "real: passed 4/4"
[ -s "$T/real/report.md" ] && grep -q '| AllReduce | collbench-json | 2 |' "$T/real/report.md" \
    && pass "real report from the JSON" || fail "real report: $(head -20 "$T/real/report.md" 2>&1)"
[ -z "$(ls -A "$T/tmp")" ] && pass "temp files cleaned (real)" || fail "left in TMPDIR: $(ls -A "$T/tmp")"

finish
