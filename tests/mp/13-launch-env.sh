#!/usr/bin/env bash
# timeout: 180
# parallel: yes
# torchrun-style launch: RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT, three
# ranks started as background processes; rank 0 hosts the rendezvous.
# Also Slurm-style variables (SLURM_PROCID / SLURM_NTASKS / SLURM_JOB_NODELIST).
set -u
. "$(dirname "$0")/../lib/common.sh"
B=${CB_O:?}/bin
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# slurm_step JOB: a SLURM_STEP_ID for which the launcher's rendezvous port
# (no MASTER_PORT under srun: 20000 + djb2(SLURM_JOB_ID SLURM_STEP_ID) % 20000,
# tools/launch/launch.c) is free and below the kernel's ephemeral range. The
# step used to be a free_port number, whose derived port fell anywhere in
# 20000..39999: a third of them in the ephemeral range (32768..), where a
# connection of the test beside this one may hold it (bind: address in use).
slurm_step() {
    /usr/bin/python3 - "$1" <<'PY'
import socket, sys
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for step in range(1, 5000):
    h = 5381
    for ch in (sys.argv[1] + str(step)).encode():
        h = (h * 33 + ch) & 0xFFFFFFFFFFFFFFFF
    p = 20000 + h % 20000
    if p >= lo - 1:
        continue
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", p)); s.close(); print(step); break
    except OSError:
        s.close()
else:
    raise SystemExit("slurm_step: no step id with a free port below the ephemeral range")
PY
}

launch3() {   # launch3 KIND TEST ARGS...: 3 ranks, all must exit 0
    local kind=$1 t=$2; shift 2
    local port step pids=() r
    if [ "$kind" = env ]; then port=$(free_port); else step=$(slurm_step $$); fi
    for r in 0 1 2; do
        if [ "$kind" = env ]; then
            env RANK=$r WORLD_SIZE=3 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                timeout 90 "$B/${t}_test" "$@" >"$tmp/$kind-$t-$r.out" 2>&1 &
        else
            env SLURM_PROCID=$r SLURM_NTASKS=3 SLURM_LOCALID=$r SLURM_JOB_NODELIST="localhost" \
                SLURM_JOB_ID=$$ SLURM_STEP_ID=$step timeout 90 "$B/${t}_test" "$@" >"$tmp/$kind-$t-$r.out" 2>&1 &
        fi
        pids+=($!)
    done
    local i=0
    for r in 0 1 2; do
        wait ${pids[$i]}; local rc=$?
        i=$((i + 1))
        if [ $rc -ne 0 ]; then echo "FAIL: $kind $t rank $r: exit $rc"; tail -n 3 "$tmp/$kind-$t-$r.out"; fail=1; fi
    done
    local rows ok
    rows=$(grep -cE '^[0-9]+ +\|' "$tmp/$kind-$t-0.out")
    ok=$(grep -E '^[0-9]+ +\|' "$tmp/$kind-$t-0.out" | awk -F'|' '{gsub(/ /,"",$4); if ($4=="success") n++} END {print n+0}')
    if [ "$rows" -eq 0 ] || [ "$rows" -ne "$ok" ]; then echo "FAIL: $kind $t: $ok/$rows rows success"; cat "$tmp/$kind-$t-0.out"; fail=1; fi
    # only rank 0 prints the table
    if grep -qE '^[0-9]+ +\|' "$tmp/$kind-$t-1.out"; then echo "FAIL: $kind $t: rank 1 printed rows"; fail=1; fi
}

launch3 env all_reduce -b 4K -e 64K -f 4 -n 3 -w 1
launch3 env scatter -r 2 -b 3K -e 3K -n 3 -w 1
launch3 env alltoallv -b 6K -e 6K -n 3 -w 1 -d int16
launch3 slurm all_reduce -b 4K -e 16K -f 2 -n 2 -w 1

# A rank that never comes: the others give up (connect timeout), never hang.
port=$(free_port)
out=$(COLL_CONNECT_TIMEOUT=3 RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout 60 "$B/all_reduce_test" -b 1K -e 1K 2>&1); rc=$?
case $rc in 3|4) ;; *) echo "FAIL: missing peer: exit $rc (want 3 or 4): $out"; fail=1 ;; esac
# Ranks given different options (rank 0 alone asks for --json, which adds
# collectives): all refuse at start with exit 2 and a line naming the mismatch,
# instead of hanging in different calls until COLL_EXEC_TIMEOUT.
port=$(free_port)
pids=()
for r in 0 1; do
    env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_EXEC_TIMEOUT=20 \
        timeout 60 "$B/all_gather_test" -b 8K -e 8K $([ $r -eq 0 ] && echo "--json $tmp/mismatch.json") \
        >"$tmp/mismatch-$r.out" 2>&1 &
    pids+=($!)
done
t0=$(now_ms)
for r in 0 1; do
    wait "${pids[$r]}"; rc=$?
    if [ $rc -ne 2 ] || ! grep -q "the ranks were given different options" "$tmp/mismatch-$r.out"; then
        echo "FAIL: different options, rank $r: exit $rc (want 2 and the mismatch named)"; cat "$tmp/mismatch-$r.out"; fail=1
    fi
done
took=$(( $(now_ms) - t0 ))
if [ $took -gt 15000 ]; then echo "FAIL: different options: refused after $took ms (a hang until the timeout?)"; fail=1; fi
if [ -e "$tmp/mismatch.json" ]; then echo "FAIL: different options: a result file was written"; fail=1; fi
[ $fail -eq 0 ] && echo "13-launch-env: all passed"
exit $fail
