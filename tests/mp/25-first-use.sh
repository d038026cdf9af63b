#!/usr/bin/env bash
# timeout: 400
# First use paid at init (issue 28): after coll_comm_init_rank, no call after
# the first of a size faults in a page or does set-up work that init could have
# done (a working block allocated, stage bytes past what init touched, a TCP
# connection opened: the library's first-use events, core/comm.h), and call 1
# of a size up to 256K on one host has no first-use event either (init touched
# the rotating stage windows and small rings those calls walk). Every
# collective, 4 ranks on one host and on 2 simulated hosts x 2 (TCP between
# them), 8 ranks for AllReduce; sizes in one sweep per communicator, as the
# test executables run them (build/tests/first_use -C, tests/firstuse).
# Not a timing test. On 56eb239 it fails: AllGather 8K, 4 ranks, call 2
# faulted a page (the peers' small rings), and a 64M AllGather (bruck) or
# ReduceScatter (halving) on 2 hosts faulted 16,384 pages in every call (its
# working block freed to glibc and unmapped after each call).
set -u
. "$CB_ROOT/tests/lib/common.sh"
F=$CB_O/build/tests/first_use
[ -x "$F" ] || { echo "missing $F (run make)"; exit 1; }
for v in $(env | sed -n 's/^\(\(HCCL\|COLL\)_[A-Z0-9_]*\)=.*/\1/p'); do
    [ "$v" = COLL_SOCKET_IFNAME ] || unset "$v"
done
FAILS=0
tmp=$(mktemp -d /tmp/cb-firstuse.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
run() { # run NAME ARGS...: first_use -C must pass and print one row per size
    local name=$1 rows
    shift
    if ! timeout 120 "$F" "$@" -C >"$tmp/$name.out" 2>"$tmp/$name.err"; then
        fail "$name: first_use $* -C: $(grep -m3 FAIL "$tmp/$name.err" || tail -3 "$tmp/$name.err")"
        return
    fi
    rows=$(grep -c ' init ' "$tmp/$name.out")
    [ "$rows" -eq "$EXPECT" ] || { fail "$name: $rows rows, expected $EXPECT"; return; }
    pass "$name"
}
for c in allreduce allgather reduce_scatter broadcast reduce alltoall scatter gather; do
    EXPECT=5 run "$c-4" -p 4 -c "$c" -s 8K,64K,256K,1M,16M -n 8
    EXPECT=3 run "$c-2x2" -p 4 -H 2 -c "$c" -s 8K,1M,64M -n 4
done
EXPECT=3 run allreduce-8 -p 8 -c allreduce -s 8K,256K,4M -n 8
# The check can fail: with FU_PLANT_FAULT=K, first_use writes 16 fresh pages
# inside call K, as a library that allocated per call would; it must name it.
FU_PLANT_FAULT=3 timeout 60 "$F" -p 2 -c allreduce -s 8K -n 5 -C >"$tmp/plant.out" 2>"$tmp/plant.err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q 'FAIL allreduce 8192 bytes, rank [01], call 3: [1-9][0-9]* page faults' "$tmp/plant.err"; then
    fail "a planted fault in call 3 was not reported (exit $rc): $(head -3 "$tmp/plant.err")"
else
    pass "a planted fault in call 3 is reported, exit 1"
fi
no_shm_leftovers || fail "segments left in /dev/shm"
finish
