#!/usr/bin/env bash
# timeout: 90
# One rank fails during communicator setup after it reached the rendezvous
# store (here: its TCP listener port is taken and COLL_PORT_RANGE=1). It marks
# the job failed in the store, so the other ranks stop at once with its reason
# instead of waiting COLL_CONNECT_TIMEOUT (60 s here); all exit non-zero and
# nothing is left behind. (Before: the others sat out the whole timeout.)
# "At once": within 20 s, or 10 times a complete run of the same three ranks
# measured first (about 1 s on the 2-core VM), at most 45 s (still well
# before the 60 s timeout).
. "$(dirname "$0")/../lib/common.sh"
tmp=$(mktemp -d)
port=$(free_port)
base=$(baseline_ms bash -c "for r in 0 1 2; do COLL_SHM_DISABLE=1 COLL_IF_IP=127.0.0.1 RANK=\$r WORLD_SIZE=3 \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) timeout 80 '$BIN/all_reduce_test' -b 8K -e 8K & done; wait")
max=$(bound_ms 0 10 "$base" 20000 45000)
echo "baseline: a complete run of the three ranks takes $base ms here: bound $max ms"
# hold a port for rank 2's listener
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(80)' >"$tmp/held" &
holder=$!
trap 'kill $holder 2>/dev/null; rm -rf "$tmp"' EXIT
wait_for 5 test -s "$tmp/held"
held=$(cat "$tmp/held")
pids=()
for r in 0 1 2; do
    extra=(); [ $r -eq 2 ] && extra=(COLL_IF_BASE_PORT=$held COLL_PORT_RANGE=1)
    env "${extra[@]}" COLL_SHM_DISABLE=1 COLL_IF_IP=127.0.0.1 COLL_CONNECT_TIMEOUT=60 RANK=$r WORLD_SIZE=3 \
        MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 80 "$BIN/all_reduce_test" -b 8K -e 8K \
        >"$tmp/r$r.out" 2>&1 &
    pids+=($!)
done
wait_rcs "${pids[@]}"; dt=$wait_ms
show_ranks "$tmp" 3
check "the failing rank exits 3 (setup failed): ${rcs[2]}" test "${rcs[2]}" -eq 3
check "it names the port it could not take" grep -q "port.*$held\|$held" "$tmp/r2.out"
# rank 0 hosts the store: it always gets the reason (exit 5, a peer failed).
# Rank 1 gets it too, or, when rank 0 has exited first, loses the store
# (exit 3, "lost the connection to rendezvous store"): quickly either way.
check "rank 0 exits 5, a peer failed (${rcs[0]})" test "${rcs[0]}" = 5
check "rank 0 names rank 2 and why" grep -q "rank 2 (host .*, pid [0-9]*) failed during communicator setup: .*$held" "$tmp/r0.out"
check "rank 1 exits 5 with the reason, or 3 having lost the store (${rcs[1]})" bash -c "
    { [ '${rcs[1]}' = 5 ] && grep -q 'rank 2 (host .*) failed during communicator setup' '$tmp/r1.out'; } ||
    { [ '${rcs[1]}' = 3 ] && grep -q 'lost the connection to rendezvous store' '$tmp/r1.out'; }"
check "everyone stopped well before COLL_CONNECT_TIMEOUT: ${dt} ms, bound $max" test $dt -lt "$max"
check "no process left" no_procs "$BIN/all_reduce_test"
check "no /dev/shm segment left" no_shm_leftovers
finish
