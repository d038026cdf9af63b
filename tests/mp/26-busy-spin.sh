#!/usr/bin/env bash
# timeout: 120
# Waiting ranks stop spinning while other work wants the cores (core/busy.h).
# Two simulated hosts x 1 rank over TCP on loopback (the ranks fit the cores,
# so COLL_TCP_SPIN_US auto would spin 2 ms a wait) while ncpu + 1 CPU hogs run:
# AllGather 8K at hccl_test's defaults. A rank that spins takes the core its
# peer needs and is charged for it (2-5 ms a call measured); one that sleeps at
# once is woken within tens of microseconds. The same run with the spin forced
# (COLL_TCP_SPIN_US=2000) is the baseline: the default's time per call (the
# slowest rank's mean: the spinners' losses are whole scheduler slices, 3-70 ms
# now and then, so the median alone can miss them) must be at most a third of it.
# Not a fixed time bound: both sides share the load.
. "$(dirname "$0")/../lib/common.sh"
W=$(mktemp -d)
HOGS=()
cleanup() { [ ${#HOGS[@]} -gt 0 ] && kill "${HOGS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT

# run2 TAG [ENV...]: 2 ranks as 2 hosts, rank r's JSON in $W/TAG.r<r>.json; status = failed ranks
run2() {
    local tag=$1 port r bad=0; shift
    port=$(free_port)
    local pids=()
    for r in 0 1; do
        env "$@" COLL_HOST_ID=busyhost$r RANK=$r WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
            MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_EXEC_TIMEOUT=30 \
            timeout -k 5 60 "$BIN/all_gather_test" -b 8K -e 8K -d fp32 -n 200 -w 10 \
            --json "$W/$tag.r$r.json" >"$W/$tag.r$r.out" 2>&1 &
        pids+=($!)
    done
    for r in 0 1; do wait "${pids[$r]}" || bad=$((bad + 1)); done
    return $bad
}
mean() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["results"][0]["time_us"]["max"])' "$1"; }

ncpu=$(getconf _NPROCESSORS_ONLN)
for i in $(seq 0 "$ncpu"); do
    (exec -a busy-spin-hog bash -c 'while :; do :; done') &
    HOGS+=($!)
done
sleep 0.2
run2 default; rc=$?
check "AllGather 8K between 2 hosts with $((ncpu + 1)) CPU hogs (exit $rc)" [ $rc -eq 0 ]
run2 forced COLL_TCP_SPIN_US=2000; rc2=$?
check "the same with the spin forced (exit $rc2)" [ $rc2 -eq 0 ]
if [ $rc -eq 0 ] && [ $rc2 -eq 0 ]; then
    d=$(mean "$W/default.r0.json") f=$(mean "$W/forced.r0.json")
    check "time per call sleeping at once ($d us) <= 1/3 of spinning ($f us)" \
        awk -v d="$d" -v f="$f" 'BEGIN { exit !(d * 3 <= f) }'
else
    tail -n 5 "$W"/*.out
fi
kill "${HOGS[@]}" 2>/dev/null; wait "${HOGS[@]}" 2>/dev/null; HOGS=()
check "no rank left" no_procs "all_gather_test"
check "no /dev/shm segment left" no_shm_leftovers
finish
