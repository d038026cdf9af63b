#!/usr/bin/env bash
# timeout: 150
# collbench assess --tests node, node-shm: shared-memory p2p between the ranks
# of each host. 7 ranks on loopback (environment launch), hosts faked by
# COLL_HOST_ID: shmA (ranks 0, 1), shmB (2, 3), shmC (4), shmD (5, 6). Three
# hosts with two ranks, not two: the median of two is their mean, which the
# slow one is never 4x above (latency) and, at 41% of the other, not below
# half of (bandwidth, measured once).
#   (a) the node table has shm GB/s and latency for shmA, shmB and shmD, "-"
#       for shmC; node.json has shm_gbs / shm_latency_us, null for shmC;
#   (b) shmB's rank 3 capped at 1% of one CPU (a cpu cgroup, cpu_cap in
#       tests/lib/common.sh): exit 1, shmB named by node-shm (bandwidth; or
#       node-shm-lat) after its confirmation alone, no other host by node-shm.
#       Threshold 0.35. The cap replaced "taskset to the last CPU at nice 19
#       beside a busy loop at nice 0" (still the fallback where no cgroup can
#       be made): there, healthy ranks the scheduler put on that CPU were
#       time-sliced with the loop too, and measured all at once a healthy host
#       fell to 0.26 GB/s against the slowed one's 0.19 (a run here), or lifted
#       the median so the slowed host passed its confirmation (CI, 2026-12-04).
#       Latency is not asserted for the other hosts: healthy pairs on this
#       loaded 2-core VM differed by up to 340x (1 us: two ranks spinning on
#       two cores; 346 us: sharing one, a switch per message); --lat-threshold 0.01.
set -u
. "$(dirname "$0")/../lib/common.sh"
CB=$BIN/collbench
[ -x "$CB" ] || { echo "FAIL: no $CB"; exit 1; }
tmp=$(mktemp -d)
busy=()
trap 'kill "${busy[@]}" 2>/dev/null; cpu_cap_rm; rm -rf "$tmp"' EXIT
HOSTS=(shmA shmA shmB shmB shmC shmD shmD)
LOCAL=(0 1 0 1 0 0 1)
RANKS="0 1 2 3 4 5 6"

launch() {   # launch NAME WRAPPER ARGS...: 7 ranks; rc0 = rank 0's exit, others must exit 0
    local name=$1 wrap=$2 port pids=() r rc
    shift 2
    port=$(free_port)
    for r in $RANKS; do
        env RANK=$r WORLD_SIZE=7 LOCAL_RANK=${LOCAL[$r]} MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            COLL_HOST_ID=${HOSTS[$r]} timeout 100 $wrap "$CB" assess "$@" >"$tmp/$name.$r.out" 2>"$tmp/$name.$r.err" &
        pids+=($!)
    done
    for r in $RANKS; do
        wait "${pids[$r]}"; rc=$?
        if [ "$r" = 0 ]; then rc0=$rc
        elif [ $rc != 0 ]; then fail "$name: rank $r exit $rc"; cat "$tmp/$name.$r.err"; fi
    done
}

# (a) healthy: figures for the two-rank hosts only, in the table and the JSON
mkdir -p "$tmp/json"
launch clean "" --tests node -s 1M -et 5 --lat-iters 50 --json "$tmp/json"
out=$tmp/clean.0.out
[ "$rc0" = 0 ] || [ "$rc0" = 1 ] || { cat "$out" "$tmp/clean.0.err"; fail "clean: exit $rc0"; }
row() { awk -v h="$1" '$2 == h && NF == 6' "$out"; }
grep -q 'shm GB/s' "$out" || fail "node table has no shm column"
for h in shmA shmB shmD; do
    row $h | awk '{ exit !($5 > 0 && $6 > 0) }' || { cat "$out"; fail "no shm figures for $h"; }
done
row shmC | awk '{ exit !($5 == "-" && $6 == "-") }' || { cat "$out"; fail "shmC (one rank) does not print -"; }
grep -q 'node-shm (all hosts at once) round 2/2 done' "$tmp/clean.0.err" || fail "no node-shm progress line"
python3 - "$tmp/json/node.json" <<'PY' || fail "node.json: shm figures"
import json, sys
d = json.load(open(sys.argv[1]))
names = [h["host"] for h in d["hosts"]]
g, l = d["shm_gbs"], d["shm_latency_us"]
for i, n in enumerate(names):
    if n == "shmC":
        assert g[i] is None and l[i] is None, (n, g[i], l[i])
    else:
        assert g[i] > 0 and l[i] > 0, (n, g[i], l[i])
PY
cat "$out" | grep " shm[A-D] " # healthy spread, for the log
# no assertion on outliers here: on the loaded 2-core VM a healthy pair whose
# two ranks share a core measured 85 us against 0.7 us of one on two cores
mkdir -p "$tmp/png"
"$CB_ROOT/scripts/collbench-report" assess "$tmp/json" -o "$tmp/png" >"$tmp/report.out" 2>&1
[ $? -le 1 ] && [ -s "$tmp/png/node.png" ] || { cat "$tmp/report.out"; fail "collbench-report assess: no node.png"; }
"$CB" assess --help | grep -q 'node-shm' || fail "--help does not give node-shm's cost"
pass "node-shm: figures for shmA, shmB and shmD, '-' and null for shmC"

# (b) shmB's rank 3 capped at 1% of one CPU: named by node-shm
if cpu_cap 10; then
    echo "rank 3 in cgroup $CPU_CAP_DIR, 1% of one CPU"
    cat >"$tmp/slow.sh" <<EOS
#!/bin/sh
[ "\$RANK" = 3 ] && echo \$\$ >"$CPU_CAP_PROCS"
exec "\$@"
EOS
else
    CPU=$(( $(nproc) - 1 ))
    echo "no cpu cgroup here: rank 3 on CPU $CPU at nice 19 beside a busy loop"
    cat >"$tmp/slow.sh" <<EOS
#!/bin/sh
[ "\$RANK" = 3 ] && exec taskset -c $CPU nice -n 19 "\$@"
exec "\$@"
EOS
    taskset -c $CPU sh -c 'while :; do :; done' & busy+=($!)
fi
chmod +x "$tmp/slow.sh"
launch slow "$tmp/slow.sh" --tests node -s 1M -et 5 --lat-iters 50 --threshold 0.35 --lat-threshold 0.01
[ ${#busy[@]} -gt 0 ] && { kill "${busy[@]}"; wait "${busy[@]}" 2>/dev/null; busy=(); }
cpu_cap_rm
out=$tmp/slow.0.out
grep " shm[A-D] " "$out" # the figures, for the log
grep '^OUTLIER' "$out"
[ "$rc0" = 1 ] || { cat "$out"; fail "slow: exit $rc0, want 1"; }
grep -qE '^OUTLIER node-shm(-lat)? shmB: ' "$out" || { cat "$out" "$tmp/slow.0.err"; fail "node-shm did not name shmB"; }
grep -E '^OUTLIER node-shm ' "$out" | grep -v ' shmB: ' && fail "node-shm named a host other than shmB"
grep -q 'node-shm confirmation round' "$tmp/slow.0.err" || fail "shmB was not measured again alone"
pass "node-shm: shmB with a rank on a small CPU share is named (confirmed alone)"
no_shm_leftovers || fail "shared memory left behind"
finish
