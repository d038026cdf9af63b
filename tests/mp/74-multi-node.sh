#!/usr/bin/env bash
# timeout: 420
# scripts/multi-node-test.sh end to end on two simulated hosts (tests/lib/netns.sh,
# sshd in each), run from inside cbh1 with --ssh "ssh -F <in-namespace config>":
#   --nodes cbh1,cbh2 --npus 2 --mode quick --ops all_reduce,all_gather --extra "-e 1M"
# once with Open MPI and once with MPICH (--mpi; with --skip-check: the pre-test
# check, 73-pre-test-check's subject, runs once, in the Open MPI run): exit 0,
# the pre-test check log (none with --skip-check), one valid JSON per operator (collbench-result/1, 4 ranks, every row
# success), the report's index.html and PNGs (real PNG files, linked from the
# index). Then a node that does not exist (cbh1,cbh9): the pre-test check
# fails, exit 3, and no operator ran. Then the launcher killed -9 mid-run:
# exit 1 and only this job's processes stopped (by job id, not by name).
# netns_exec sets COLL_HOST_ID=cbh1 in the script's environment: the script
# must not pass it on to the ranks (it would put all 4 ranks "on cbh1").
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
MNT=$ROOT/scripts/multi-node-test.sh
. "$ROOT/tests/lib/netns.sh"
for f in "$B/all_reduce_test" "$B/all_gather_test" "$B/collbench" "$MNT"; do [ -x "$f" ] || { echo "FAIL: missing $f"; exit 1; }; done
for m in mpirun.openmpi mpirun.mpich; do command -v $m >/dev/null || { echo "FAIL: $m not installed"; exit 1; }; done
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || { echo "FAIL: python3-matplotlib not installed (scripts/install-deps.sh)"; exit 1; }
. "$ROOT/tests/lib/common.sh"

netns_up 2 || { echo "FAIL: netns_up"; exit 1; }
netns_sshd_up || { echo "FAIL: netns_sshd_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"
png_ok() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }

mnt() {   # mnt NAME ARGS...: the script inside cbh1, output in $W/NAME.log, sets rc
    local name=$1
    shift
    netns_exec 1 timeout -k 5 170 "$MNT" --ssh "ssh -F $NETNS_SSH_CONFIG_IN" --bin "$B" \
        -o "$W/$name" "$@" >"$W/$name.log" 2>&1
    rc=$?
}

for mpi in openmpi mpich; do
    s=$(date +%s)
    skip=(); [ $mpi = mpich ] && skip=(--skip-check)
    mnt $mpi --nodes cbh1,cbh2 --npus 2 --mode quick --ops all_reduce,all_gather --extra "-e 1M" --mpi $mpi "${skip[@]}"
    el=$(( $(date +%s) - s ))
    D=$W/$mpi
    if [ $rc -ne 0 ]; then
        fail "$mpi: exit $rc (want 0); its output:"
        grep -vE '^(OK|WARN) ' "$W/$mpi.log" | tail -n 25 | sed 's/^/    /'
        continue
    fi
    grep -q "^multi-node-test: 2 hosts x 2 ranks = 4 ranks, $mpi" "$W/$mpi.log" || fail "$mpi: wrong banner: $(head -1 "$W/$mpi.log")"
    if [ ${#skip[@]} -eq 0 ]; then
        grep -q '^summary: .* 0 FAIL' "$D/pre-test-check.log" || fail "$mpi: pre-test check log missing or failed"
    else
        [ ! -e "$D/pre-test-check.log" ] || fail "$mpi: --skip-check, yet a pre-test check ran"
    fi
    for op in all_reduce all_gather; do
        /usr/bin/python3 - "$D/$op.json" "$op" <<'PY' || fail "$mpi: $op.json: see above"
import json, sys
path, op = sys.argv[1], sys.argv[2]
try:
    d = json.load(open(path))
except Exception as e:
    print("FAIL: %s: not valid JSON: %s" % (path, e)); sys.exit(1)
ok = True
def need(c, what):
    global ok
    if not c: print("FAIL: %s: %s" % (path, what)); ok = False
h, rows = d.get("header", {}), d.get("results", [])
need(d.get("schema") == "collbench-result/1", "schema %r" % d.get("schema"))
need(h.get("ranks") == 4 and h.get("nhosts") == 2 and sorted(h.get("hosts", [])) == ["cbh1", "cbh2"],
     "header: ranks %s, hosts %s (want 4 ranks on cbh1, cbh2)" % (h.get("ranks"), h.get("hosts")))
need(h.get("launcher", "").startswith("mpi") or "mpi" in h.get("launcher", ""), "launcher %r" % h.get("launcher"))
need([r.get("bytes") for r in rows] == [8192 << i for i in range(8)], "sizes %s (want 8K..1M)" % [r.get("bytes") for r in rows])
need(all(r.get("check_result") == "success" and r.get("busbw_gbs", 0) > 0 for r in rows), "a row not success or busbw 0")
need(d.get("status", {}).get("exit_code") == 0, "status %s" % d.get("status"))
sys.exit(0 if ok else 1)
PY
        for m in algbw busbw; do
            png_ok "$D/report/${op}_$m.png" || fail "$mpi: report/${op}_$m.png missing or not a PNG"
            grep -q "${op}_$m.png" "$D/report/index.html" 2>/dev/null || fail "$mpi: index.html does not show ${op}_$m.png"
        done
    done
    [ -s "$D/report/index.html" ] || fail "$mpi: no report/index.html"
    grep -q "COLL_HOST_ID is set here" "$W/$mpi.log" || fail "$mpi: no note about the per-host COLL_HOST_ID"
    [ "$FAILS" -eq 0 ] && echo "ok: $mpi: exit 0 in ${el}s, valid JSON for all_reduce and all_gather, report with PNGs"
done

# A node that does not exist: the pre-test check fails -> exit 3, nothing run.
mnt missing --nodes cbh1,cbh9 --npus 2 --mode quick --ops all_reduce --mpi openmpi
echo "--- missing node (exit $rc):"
grep -E '^(FAIL|summary|multi-node-test)' "$W/missing.log" | sed 's/^/    /'
[ $rc -eq 3 ] || fail "missing node: exit $rc (want 3)"
grep -qE '^FAIL +cbh9 +ssh ' "$W/missing.log" || fail "missing node: no 'FAIL cbh9 ssh' line"
[ -e "$W/missing/all_reduce.log" ] && fail "missing node: an operator ran after the failed check"
[ "$FAILS" -eq 0 ] && echo "ok: missing node: pre-test check FAIL for cbh9, exit 3, nothing run"

# A launcher that dies mid-run (mpirun killed -9): the operator fails and the
# script stops the processes of its own job on every host (found by
# CB_MNT_JOB=<job id> in their environment), not by name: a decoy process
# named all_reduce_test on cbh2 survives; a stand-in stray carrying the job's
# id (started on cbh2 outside mpirun's reach) is stopped.
jobprocs() { grep -lsxz "CB_MNT_JOB=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | tr '\n' ' '; }
alive() { [ -d "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
netns_exec 2 bash -c 'exec -a all_reduce_test sleep 300' &
decoy=$!
netns_exec 1 timeout -k 5 170 "$MNT" --ssh "ssh -F $NETNS_SSH_CONFIG_IN" --bin "$B" -o "$W/kill" \
    --nodes cbh1,cbh2 --npus 2 --ops all_reduce --extra "-e 64K --hold-after 90" --mpi openmpi \
    --skip-check >"$W/kill.log" 2>&1 &
mnt_pid=$!
JOB=
for _ in $(seq 100); do [ -s "$W/kill/job-id" ] && JOB=$(cat "$W/kill/job-id") && break; sleep 0.2; done
n=0
if [ -n "$JOB" ]; then
    for _ in $(seq 150); do n=$(jobprocs "$JOB" | wc -w); [ "$n" -ge 5 ] && break; sleep 0.2; done
fi
if [ -z "$JOB" ] || [ "$n" -lt 5 ]; then
    fail "kill: job ${JOB:-?} never had mpirun + 4 ranks up ($n processes); its output:"
    tail -n 20 "$W/kill.log" | sed 's/^/    /'
    kill "$mnt_pid" 2>/dev/null; wait "$mnt_pid"
else
    netns_exec 2 env CB_MNT_JOB="$JOB" sleep 300 &
    stray=$!
    # the launcher is killed once the stray carries the job id (its sleep, a
    # child of the netns_exec subshell $stray, is among the job's processes);
    # it was a fixed sleep 0.5, and a stray slower than that on a loaded
    # machine could be missed by the cleanup's scans
    stray_up() { local p; for p in $(jobprocs "$JOB"); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sleep ] && return 0; done; return 1; }
    for _ in $(seq 200); do stray_up && break; sleep 0.05; done
    stray_up || fail "kill: the stray (netns_exec pid $stray) never carried CB_MNT_JOB=$JOB"
    for p in $(jobprocs "$JOB"); do
        case "$(cat "/proc/$p/comm" 2>/dev/null)" in mpirun*|orterun|prterun|mpiexec*) kill -9 "$p"; echo "killed -9 the launcher (pid $p)";; esac
    done
    wait "$mnt_pid"; rc=$?
    echo "--- launcher killed (exit $rc):"
    grep -E '^multi-node-test: (job id|all_reduce FAILED|cleanup)' "$W/kill.log" | sed 's/^/    /'
    [ $rc -eq 1 ] || fail "launcher killed: exit $rc (want 1)"
    # (the simulated hosts share one pid namespace: the first scan, here, may find them all)
    grep -qE "^multi-node-test: cleanup: stopped [0-9]+ process\(es\) of job $JOB" "$W/kill.log" \
        || fail "launcher killed: no 'cleanup: stopped ... of job $JOB' line"
    grep -q "cleanup: could not reach" "$W/kill.log" && fail "launcher killed: cleanup could not reach a host"
    sleep 1
    left=$(jobprocs "$JOB")
    [ -z "$left" ] || fail "processes of job $JOB left: $left ($(for p in $left; do cat /proc/$p/comm; done | tr '\n' ' '))"
    alive "$stray" && fail "the stray carrying job $JOB survived the cleanup"
    alive "$decoy" || fail "the decoy named all_reduce_test (another job) was killed: cleanup by name?"
    [ "$FAILS" -eq 0 ] && echo "ok: launcher killed: exit 1, job $JOB's processes stopped on both hosts, the decoy named all_reduce_test untouched"
fi
kill "$decoy" 2>/dev/null; wait "$decoy" 2>/dev/null
kill "${stray:-}" 2>/dev/null; wait 2>/dev/null

finish
