#!/usr/bin/env bash
# timeout: 300
# collbench bw -t p2p (ascend-dmi --bw -t p2p): the seed's four tables for a
# pair (--ds/--dd: device ids, i.e. NUMA nodes, of rank 0 and rank 1; -d, -m
# device|card), the every-pair matrices, JSON, mpirun --sp 2, and the
# command-line errors (one line naming the value, exit 2). The figures of p2p
# against d2d one-core memcpy at 64 and 256 MiB, which this test printed until
# 2026-12 (asserting only a bandwidth > 0, as check_pair does), are
# bench/p2p-bench.sh's (interleaved rounds, a median).
set -u
. "$(dirname "$0")/../lib/common.sh" # usage_err
CB=${CB_O:-.}/bin/collbench
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CB" ] || fail "no $CB"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
DASH=----------------------------------------------------------------
HEAD='  Size(Bytes)  Execute Times  Bandwidth(GB/s)  Elapsed Time(us)'

# check_pair FILE SIZE TIMES DS DD: exactly the seed's layout, four tables,
# rank 0 (device DS) and rank 1 (device DD)
check_pair() {
    local f=$1 size=$2 times=$3 s=$4 d=$5
    python3 - "$f" "$size" "$times" "$s" "$d" <<'PY' || fail "pair layout of $1: $(cat "$1")"
import sys, re
f, size, times, s, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
lines = open(f).read().split("\n")
dash = "-" * 64
head = "  Size(Bytes)  Execute Times  Bandwidth(GB/s)  Elapsed Time(us)"
dev = {0: s, 1: d}
want = [("Unidirectional", 0, 1, "to"), ("Bidirectional", 0, 1, "and"),
        ("Unidirectional", 1, 0, "to"), ("Bidirectional", 1, 0, "and")]
i = 0
for k, (kind, a, b, word) in enumerate(want):
    if k:
        assert lines[i] == "", ("blank line between tables", i, lines[i])
        i += 1
    assert lines[i] == kind + " Peer to Peer Test", (i, lines[i])
    m = re.fullmatch(r"Pod: rank (\d+) device id: (\d+) %s Pod: rank (\d+) device id: (\d+)" % word, lines[i + 1])
    assert m and int(m.group(1)) == a and int(m.group(3)) == b, lines[i + 1]
    assert int(m.group(2)) == dev[a] and int(m.group(4)) == dev[b], ("device ids", lines[i + 1])
    assert lines[i + 2] == dash and lines[i + 3] == head and lines[i + 4] == dash, lines[i + 2:i + 5]
    row = lines[i + 5]
    v = row.split()
    assert len(v) == 4 and int(v[0]) == size and int(v[1]) == times, row
    gbs, us = float(v[2]), float(v[3])
    assert row == "%12d%11d%20.6f%14.2f" % (size, times, gbs, us), ("column layout", row)
    assert us > 0, row
    # bandwidth = bytes moved / time, to the printed 6 decimals (1 byte that
    # took more than 2 ms on a loaded machine prints 0.000000, correctly).
    # The time is printed to 2 decimals: the bandwidth was computed from a
    # time anywhere in us +- 0.005, which for 1 byte in ~0.5 us (measured
    # 0.47-0.70 us here; less on a faster machine) is more than the 1% kept
    # for the rest, so the bounds come from that interval, not from us alone.
    moved = size * (2 if kind == "Bidirectional" else 1)
    want = moved / (us * 1e3)
    lo, hi = moved / ((us + 0.005) * 1e3), moved / (max(us - 0.005, 0.001) * 1e3)
    assert lo * 0.99 - 5e-7 <= gbs <= hi * 1.01 + 5e-7, ("bandwidth != bytes moved / time", want, row)
    assert lines[i + 6] == dash, lines[i + 6]
    i += 7
PY
}

"$CB" bw -t p2p -s 8M -et 5 --ds 0 --dd 0 -q >"$TMP/pair" || fail "pair exit $?"
cat "$TMP/pair"
check_pair "$TMP/pair" 8388608 5 0 0
[ "$(wc -l <"$TMP/pair")" -eq 31 ] || fail "-q prints only the four tables"
# ascend-dmi spelling, long options, odd and tiny sizes, -d, -m device|card
"$CB" --bw --type p2p --size 4097 --execute-times 3 --device-src 0 --device-dst 0 -p 2 -q >"$TMP/odd" || fail "odd exit $?"
check_pair "$TMP/odd" 4097 3 0 0
"$CB" --bw -t p2p -s 1 -et 1 -ds 0 -dd 0 -q >"$TMP/one" || fail "-s 1 exit $?"
check_pair "$TMP/one" 1 1 0 0
"$CB" bw -t p2p -s 64K -et 2 -d 0 -q >"$TMP/d0" || fail "-d 0 exit $?"
check_pair "$TMP/d0" 65536 2 0 0
"$CB" bw -t p2p -s 64K -et 2 -m card -q >"$TMP/card" || fail "-m card exit $?"
check_pair "$TMP/card" 65536 2 0 0
"$CB" bw -t p2p -s 64K -et 2 --mode device --ds 0 --dd 0 -q >"$TMP/mdev" || fail "-m device exit $?"
check_pair "$TMP/mdev" 65536 2 0 0
# without -q: the notes follow the tables
"$CB" bw -t p2p -s 64K -et 3 --ds 0 --dd 0 >"$TMP/notes" || fail "notes exit $?"
grep -q '^launch standalone, 2 ranks, transport shm\.$' "$TMP/notes" || fail "no launch note: $(cat "$TMP/notes")"

# every pair: two matrices, diagonal '-'
"$CB" bw -t p2p -s 1M -et 3 -p 3 >"$TMP/mat" || fail "matrix exit $?"
cat "$TMP/mat"
grep -qx 'Unidirectional Peer to Peer Bandwidth Matrix (GB/s, row: source, column: destination)' "$TMP/mat" || fail "no uni matrix"
grep -qx 'Bidirectional Peer to Peer Bandwidth Matrix (GB/s)' "$TMP/mat" || fail "no bidi matrix"
[ "$(grep -c '^Size(Bytes): 1048576  Execute Times: 3$' "$TMP/mat")" -eq 2 ] || fail "matrix size line"
n=$(awk '$1 ~ /^[0-2]$/ && NF == 4' "$TMP/mat" | awk '{ for (j = 2; j <= 4; j++) { if (j - 2 == $1) { if ($j != "-") exit 1 } else if (!($j > 0)) exit 1 } n++ } END { print n }') \
    || fail "matrix cells: $(cat "$TMP/mat")"
[ "$n" -eq 6 ] || fail "want 2 x 3 matrix rows, got $n"
grep -q '^Pod: rank 2 host .* device id: 2$' "$TMP/mat" || fail "rank legend"

# JSON: pair and matrix
"$CB" bw -t p2p -s 256K -et 2 --ds 0 --dd 0 -fmt json >"$TMP/j1" || fail "json exit $?"
python3 -m json.tool "$TMP/j1" >/dev/null || fail "invalid JSON: $(cat "$TMP/j1")"
"$CB" bw -t p2p -s 256K -et 2 -p 3 --json >"$TMP/j2" || fail "json matrix exit $?"
python3 -m json.tool "$TMP/j2" >/dev/null || fail "invalid JSON: $(cat "$TMP/j2")"
python3 - "$TMP/j1" "$TMP/j2" <<'PY' || fail "JSON content"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["type"] == "p2p" and a["mode"] == "pair" and a["size"] == 262144 and a["execute_times"] == 2, a
assert [(r["test"], r["src"], r["dst"]) for r in a["results"]] == [
    ("unidirectional", 0, 1), ("bidirectional", 0, 1), ("unidirectional", 1, 0), ("bidirectional", 1, 0)], a
assert [r["device"] for r in a["ranks"]] == [0, 0], a["ranks"]
assert all(r["bandwidth_gbs"] > 0 and r["elapsed_us"] > 0 and r["check"] == "success" for r in a["results"]), a
assert b["mode"] == "matrix" and b["nranks"] == 3 and len(b["results"]) == 9, b
m = b["matrix_unidirectional_gbs"]
assert all((m[i][j] is None) == (i == j) for i in range(3) for j in range(3)), m
mb = b["matrix_bidirectional_gbs"]
assert all(mb[i][j] == mb[j][i] for i in range(3) for j in range(3)), mb
assert b["launch"] == "standalone" and b["transport"] == "shm" and len(b["ranks"]) == 3, b
PY

# this machine's NUMA nodes: device $NODES is one past the last
NODELIST=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | sed 's/.*node//' | sort -n | paste -sd, | sed 's/,/, /g')
NODELIST=${NODELIST:-0}
NODES=$(( $(echo "$NODELIST" | awk -F', ' '{print $NF}') + 1 ))

# mpirun --sp 2 (the seed's MPI mode), whichever MPI is installed
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
ran_mpi=0
for m in mpirun.openmpi mpirun.mpich; do
    command -v $m >/dev/null || continue
    flavour=${m#mpirun.}
    [ -f "${CB_O:-.}/lib/collbench-mpi-$flavour.so" ] || continue
    timeout 120 $m -n 2 "$CB" --bw -t p2p --sp 2 --dd 0 --ds 0 -s 2M -et 4 -q >"$TMP/mpi" 2>"$TMP/mpi.err" \
        || fail "$m exit $?: $(cat "$TMP/mpi.err")"
    check_pair "$TMP/mpi" 2097152 4 0 0
    if [ $flavour = openmpi ]; then
        # seed 002 example 1, hosts a and b being two names of this machine (-s/-et
        # only keep it short): --ds 0 --dd 0 = device 0 on each node
        timeout 120 $m -host localhost:1,127.0.0.1:1 -n 2 "$CB" --bw -t p2p --sp 2 --dd 0 --ds 0 -q -s 1M -et 2 \
            >"$TMP/seed" 2>"$TMP/seed.err" || fail "seed 002 example 1 exit $?: $(cat "$TMP/seed.err")"
        check_pair "$TMP/seed" 1048576 2 0 0
    fi
    # a device this node lacks: every rank exits 2, the bound rank says why
    out=$(timeout 120 $m -n 2 "$CB" --bw -t p2p --sp 2 --dd 0 --ds $NODES -s 1K -et 1 -q 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "$m --ds $NODES exit $rc (want 2): $out"
    echo "$out" | grep -q "rank 0: device $NODES does not exist: this machine has NUMA node(s) $NODELIST" \
        || fail "$m --ds $NODES message: $out"
    ran_mpi=1
done
[ $ran_mpi = 1 ] || fail "no mpirun with its collbench plugin to test --sp 2"

err() { usage_err "$1" "$CB" "${@:2}"; }
err "'0'.*allowed: 1..4294967296" bw -t p2p -s 0
err "'5G'.*allowed" bw -t p2p -s 5G
err "'12Q'.*allowed" bw -t p2p -s 12Q
err "'0'.*allowed: integer 1..1000" bw -t p2p -et 0
err "'1001'.*allowed: integer 1..1000" bw -t p2p -et 1001
err "--ds and --dd go together" bw -t p2p --ds 0
# device ids, not ranks: a device this machine lacks names those present
err "^collbench bw: -d $NODES: device $NODES does not exist: this machine has NUMA node(s) $NODELIST (--ds/--dd are device ids" bw -t p2p -d $NODES
err "^collbench bw: --dd $NODES: device $NODES does not exist: this machine has NUMA node(s) $NODELIST" bw -t p2p --ds 0 --dd $NODES
err "^collbench bw: --ds $NODES: device $NODES does not exist" bw -t p2p --ds $NODES --dd $NODES
err "card 9 does not exist: this machine has socket(s) [0-9]" bw -t p2p -m card -d 9
err "invalid -m 'socket' (allowed: device (a NUMA node), card (a socket))" bw -t p2p -m socket
err "invalid -m 'Card'" bw -t p2p --mode Card -d 0
err "missing value after -m" bw -t p2p -m
err "invalid -d '-1'" bw -t p2p -d -1
err "invalid -d 'x'" bw -t p2p -d x
err "invalid --ds '256' (allowed: integer 0..255)" bw -t p2p --ds 256 --dd 0
err "-d does not go with --ds/--dd" bw -t p2p -d 0 --ds 0 --dd 0
err "not ranks: they need 2 ranks, not -p 3" bw -t p2p --ds 1 --dd 0 -p 3
err "'3'.*allowed: integer 0..2" bw -t p2p --sp 3
err "--sp 2 is the MPI mode" bw -t p2p --sp 2 --ds 0 --dd 0
err "'1'.*allowed: integer 2..64" bw -t p2p -p 1
err "--ip applies only to the shared-directory mode" bw -t p2p --ip 127.0.0.1
err "missing value after --dd" bw -t p2p --ds 0 --dd
err "unknown option '--frobnicate'" bw -t p2p --frobnicate
err "needs 512 GiB.*use a smaller -s" bw -t p2p -s 4G -p 64

echo PASS
