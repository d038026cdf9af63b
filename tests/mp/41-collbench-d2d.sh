#!/usr/bin/env bash
# timeout: 120
# collbench bw -t d2d (--bw): table format, plausibility, JSON, small sizes and
# the command-line errors (one line naming the value, exit 2).
set -u
CB=${CB_O:-.}/bin/collbench
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CB" ] || fail "no $CB"

out=$("$CB" bw -t d2d -s 8M -et 5) || fail "d2d exit $?"
echo "$out"
echo "$out" | grep -q '  Size(Bytes)  Execute Times  Bandwidth(GB/s)  Elapsed Time(us)' || fail "no ascend-dmi header"
rows=$(echo "$out" | awk '$1 == 8388608 && $2 == 5')
n=$(echo "$rows" | grep -c .)
ncpu=$(nproc)
want=4; [ "$ncpu" -eq 1 ] && want=2
[ "$n" -ge "$want" ] || fail "want >= $want rows, got $n"
echo "$rows" | awk '{ if (!($3 > 0.05 && $3 < 10000 && $4 > 0)) { print "bad row: " $0; exit 1 } }' || fail "implausible"
# elapsed * bandwidth = size
echo "$rows" | awk '{ s = $3 * $4 * 1e3; if (s < 8388608 * 0.99 || s > 8388608 * 1.01) { print "inconsistent: " $0; exit 1 } }' \
    || fail "bandwidth x time != size"
echo "$out" | grep -q 'memcpy, 1 thread' && echo "$out" | grep -q 'nt, 1 thread' || fail "missing method tables"

# ascend-dmi spelling, tiny and odd sizes, quiet, one method
for s in 1 4097 64K; do
    out=$("$CB" --bw -t d2d -s $s -et 3 -q --method nt) || fail "-s $s exit $?"
    echo "$out" | awk '$2 == 3 && $3 > 0 {f=1} END{exit !f}' || fail "-s $s: no row: $out"
done

js=$("$CB" bw -t d2d -s 1M -et 2 -fmt json) || fail "json exit $?"
echo "$js" | python3 -m json.tool >/dev/null || fail "invalid JSON: $js"
echo "$js" | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d["type"]=="d2d" and d["size"]==1048576 and d["execute_times"]==2, d
assert all(r["bandwidth_gbs"]>0 and r["check"]=="success" for r in d["results"]), d
assert {r["method"] for r in d["results"]}=={"memcpy","nt"}, d' || fail "JSON content"

err() {
    local want=$1; shift
    out=$("$CB" "$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] || fail "'$*' exit $rc (want 2)"
    [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "'$*' message not one line: $out"
    echo "$out" | grep -q -- "$want" || fail "'$*' message lacks '$want': $out"
}
err "'12Q'.*allowed: 1..4294967296" bw -t d2d -s 12Q
err "'0'.*allowed: integer 1..1000" bw -t d2d -et 0
err "'1001'.*allowed: integer 1..1000" bw -t d2d -et 1001
err "'5G'.*allowed" bw -t d2d -s 5G
err "'0'.*allowed" bw -t d2d -s 0
err "missing -t" bw -s 1M
err "'h2x'.*allowed: d2d, p2p" bw -t h2x
err "'--frobnicate'" bw -t d2d --frobnicate
echo PASS
