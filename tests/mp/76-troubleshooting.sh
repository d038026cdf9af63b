#!/usr/bin/env bash
# timeout: 180
# docs/troubleshooting.md quotes the messages a user sees in ```message blocks
# (one message per line; "..." stands for any text: hosts, pids, numbers that
# vary). Every quoted line must be produced by a run this script makes itself,
# each scenario of the guide reproduced on this machine:
#   resolve   MASTER_ADDR that does not resolve             (private netns)
#   stale     a rank of an earlier job still holds MASTER_PORT (private netns)
#   blocked   nothing answers on the rendezvous / collbench net port (netns)
#   ifname    COLL_SOCKET_IFNAME matching no interface        (private netns)
#   version   a rendezvous store of another protocol version (a 20-line fake
#             store in python, private netns)
#   shm       a 1 MiB /dev/shm (tmpfs in a private mount namespace)
#   died      kill -9 of one rank (exit 5)
#   stalled   SIGSTOP of one rank: COLL_EXEC_TIMEOUT (exit 4)
#   vtests    all_gatherv_test / reduce_scatterv_test run (hccl_test's retcode 5)
# Network scenarios run in `unshare -n` (only a private loopback: fixed ports
# collide with nothing, no traffic leaves). Exit codes are checked too.
. "$(dirname "$0")/../lib/common.sh"
DOC=$CB_ROOT/docs/troubleshooting.md
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
[ -f "$DOC" ] || { fail "no $DOC"; finish; }
A="-b 1K -e 1K -n 1 -w 0"
env_run() {   # env_run RANK PORT [VAR=VAL...]: one rank of a 2-rank env launch
    local r=$1 p=$2; shift 2
    env MASTER_ADDR=${MA:-127.0.0.1} MASTER_PORT=$p RANK=$r WORLD_SIZE=2 COLL_CONNECT_TIMEOUT=3 "$@" \
        timeout -k 2 20 "$BIN/all_reduce_test" $A
}
export -f env_run; export BIN A

# The six scenarios in private namespaces (resolve .. shm) run at once, in the
# background, while died and stalled run here: each has its own loopback (the
# fixed ports collide with nothing) or /dev/shm, and most of their time is a
# timeout (blocked: 3 + 2 s). Their checks come after stalled. (One after the
# other until 2026-12; issue 14, the suite's wall time.)
bg=()
# resolve
unshare -n bash -c 'ip link set lo up; MA=no-such-host.invalid env_run 1 29500; echo "rc=$?"' >"$W/resolve.log" 2>&1 & bg+=($!)

# stale: the rank 0 of an earlier job (other secret) waits for its peer on 29500
unshare -n bash -c '
    ip link set lo up
    setsid bash -c "env_run 0 29500 COLL_SECRET=earlier COLL_CONNECT_TIMEOUT=30" >/dev/null 2>&1 & old=$!
    for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/29500) 2>/dev/null && break; sleep 0.1; done
    env_run 0 29500 COLL_SECRET=now; echo "rc0=$?"
    env_run 1 29500 COLL_SECRET=now; echo "rc1=$?"
    pkill -s $old; wait $old' >"$W/stale.log" 2>&1 & bg+=($!)   # its whole session: timeout makes a process group of its own

# blocked: nothing answers
unshare -n bash -c '
    ip link set lo up
    env_run 1 29502; echo "rc=$?"
    timeout 20 "$BIN/collbench" net 127.0.0.1 -p 29502 -s 1M -n 2 --connect-timeout 2; echo "rcnet=$?"' >"$W/blocked.log" 2>&1 & bg+=($!)

# ifname: two "hosts" (COLL_HOST_ID) so that TCP is needed
unshare -n bash -c '
    ip link set lo up
    env_run 0 29501 COLL_SOCKET_IFNAME==eth9 COLL_HOST_ID=a & p=$!
    env_run 1 29501 COLL_SOCKET_IFNAME==eth9 COLL_HOST_ID=b; echo "rc1=$?"
    wait $p; echo "rc0=$?"' >"$W/ifname.log" 2>&1 & bg+=($!)

# version: a store that answers the hello with "unsupported" (another version)
unshare -n bash -c '
    ip link set lo up
    python3 - <<"PY" & srv=$!
import socket, struct
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 29503)); s.listen(8); s.settimeout(20)
for _ in range(5):                # the readiness probe connects and closes first
    c, _ = s.accept()
    hello = b""
    while len(hello) < 48:        # magic, version, rank, 0, 32-byte nonce
        d = c.recv(48 - len(hello))
        if not d: break
        hello += d
    if len(hello) == 48:
        magic, = struct.unpack("<I", hello[:4])
        c.sendall(struct.pack("<III", magic, 9, 0))   # COLL_ERR_UNSUPPORTED, no value
    c.close()
PY
    for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/29503) 2>/dev/null && break; sleep 0.1; done
    env_run 1 29503; echo "rc=$?"
    kill $srv 2>/dev/null; wait $srv' >"$W/version.log" 2>&1 & bg+=($!)

# shm
unshare -m sh -c "mount -t tmpfs -o size=1M tmpfs /dev/shm && '$BIN/all_reduce_test' -p 4 -b 8K -e 8K; echo rc=\$?" >"$W/shm.log" 2>&1 & bg+=($!)

# died
"$BIN/all_reduce_test" -p 3 -b 4M -e 64M -f 2 -n 100000 >"$W/died.log" 2>&1 & l=$!; mine="$l"
wait_for 20 grep -q data_size "$W/died.log" || fail "died: run did not start"
sleep 0.3; kids=($(children_of $l)); kill -9 "${kids[1]}"; wait $l; echo "rc=$?" >>"$W/died.log"
check "died: exit 5" grep -q '^rc=5$' "$W/died.log"

# stalled
COLL_EXEC_TIMEOUT=2 "$BIN/all_reduce_test" -p 3 -b 1M -e 1M -n 1000000 >"$W/stalled.log" 2>&1 & l=$!; mine="$mine $l"
wait_for 20 grep -q data_size "$W/stalled.log" || fail "stalled: run did not start"
sleep 0.3; kids=($(children_of $l)); kill -STOP "${kids[2]}"; wait $l; echo "rc=$?" >>"$W/stalled.log"
kill -CONT "${kids[2]}" 2>/dev/null
check "stalled: exit 4" grep -q '^rc=4$' "$W/stalled.log"

# the private-namespace scenarios started above
wait "${bg[@]}"
check "resolve: exit 3" grep -q '^rc=3$' "$W/resolve.log"
check "stale: new rank 0 exit 3" grep -q '^rc0=3$' "$W/stale.log"
check "stale: new rank 1 exit 3" grep -q '^rc1=3$' "$W/stale.log"
check "blocked: rank exit 4 (timeout)" grep -q '^rc=4$' "$W/blocked.log"
check "blocked: collbench net exit 3" grep -q '^rcnet=3$' "$W/blocked.log"
check "ifname: exit 3" grep -q '^rc1=3$' "$W/ifname.log"
check "version: exit 3" grep -q '^rc=3$' "$W/version.log"
check "shm: exit 3" grep -q '^rc=3$' "$W/shm.log"

# vtests: collbench's v tests run (unequal counts by default, and the original's equal ones)
for t in all_gatherv reduce_scatterv; do
    for eq in "" --equal-counts; do
        timeout 60 "$BIN/${t}_test" -p 2 -b 8K -e 64K -f 2 -n 2 -w 1 $eq >"$W/v.log" 2>&1
        check "vtests: ${t}_test $eq exit 0" [ $? -eq 0 ]
    done
done

# every quoted message is in some output
python3 - "$DOC" "$W" <<'PY' || fail "quoted messages"
import glob, os, re, sys
doc, w = sys.argv[1], sys.argv[2]
logs = "".join(open(f, errors="replace").read() for f in sorted(glob.glob(os.path.join(w, "*.log"))))
msgs, inblock = [], False
for line in open(doc):
    s = line.rstrip("\n")
    if s.startswith("```"):
        inblock = (not inblock) and s[3:].strip() == "message"
        continue
    if inblock and s.strip():
        msgs.append(s)
bad = 0
for m in msgs:
    rx = ".*?".join(re.escape(p) for p in m.split("..."))
    if re.search(rx, logs):
        print("ok: quoted message produced: %s" % m)
    else:
        print("FAIL: quoted message produced by no run: %s" % m); bad += 1
if len(msgs) < 10:
    print("FAIL: only %d quoted messages in %s" % (len(msgs), doc)); bad += 1
sys.exit(1 if bad else 0)
PY
check "no process left" no_procs "$BIN/all_reduce_test"
# segments are named collbench-<launcher pid>-...: only ours count (the machine is shared)
ours_left() { for p in $mine; do ls /dev/shm/collbench-$p-* 2>/dev/null; done | grep . && return 1; return 0; }
check "no /dev/shm segment of the failed runs left" ours_left
for f in "$W"/*.log; do echo "--- $(basename "$f")"; cat "$f"; done
finish
