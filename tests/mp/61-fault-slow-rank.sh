#!/usr/bin/env bash
# timeout: 200
# A slow but live rank (issue 31, faults never tried): rank 2 of 4 runs all the
# time but gets 5% of one CPU (a CFS bandwidth cap, tests/lib/common.sh
# cpu_cap: the noisy neighbour or the throttled container), unlike
# 61-fault-sigstop.sh's stopped rank and 83-tables' SIGSTOP duty cycle. The
# run must finish (not killed, no timeout: exit 0 on every rank, every row
# checked), and the --stats column and the JSON name rank 2 as the straggler
# for most rows; rank 2's cap is gone afterwards, nothing left behind.
. "$(dirname "$0")/../lib/common.sh"
T=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; cpu_cap_rm; rm -rf "$T"; }
trap cleanup EXIT
cpu_cap 50 || { echo "cannot create a cpu cgroup here (root and a cpu controller needed)"; exit 77; }
port=$(free_port)
args=(-b 4K -e 64K -f 2 -n 2000 -w 5 --stats --json "$T/r.json")
t0=$(now_ms)
for r in 0 1 2 3; do
    if [ $r -eq 2 ]; then
        RANK=$r WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            sh -c 'echo $$ >"$0" && exec timeout 180 "$@"' "$CPU_CAP_PROCS" "$BIN/all_reduce_test" "${args[@]}" \
            >"$T/s.$r" 2>&1 &
    else
        RANK=$r WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 180 "$BIN/all_reduce_test" "${args[@]}" \
            >"$T/s.$r" 2>&1 &
    fi
    PIDS+=($!)
done
rcs=()
for p in "${PIDS[@]}"; do wait "$p"; rcs+=($?); done
PIDS=()
t1=$(now_ms)
echo "exit codes ${rcs[*]} in $(( t1 - t0 )) ms"
cut -c1-40,150- "$T/s.0"
check "every rank exit 0 (the slow rank was not killed)" test "${rcs[*]}" = "0 0 0 0"
check "no timeout, abort or death reported" bash -c "! grep -Eq 'timeout after|aborted|died' $T/s.*"
awk -F' [|] ' '/^[0-9]+ +\|/ { print $NF }' "$T/s.0" >"$T/strag"
rows=$(wc -l <"$T/strag"); named=$(grep -c '^2@' "$T/strag")
check "--stats: rank 2 named the straggler for most rows ($named of $rows: $(tr '\n' ' ' <"$T/strag"))" \
    test "$rows" -eq 5 -a $((2 * named)) -gt "$rows"
check "JSON: every row checked, rank 2 the straggler of most" python3 - "$T/r.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert len(rows) == 5 and all(r["check_result"] == "success" for r in rows), rows
named = [r["straggler"]["rank"] if r["straggler"] else None for r in rows]
print("JSON stragglers:", named)
assert 2 * named.count(2) > len(rows), named
PY
cpu_cap_rm
check "the cgroup is gone" test ! -d "/sys/fs/cgroup/cpu/collbench-test-$$" -a ! -d "/sys/fs/cgroup/collbench-test-$$"
check "no process left" no_procs "$BIN/all_reduce_test"
finish
