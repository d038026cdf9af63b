#!/usr/bin/env bash
# tests/run.sh - run the collbench suite and print "N passed, N failed".
#
#   tests/run.sh                 everything
#   tests/run.sh -k PATTERN      only tests whose name contains PATTERN (-k again: or)
#   tests/run.sh -O build/asan   use the binaries of an out-of-tree build
#   tests/run.sh --list          list the tests
#
# A test is either a cmocka unit-test binary (build/tests/test_*, one per
# tests/unit/test_*.c: one not built fails as "not built", naming cmocka when
# it is missing) or an executable script tests/mp/NN-name.sh (multi-process,
# launcher, fault...).
# Every test runs under `timeout` (TEST_TIMEOUT seconds, default 300, a
# script may name its own with a line "# timeout: N"), so a hang is a failure.
# Scripts get the build dir in $CB_O and must exit 0 on success; 77 = cannot
# run here (reported as failed with the reason: a skipped check is a defect).
# Two at a time (TEST_JOBS, default 2; TEST_JOBS=1: one at a time, in name
# order): the unit binaries (unless their source has a line "parallel: no")
# and the scripts with a line "# parallel: yes" (light, no threshold on a
# measured time, no check of /dev/shm or of the processes of the session, no
# make of a build directory another test builds) run first, two at a time
# (those scripts, then the unit binaries), each in its own log, reported in
# the order they were started; then every other test, one at a time and alone
# on the machine.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
O=.
PATTERNS=()
LIST=0
while [ $# -gt 0 ]; do
    case "$1" in
        -k) PATTERNS+=("$2"); shift 2 ;;
        -O) O=$2; shift 2 ;;
        --list) LIST=1; shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "tests/run.sh: unknown argument '$1' (allowed: -k PATTERN, -O DIR, --list)" >&2; exit 2 ;;
    esac
done
export CB_O=$(cd "$O" && pwd) CB_ROOT=$ROOT
# Single-host tests talk over loopback only (never this machine's LAN address);
# the multi-host tests set their own interface inside their network namespaces.
export COLL_SOCKET_IFNAME="${COLL_SOCKET_IFNAME-=lo}"
CMOCKA_H=${CMOCKA_H:-/usr/include/cmocka.h}   # the Makefile's test for cmocka (a test overrides it)
LOGDIR=$ROOT/build/test-logs${O:+/$(echo "$O" | tr / _)}
mkdir -p "$LOGDIR"

# One unit binary per tests/unit/test_*.c: one that was not built (cmocka
# missing, a failed build) is a failure naming what is missing, never a test
# silently dropped.
unit_missing() {
    local why="$CB_O/build/tests/$1 was not built"
    [ -f "$CMOCKA_H" ] || why="$why: cmocka is missing (no $CMOCKA_H; apt-get install libcmocka-dev, or scripts/install-deps.sh build)"
    echo "$why"
}
tests=()
for s in tests/unit/test_*.c; do
    n=$(basename "$s" .c)
    if [ -x "$CB_O/build/tests/$n" ]; then tests+=("$CB_O/build/tests/$n"); else tests+=("missing:$n"); fi
done
for t in tests/mp/*.sh; do [ -x "$t" ] && tests+=("$ROOT/$t"); done

JOBS=${TEST_JOBS:-2}
case "$JOBS" in [1-9]|[1-9][0-9]) ;; *) echo "tests/run.sh: invalid TEST_JOBS '$JOBS' (allowed: 1..99)" >&2; exit 2 ;; esac

# parallel TEST: may run beside another parallel test (see the header)
parallel() {
    case "$1" in
        missing:*) return 1 ;;
        *.sh) grep -q '^# parallel: yes' "$1" ;;
        *) ! grep -q 'parallel: no' "tests/unit/$(basename "$1").c" 2>/dev/null ;;
    esac
}
# children_cpu: user+system clock ticks of this shell's waited-for children
# (fields 16-17 of /proc/PID/stat): a test's CPU time is the difference
# around it (processes it leaves unwaited, e.g. daemonized, are not counted)
HZ=$(getconf CLK_TCK)
children_cpu() { awk '{print $16 + $17}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# run_test TEST: runs it under its timeout, log in $LOGDIR/NAME.log; writes
# "RC SECONDS TIMEOUT CPU-SECONDS" to $LOGDIR/NAME.log.res (renamed into place: complete when seen)
run_test() {
    local t=$1 name to l log s c me rc el cpu
    name=$(basename "${t#missing:}")
    log=$LOGDIR/$name.log
    to=${TEST_TIMEOUT:-300}
    if [[ "$t" == *.sh ]]; then
        l=$(grep -m1 '^# timeout:' "$t" | awk '{print $3}')
        [ -n "$l" ] && to=$l
    fi
    s=$(date +%s.%N)
    me=$BASHPID   # not inside $(...): that is a subshell of its own
    c=$(children_cpu "$me")
    if [[ "$t" == missing:* ]]; then
        unit_missing "$name" >"$log"
        rc=78
    else
        timeout -k 5 "$to" "$t" >"$log" 2>&1
        rc=$?
    fi
    el=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    cpu=$(awk -v a="$c" -v b="$(children_cpu "$me")" -v hz="$HZ" 'BEGIN{printf "%.1f", (b-a)/hz}')
    echo "$rc $el $to $cpu" >"$log.res.tmp" && mv "$log.res.tmp" "$log.res"
}
# report TEST: the PASS/FAIL line of a finished test, counted
report() {
    local name log rc el to cpu why
    name=$(basename "${1#missing:}")
    log=$LOGDIR/$name.log
    read -r rc el to cpu <"$log.res"
    rm -f "$log.res"
    cpu_all=$(awk -v a="$cpu_all" -v b="$cpu" 'BEGIN{printf "%.1f", a+b}')
    if [ "$rc" -eq 0 ]; then
        pass=$((pass + 1)); printf 'PASS  %-40s %6ss  cpu %6ss\n' "$name" "$el" "$cpu"
    else
        fail=$((fail + 1)); failed+=("$name")
        why="exit $rc"; [ "$rc" -eq 124 ] && why="TIMEOUT after ${to}s"; [ "$rc" -eq 77 ] && why="cannot run here"; [ "$rc" -eq 78 ] && why="not built"
        printf 'FAIL  %-40s %6ss  (%s, log: %s)\n' "$name" "$el" "$why" "${log#$ROOT/}"
        tail -n 15 "$log" | sed 's/^/      | /'
    fi
}

par=(); paru=(); ser=()   # parallel scripts (the long fuzz among them) start before the unit binaries
for t in "${tests[@]}"; do
    name=$(basename "${t#missing:}")
    if [ ${#PATTERNS[@]} -gt 0 ]; then
        hit=0
        for p in "${PATTERNS[@]}"; do [[ "$name" == *"$p"* ]] && hit=1; done
        [ $hit = 1 ] || continue
    fi
    if [ $LIST = 1 ]; then echo "$name"; continue; fi
    rm -f "$LOGDIR/$name.log.res"   # a leftover of an interrupted run
    if [ "$JOBS" -gt 1 ] && parallel "$t"; then
        if [[ "$t" == *.sh ]]; then par+=("$t"); else paru+=("$t"); fi
    else
        ser+=("$t")
    fi
done
par+=(${paru[@]+"${paru[@]}"})
[ $LIST = 1 ] && exit 0

pass=0; fail=0; failed=(); cpu_all=0
start_all=$(date +%s)
[ ${#par[@]} -gt 1 ] && echo "${#par[@]} tests $JOBS at a time, then ${#ser[@]} one at a time"
# the parallel ones: at most $JOBS running; each reported once it and all
# started before it are done (the order of the list, whatever finishes first)
next=0; shown=0
while [ $shown -lt ${#par[@]} ]; do
    running=0
    for ((i = shown; i < next; i++)); do
        [ -f "$LOGDIR/$(basename "${par[$i]}").log.res" ] || running=$((running + 1))
    done
    if [ $running -lt "$JOBS" ] && [ $next -lt ${#par[@]} ]; then
        run_test "${par[$next]}" </dev/null &
        next=$((next + 1))
        continue
    fi
    while [ $shown -lt $next ] && [ -f "$LOGDIR/$(basename "${par[$shown]}").log.res" ]; do
        report "${par[$shown]}"; shown=$((shown + 1))
    done
    [ $shown -lt $next ] || continue
    wait -n 2>/dev/null && continue
    # no child left to wait for: one that never wrote its result failed
    [ -z "$(jobs -rp)" ] && [ ! -f "$LOGDIR/$(basename "${par[$shown]}").log.res" ] &&
        echo "1 0 0" >"$LOGDIR/$(basename "${par[$shown]}").log.res"
    sleep 0.1
done
wait
for t in "${ser[@]}"; do
    run_test "$t"
    report "$t"
done
echo "suite time: $(( $(date +%s) - start_all ))s (CPU time of the tests: ${cpu_all}s on $(nproc) CPUs)"
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
