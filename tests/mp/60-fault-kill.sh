#!/usr/bin/env bash
# timeout: 120
# kill -9 one of 4 ranks in the middle of a sweep: every survivor fails within
# seconds naming the dead rank, the launcher exits 5 (peer aborted), and nothing
# is left behind (processes, /dev/shm segments).
. "$(dirname "$0")/../lib/common.sh"
out=$(mktemp); trap 'rm -f "$out"' EXIT
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
    check "fails within 5 s (took ${dt} ms)" [ $dt -lt 5000 ]
    check "message names the dead rank as died" grep -q "rank $victim (host .*, pid ${kids[$victim]}) died" "$out"
    check "every survivor reports" [ "$(grep -c 'failed (allreduce' "$out")" -eq 3 ]
    check "no process left" no_procs "$BIN/all_reduce_test"
    check "no /dev/shm segment left" no_shm_leftovers
done
finish
