#!/usr/bin/env bash
# timeout: 120
# collbench bw -t d2d (--bw): table format, plausibility, JSON, small sizes,
# ascend-dmi device ids (-d, --ds/--dd, -m; cross-NUMA where the machine has
# two nodes, p2p's exit-2 message where it has one) and the command-line errors
# (one line naming the value, exit 2).
set -u
. "$(dirname "$0")/../lib/common.sh" # usage_err
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

# ascend-dmi device ids (issue 15 item 6): -d D, --ds S --dd D, -m device|card
out=$("$CB" bw -t d2d -d 0 -s 8M -et 5) || fail "-d 0 exit $?"
echo "$out" | grep -q 'memcpy, 1 thread (one core), device 0 -> 0$' || fail "-d 0: no device in the title: $out"
echo "$out" | grep -q 'Source buffer on device 0, destination buffer and copying threads on device 0' \
    || fail "-d 0: placement line missing"
[ "$(echo "$out" | awk '$1 == 8388608 && $2 == 5 && $3 > 0' | grep -c .)" -ge "$want" ] || fail "-d 0: rows: $out"
js=$("$CB" bw -t d2d --ds 0 --dd 0 -m card -s 1M -et 2 --method nt -fmt json) || fail "--ds/--dd card exit $?"
echo "$js" | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d["mode"]=="card" and d["src_device"]==0 and d["dst_device"]==0 and d["threads_on"]=="dst", d
assert all(r["check"]=="success" and r["method"]=="nt" for r in d["results"]), d' || fail "device JSON: $js"
"$CB" bw -t d2d -m device -s 4K -et 2 -q --method memcpy | grep -q 'device 0 -> 0' || fail "-m alone is not -d 0"
# the buffers and threads are bound (numa_maps: bind:0 with a device, default without)
# buffer_maps PID: its numa_maps once a 32 MiB buffer (8192 pages touched) is
# mapped (polled: up to 10 s, or until it exits). A fixed "sleep 0.4" stood
# here: on this loaded VM the pid was once still the forked bash, not yet
# exec'ed, 0.3 s after the start (its numa_maps: bash's), which fails the
# bind:0 check; the copies themselves take ~2.5 s.
buffer_maps() {
    local i m
    for i in $(seq 500); do
        m=$(cat /proc/$1/numa_maps 2>/dev/null) || break
        echo "$m" | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^anon=/ && substr($i, 6) + 0 >= 8192) f = 1} END {exit !f}' &&
            { echo "$m"; return 0; }
        sleep 0.02
    done
    return 1
}
"$CB" bw -t d2d -d 0 -s 32M -et 300 --method memcpy -c 1 -q >/dev/null & pid=$!
maps=$(buffer_maps $pid) || fail "-d 0 -s 32M: no 32 MiB buffer seen in /proc/$pid/numa_maps"
wait $pid || fail "-d 0 -s 32M exit $?"
echo "$maps" | grep -q 'bind:0 anon=' || fail "-d 0: memory not bound to node 0: $(echo "$maps" | head -3)"
"$CB" bw -t d2d -s 32M -et 300 --method memcpy -c 1 -q >/dev/null & pid=$!
maps=$(buffer_maps $pid) || fail "-s 32M: no 32 MiB buffer seen in /proc/$pid/numa_maps"
wait $pid || fail "-s 32M exit $?"
echo "$maps" | grep -q bind: && fail "bound without -d: $(echo "$maps" | grep bind: | head -3)"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if [ -d /sys/devices/system/node/node1 ]; then
    # a real multi-NUMA server: cross-node copy, source on 0, destination and threads on 1
    out=$("$CB" bw -t d2d --ds 0 --dd 1 -s 64M -et 5) || fail "--ds 0 --dd 1 exit $?"
    echo "$out" | grep -q 'device 0 -> 1' || fail "--ds 0 --dd 1: $out"
    echo "$out" | awk '$1 == 67108864 && $3 > 0 {f=1} END{exit !f}' || fail "--ds 0 --dd 1: no row"
else
    # one NUMA node ($nodes): -d 1 fails exactly as p2p does, exit 2
    d2d=$("$CB" bw -t d2d -d 1 -s 1M 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] || fail "-d 1 exit $rc (want 2)"
    p2p=$("$CB" bw -t p2p -d 1 -s 1M 2>&1 >/dev/null)
    [ "$d2d" = "$p2p" ] || fail "-d 1: d2d says '$d2d', p2p says '$p2p'"
    echo "$d2d" | grep -q 'device 1 does not exist: this machine has NUMA node(s) 0' || fail "-d 1: $d2d"
    d2d=$("$CB" bw -t d2d --ds 0 --dd 1 -s 1M 2>&1 >/dev/null); rc=$?
    p2p=$("$CB" bw -t p2p --ds 0 --dd 1 -s 1M 2>&1 >/dev/null)
    [ $rc -eq 2 ] && [ "$d2d" = "$p2p" ] || fail "--dd 1: exit $rc, '$d2d' vs p2p '$p2p'"
fi

err() { usage_err "$1" "$CB" "${@:2}"; }
err "'12Q'.*allowed: 1..4294967296" bw -t d2d -s 12Q
err "'0'.*allowed: integer 1..1000" bw -t d2d -et 0
err "'1001'.*allowed: integer 1..1000" bw -t d2d -et 1001
err "'5G'.*allowed" bw -t d2d -s 5G
err "'0'.*allowed" bw -t d2d -s 0
err "missing -t" bw -s 1M
err "'h2x'.*allowed: d2d, p2p" bw -t h2x
err "'--frobnicate'" bw -t d2d --frobnicate
err "--ds and --dd go together" bw -t d2d --ds 0
err "-d does not go with --ds/--dd" bw -t d2d -d 0 --ds 0 --dd 0
err "invalid -m 'gpu'" bw -t d2d -m gpu
err "'-1'.*allowed" bw -t d2d -d -1
err "device 9 does not exist" bw -t d2d --ds 0 --dd 9
echo PASS
