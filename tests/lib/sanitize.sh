# tests/lib/sanitize.sh - shared by the sanitizer suites (90 ASan+UBSan, 91 TSan), sourced.
# The caller sets ROOT, LOG (log directory) and REPORT (an ERE matching the
# sanitizer's report lines), and SAN_CONTEXT (lines shown after a match).

fails=0
san_t0=$(date +%s)

# san_build DIR SAN NAME [TARGET...]: make O=DIR SAN=SAN [TARGET...] (only what
# the suite runs: not the examples, MPI plugins...), only when out of date;
# exit 1 on a build failure. The caller's array SAN_MAKE adds make variables
# (OPT=..., CFLAGS=...), the same for the up-to-date check and the build.
SAN_MAKE=()
san_build() {
    local dir=$1 san=$2 name=$3
    shift 3
    if ! make -q O="$dir" SAN="$san" ${SAN_MAKE[@]+"${SAN_MAKE[@]}"} "$@" >/dev/null 2>&1; then
        make O="$dir" SAN="$san" ${SAN_MAKE[@]+"${SAN_MAKE[@]}"} -j"$(nproc)" "$@" >"$LOG/build.log" 2>&1 ||
            { tail -n 30 "$LOG/build.log"; echo "FAIL: $name build"; exit 1; }
    fi
    echo "build: $(( $(date +%s) - san_t0 )) s"
}

# run NAME TIMEOUT CMD...: fails on exit != 0 or any sanitizer report in its output
run() {
    local name=$1 to=$2; shift 2
    local f=$LOG/$name.log t0; t0=$(date +%s.%N)
    timeout -k 5 "$to" "$@" >"$f" 2>&1
    local rc=$?
    local el; el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    if [ $rc -ne 0 ] || grep -qE "$REPORT" "$f"; then
        fails=$((fails + 1))
        echo "FAIL: $name (exit $rc, ${el}s, log ${f#$ROOT/})"
        grep -E -A"${SAN_CONTEXT:-12}" "$REPORT" "$f" | head -n $((3 * ${SAN_CONTEXT:-12}))
        [ $rc -ne 0 ] && tail -n 5 "$f"
    else
        echo "ok: $name (${el}s)"
    fi
}

# run_bg NAME TIMEOUT CMD...: run's check in the background, for a long run that
# mostly waits (test_bootstrap: its store timeouts, ~13 s) beside the others;
# its ok/FAIL lines are printed, and counted, by run_wait
bg_pids=(); bg_names=()
run_bg() {
    ( fails=0; run "$@" >"$LOG/$1.result" 2>&1; exit $fails ) &
    bg_pids+=($!); bg_names+=("$1")
}
# run_wait: waits for every run_bg, prints their lines in the order started
run_wait() {
    local i
    for i in "${!bg_pids[@]}"; do
        wait "${bg_pids[$i]}" || fails=$((fails + 1))
        cat "$LOG/${bg_names[$i]}.result"
    done
    bg_pids=(); bg_names=()
}

# san_finish NAME: the summary line and the exit status
san_finish() {
    run_wait
    echo "total: $(( $(date +%s) - san_t0 )) s"
    [ $fails -eq 0 ] || { echo "$fails $1 run(s) failed"; exit 1; }
}
