#!/usr/bin/env bash
# bench/ab-builds.sh - one build against another, interleaved round by round, so
# that a change's effect on the single-host and two-host figures is a ratio of
# runs made under the same state of a shared machine (issue 12: "no regression
# beyond noise, side by side with the previous commit").
#
#   bench/ab-builds.sh -a DIR_A [-b DIR_B] [-o FILE.md] [-r ROUNDS] [-n ITERS] [-k KIND]
#                      [-c COLL] [-L RANKS] [-g GBIT] [-s SIZES] [-m busbw|time] [-A ALGO]
#     -a  the other build's tree (its bin/<coll>_test), e.g. a worktree of
#         the previous commit built with make
#     -b  this build (default: this repository)
#     -r  rounds (default 5); -n timed iterations per run (default 20, 5 warm-up)
#     -k  only the cases of this kind: local or hosts (default both)
#     -c  collective: allreduce (default), allgather, alltoall, reduce_scatter, broadcast, reduce
#     -L  ranks per namespace host in the hosts cases (default 1): layout "L L"
#     -g  limit every host's link to GBIT Gbit/s both ways with tc tbf (netns_tbf;
#         default: no limit)
#     -s  sizes of every case kind, comma-separated (default local 8K,1M,64M; hosts 8K,64M)
#     -m  busbw: bus bandwidth GB/s (default); time: time per call in us (the
#         slowest rank's average); the ratio is B/A of that figure either way
#     -A  force this algorithm in both builds (--algo; default: automatic)
# Cases per round, A then B (B then A on even rounds):
#   local P=4 at 8K, 1M, 64M   (standalone: <coll>_test -p 4)
#   hosts 2xL at 8K, 64M       (two network-namespace hosts, L ranks each,
#                              tests/lib/netns.sh, torchrun-style env launch; needs root)
# Prints per case the figure of A and B per round, their medians and the
# median ratio B/A with its range, and the algorithm each build ran; writes the
# table and the command to FILE.md.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
A= B=$ROOT OUT= ROUNDS=5 NI=20 KIND= COLL=allreduce L=1 GBIT= SIZES= METRIC=busbw ALGO=
while getopts "a:b:o:r:n:k:c:L:g:s:m:A:h" o; do
    case $o in
        a) A=$(cd "$OPTARG" && pwd) ;; b) B=$(cd "$OPTARG" && pwd) ;; o) OUT=$OPTARG ;;
        r) ROUNDS=$OPTARG ;; n) NI=$OPTARG ;; k) KIND=$OPTARG ;;
        c) COLL=$OPTARG ;; L) L=$OPTARG ;; g) GBIT=$OPTARG ;; s) SIZES=${OPTARG//,/ } ;;
        m) METRIC=$OPTARG ;; A) ALGO=$OPTARG ;;
        *) sed -n '2,28p' "$0"; exit 2 ;;
    esac
done
case $KIND in ''|local|hosts) ;; *) echo "ab-builds: invalid -k '$KIND': allowed local or hosts" >&2; exit 2 ;; esac
case $COLL in
    allreduce) EXE=all_reduce_test ;; allgather) EXE=all_gather_test ;; alltoall) EXE=alltoall_test ;;
    reduce_scatter) EXE=reduce_scatter_test ;; broadcast) EXE=broadcast_test ;; reduce) EXE=reduce_test ;;
    *) echo "ab-builds: invalid -c '$COLL': allowed allreduce allgather alltoall reduce_scatter broadcast reduce" >&2
       exit 2 ;;
esac
case $METRIC in busbw|time) ;; *) echo "ab-builds: invalid -m '$METRIC': allowed busbw or time" >&2; exit 2 ;; esac
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ab-builds: invalid -r '$ROUNDS' (allowed: 1 or more)" >&2; exit 2; }
[[ $NI =~ ^[1-9][0-9]*$ ]] || { echo "ab-builds: invalid -n '$NI' (allowed: 1 or more)" >&2; exit 2; }
[[ $L =~ ^[1-9][0-9]*$ ]] || { echo "ab-builds: invalid -L '$L' (allowed: 1 or more ranks per host)" >&2; exit 2; }
[[ -z $GBIT || $GBIT =~ ^[1-9][0-9]*$ ]] || { echo "ab-builds: invalid -g '$GBIT' (allowed: whole Gbit/s)" >&2; exit 2; }
for s in $SIZES; do
    [[ $s =~ ^[0-9]+[KMG]?$ ]] || { echo "ab-builds: invalid size '$s' in -s (allowed: e.g. 8K,1M,64M)" >&2; exit 2; }
done
[ -n "$A" ] || { echo "ab-builds: -a DIR (the other build) is required" >&2; exit 2; }
for d in "$A" "$B"; do
    [ -x "$d/bin/$EXE" ] || { echo "ab-builds: $d/bin/$EXE missing (make there)" >&2; exit 2; }
done
[ -n "$OUT" ] || OUT=bench/results/ab-builds-$(date +%Y%m%d).md
# the command as the results file names it: the builds by their folder names (no machine paths)
CMD="-a $(basename "$A")$([ "$B" = "$ROOT" ] || echo " -b $(basename "$B")") -r $ROUNDS -n $NI${KIND:+ -k $KIND}"
[ $COLL = allreduce ] || CMD="$CMD -c $COLL"
[ "$L" = 1 ] || CMD="$CMD -L $L"
CMD="$CMD${GBIT:+ -g $GBIT}$([ -z "$SIZES" ] || echo " -s ${SIZES// /,}")"
[ $METRIC = busbw ] || CMD="$CMD -m $METRIC"
CMD="$CMD${ALGO:+ -A $ALGO}"
. tests/lib/netns.sh
RAW=$(mktemp -d)
netns_up 2 >/dev/null || { echo "ab-builds: cannot make the namespace hosts (root?)" >&2; exit 1; }
trap 'netns_down >/dev/null 2>&1; rm -rf "$RAW"' EXIT
[ -z "$GBIT" ] || netns_tbf "$GBIT" || { echo "ab-builds: cannot limit the links to $GBIT Gbit/s (tc)" >&2; exit 1; }
export NETNS_RANK_TIMEOUT=300 COLL_EXEC_TIMEOUT=120
port=29950

# figure FILE.json -> "VALUE ALGORITHM" (busbw GB/s or time per call us; "-" when the run failed)
figure() {
    python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["results"][0]
v = "%.4f" % r["busbw_gbs"] if sys.argv[2] == "busbw" else "%.0f" % r["time_us"]["avg"]
print(v, r.get("algorithm", "?"))' "$1" "$METRIC" 2>/dev/null || echo "- -"
}
FORCE=()
[ -z "$ALGO" ] || FORCE=(--algo "$ALGO")

run_local() {   # DIR SIZE -> figure
    local f=$RAW/l.json
    rm -f "$f"
    COLL_SOCKET_IFNAME==lo "$1/bin/$EXE" -p 4 -b "$2" -e "$2" -n "$NI" -w 5 -c 0 "${FORCE[@]}" --json "$f" >/dev/null 2>&1
    figure "$f"
}

run_hosts() {   # DIR SIZE -> figure
    local f=$RAW/h.json
    rm -f "$f"
    port=$((port + 1))
    NETNS_MASTER_PORT=$port netns_env_launch "$RAW/h" "$L $L" "$1/bin/$EXE" \
        -b "$2" -e "$2" -n "$NI" -w 5 -c 0 "${FORCE[@]}" --json "$f" >/dev/null 2>&1
    figure "$f"
}

CASES=()
for k in local hosts; do
    [ -z "$KIND" ] || [ "$k" = "$KIND" ] || continue
    sz=$SIZES
    [ -n "$sz" ] || { [ $k = local ] && sz="8K 1M 64M" || sz="8K 64M"; }
    for z in $sz; do CASES+=("$k $z"); done
done
: >"$RAW/rows"
for r in $(seq 1 "$ROUNDS"); do
    for c in "${CASES[@]}"; do
        set -- $c
        if [ $((r % 2)) -eq 1 ]; then a=$(run_"$1" "$A" "$2"); b=$(run_"$1" "$B" "$2")
        else b=$(run_"$1" "$B" "$2"); a=$(run_"$1" "$A" "$2"); fi
        echo "$r $1 $2 $a $b" | tee -a "$RAW/rows"
    done
done

{
    echo "# Build B against build A, interleaved - $(date +%Y-%m-%d)"
    echo
    echo "Generated by \`bench/ab-builds.sh $CMD\`; A = $(git -C "$A" log -1 --format='%h %s' 2>/dev/null | cut -c1-60),"
    echo "B = $(git -C "$B" log -1 --format='%h %s' 2>/dev/null | cut -c1-60)$(git -C "$B" diff --quiet 2>/dev/null || echo ' (+ uncommitted)'); $(nproc) CPUs."
    if [ $METRIC = busbw ]; then what="busbw GB/s (higher is better)"; else what="time per call us, the slowest rank's average (lower is better)"; fi
    echo "$COLL $what, fp32$([ $COLL = allreduce ] || [ $COLL = reduce_scatter ] || [ $COLL = reduce ] && echo ' sum'); $ROUNDS rounds (A then B on odd rounds, B then A on even), $NI timed iterations after 5 warm-up per run;"
    echo "local = \`$EXE -p 4\`, hosts = two network-namespace hosts x $L rank(s) (env launch)$([ -n "$GBIT" ] && echo ", links limited to $GBIT Gbit/s both ways (tc tbf)" || echo ", links not rate-limited")$([ -n "$ALGO" ] && echo ", --algo $ALGO")."
    echo
    echo "| case | A per round | B per round | A median [min-max] | B median [min-max] | B/A median (min..max) | algorithm A / B |"
    echo "|---|---|---|---|---|---|---|"
    python3 - "$RAW/rows" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
cases = []
for r in rows:
    k = (r[1], r[2])
    if k not in cases: cases.append(k)
def summ(v):
    v = [float(x) for x in v if x != "-"]
    if not v: return "-"
    f = "%.0f" if max(v) >= 100 else "%.3g"
    return (f + " [" + f + "-" + f + "]") % (statistics.median(v), min(v), max(v))
for k in cases:
    sel = [r for r in rows if (r[1], r[2]) == k]
    a = [r[3] for r in sel]; b = [r[5] for r in sel]
    q = [float(y) / float(x) for x, y in zip(a, b) if x != "-" and y != "-" and float(x) > 0]
    s = "%.2f (%.2f..%.2f)" % (statistics.median(q), min(q), max(q)) if q else "-"
    algs = "%s / %s" % ("/".join(sorted(set(r[4] for r in sel))), "/".join(sorted(set(r[6] for r in sel))))
    print("| %s %s | %s | %s | %s | %s | %s | %s |" % (k[0], k[1], " ".join(a), " ".join(b), summ(a), summ(b), s, algs))
PY
} >"$OUT"
cat "$OUT"
