#!/usr/bin/env bash
# timeout: 420
# parallel: yes
# Fuzz targets (libFuzzer, ASan + UBSan): build them (tests/fuzz/build.sh, into
# build/fuzz of the repository whatever -O says: they are clang builds of their
# own), replay every regression input of tests/fuzz/regress/<target>/ (crashes
# found before, kept), then fuzz each target for FUZZ_TIME seconds (default 2;
# 8 targets: about 25 s) from its seed corpus tests/fuzz/corpus/<target>/ (every
# seed input is run first, whatever FUZZ_TIME says).
# A smoke fuzz: until 2026-12 each target ran 16 s, which reached 2-5% more
# edges than 4 s (store: 505 vs 496, cli: 316 vs 301, from the same seeds) for
# 1.5 minutes of suite time; 5 s a target cost 8 x 3 s more suite time than 2 s
# (issue 14: the suite's wall time) for a random search that is a smoke test
# either way; a long search is FUZZ_TIME=600 tests/mp/80-fuzz.sh.
# Any crash, sanitizer report, invariant failure, leak or hang (> 10 s on one
# input) fails the test; the input is left in build/fuzz/crashes/ with the
# command to reproduce it. To keep it as a regression case: fix the bug, then
# copy the file into tests/fuzz/regress/<target>/.
set -u
cd "${CB_ROOT:-$(dirname "$0")/../..}"
FUZZ_TIME=${FUZZ_TIME:-2}
OUT=build/fuzz
JOBS=${JOBS:-$(nproc)} tests/fuzz/build.sh -O "$OUT" >"$OUT.build.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    tail -n 30 "$OUT.build.log"
    [ $rc -eq 77 ] && exit 77
    echo "FAIL: tests/fuzz/build.sh (log $OUT.build.log)"; exit 1
fi
mkdir -p "$OUT/crashes"
fails=0
for src in tests/fuzz/fuzz_*.c; do
    t=${src##*/fuzz_}; t=${t%.c}
    bin=$OUT/fuzz_$t
    # 1. regression inputs, every run
    if [ -d "tests/fuzz/regress/$t" ] && [ -n "$(ls -A "tests/fuzz/regress/$t")" ]; then
        if ! "$bin" -timeout=10 -rss_limit_mb=2048 "tests/fuzz/regress/$t"/* >"$OUT/$t.regress.log" 2>&1; then
            echo "FAIL: $t: a regression input crashes again:"; grep -E 'Running:|ERROR|runtime error|invariant|SUMMARY' "$OUT/$t.regress.log" | tail -n 8
            fails=$((fails + 1))
            continue
        fi
        echo "ok: $t: $(ls "tests/fuzz/regress/$t" | wc -l) regression input(s) replayed"
    fi
    # 2. bounded fuzzing from the committed seeds (new units go to build/fuzz/work only)
    mkdir -p "$OUT/work/$t"
    s=$(date +%s)
    "$bin" -max_total_time="$FUZZ_TIME" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        -print_final_stats=1 -artifact_prefix="$OUT/crashes/$t-" \
        "$OUT/work/$t" "tests/fuzz/corpus/$t" >"$OUT/$t.log" 2>&1
    rc=$?
    runs=$(grep -m1 '^stat::number_of_executed_units' "$OUT/$t.log" | awk '{print $2}')
    if [ $rc -ne 0 ]; then
        fails=$((fails + 1))
        echo "FAIL: $t (exit $rc after $(( $(date +%s) - s )) s):"
        grep -E 'ERROR|runtime error|invariant|SUMMARY|Test unit written|did not' "$OUT/$t.log" | head -n 10
        a=$(grep -o "Test unit written to [^ ]*" "$OUT/$t.log" | tail -1 | awk '{print $5}')
        [ -n "$a" ] && echo "  reproduce: $bin $a   (log: $OUT/$t.log)"
    else
        echo "ok: $t: ${runs:-?} runs in $(( $(date +%s) - s )) s, no crash"
    fi
done
[ $fails -eq 0 ] || { echo "$fails fuzz target(s) failed"; exit 1; }
echo "all fuzz targets clean"
