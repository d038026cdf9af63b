#!/usr/bin/env bash
# timeout: 120
# parallel: yes
# --format hccl / COLL_TEST_FORMAT=hccl: stdout is exactly hccl_test's table.
# tests/fixtures/hccl-format-all_reduce.txt is the expected stdout byte for
# byte, with the two measured fields (time, algbw) masked by '@' over their
# exact width; each row is also re-rendered with the original's printf format
# "%-17llu | %-14.2f | %-20.5f | %s" and must come out identical, and the header
# line equals the one of the original's log (tests/fixtures/hccl_test-all_reduce.log).
# A parser anchored on 'success$' finds every row; a bad value exits 2 naming
# the allowed ones; the default table is unchanged.
set -u
B=${CB_O:?}/bin
F=${CB_ROOT:?}/tests/fixtures
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check_table() {   # $1 = label, $2 = stdout file
    python3 - "$2" "$F/hccl-format-all_reduce.txt" "$F/hccl_test-all_reduce.log" "$1" <<'PY' || fail=1
import sys
out = open(sys.argv[1], "rb").read()
exp = open(sys.argv[2], "rb").read()
orig = open(sys.argv[3], "rb").read().split(b"\n")
label = sys.argv[4]
ok = True
def bad(msg):
    global ok
    ok = False
    print("FAIL (%s): %s" % (label, msg))
ol, el = out.split(b"\n"), exp.split(b"\n")
if len(ol) != len(el):
    bad("%d lines, fixture has %d:\n%s" % (len(ol), len(el), out.decode()))
for i, (o, e) in enumerate(zip(ol, el)):
    if len(o) != len(e) or any(c != d and d != ord("@") for c, d in zip(o, e)):
        bad("line %d: %r, fixture %r" % (i + 1, o, e))
if len(ol) > 1 and ol[1] != orig[1]:
    bad("header %r differs from the original's %r" % (ol[1], orig[1]))
for o in ol[2:]:
    if not o: continue
    f = [x.strip() for x in o.decode().split("|")]
    again = "%-17u | %-14.2f | %-20.5f | %s" % (int(f[0]), float(f[1]), float(f[2]), f[3])
    if again.encode() != o:
        bad("row %r is not the original's format (%r)" % (o, again))
for o in orig[2:]:   # the re-rendering reproduces the original's own rows
    if not o: continue
    f = [x.strip() for x in o.decode().split("|")]
    if ("%-17u | %-14.2f | %-20.5f | %s" % (int(f[0]), float(f[1]), float(f[2]), f[3])).encode() != o:
        bad("re-rendering does not reproduce the original's row %r" % o)
if ok: print("ok (%s): exact hccl_test table" % label)
sys.exit(0 if ok else 1)
PY
}

args="-p 2 -b 8K -e 32K -f 2 -n 2 -w 1"
timeout 60 "$B/all_reduce_test" $args --format hccl >"$tmp/flag.out" 2>"$tmp/flag.err"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: --format hccl exit $rc: $(cat "$tmp/flag.err")"; fail=1; }
check_table "--format hccl" "$tmp/flag.out"
COLL_TEST_FORMAT=hccl timeout 60 "$B/all_reduce_test" $args >"$tmp/env.out" 2>"$tmp/env.err"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: COLL_TEST_FORMAT=hccl exit $rc: $(cat "$tmp/env.err")"; fail=1; }
check_table "COLL_TEST_FORMAT=hccl" "$tmp/env.out"

# a parser anchored on the end of the line: every data row ends in success
n=$(grep -c 'success$' "$tmp/flag.out")
[ "$n" -eq 3 ] || { echo "FAIL: 'success\$' matches $n rows of 3"; fail=1; }
awk -F' [|] ' '/success$/ { if ($4 != "success" || NF != 4) exit 1 }' "$tmp/flag.out" \
    || { echo "FAIL: rows are not 4 fields ending in 'success'"; fail=1; }
# check off: NULL ends the row too
timeout 60 "$B/broadcast_test" -p 2 -b 1K -e 1K -n 1 -w 0 -c 0 --format hccl >"$tmp/null.out" 2>&1
[ "$(grep -c '^1024 .* | NULL$' "$tmp/null.out")" -eq 1 ] || { echo "FAIL: -c 0 row"; cat "$tmp/null.out"; fail=1; }

# the default table keeps bus bandwidth
timeout 60 "$B/all_reduce_test" $args >"$tmp/def.out" 2>&1
grep -q '^data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result: | bus_bandwidth(GB/s):$' "$tmp/def.out" \
    || { echo "FAIL: default header changed"; cat "$tmp/def.out"; fail=1; }
COLL_TEST_FORMAT=collbench timeout 60 "$B/all_reduce_test" $args --format collbench >"$tmp/cb.out" 2>&1
grep -q 'bus_bandwidth' "$tmp/cb.out" || { echo "FAIL: --format collbench"; fail=1; }

# bad values: exit 2 before any rank starts, naming the allowed ones
for bad in "--format csv" "--format HCCL"; do
    msg=$(timeout 20 "$B/all_reduce_test" $args $bad 2>&1); rc=$?
    [ $rc -eq 2 ] && [[ "$msg" == *"invalid --format '${bad#--format }': allowed collbench hccl"* ]] \
        || { echo "FAIL: $bad: exit $rc: $msg"; fail=1; }
done
msg=$(COLL_TEST_FORMAT=nccl timeout 20 "$B/all_reduce_test" $args 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$msg" == *"invalid COLL_TEST_FORMAT 'nccl': allowed collbench hccl"* ]] \
    || { echo "FAIL: COLL_TEST_FORMAT=nccl: exit $rc: $msg"; fail=1; }
msg=$(timeout 20 "$B/all_reduce_test" $args --format hccl --time-agg all 2>&1); rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --format hccl --time-agg all: exit $rc: $msg"; fail=1; }

[ $fail -eq 0 ] && echo "hccl format ok"
exit $fail
