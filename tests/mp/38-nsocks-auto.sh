#!/usr/bin/env bash
# timeout: 120
# COLL_NSOCKS auto (-1, the default): 2 sockets a direction while the ranks on
# this machine fit its cores, 1 when they outnumber them (tcp_internal.h,
# COLL_TCP_AUTO_SOCKS). Ranks on simulated hosts of this machine (COLL_HOST_ID,
# env launch on loopback) count together, as namespaces of one kernel do.
# Checked from the tcp setup line each rank logs, and by the data: 1M
# AllReduce and AlltoAll rows (striped or not) must verify. An explicit
# COLL_NSOCKS wins over auto, and a value out of range is named in a warning.
. "$(dirname "$0")/../lib/common.sh"
tmp=$(mktemp -d); pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
ncpu=$(nproc)

# run_hosts N EXE EXTRA-ENV...: N ranks, one per simulated host; logs in $tmp/rR.{out,err}
run_hosts() {
    local n=$1 exe=$2 r port
    shift 2
    port=$(free_port)
    pids=()
    for ((r = 0; r < n; r++)); do
        env RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_HOST_ID=h$r \
            COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=TCP "$@" "$BIN/$exe" -b 1M -e 1M -n 3 -w 1 >"$tmp/r$r.out" 2>"$tmp/r$r.err" &
        pids+=($!)
    done
    local rc=0
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    return $rc
}
# socks_ok N WANT: every rank's log says WANT socket(s) each way, and its rows verified
socks_ok() {
    local n=$1 want=$2 r
    for ((r = 0; r < n; r++)); do
        grep -q "($want socket(s) each way; $n rank(s) on this machine" "$tmp/r$r.err" || { cat "$tmp/r$r.err" >&2; return 1; }
    done
    check_rows "$tmp/r0.out"
}
check_rows() { grep -qE '^ *[0-9]+ +\|.*success' "$1" && ! grep -qE '^ *[0-9]+ +\|.*fail' "$1"; }

run_hosts 2 all_reduce_test || { cat "$tmp"/r*.err; fail "2 ranks, auto: run failed"; }
if [ "$ncpu" -ge 2 ]; then
    check "2 ranks on $ncpu cores: auto stripes over 2 sockets, rows verify" socks_ok 2 2
fi
over=$((ncpu + 1))
for exe in all_reduce_test alltoall_test; do
    run_hosts $over $exe || { cat "$tmp"/r*.err; fail "$over ranks, auto: $exe failed"; }
    check "$over ranks on $ncpu cores: auto uses 1 socket, $exe rows verify" socks_ok $over 1
done
run_hosts $over all_reduce_test COLL_NSOCKS=2 || { cat "$tmp"/r*.err; fail "$over ranks, COLL_NSOCKS=2: run failed"; }
check "$over ranks, COLL_NSOCKS=2 set: 2 sockets, rows verify" socks_ok $over 2
run_hosts 2 all_reduce_test COLL_NSOCKS=0 || { cat "$tmp"/r*.err; fail "COLL_NSOCKS=0: run failed"; }
check "COLL_NSOCKS=0: a warning names the value and the allowed ones" \
    grep -q "COLL_NSOCKS=0 out of range (allowed: -1 = auto, 1..8), using 1" "$tmp/r0.err"
check "no process left" no_procs "$BIN/all_reduce_test"
check "no /dev/shm segment left" no_shm_leftovers
finish
