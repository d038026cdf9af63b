#!/usr/bin/env bash
# timeout: 120
# The store's host (rank 0, which also roots the bootstrap tree) dies, at each
# phase: (join) while the others wait for the last rank to join, (init) right
# after the join, before the first collective ends, and (run) in the middle of
# a sweep. 3 ranks, env launch on loopback, COLL_CONNECT_TIMEOUT=5,
# COLL_EXEC_TIMEOUT=10. Every other rank must exit non-zero (3 setup, 4
# timeout, 5 aborted) within the timeout + slack, say what it lost (the store /
# rendezvous, or rank 0), and leave no process and no /dev/shm segment.
. "$(dirname "$0")/../lib/common.sh"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
export COLL_SECRET=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n') COLL_CONNECT_TIMEOUT=5 COLL_EXEC_TIMEOUT=10
export COLL_SHM_PREFIX="storehost$$-"
rank() {   # rank TAG R PORT ARGS...: one rank in the background, its timeout's pid in $!
    local tag=$1 r=$2 port=$3; shift 3
    env RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout -k 2 60 "$BIN/all_reduce_test" "$@" \
        >"$W/$tag.r$r" 2>&1 &
}
kill0() { local c; c=$(pgrep -P "$1" | head -1); [ -n "$c" ] && kill -9 "$c"; }
judge() {   # judge TAG T0 PIDS...: ranks 1 and 2 end non-zero, in time, saying why
    local tag=$1 t0=$2 r=1; shift 2
    for p in "$@"; do
        wait "$p"; local rc=$?
        local dt=$(( $(now_ms) - t0 ))
        local msg; msg=$(grep -m1 -iE "rendezvous|store|rank 0|aborted|died|timed out|timeout" "$W/$tag.r$r")
        echo "$tag: rank $r exit $rc after ${dt} ms: $msg"
        case $rc in 3|4|5) ;; *) fail "$tag: rank $r exit $rc (want 3, 4 or 5)" ;; esac
        [ $dt -le 20000 ] || fail "$tag: rank $r took ${dt} ms"
        [ -n "$msg" ] || fail "$tag: rank $r does not say what it lost: $(tail -2 "$W/$tag.r$r")"
        r=$((r + 1))
    done
}
# join: rank 0 dies while ranks 0 and 1 wait for rank 2
port=$(free_port)
rank join 0 $port -b 8K -e 8K -n 1 -w 0; p0=$!
rank join 1 $port -b 8K -e 8K -n 1 -w 0; p1=$!
sleep 1; t0=$(now_ms); kill0 $p0
rank join 2 $port -b 8K -e 8K -n 1 -w 0; p2=$!
judge join "$t0" $p1 $p2; wait $p0
# init: rank 0 dies as soon as every rank has its table (its first output line)
port=$(free_port)
rank init 0 $port -b 64M -e 64M -n 50 -w 5; p0=$!
rank init 1 $port -b 64M -e 64M -n 50 -w 5; p1=$!
rank init 2 $port -b 64M -e 64M -n 50 -w 5; p2=$!
wait_for 30 grep -q "data_size" "$W/init.r0" || fail "init: rank 0 printed no header"
t0=$(now_ms); kill0 $p0
judge init "$t0" $p1 $p2; wait $p0
# run: rank 0 dies in the middle of a sweep
port=$(free_port)
rank run 0 $port -b 8K -e 64M -f 2 -n 200 -w 1; p0=$!
rank run 1 $port -b 8K -e 64M -f 2 -n 200 -w 1; p1=$!
rank run 2 $port -b 8K -e 64M -f 2 -n 200 -w 1; p2=$!
wait_for 30 grep -qE '^[0-9]+ +\|' "$W/run.r0" || fail "run: no row from rank 0"
t0=$(now_ms); kill0 $p0
judge run "$t0" $p1 $p2; wait $p0
check "no process left" no_procs "$BIN/all_reduce_test"
check "no /dev/shm segment left" bash -c "! ls /dev/shm | grep -q '^$COLL_SHM_PREFIX'"
finish
