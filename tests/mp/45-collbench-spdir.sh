#!/usr/bin/env bash
# timeout: 180
# collbench bw -t p2p --sp 0/1: source and target meeting through a shared
# directory on one host (--hip 127.0.0.1 / 127.0.0.2, both loopback): tables of
# each end, JSON, either start order, file modes while waiting, leftovers
# removed; a peer that never starts (exit 4 after ~10 s), a target that died
# after publishing its id (unreachable store), mismatched -et, SIGTERM while
# waiting, and the --spp / address rules (exit 2, one line).
set -u
. "$(dirname "$0")/../lib/common.sh" # usage_err
CB=${CB_O:-.}/bin/collbench
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CB" ] || fail "no $CB"
TMP=$(mktemp -d); PIDS=
SUBS=   # the subshells of 3 (timed): on an early exit their tool goes first
trap 'for p in $SUBS; do pkill -9 -P $p 2>/dev/null; done; for p in $PIDS; do kill -9 $p 2>/dev/null; done; rm -rf "$TMP"' EXIT
A=127.0.0.1 B=127.0.0.2
SRC="bw -t p2p --sp 0 --ip $B --hip $A"
TGT="bw -t p2p --sp 1 --ip $A --hip $B"

# check_end FILE OWN PEER SIZE TIMES: the end's two tables, its own address first
check_end() {
    python3 - "$@" <<'PY' || fail "tables of $1: $(cat "$1")"
import sys, re
f, own, peer, size, times = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
L = open(f).read().split("\n")
dash, head = "-" * 64, "  Size(Bytes)  Execute Times  Bandwidth(GB/s)  Elapsed Time(us)"
i = 0
for k, (kind, word) in enumerate([("Unidirectional", "to"), ("Bidirectional", "and")]):
    if k:
        assert L[i] == "", L[i]; i += 1
    assert L[i] == kind + " Peer to Peer Test", L[i]
    assert re.fullmatch(r"Pod: %s device id: \d+ %s Pod: %s device id: \d+" % (re.escape(own), word, re.escape(peer)), L[i + 1]), L[i + 1]
    assert L[i + 2] == dash and L[i + 3] == head and L[i + 4] == dash
    v = L[i + 5].split()
    assert int(v[0]) == size and int(v[1]) == times and float(v[2]) > 0 and float(v[3]) > 0, L[i + 5]
    assert L[i + 5] == "%12d%11d%20.6f%14.2f" % (size, times, float(v[2]), float(v[3])), L[i + 5]
    assert L[i + 6] == dash; i += 7
PY
}
no_leftovers() { [ -z "$(ls -A "$1")" ] || fail "leftovers in $1: $(find "$1")"; }

# 3. timeouts and an unreachable peer, concurrently (each ~10 s), started
# first: they only wait (their own directories d3..d5, and a store on an
# ephemeral port), so 1, 1b and 2 run meanwhile; their checks come after 2.
# (Run after 2 until 2026-12, issue 14: the suite's wall time, 10 s idle.)
mkdir -m 700 "$TMP/d3" "$TMP/d4" "$TMP/d5"
# timed OUT ERR CMD...: runs CMD, prints "exit-code seconds"
# (seconds of /proc/uptime, a monotonic clock: the wall clock of `date` may be
# stepped by NTP or a VM clock sync meanwhile, and 9.5..13 s is checked below)
timed() { local o=$1 e=$2 s _r b; read -r s _r </proc/uptime; shift 2; "$@" >"$o" 2>"$e"; local rc=$?; read -r b _r </proc/uptime; echo "$rc $(awk -v a=$s -v b=$b 'BEGIN{printf "%.1f", b-a}')"; }
(timed "$TMP/r3" "$TMP/e3" "$CB" $TGT --spp "$TMP/d3" -s 1M) >"$TMP/x3" & P3=$!
(timed "$TMP/r4" "$TMP/e4" "$CB" $SRC --spp "$TMP/d4" -s 1M) >"$TMP/x4" & P4=$!
SUBS="$P3 $P4"
"$CB" $TGT --spp "$TMP/d5" -s 1M >/dev/null 2>&1 & T=$!; PIDS="$PIDS $T"
for i in $(seq 200); do [ -f "$TMP/d5/collbench_check/$B/id" ] && break; sleep 0.02; done
kill -9 $T; wait $T 2>/dev/null
(timed "$TMP/r5" "$TMP/e5" "$CB" $SRC --spp "$TMP/d5" -s 1M) >"$TMP/x5" & P5=$!
SUBS="$SUBS $P5"
# 1. target first, source 1 s later; the target's files while it waits
D=$TMP/d1; mkdir -m 700 "$D"
"$CB" $TGT --spp "$D" -s 4M -et 5 -q >"$TMP/t1" 2>"$TMP/t1.err" & T=$!; PIDS="$PIDS $T"
for i in $(seq 200); do [ -f "$D/collbench_check/$B/id" ] && break; sleep 0.02; done
[ -f "$D/collbench_check/$B/id" ] || fail "target wrote no id"
[ "$(stat -c %a "$D/collbench_check/$B/id")" = 600 ] || fail "id mode $(stat -c %a "$D/collbench_check/$B/id")"
[ "$(stat -c %s "$D/collbench_check/$B/id")" = 128 ] || fail "id size"
[ "$(stat -c %a "$D/collbench_check/$B")" = 700 ] && [ "$(stat -c %a "$D/collbench_check")" = 700 ] || fail "directory modes"
sleep 1
"$CB" $SRC --spp "$D" -s 4M -et 5 -q >"$TMP/s1" 2>"$TMP/s1.err" || fail "source exit $?: $(cat "$TMP/s1.err")"
wait $T || fail "target exit $?: $(cat "$TMP/t1.err")"
cat "$TMP/s1" "$TMP/t1"
check_end "$TMP/s1" $A $B 4194304 5
check_end "$TMP/t1" $B $A 4194304 5
no_leftovers "$D"

# 1b. ascend-dmi's -d / -m in this mode: the source on device 0 (-d 0), the
# target on card 0 (-m card alone = card 0); each end prints its own device id.
# The source's run (join, measure, exit: ~0.7 s on the 2-core VM) is the
# baseline of 3's bounds: it runs meanwhile, under the same load.
"$CB" $TGT --spp "$D" -s 1M -et 2 -q -m card >"$TMP/t1b" 2>"$TMP/t1b.err" & T=$!; PIDS="$PIDS $T"
sleep 0.5
read rc BASE <<<"$(timed "$TMP/s1b" "$TMP/s1b.err" "$CB" $SRC --spp "$D" -s 1M -et 2 -q -d 0 -m device)"
[ "$rc" = 0 ] || fail "source -d 0 exit $rc: $(cat "$TMP/s1b.err")"
wait $T || fail "target -m card exit $?: $(cat "$TMP/t1b.err")"
check_end "$TMP/s1b" $A $B 1048576 2
check_end "$TMP/t1b" $B $A 1048576 2
grep -q "^Pod: $A device id: 0 to Pod: $B device id: 0$" "$TMP/s1b" || fail "source device ids: $(cat "$TMP/s1b")"
no_leftovers "$D"

# 2. source first, target 2 s later; JSON on both ends
"$CB" $SRC --spp "$D" -s 1M -et 3 -fmt json >"$TMP/s2" 2>"$TMP/s2.err" & S=$!; PIDS="$PIDS $S"
sleep 2
"$CB" $TGT --spp "$D" -s 1M -et 3 -fmt json >"$TMP/t2" 2>"$TMP/t2.err" || fail "target exit $?: $(cat "$TMP/t2.err")"
wait $S || fail "source exit $?: $(cat "$TMP/s2.err")"
for f in "$TMP/s2" "$TMP/t2"; do python3 -m json.tool "$f" >/dev/null || fail "invalid JSON: $(cat "$f")"; done
python3 - "$TMP/s2" "$TMP/t2" <<'PY' || fail "JSON content"
import json, sys
s, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert s["mode"] == "spdir-source" and t["mode"] == "spdir-target" and s["launch"] == "spdir", (s, t)
assert [(r["test"], r["src_pod"], r["dst_pod"]) for r in s["results"]] == [
    ("unidirectional", "127.0.0.1", "127.0.0.2"), ("bidirectional", "127.0.0.1", "127.0.0.2")], s
assert [(r["test"], r["src_pod"], r["dst_pod"]) for r in t["results"]] == [
    ("unidirectional", "127.0.0.2", "127.0.0.1"), ("bidirectional", "127.0.0.2", "127.0.0.1")], t
assert all(r["check"] == "success" and r["bandwidth_gbs"] > 0 and r["bytes"] == 1048576 for r in s["results"] + t["results"])
PY
no_leftovers "$D"

# 3. (started before 1) the timeouts and the unreachable peer: their results.
# Each waits 10 s (CBT_SPDIR_WAIT_S; the dead target: the connect timeout,
# also 10 s), then ends: allowed 3 s (4 for the dead target) or 4 (5) times
# 1b's source run, whichever is more.
UP=$(awk -v b="$BASE" 'BEGIN { s = 4 * b; printf "%.1f", 10 + (s > 3 ? s : 3) }')
UP5=$(awk -v b="$BASE" 'BEGIN { s = 5 * b; printf "%.1f", 10 + (s > 4 ? s : 4) }')
echo "baseline: 1b's source ran $BASE s: bounds $UP s, dead target $UP5 s"
wait $P3 $P4 $P5
read rc el <"$TMP/x3"; echo "target alone: exit $rc after $el s: $(cat "$TMP/e3")"
[ "$rc" = 4 ] && awk -v e=$el -v u=$UP 'BEGIN{exit !(e >= 9.5 && e < u)}' || fail "target alone: exit $rc after $el s (bound $UP)"
grep -q "timed out after 10 s waiting for the source (--sp 0)" "$TMP/e3" || fail "target alone message"
no_leftovers "$TMP/d3"
read rc el <"$TMP/x4"; echo "source alone: exit $rc after $el s: $(cat "$TMP/e4")"
[ "$rc" = 4 ] && awk -v e=$el -v u=$UP 'BEGIN{exit !(e >= 9.5 && e < u)}' || fail "source alone: exit $rc after $el s (bound $UP)"
grep -q "timed out after 10 s waiting for the target (--sp 1)" "$TMP/e4" || fail "source alone message"
no_leftovers "$TMP/d4"
read rc el <"$TMP/x5"; echo "dead target: exit $rc after $el s: $(cat "$TMP/e5")"
[ "$rc" = 3 -o "$rc" = 4 ] && awk -v e=$el -v u=$UP5 'BEGIN{exit !(e < u)}' || fail "dead target: exit $rc after $el s (bound $UP5)"
grep -q "cannot reach the target (store at $B)" "$TMP/e5" || fail "dead target message"
[ ! -e "$TMP/d5/collbench_check/$A" ] || fail "source left its directory"
[ -f "$TMP/d5/collbench_check/$B/id" ] || fail "the killed target's id vanished?"

# 4. the two ends disagree on -et: both refuse, exit 2 (they agree on the
# verdict, meet once more and exit without an abort: it used to reach the
# target still checking, exit 3)
"$CB" $TGT --spp "$D" -s 64K -et 3 >/dev/null 2>"$TMP/e6" & T=$!; PIDS="$PIDS $T"
"$CB" $SRC --spp "$D" -s 64K -et 4 >/dev/null 2>"$TMP/e7"; rc=$?
wait $T; trc=$?
[ $rc = 2 ] && [ $trc = 2 ] || fail "-et mismatch: source $rc target $trc: $(cat "$TMP/e6" "$TMP/e7")"
grep -q "disagree on -s / -et" "$TMP/e7" || fail "mismatch message: $(cat "$TMP/e7")"
no_leftovers "$D"

# 5. SIGTERM while waiting removes the files
"$CB" $TGT --spp "$D" >/dev/null 2>&1 & T=$!; PIDS="$PIDS $T"
for i in $(seq 200); do [ -f "$D/collbench_check/$B/id" ] && break; sleep 0.02; done
kill -TERM $T; wait $T; rc=$?
[ $rc = 143 ] || fail "SIGTERM exit $rc"
no_leftovers "$D"

# 6. a sticky world-writable directory (like /tmp) is accepted
mkdir -m 1777 "$TMP/sticky"
"$CB" $TGT --spp "$TMP/sticky" -s 64K -et 2 -q >/dev/null 2>"$TMP/e8" & T=$!; PIDS="$PIDS $T"
"$CB" $SRC --spp "$TMP/sticky" -s 64K -et 2 -q >/dev/null 2>"$TMP/e9" || fail "sticky dir: $(cat "$TMP/e9")"
wait $T || fail "sticky dir target: $(cat "$TMP/e8")"
no_leftovers "$TMP/sticky"

# 7. command-line and path rules
err() { usage_err "$1" "$CB" "${@:2}"; }
mkdir -m 777 "$TMP/open"; chmod 777 "$TMP/open"
ln -s "$D" "$TMP/link"
err "missing --spp" $SRC
err "missing --hip" bw -t p2p --sp 1 --ip $A --spp "$D"
err "missing --ip" bw -t p2p --sp 0 --hip $A --spp "$D"
err "wildcards" $SRC --spp "$TMP/*"
err "no such directory" $SRC --spp "$TMP/nope"
err "'..' components" $SRC --spp "$D/../d1"
err "symbolic link is not allowed" $SRC --spp "$TMP/link"
err "writable by everyone without the sticky bit" $SRC --spp "$TMP/open"
err "not a directory" $SRC --spp "$CB"
err "both 127.0.0.1: the two ends need different addresses" bw -t p2p --sp 0 --ip $A --hip $A --spp "$D"
err "invalid --hip '300.1.1.1'" bw -t p2p --sp 0 --ip $B --hip 300.1.1.1 --spp "$D"
err "invalid --ip 'node7'" bw -t p2p --sp 1 --ip node7 --hip $B --spp "$D"
err "--ds/--dd does not apply" $SRC --spp "$D" --ds 0 --dd 1
err "-p does not apply" $SRC --spp "$D" -p 2
# -d names a device (NUMA node) of this node; one it lacks names those present
NODELIST=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | sed 's/.*node//' | sort -n | paste -sd, | sed 's/,/, /g')
NODELIST=${NODELIST:-0}
NODES=$(( $(echo "$NODELIST" | awk -F', ' '{print $NF}') + 1 ))
err "^collbench bw: device $NODES does not exist: this machine has NUMA node(s) $NODELIST$" $SRC --spp "$D" -d $NODES
err "card 9 does not exist: this machine has socket(s) [0-9]" $TGT --spp "$D" -m card -d 9
err "invalid -m 'chip' (allowed: device (a NUMA node), card (a socket))" $SRC --spp "$D" -m chip
err "invalid -d 'one'" $SRC --spp "$D" -d one
err "missing value after -d" $SRC --spp "$D" -d
# a symbolic link planted as collbench_check is refused (runtime error, not followed)
mkdir -m 700 "$TMP/d8" "$TMP/elsewhere"; ln -s "$TMP/elsewhere" "$TMP/d8/collbench_check"
out=$("$CB" $SRC --spp "$TMP/d8" 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q "symbolic link or not a directory" || fail "planted link: exit $rc: $out"
[ -z "$(ls -A "$TMP/elsewhere")" ] || fail "followed the planted link"
no_leftovers "$D"
echo PASS
