#!/usr/bin/env bash
# bench/coll-ab.sh - coll_bench of another tree (A: before) against this one
# (B: after) on one host, interleaved round by round (A then B, B then A on
# even rounds), private buffers and -z (coll_mem_alloc) alike, so that a
# change's effect is a ratio of runs made under the same state of a shared
# machine. Prints per collective, ranks, size and buffer kind the median
# [min-max] over rounds of A's and B's time per call (us, slowest rank) and
# the ratio A/B round by round (> 1: B faster), median [min-max].
#
#   bench/coll-ab.sh -a DIR_A [-c gather,scatter] [-p 2,4] [-s 8K,1M,64M] [-R ROUNDS]
#                    [-z both|z|priv] [-o FILE.md]
# DIR_A: a tree of the other commit (e.g. `git archive COMMIT | tar -x -C DIR`);
# both trees' coll_bench is built here with bench/lib-local.sh's flags.
# Before every run the bench waits for near vCPU placement (bench_place_wait,
# bench/lib-local.sh; BENCH_PLACE_WAIT=0 to skip).
set -euo pipefail
cd "$(dirname "$0")/.."
A= COLLS=gather,scatter RANKS=2,4 SIZES=8K,1M,64M ROUNDS=3 ZMODE=both OUT=
while getopts "a:c:p:s:R:z:o:h" o; do
    case $o in
        a) A=$(cd "$OPTARG" && pwd) ;; c) COLLS=$OPTARG ;; p) RANKS=$OPTARG ;; s) SIZES=$OPTARG ;;
        R) ROUNDS=$OPTARG ;; z) ZMODE=$OPTARG ;; o) OUT=$OPTARG ;; *) sed -n '2,15p' "$0"; exit 2 ;;
    esac
done
[ -n "$A" ] || { echo "coll-ab: -a DIR (the other tree) is required" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "coll-ab: invalid -R '$ROUNDS'" >&2; exit 2; }
case $ZMODE in both) zs="priv z" ;; z) zs=z ;; priv) zs=priv ;;
    *) echo "coll-ab: invalid -z '$ZMODE': allowed both, z or priv" >&2; exit 2 ;; esac
B=build/bench; mkdir -p $B
. bench/lib-local.sh
bench_build_coll || exit 1
bench_place_init || exit 1
(cd "$A" && make -s lib) || exit 1
# a tree from before COLL_BUF_HUGE (2d0744b) has no huge-page rules to tell: build without the hint
defs=; grep -q COLL_BUF_HUGE "$A/src/core/config.h" || defs=-DCB_NO_BUF_HUGE
# A's own coll_bench.c and tools/common where it has them (this tree's include headers A lacks:
# core/auth.h since issue 31); -lcrypto only where A's library needs it
src=bench/coll_bench.c; [ -f "$A/bench/coll_bench.c" ] && [ -d "$A/tools/common" ] && src=$A/bench/coll_bench.c
crypto=; grep -q lcrypto "$A/Makefile" && crypto=-lcrypto
cc -std=c11 -D_GNU_SOURCE -O2 $defs -I"$A/include" -I"$A/src" -Ibench -o $B/coll_bench.A "$src" \
    "$A/lib/libcoll.a" -pthread -lm -ldl $crypto || exit 1
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
for round in $(seq 1 "$ROUNDS"); do
    order="A B"; [ $((round % 2)) -eq 0 ] && order="B A"
    for p in ${RANKS//,/ }; do
        for z in $zs; do
            zf=; [ "$z" = z ] && zf=-z
            for side in $order; do
                bin=$B/coll_bench; [ "$side" = A ] && bin=$B/coll_bench.A
                bench_place_wait >/dev/null   # near placement first (lib-local.sh), for both sides alike
                timeout 600 "$bin" -p "$p" -c "$COLLS" -s "$SIZES" -r 1 $zf -l "$side" 2>&1 |
                    grep '^RESULT' | sed "s/^/R$round $z /" || echo "round $round: $side $z failed at $p ranks" >&2
            done
        done
    done
done | tee "$raw" >/dev/null
/usr/bin/python3 - "$raw" "$OUT" "$A" "$*" <<'PY'
import sys, collections, statistics, datetime, os
raw, out, a_dir, args = sys.argv[1:5]
t = collections.OrderedDict()  # (coll, p, bytes, z) -> side -> {round: us}
algo = {}
for line in open(raw):
    f = line.split()
    if len(f) < 8: continue
    rnd, z, side, coll, p, b, us = f[0], f[1], f[3], f[4], int(f[5]), int(f[6]), float(f[7])
    k = (coll, p, b, z)
    t.setdefault(k, {}).setdefault(side, {})[rnd] = us
    algo.setdefault(k, {})[side] = f[10] if len(f) > 10 else '?'
def size(b):
    return f"{b >> 20}M" if b >= 1 << 20 else f"{b >> 10}K"
def mr(v):
    return f"{statistics.median(v):.4g} [{min(v):.4g}-{max(v):.4g}]" if v else "-"
rows = ["| collective | ranks | size | buffers | A us | B us | A/B | algo A | algo B |", "|---|---|---|---|---|---|---|---|---|"]
for k, d in t.items():
    a, b = d.get('A', {}), d.get('B', {})
    ratio = [a[r] / b[r] for r in a if r in b and b[r] > 0]
    rows.append(f"| {k[0]} | {k[1]} | {size(k[2])} | {'-z' if k[3] == 'z' else 'private'} | {mr(list(a.values()))} | "
                f"{mr(list(b.values()))} | {mr(ratio)} | {algo[k].get('A', '-')} | {algo[k].get('B', '-')} |")
print("\n".join(rows))
if out:
    with open(out, 'a') as o:
        o.write(f"\nA/B {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, load {os.getloadavg()[0]:.2f} at the end: "
                f"`bench/coll-ab.sh {args}` (A = {os.path.basename(a_dir)}, B = this tree)\n\n" + "\n".join(rows) + "\n")
PY
