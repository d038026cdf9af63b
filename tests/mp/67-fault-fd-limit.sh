#!/usr/bin/env bash
# timeout: 90
# Too few file descriptors for the tcp connections actually used. Connections
# are lazy (a peer's sockets open on first use: COLL_NSOCKS each way, so
# 2 x COLL_NSOCKS per peer in use), so a rank runs out only when it talks to
# many peers at once: 8 ranks with shared memory off, COLL_NSOCKS=8, an
# alltoall (every rank uses all 7 peers: 7 x 16 sockets + 297 for the store,
# listener, up to 256 connections owing their hello, shm and stdio = 409
# descriptors budgeted; about 120 actually open).
#   soft limit 64, hard above: the soft limit is raised as peers come into use
#     (said at INFO) and the run succeeds;
#   hard limit 64: the first EMFILE (socket or accept) stops the run at once
#     with the numbers and the way out, no retry until COLL_CONNECT_TIMEOUT
#     (60 s here), nothing left behind.
. "$(dirname "$0")/../lib/common.sh"
out=$(mktemp); trap 'rm -f "$out"' EXIT
run() {   # run ULIMIT_ARGS: alltoall_test under that limit, output in $out, rc=N last
    bash -c "ulimit $1 && COLL_SHM_DISABLE=1 COLL_NSOCKS=8 COLL_SOCKET_IFNAME==lo COLL_DEBUG=INFO \
        COLL_DEBUG_SUBSYS=TCP COLL_CONNECT_TIMEOUT=60 timeout 80 '$BIN/alltoall_test' -p 8 -b 64K -e 256K -f 2 \
        -n 2 -w 1; echo rc=\$?" >"$out" 2>&1
}
t0=$(now_ms)
run "-Sn 64"   # the hard limit stays (root in CI: far above 409)
base=$(( $(now_ms) - t0 ))   # the baseline of the bound below: the same 8 ranks' complete run
grep -q '^rc=0$' "$out" || cat "$out"
check "soft limit 64: runs (rc=0)" grep -q '^rc=0$' "$out"
check "soft limit 64: raised as peers came into use, said at INFO" \
    grep -qE 'raised the open-file limit from 64 to [0-9]+ for [0-9]+ tcp peer\(s\) in use' "$out"
check "soft limit 64: every row success" test "$(grep -cE '^ *[0-9]+ +\|.*success' "$out")" -eq 3
t0=$(now_ms)
run "-n 64"
t1=$(now_ms)
grep -q '^rc=0$' "$out" && cat "$out"
check "hard limit 64: fails (rc=$(sed -n 's/^rc=//p' "$out"))" bash -c "! grep -q '^rc=0$' '$out'"
check "hard limit 64: message with the numbers and the fix" \
    grep -qE '(cannot open a socket to rank [0-9]+ \(host .*\)|cannot accept a tcp connection): Too many open files: this rank needs about [0-9]+ file descriptors \([0-9]+ tcp peer\(s\) in use x 2 x COLL_NSOCKS=8 sockets \+ [0-9]+ for the store, listener, pending handshakes, shm and stdio\) but the limit is 64 \(hard 64\): raise `ulimit -n` or lower COLL_NSOCKS' "$out"
# "at once": within 10 s, or 5 times the successful run above, at most 45 s
max=$(bound_ms 0 5 "$base" 10000 45000)
check "hard limit 64: stopped at once, not at COLL_CONNECT_TIMEOUT ($((t1 - t0)) ms; bound $max, run $base)" \
    test $((t1 - t0)) -lt "$max"
check "no process left" no_procs "$BIN/alltoall_test"
check "no /dev/shm segment left" no_shm_leftovers
finish
