#!/usr/bin/env bash
# timeout: 60
# Lazy tcp connections: a rank holds sockets only to the peers it used.
# 8 ranks over 8 simulated hosts (COLL_HOST_ID, env launch on loopback), ring
# AllReduce forced; mid-run, /proc/PID/fd of every rank is read. A rank then
# talks to its ring neighbours and to the driver's dissemination-barrier peers
# (sends to r+1, r+2, r+4, receives from r-1, r-2, r-4): 2 x log2(8) = 6
# directions x COLL_NSOCKS=2 = 12 data sockets, plus its tcp listener, its
# bootstrap listener and its link to its parent in the bootstrap tree = 15 (no
# store connection is kept after init). Rank 0, the tree's root, has 7 children
# and also hosts the store's listener: 12 + 2 + 7 + 1 = 22. An eager full mesh
# held 7 peers x (2 x 2 + 1 control) = 35 (45 on rank 0 with its store).
# Ranks 0 and 1 lead hosts 0 and 1, whose init network probe ping-pongs
# between them: one more direction (2 sockets) each, so 17 and 24.
. "$(dirname "$0")/../lib/common.sh"
tmp=$(mktemp -d); pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
for r in 0 1 2 3 4 5 6 7; do
    RANK=$r WORLD_SIZE=8 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_HOST_ID=h$r COLL_NSOCKS=2 \
        COLL_ALGO='allreduce=ring' "$BIN/all_reduce_test" -b 256K -e 256K -n 100000000 -w 1 >"$tmp/r$r.out" 2>&1 &
    pids+=($!)
done
wait_for 30 grep -q 'data_size' "$tmp/r0.out" || { cat "$tmp/r0.out"; fail "run did not start"; }
sleep 1   # warm-up and some timed iterations: every peer the run uses is connected
socks=()
for r in 0 1 2 3 4 5 6 7; do
    socks+=($(ls -l /proc/${pids[$r]}/fd 2>/dev/null | grep -c 'socket:'))
done
echo "sockets per rank: ${socks[*]}"
kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null
check "rank 1: 6..17 sockets (${socks[1]}; the full mesh held 36)" test "${socks[1]}" -ge 6 -a "${socks[1]}" -le 17
for r in 2 3 4 5 6 7; do
    check "rank $r: 6..15 sockets (${socks[$r]}; the full mesh held 36)" \
        test "${socks[$r]}" -ge 6 -a "${socks[$r]}" -le 15
done
check "rank 0: at most 24 (${socks[0]}; the full mesh held 45)" test "${socks[0]}" -le 24
check "no process left" no_procs "$BIN/all_reduce_test"
check "no /dev/shm segment left" no_shm_leftovers
finish
