#!/usr/bin/env bash
# tests/run.sh - run the collbench suite and print "N passed, N failed".
#
#   tests/run.sh                 everything
#   tests/run.sh -k PATTERN      only tests whose name contains PATTERN
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
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
O=.
PATTERN=
LIST=0
while [ $# -gt 0 ]; do
    case "$1" in
        -k) PATTERN=$2; shift 2 ;;
        -O) O=$2; shift 2 ;;
        --list) LIST=1; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
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

pass=0; fail=0; failed=()
start_all=$(date +%s)
for t in "${tests[@]}"; do
    name=$(basename "${t#missing:}")
    [ -n "$PATTERN" ] && [[ "$name" != *"$PATTERN"* ]] && continue
    if [ $LIST = 1 ]; then echo "$name"; continue; fi
    to=${TEST_TIMEOUT:-300}
    if [[ "$t" == *.sh ]]; then
        l=$(grep -m1 '^# timeout:' "$t" | awk '{print $3}')
        [ -n "$l" ] && to=$l
    fi
    log=$LOGDIR/$name.log
    s=$(date +%s.%N)
    if [[ "$t" == missing:* ]]; then
        unit_missing "$name" >"$log"
        rc=78
    else
        timeout -k 5 "$to" "$t" >"$log" 2>&1
        rc=$?
    fi
    el=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); printf 'PASS  %-40s %6ss\n' "$name" "$el"
    else
        fail=$((fail + 1)); failed+=("$name")
        why="exit $rc"; [ $rc -eq 124 ] && why="TIMEOUT after ${to}s"; [ $rc -eq 77 ] && why="cannot run here"; [ $rc -eq 78 ] && why="not built"
        printf 'FAIL  %-40s %6ss  (%s, log: %s)\n' "$name" "$el" "$why" "${log#$ROOT/}"
        tail -n 15 "$log" | sed 's/^/      | /'
    fi
done
[ $LIST = 1 ] && exit 0
echo "suite time: $(( $(date +%s) - start_all ))s"
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
