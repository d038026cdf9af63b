#!/usr/bin/env bash
# timeout: 150
# A local rank writing garbage into the shared segment's control area
# (issue 31, M6): the fault hook COLL_FAULT_SHM=RANK:WHAT[:N] makes RANK
# corrupt WHAT at its N-th use. Every rank must stop with one error naming the
# field and the local rank whose area holds it (or pass on that abort), well
# before COLL_EXEC_TIMEOUT (no hang), no out-of-bounds access (no signal: exit
# 3 or 5), nothing left behind. A rank named that is not in the job changes
# nothing, and a bad value is refused naming it.
. "$(dirname "$0")/../lib/common.sh"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
export COLL_EXEC_TIMEOUT=60

# The standalone launcher's segments are named collbench-PID-...: the ones of
# this run (others may be running tests on this machine meanwhile).
no_run_shm() {
    local l; l=$(ls /dev/shm | grep -E "^collbench-$1-" || true)
    [ -z "$l" ] && return 0
    echo "leftover shared memory: $l"; return 1
}

# name fault field-regex extra-env... -- test args
run_fault() {
    local name=$1 fault=$2 field=$3; shift 3
    local envs=() t0 t1
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    t0=$(date +%s.%N)
    env "${envs[@]}" COLL_FAULT_SHM="$fault" timeout 60 sh -c 'echo $$ >"$0"; exec "$@"' "$T/pid" "$BIN/$@" \
        >"$T/$name.out" 2>&1
    local rc=$?
    t1=$(date +%s.%N)
    local secs; secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    echo "$name ($fault): exit $rc in $secs s"
    grep 'failed' "$T/$name.out" | head -4
    check "$name: exit 3 or 5 (an error, no signal, no timeout)" test $rc -eq 3 -o $rc -eq 5
    check "$name: stopped in under 15 s (COLL_EXEC_TIMEOUT is 60)" awk -v s="$secs" 'BEGIN { exit !(s < 15) }'
    check "$name: the error names the field (and the rank whose area holds it)" grep -Eq "shared memory corrupt: $field" "$T/$name.out"
    local nfail; nfail=$(grep -c 'failed (' "$T/$name.out")
    check "$name: all 4 ranks report it ($nfail)" test "$nfail" -eq 4
    check "$name: no timeout message" bash -c "! grep -q 'timeout after' '$T/$name.out'"
    check "$name: no process left" no_procs "$BIN/all_reduce_test"
    check "$name: no /dev/shm segment of this run left" no_run_shm "$(cat "$T/pid")"
}

small="all_reduce_test -p 4 -b 8 -e 8K -f 4 -n 5 -w 1 -c 1"
ring="all_reduce_test -p 4 -b 1M -e 2M -f 2 -n 3 -w 1 -c 1"
run_fault small_off 1:small_off "small_off of local rank 1 \(rank 1\) is [0-9]+ \(0x[0-9a-f]+; allowed at most [0-9]+\)" -- $small
run_fault small_off_late 2:small_off:4 "small_off of local rank 2 \(rank 2\)" -- $small
run_fault sizes 1:sizes "outbox slot size \(sizes\[\]\) of local rank 1 \(rank 1\) is 135168" COLL_ALGO=ring -- $ring
run_fault desc 2:desc "CMA descriptor's piece \(at least 4096\) of local rank 2 \(rank 2\) is 0" \
    COLL_ALGO=ring COLL_CMA_MIN=64K -- $ring
# the abort word is looked at by waits that go idle: enough calls that some do
run_fault abort 3:abort "the segment's abort_flag is [0-9]+ \((allowed 0..4|0x[0-9a-f]+; allowed at most 4)\)" -- \
    all_reduce_test -p 4 -b 8 -e 8K -f 4 -n 200 -w 5 -c 1
run_fault all 0:all "(the segment.s abort_flag|(small_off|outbox|CMA).* of local rank [0-9] \(rank [0-9]\))" -- $small

# a rank not in the job: a normal run
COLL_FAULT_SHM=9:all timeout 60 "$BIN/all_reduce_test" -p 4 -b 8 -e 64K -f 8 -n 3 -w 1 -c 1 >"$T/none.out" 2>&1
check "COLL_FAULT_SHM naming rank 9 of 4: exit 0" test $? -eq 0
check "... and results check" grep -q 'Out of bounds values : 0 OK' "$T/none.out"
COLL_FAULT_SHM=1:nothing timeout 60 "$BIN/all_reduce_test" -p 2 -b 8 -e 8 -n 1 -w 1 >"$T/bad.out" 2>&1
rc=$?
check "COLL_FAULT_SHM=1:nothing refused (exit $rc)" test $rc -ne 0
check "... naming the value and what is allowed" grep -q "invalid COLL_FAULT_SHM '1:nothing': allowed RANK:WHAT" "$T/bad.out"
check "no process left" no_procs "$BIN/all_reduce_test"
finish
