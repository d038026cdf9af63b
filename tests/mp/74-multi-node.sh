#!/usr/bin/env bash
# timeout: 420
# scripts/multi-node-test.sh end to end on two simulated hosts (tests/lib/netns.sh,
# sshd in each), run from inside cbh1 with --ssh "ssh -F <in-namespace config>":
#   --nodes cbh1,cbh2 --npus 2 --mode quick --ops all_reduce,all_gather --extra "-e 1M"
# once with Open MPI and once with MPICH (--mpi): exit 0, the pre-test check
# log, one valid JSON per operator (collbench-result/1, 4 ranks, every row
# success), the report's index.html and PNGs (real PNG files, linked from the
# index). Then a node that does not exist (cbh1,cbh9): the pre-test check
# fails, exit 3, and no operator ran.
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
fail=0
bad() { echo "FAIL: $*"; fail=1; }

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
    mnt $mpi --nodes cbh1,cbh2 --npus 2 --mode quick --ops all_reduce,all_gather --extra "-e 1M" --mpi $mpi
    el=$(( $(date +%s) - s ))
    D=$W/$mpi
    if [ $rc -ne 0 ]; then
        bad "$mpi: exit $rc (want 0); its output:"
        grep -vE '^(OK|WARN) ' "$W/$mpi.log" | tail -n 25 | sed 's/^/    /'
        continue
    fi
    grep -q "^multi-node-test: 2 hosts x 2 ranks = 4 ranks, $mpi" "$W/$mpi.log" || bad "$mpi: wrong banner: $(head -1 "$W/$mpi.log")"
    grep -q '^summary: .* 0 FAIL' "$D/pre-test-check.log" || bad "$mpi: pre-test check log missing or failed"
    for op in all_reduce all_gather; do
        /usr/bin/python3 - "$D/$op.json" "$op" <<'PY' || bad "$mpi: $op.json: see above"
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
            png_ok "$D/report/${op}_$m.png" || bad "$mpi: report/${op}_$m.png missing or not a PNG"
            grep -q "${op}_$m.png" "$D/report/index.html" 2>/dev/null || bad "$mpi: index.html does not show ${op}_$m.png"
        done
    done
    [ -s "$D/report/index.html" ] || bad "$mpi: no report/index.html"
    grep -q "COLL_HOST_ID is set here" "$W/$mpi.log" || bad "$mpi: no note about the per-host COLL_HOST_ID"
    [ $fail = 0 ] && echo "ok: $mpi: exit 0 in ${el}s, valid JSON for all_reduce and all_gather, report with PNGs"
done

# A node that does not exist: the pre-test check fails -> exit 3, nothing run.
mnt missing --nodes cbh1,cbh9 --npus 2 --mode quick --ops all_reduce --mpi openmpi
echo "--- missing node (exit $rc):"
grep -E '^(FAIL|summary|multi-node-test)' "$W/missing.log" | sed 's/^/    /'
[ $rc -eq 3 ] || bad "missing node: exit $rc (want 3)"
grep -qE '^FAIL +cbh9 +ssh ' "$W/missing.log" || bad "missing node: no 'FAIL cbh9 ssh' line"
[ -e "$W/missing/all_reduce.log" ] && bad "missing node: an operator ran after the failed check"
[ $fail = 0 ] && echo "ok: missing node: pre-test check FAIL for cbh9, exit 3, nothing run"

[ $fail = 0 ] && echo "74-multi-node: all passed"
exit $fail
