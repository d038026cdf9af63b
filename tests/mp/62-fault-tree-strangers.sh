#!/usr/bin/env bash
# timeout: 120
# M2/M4/M5: strangers on every listener cannot delay a join. Ranks 0 and 1 of
# a 3-rank env launch start and wait for rank 2; meanwhile 280 silent
# connections (no secret, no byte) and 20 that send a perfect-looking hello
# and a made-up proof are opened to each listening port of rank 1 (its
# bootstrap listener and its TCP data listener) and to the store (rank 0).
# Then rank 2 starts. The run must succeed, and rank 1 must finish within
# 1 s more than it does without strangers (measured the same way just
# before). More strangers than the tree (64) and TCP (256) listeners keep
# pending: the oldest are dropped, never a genuine connection for good (one
# dropped during its handshake is opened again). The old tree served one
# connection at a time, 2 s each: 80 strangers held the join 30 s and more.
. "$(dirname "$0")/../lib/common.sh"
W=$(mktemp -d); hold=
trap '[ -n "$hold" ] && kill $hold 2>/dev/null; rm -rf "$W"' EXIT
export COLL_SECRET=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n') COLL_IF_IP=127.0.0.1 COLL_SHM_DISABLE=1
run() {   # run TAG STRANGERS: prints rank 1's ms from rank 2's start to its end
    local tag=$1 strangers=$2 port; port=$(free_port)
    local pids=()
    for r in 0 1; do
        env RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_CONNECT_TIMEOUT=60 \
            timeout -k 2 90 "$BIN/all_reduce_test" -b 8K -e 8K -n 2 -w 1 >"$W/$tag.r$r" 2>&1 & pids+=($!)
    done
    local p1=${pids[1]} ports="" t1pid=""
    for i in $(seq 100); do   # rank 1's listeners (bootstrap and tcp), then the store's port
        t1pid=$(pgrep -P "$p1" | head -1)   # timeout's child: the rank itself
        [ -n "$t1pid" ] && ports=$(ss -Hltnp 2>/dev/null |
            awk -v p="pid=$t1pid," '$0 ~ p {n=split($4,a,":"); print a[n]}' | sort -u | tr '\n' ' ')
        [ "$(echo $ports | wc -w)" -ge 2 ] && break; sleep 0.05
    done
    [ "$(echo $ports | wc -w)" -ge 2 ] || fail "$tag: rank 1's listeners not found"
    if [ "$strangers" = 1 ]; then
        python3 - $ports $port >"$W/$tag.hold" 2>&1 <<'PY' & hold=$!
import socket, struct, sys, time, os, resource
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
socks = []
for p in map(int, sys.argv[1:]):
    for i in range(280):   # more than any listener keeps pending (tree 64, tcp 256)
        s = socket.socket(); s.connect(("127.0.0.1", p)); socks.append(s)
    for i in range(20):   # a hello of every kind, then 32 made-up proof bytes
        s = socket.socket(); s.connect(("127.0.0.1", p))
        s.sendall(os.urandom(64) + b"\0" * 32); socks.append(s)
print("holding", len(socks), flush=True)
time.sleep(30)
PY
        wait_for 10 grep -q holding "$W/$tag.hold" || fail "strangers could not connect: $(cat "$W/$tag.hold")"
    fi
    local t0; t0=$(now_ms)
    env RANK=2 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_CONNECT_TIMEOUT=60 \
        timeout -k 2 90 "$BIN/all_reduce_test" -b 8K -e 8K -n 2 -w 1 >"$W/$tag.r2" 2>&1 & pids+=($!)
    wait $p1; local rc1=$?; local t1; t1=$(now_ms)
    local rc=0; for p in "${pids[@]}"; do wait $p || rc=1; done
    [ $rc1 -eq 0 ] && [ $rc -eq 0 ] || { fail "$tag: a rank failed:"; tail -3 "$W/$tag".r*; }
    [ -n "$hold" ] && { kill $hold 2>/dev/null; wait $hold 2>/dev/null; hold=; }
    echo "$tag: listeners of rank 1 and the store: $ports; rank 1 ended $((t1 - t0)) ms after rank 2 started" >&2
    echo $((t1 - t0))
}
base=$(run base 0)
with=$(run strangers 1)
echo "without strangers ${base} ms, with ${with} ms"
check "strangers delay the join by under 1 s" test $((with - base)) -lt 1000
check "no process left" no_procs "$BIN/all_reduce_test"
finish
