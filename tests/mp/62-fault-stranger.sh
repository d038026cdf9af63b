#!/usr/bin/env bash
# timeout: 120
# A stranger hammers the rendezvous port and the TCP data ports with random
# bytes, partial headers, huge lengths and silent connections while a
# 3-rank run (TCP between ranks: COLL_SHM_DISABLE=1, loopback only) goes on:
# the run still succeeds, every row checked. The stranger stops when the ranks
# are done (a stop file; at most 20 s): the test used to wait out its 20 s.
. "$(dirname "$0")/../lib/common.sh"
tmp=$(mktemp -d); trap 'kill $spam 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port); base=$((port + 1))
/usr/bin/python3 - "$port" "$base" "$tmp/stop" >"$tmp/spam.log" 2>&1 <<'PY' &
import os, random, socket, struct, sys, time
port, base, stop = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
held, n, end = [], 0, time.time() + 20          # bounded: 20 s, a few thousand connections at most
while time.time() < end and n < 5000 and not os.path.exists(stop):
    p = random.choice([port] + [base + i for i in range(4)])
    try:
        s = socket.create_connection(("127.0.0.1", p), timeout=0.2)
    except OSError:
        time.sleep(0.01); continue
    n += 1
    kind = n % 5
    try:
        if kind == 0: s.sendall(os.urandom(random.randint(1, 4096)))
        elif kind == 1: s.sendall(b"CBS1" + struct.pack("<I", 1))            # partial hello
        elif kind == 2: s.sendall(b"CBS1" + struct.pack("<II", 1, 0xffffffff) + os.urandom(40))  # huge length
        elif kind == 3: s.sendall(b"CBT1" + os.urandom(60))                   # data-port hello, bad secret
        else: held.append(s); s = None                                          # silent, kept open
    except OSError:
        pass
    if s: s.close()
    if len(held) > 50: held.pop(0).close()
    time.sleep(0.002)
print("stranger connections:", n)
PY
spam=$!
pids=()
for r in 0 1 2; do
    RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_SHM_DISABLE=1 COLL_IF_IP=127.0.0.1 \
        COLL_IF_BASE_PORT=$base COLL_PORT_RANGE=4 timeout 90 "$BIN/all_reduce_test" -b 64K -e 4M -f 4 -n 50 \
        >"$tmp/r$r.out" 2>&1 &
    pids+=($!)
    sleep 0.3   # let the stranger get in between the ranks' arrivals too
done
wait_rcs "${pids[@]}"
touch "$tmp/stop"   # the ranks are done: so is the stranger
wait $spam
cat "$tmp/r0.out" "$tmp/spam.log"; tail -n 3 "$tmp/r1.out" "$tmp/r2.out"
check "all ranks exit 0 (${rcs[*]})" test "${rcs[*]}" = "0 0 0"
check "the stranger did connect" grep -qE 'stranger connections: [1-9]' "$tmp/spam.log"
rows=$(grep -cE '^[0-9]+ +\| .*\| success' "$tmp/r0.out")
check "4 rows, all success ($rows)" test "$rows" -eq 4
check "no process left" no_procs "$BIN/all_reduce_test"
check "no /dev/shm segment left" no_shm_leftovers
finish
