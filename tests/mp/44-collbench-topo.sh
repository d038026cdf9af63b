#!/usr/bin/env bash
# timeout: 180
# parallel: yes
# collbench topo: hosts / ranks / load / transports / algorithm tables for standalone
# ranks, what COLL_ALGO and COLL_SHM_DISABLE change, JSON, mpirun, and the
# command-line errors (exit 2).
set -u
. "$(dirname "$0")/../lib/common.sh" # usage_err
CB=${CB_O:-.}/bin/collbench
B=${CB_O:-.}/bin
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CB" ] || fail "no $CB"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

"$CB" topo -p 3 >"$TMP/t" || fail "topo exit $?"
cat "$TMP/t"
grep -qx 'collbench topo: 3 ranks on 1 host (launch standalone)' "$TMP/t" || fail "first line"
for s in Hosts Ranks 'Transports (row: from, column: to)'; do grep -qx "$s" "$TMP/t" || fail "no section '$s'"; done
grep -q '^Algorithms (fp32, sum, root 0' "$TMP/t" || fail "no algorithm section"
# hosts: one line, 3 ranks, cores/PUs/NUMA > 0
awk '/^Hosts$/ {getline; getline; print; exit}' "$TMP/t" | awk -v h="$(hostname)" \
    '{ exit !($1 == 0 && $3 == 3 && $4 >= 1 && $5 >= 1 && $6 >= 1 && $7 >= 1) }' || fail "hosts line"
pus=$(awk '/^Hosts$/ {getline; getline; print $6; exit}' "$TMP/t")
[ "$pus" -ge "$(nproc)" ] || fail "PUs $pus < nproc $(nproc)"
if pkg-config --exists hwloc 2>/dev/null; then grep -q 'hwloc (API' "$TMP/t" || fail "built with hwloc but not used"; fi
# load: ranks per core on the busiest host, from the online CPU count as libcoll reads it
ncpu=$(getconf _NPROCESSORS_ONLN)
rpc=$(awk -v c="$ncpu" 'BEGIN { r = 3 / c; if (r < 1) r = 1; printf "%.1f", r }')
grep -q "^Load: $rpc ranks\? per core on the busiest host" "$TMP/t" || fail "load line (want $rpc per core)"
if [ $((3 * 10 / ncpu)) -gt 20 ]; then grep -q "^Load: .*crowded-host rules" "$TMP/t" || fail "crowded not said"
else ! grep -q "crowded" "$TMP/t" || fail "crowded said with $rpc per core"; fi
# ranks: 0..2, local r/3, interface chosen by netif (run.sh: COLL_SOCKET_IFNAME==lo)
for r in 0 1 2; do
    awk -v r=$r '/^Ranks$/ {f=1; next} f && $1 == r && $3 == r "/3" && $4 > 0 {ok=1} END {exit !ok}' "$TMP/t" || fail "rank $r line"
done
if [ "${COLL_SOCKET_IFNAME:-}" = "=lo" ]; then
    [ "$(awk '/^Ranks$/ {f=1; next} /^$/ {f=0} f && / lo 127\.0\.0\.1$/' "$TMP/t" | wc -l)" -eq 3 ] || fail "interface lo 127.0.0.1"
fi
# transports: self on the diagonal, shm elsewhere
awk '/^Transports/ {f=1; getline; next} f && NF == 4 { for (j = 2; j <= 4; j++) if ($j != ((j - 2 == $1) ? "self" : "shm")) exit 1; n++ } f && NF == 0 {exit} END {exit n != 3}' "$TMP/t" \
    || fail "transport matrix"
# algorithms: 12 collectives, every name one of the registry's for that collective
"$B/all_reduce_test" --list-algos >"$TMP/algos" || fail "--list-algos"
awk '/^Algorithms/ {f=1; getline; next} f && NF == 0 {exit} f {print}' "$TMP/t" >"$TMP/alg"
[ "$(wc -l <"$TMP/alg")" -eq 12 ] || fail "want 12 collectives: $(cat "$TMP/alg")"
while read -r coll names; do
    for a in $names; do
        awk -v c="$coll" -v a="$a" '$1 == c && $2 == a {ok=1} END {exit !ok}' "$TMP/algos" || fail "$coll: '$a' is not a registered algorithm"
    done
done <"$TMP/alg"
[ "$(awk '$1 == "allreduce"' "$TMP/alg" | wc -w)" -eq 6 ] || fail "allreduce row: 5 sizes"

# forcing and disabling shm change what topo reports
COLL_ALGO=allreduce=ring "$CB" topo -p 2 --sizes 4K,8M -q >"$TMP/f" || fail "forced exit $?"
awk '$1 == "allreduce" {exit !($2 == "ring" && $3 == "ring")}' "$TMP/f" || fail "COLL_ALGO not reflected: $(cat "$TMP/f")"
grep -q '^collective *4K *8M *$' "$TMP/f" || fail "--sizes header"
COLL_SHM_DISABLE=1 "$CB" topo -p 2 -q >"$TMP/tcp" || fail "shm-disabled exit $?"
awk '/^Transports/ {f=1; getline; next} f && $1 == 0 {exit !($2 == "self" && $3 == "tcp")}' "$TMP/tcp" || fail "tcp transport: $(cat "$TMP/tcp")"

# JSON
"$CB" topo -p 2 -fmt json --sizes 1K,1M -d bf16 >"$TMP/j" || fail "json exit $?"
python3 -m json.tool "$TMP/j" >/dev/null || fail "invalid JSON: $(cat "$TMP/j")"
python3 - "$TMP/j" <<'PY' || fail "JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "collbench-topo/1" and d["nranks"] == 2 and d["nhosts"] == 1 and d["dtype"] in ("bf16", "bfp16"), d
import os
rpc = max(1.0, 2 / os.sysconf("SC_NPROCESSORS_ONLN"))
assert abs(d["ranks_per_core"] - rpc) < 0.01 and d["crowded"] == (rpc > 2), (d["ranks_per_core"], d["crowded"], rpc)
assert d["hosts"][0]["ranks"] == 2 and d["hosts"][0]["cores"] >= 1 and d["hosts"][0]["numa_nodes"] >= 1, d
assert [r["transports"] for r in d["ranks"]] == [["self", "shm"], ["shm", "self"]], d
assert len(d["algorithms"]) == 11 * 2 + 1, len(d["algorithms"])
assert all(a["algorithm"] for a in d["algorithms"]), d["algorithms"]
assert {a["bytes"] for a in d["algorithms"] if a["collective"] != "barrier"} == {1024, 1048576}
PY

# under mpirun: the launcher's ranks
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
if command -v mpirun.openmpi >/dev/null && [ -f "${CB_O:-.}/lib/collbench-mpi-openmpi.so" ]; then
    timeout 60 mpirun.openmpi -n 3 "$CB" topo -q >"$TMP/mpi" 2>&1 || fail "mpirun topo exit $?: $(cat "$TMP/mpi")"
    grep -qx 'collbench topo: 3 ranks on 1 host (launch openmpi)' "$TMP/mpi" || fail "mpirun topo: $(cat "$TMP/mpi")"
else
    fail "no Open MPI mpirun with its plugin"
fi

err() { usage_err "$1" "$CB" "${@:2}"; }
err "'0'.*allowed: integer 1..64" topo -p 0
err "invalid --sizes 'x'" topo --sizes x
err "invalid -d 'fp99'" topo -d fp99
err "unknown option '--bogus'" topo --bogus
err "invalid -fmt 'xml'" topo -fmt xml
"$CB" --topo --help | grep -q '^usage: collbench topo' || fail "--help"
echo PASS
