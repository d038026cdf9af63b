#!/usr/bin/env bash
# timeout: 240
# collbench assess on 5 simulated hosts (tests/lib/netns.sh; odd, so one host
# idles each round), torchrun-style environment launch, 2 ranks on cbh1 (its
# local rank 0 speaks, the other waits) and 1 on each other host:
#   (a) cbh3's link limited by tc tbf in both directions (its cbeth0 and the
#       switch's h3e0): `assess --tests pairs,ring,bisect,coll` exits 1, the
#       host outliers are exactly cbh3 (pairs and bisect name it), every link
#       outlier touches cbh3, the only coll group named is cbh3's
#       (cbh3,cbh4,cbh5 with --group-size 2: the remainder joins the last
#       group), --json wrote a file per test; collbench-report assess draws
#       them as valid PNG files and lists the same outliers as assess printed;
#   (b) the limit removed: exit 0, no OUTLIER line.
# Plus the command-line errors (exit 2) and the round-robin schedule, printed
# by --schedule N for N = 2..9: every pair once, no host twice in a round.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CB=${CB_O:?}/bin/collbench
. "$ROOT/tests/lib/common.sh"   # cpu_cap (its fail() is redefined below)
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CB" ] || fail "no $CB"

# command line: message naming the value and what is allowed, exit 2
for bad in "--tests foo" "--tests pairs,bogus" "--halvings 0" "--group-size 0" "--threshold 2" "-s 1" "-et 0" "--json /nonexistent/x" "--bogus"; do
    "$CB" assess $bad >/dev/null 2>"${TMPDIR:-/tmp}/as-err.$$"
    rc=$?
    msg=$(cat "${TMPDIR:-/tmp}/as-err.$$"); rm -f "${TMPDIR:-/tmp}/as-err.$$"
    [ $rc = 2 ] || fail "assess $bad: exit $rc, want 2 ($msg)"
    case "$msg" in "collbench assess: "*) ;; *) fail "assess $bad: message '$msg'" ;; esac
done
for w in 'H-1 rounds' 'k halvings' 'sweep per group' '1,000-host run in minutes'; do
    "$CB" assess --help | grep -q "$w" || fail "--help does not say '$w' (the cost of each test in hosts)"
done
echo "ok: command-line errors exit 2, --help gives the cost per test"

# the schedule: every pair exactly once, each host at most once per round
for n in 2 3 4 5 6 7 8 9; do
    "$CB" assess --schedule $n | awk -v n=$n '
        /^round/ { r++; delete seen; for (i = 3; i <= NF; i++) { if ($i !~ /^[0-9]+-[0-9]+$/) continue; split($i, p, "-"); a = p[1]; b = p[2];
                   if ((a in seen) || (b in seen)) { print "host twice in a round: " $0; bad = 1 }
                   seen[a] = 1; seen[b] = 1; k = a < b ? a "-" b : b "-" a; cnt[k]++ } }
        END { want = n % 2 ? n : n - 1; if (r != want) { print "rounds " r " want " want; bad = 1 }
              for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (cnt[i "-" j] != 1) { print "pair " i "-" j " x" cnt[i "-" j]; bad = 1 }
              exit bad }' || fail "schedule for $n hosts"
done
echo "ok: round-robin schedule for 2..9 hosts"

# bisect's halvings (printed side A first: "a-b" = a on side A, b on side B):
# each a matching of all hosts (one idle when odd), and no pair twice while
# the halvings fit in the rounds (a host meets a new partner each time)
for n in 2 3 4 5 8 9; do
    for seed in 1 7; do
        k=$(( n % 2 ? n : n - 1 )); [ $k -gt 6 ] && k=6
        "$CB" assess --halvings $k --seed $seed --schedule $n | awk -v n=$n -v k=$k '
            /^halving/ { h++; delete seen; m = 0
                for (i = 3; i <= NF; i++) { if ($i !~ /^[0-9]+-[0-9]+$/) continue; split($i, p, "-");
                    if ((p[1] in seen) || (p[2] in seen)) { print "host twice: " $0; bad = 1 }
                    seen[p[1]] = 1; seen[p[2]] = 1; m += 2
                    key = p[1] < p[2] ? p[1] "-" p[2] : p[2] "-" p[1]; if (key in met) { print "pair again: " $0; bad = 1 }; met[key] = 1 }
                if (m != n - n % 2) { print "not a matching of " n ": " $0; bad = 1 } }
            END { if (h != k) { print "halvings " h " want " k; bad = 1 } exit bad }' || fail "halvings for $n hosts, seed $seed"
    done
done
a=$("$CB" assess --seed 1 --schedule 8 | grep '^halving'); b=$("$CB" assess --seed 2 --schedule 8 | grep '^halving')
[ "$a" != "$b" ] || fail "halvings do not depend on --seed"
echo "ok: bisect halvings: matchings, a new partner each time, seeded"

. "$ROOT/tests/lib/netns.sh"
command -v tc >/dev/null || { echo "SKIP: no tc"; exit 77; }
netns_up 5 || fail "netns_up"
W=$NETNS_DIR/runs
mkdir -p "$W/json"
export NETNS_RANK_TIMEOUT=90
# --threshold 0.5, not the default 0.8: on the shared 2-core VM an unlimited
# veth link measured 33-47% of the median now and then in the first pass (two
# pairs of a round and 5 ranks on 2 cores); the confirmation round (each suspect
# pair measured again alone, named only if still slow) removes those, but an
# unlimited link still measured 78% (uni) or 132% (latency) of the median
# after it, so 0.8 is not reliable here. The limited host's links are at 1-5%
# of the median at 100mbit on a quiet VM; 150mbit since 2026-12 (issue 14, the
# suite's wall time: the limited run is bound by cbh3's rate, 44 s at 100mbit).
# At 200mbit with the VM loaded (load 8) they measured 6-25%, too near 0.5.
# Latency has its own threshold, 0.25 (4x the median): with 6 ranks on 2 cores
# no rank spins, every wait sleeps, and healthy links measured 243-290% of the
# median latency after confirmation.
# Still so after the reference pair and the marginal passes (tools/collbench/assess/measure.c):
# three clean runs at the defaults named 3-6 healthy links each, at 36-79% of
# the median after up to 4 alone measurements, while other jobs loaded the VM.
ARGS="--tests pairs,ring,bisect,coll -s 2M -et 5 --lat-iters 20 --rings 2 --threshold 0.5 --lat-threshold 0.25 --json $W/json"
BAD=3
TBF="tbf rate 150mbit burst 32kb latency 100ms"

run() {   # run NAME PORT: rank 0's stdout in $W/NAME.r0.out; sets rc0
    s=$(date +%s.%N)
    NETNS_MASTER_PORT=$2 netns_env_launch "$W/$1" "2 1 1 1 1" "$CB" assess $ARGS >"$W/$1.launch"
    rc0=$(grep -m1 '^rank 0 ' "$W/$1.launch" | sed -n 's/.* exit \([0-9]*\).*/\1/p')
    rc0=${rc0:-0}
    el=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    # only rank 0 may fail (exit 1 = outliers); the other ranks exit 0
    if grep -v '^rank 0 ' "$W/$1.launch" | grep -q '^rank'; then cat "$W/$1.launch"; fail "$1: a rank other than 0 failed"; fi
}

# (a) cbh3 limited both ways
netns_exec $BAD tc qdisc add dev cbeth0 root $TBF || fail "tc on cbh$BAD"
nsenter -t "$NETNS_SWITCH" -n tc qdisc add dev h${BAD}e0 root $TBF || fail "tc on the switch side"
run limited 29611
grep '^OUTLIER' "$W/limited.r0.out"
[ "$rc0" = 1 ] || { cat "$W/limited.r0.out" "$W/limited.r0.err"; fail "limited: exit $rc0, want 1"; }
hosts=$(grep '^OUTLIER' "$W/limited.r0.out" | grep -v '^OUTLIER coll ' | awk '$3 !~ /->/ {sub(":", "", $3); print $3}' | sort -u | tr '\n' ' ')
[ "$hosts" = "cbh$BAD " ] || { cat "$W/limited.r0.out"; fail "limited: host outliers '$hosts', want cbh$BAD"; }
grep '^OUTLIER' "$W/limited.r0.out" | awk '$3 ~ /->/' | grep -v "cbh$BAD" && fail "a link outlier not touching cbh$BAD"
grep -q "^OUTLIER pairs-uni cbh$BAD: " "$W/limited.r0.out" || fail "pairs-uni did not name cbh$BAD"
grep -q "^OUTLIER bisect cbh$BAD: " "$W/limited.r0.out" || fail "bisect did not name cbh$BAD"
grep -q "evidence: slow in halvings" "$W/limited.r0.out" || fail "bisect: no evidence line"
groups=$(sed -n 's/^OUTLIER coll group \([^:]*\):.*/\1/p' "$W/limited.r0.out" | tr '\n' ' ')
[ "$groups" = "cbh3,cbh4,cbh5 " ] || { cat "$W/limited.r0.out"; fail "coll: groups named '$groups', want cbh3,cbh4,cbh5"; }
grep -q "evidence: slow in rounds" "$W/limited.r0.out" || fail "no evidence line"
for t in pairs ring bisect coll outliers; do
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="collbench-assess/1" and len(d["hosts"])==5' \
        "$W/json/$t.json" || fail "--json: $t.json"
done
grep -q 'pairs round 5/5 done' "$W/limited.r0.err" || fail "no progress line on stderr"
n=$(sed -n 's/.*pairs confirmation round \([0-9]*\)\/\1 done.*/\1/p' "$W/limited.r0.err" | head -1)
[ "${n:-0}" -ge 4 ] || { cat "$W/limited.r0.err"; fail "limited: cbh$BAD's 4 pairs not measured again"; }
echo "ok: cbh$BAD limited by tbf: exit 1, names cbh$BAD and only its links, coll its group (${el}s)"

# collbench-report assess: a PNG per matrix, the same outliers as assess printed
mkdir -p "$W/png"
"$ROOT/scripts/collbench-report" assess "$W/json" -o "$W/png" >"$W/report.out" 2>&1
rc=$?
[ $rc = 1 ] || { cat "$W/report.out"; fail "collbench-report assess: exit $rc, want 1 (outliers)"; }
for f in pairs_uni pairs_bidi pairs_lat ring bisect coll; do
    python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(0 if d[:8]==b"\x89PNG\r\n\x1a\n" and d[12:16]==b"IHDR" and len(d)>100 else 1)' \
        "$W/png/$f.png" || fail "collbench-report assess: $f.png missing or not a PNG"
done
want=$(sed -n 's/^OUTLIER \([^:]*\):.*/\1/p' "$W/limited.r0.out" | sort)
got=$(sed -n 's/^OUTLIER \([^:]*\):.*/\1/p' "$W/report.out" | sort)
[ -n "$want" ] && [ "$want" = "$got" ] || { echo "assess: $want"; echo "report: $got"; fail "collbench-report assess lists other outliers than assess printed"; }
"$ROOT/scripts/collbench-report" assess /nonexistent >/dev/null 2>&1; [ $? = 2 ] || fail "collbench-report assess /nonexistent: want exit 2"
echo "ok: collbench-report assess: 6 PNG heat maps, the same $(echo "$want" | wc -l) outliers"

# (b) no limit
netns_exec $BAD tc qdisc del dev cbeth0 root
nsenter -t "$NETNS_SWITCH" -n tc qdisc del dev h${BAD}e0 root
run clean 29612
if [ "$rc0" != 0 ] || grep -q '^OUTLIER' "$W/clean.r0.out"; then
    cat "$W/clean.r0.out"; fail "no limit: exit $rc0, want 0 and no outlier"
fi
echo "ok: no limit: exit 0, no outlier (${el}s)"

# (c) node: cbh3's rank capped at 1% of one CPU (a cpu cgroup, cpu_cap in
#     tests/lib/common.sh, as 50-assess-node-shm.sh slows a host).
#     `--tests node` exits 1 and names cbh3 by node-flops (and nothing else
#     but node-d2d of cbh3). The cap replaced "taskset to the last CPU at nice
#     19 beside a busy loop at nice 0 pinned there" (still the fallback where
#     no cgroup can be made: weights 15 vs 1024, under 2% of that CPU; at nice
#     10 cbh3 once measured 62% of the median GFLOPS while other jobs loaded
#     the VM): the other hosts' ranks run where the scheduler puts them, and
#     one put on that CPU was time-sliced with the loop too (half a core), the
#     hazard that failed 50-assess-node-shm in CI (2026-12-04) by naming, or
#     hiding behind, a healthy host.
busy=()
trap 'kill "${busy[@]}" 2>/dev/null; cpu_cap_rm; netns_down' EXIT   # netns_up's trap, plus ours
if cpu_cap 10; then
    echo "cbh3's rank in cgroup $CPU_CAP_DIR, 1% of one CPU"
    cat >"$W/slow3.sh" <<EOS
#!/bin/sh
[ "\$RANK" = 3 ] && echo \$\$ >"$CPU_CAP_PROCS"
exec "$CB" "\$@"
EOS
else
    CPU=$(( $(nproc) - 1 ))
    echo "no cpu cgroup here: cbh3's rank on CPU $CPU at nice 19 beside a busy loop"
    cat >"$W/slow3.sh" <<EOS
#!/bin/sh
[ "\$RANK" = 3 ] && exec taskset -c $CPU nice -n 19 "$CB" "\$@"
exec "$CB" "\$@"
EOS
    taskset -c $CPU sh -c 'while :; do :; done' & busy+=($!)
fi
chmod +x "$W/slow3.sh"
s=$(date +%s.%N)
NETNS_MASTER_PORT=29613 netns_env_launch "$W/node" "2 1 1 1 1" "$W/slow3.sh" assess --tests node -s 2M \
    --threshold 0.5 >"$W/node.launch"
[ ${#busy[@]} -gt 0 ] && { kill "${busy[@]}"; wait "${busy[@]}" 2>/dev/null; busy=(); }
cpu_cap_rm
rc0=$(grep -m1 '^rank 0 ' "$W/node.launch" | sed -n 's/.* exit \([0-9]*\).*/\1/p'); rc0=${rc0:-0}
el=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
grep '^OUTLIER' "$W/node.r0.out"
[ "$rc0" = 1 ] || { cat "$W/node.r0.out" "$W/node.r0.err"; fail "node: exit $rc0, want 1"; }
grep -q '^OUTLIER node-flops cbh3: ' "$W/node.r0.out" || { cat "$W/node.r0.out"; fail "node-flops did not name cbh3"; }
grep '^OUTLIER' "$W/node.r0.out" | grep -v '^OUTLIER node-[a-z0-9]* cbh3: ' && fail "node: an outlier other than cbh3"
echo "ok: node: cbh3 on a small share of a CPU: exit 1, named by node-flops (${el}s)"
echo "47-collbench-assess: all passed"
