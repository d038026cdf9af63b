#!/usr/bin/env bash
# timeout: 120
# kill -9 one of 4 ranks in the middle of a sweep: every survivor fails within
# seconds naming the dead rank, the launcher exits 5 (peer aborted), and nothing
# is left behind (processes, /dev/shm segments). "Within seconds": 5 s, or 4
# times a complete short run of the same 4 ranks measured first (start, one
# AllReduce, teardown: 0.8-1.2 s on the 2-core VM) where the machine is slower.
. "$(dirname "$0")/../lib/common.sh"
out=$(mktemp); trap 'rm -f "$out"' EXIT
base=$(baseline_ms "$BIN"/all_reduce_test -p 4 -b 4M -e 4M -n 1 -w 0)
max=$(bound_ms 0 4 "$base" 5000)
echo "baseline: a complete 4-rank run takes $base ms here: bound $max ms"
for victim in 1 3; do
    "$BIN"/all_reduce_test -p 4 -b 4M -e 64M -f 2 -n 100000 >"$out" 2>&1 &
    launcher=$!
    wait_for 20 grep -q 'data_size' "$out" || fail "run did not start"
    sleep 0.5
    kids=($(children_of $launcher))
    [ ${#kids[@]} -eq 4 ] || fail "expected 4 ranks, found ${#kids[@]}"
    t0=$(now_ms)
    kill -9 "${kids[$victim]}"
    wait $launcher; rc=$?
    dt=$(( $(now_ms) - t0 ))
    echo "--- victim index $victim: exit $rc after ${dt} ms"; cat "$out"
    check "exit code 5 (peer aborted)" [ $rc -eq 5 ]
    check "fails within $max ms (took ${dt} ms)" [ $dt -lt "$max" ]
    check "message names the dead rank as died" grep -q "rank $victim (host .*, pid ${kids[$victim]}) died" "$out"
    check "every survivor reports" [ "$(grep -c 'failed (allreduce' "$out")" -eq 3 ]
    check "no process left" no_procs "$BIN/all_reduce_test"
    check "no /dev/shm segment left" no_shm_leftovers
done
finish
