#!/usr/bin/env bash
# bench/cold-start.sh - what users see at hccl_test's defaults: each test
# executable as users run it (bin/<coll>_test -p P -b 8K -e 64M -f 2, so
# -n 20 -w 10, one sweep per launch, a fresh communicator each time) against
# the same executable warm, and the installed MPIs' own collectives at the
# same defaults (bench/mpi_bench.c: the same sizes in one sweep, 10 warm-up
# calls, 20 timed, the slowest rank's mean), all launched as a user would:
# no GLIBC_TUNABLES, no wait for a quiet vCPU placement (the cross-core round
# trip of bench/c2c is listed beside each run instead).
#
#   bench/cold-start.sh [-c allreduce,allgather,...] [-p 2,4,8] [-r ROUNDS] [-H] [-A TREE] [-o FILE.md]
#
# -A TREE: also TREE/bin/<coll>_test at the defaults (another commit's tree,
# built), interleaved with the rest: the before side of a change.
#
# warm: -n 1000 -w 200 from 8K to 1M, -n 40 -w 20 from 2M to 64M (1,200
# calls of 64 MiB would take minutes a run; from 2M on the first call is the
# only cold one: tests/mp/25-first-use.sh). ROUNDS (default 3) interleave the
# sides, the order rotating by round; each row is the median over rounds.
# -H: also 2 namespace hosts x 2 ranks (tests/lib/netns.sh, env launch; -p '' for these alone),
# defaults against warm (the MPIs are not run across namespaces here:
# bench/multihost-bench.sh does that). Collectives: allreduce allgather
# reduce_scatter broadcast reduce alltoall scatter (hccl_test has no gather).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
COLLS=allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall,scatter RANKS=2,4 ROUNDS=3 OUT= HOSTS=0 TREE=$ROOT BEFORE=
while getopts "c:p:r:o:A:Hh" o; do
    case $o in
        c) COLLS=$OPTARG ;; p) RANKS=$OPTARG ;; r) ROUNDS=$OPTARG ;; o) OUT=$OPTARG ;; H) HOSTS=1 ;;
        A) BEFORE=$(cd "$OPTARG" && pwd) || exit 2 ;;
        *) sed -n '2,29p' "$0"; exit 2 ;;
    esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "cold-start: invalid -r '$ROUNDS': allowed a whole number >= 1" >&2; exit 2; }
exe() {
    case $1 in
        allreduce) echo all_reduce_test ;; allgather) echo all_gather_test ;; reduce_scatter) echo reduce_scatter_test ;;
        broadcast) echo broadcast_test ;; reduce) echo reduce_test ;; alltoall) echo alltoall_test ;;
        scatter) echo scatter_test ;; *) return 1 ;;
    esac
}
for c in ${COLLS//,/ }; do
    exe "$c" >/dev/null || { echo "cold-start: invalid collective '$c' in -c: allowed allreduce, allgather, reduce_scatter, broadcast, reduce, alltoall, scatter" >&2; exit 2; }
done
for p in ${RANKS//,/ }; do
    [[ "$p" =~ ^[1-9][0-9]*$ ]] && [ "$p" -ge 2 ] || { echo "cold-start: invalid rank count '$p' in -p: allowed whole numbers >= 2" >&2; exit 2; }
done
make -s >/dev/null || exit 1
B=build/bench; mkdir -p $B
. bench/lib-local.sh
make -s bench >&2 || exit 1
mpis=()
for m in openmpi mpich; do bench_build_mpi $m && mpis+=($m); done
SIZES=$(/usr/bin/python3 -c 'print(",".join(str(8192 << i) for i in range(14)))')
raw=$(mktemp); tmp=$(mktemp -d); trap 'rm -rf "$raw" "$tmp"' EXIT
rows() { # rows TAG < table: "TAG size us" per row of a test executable's table
    awk -v t="$1" '$1 ~ /^[0-9]+$/ && $2 == "|" {print t, $1, $3}'
}
ours() { # ours P COLL default|warm|before
    local e; e=$(exe "$2")
    if [ "$3" = before ]; then
        timeout 600 "$BEFORE/bin/$e" -p "$1" -b 8K -e 64M -f 2 -d fp32 | rows "$2 $1 before-default"
    elif [ "$3" = default ]; then
        timeout 600 "$TREE/bin/$e" -p "$1" -b 8K -e 64M -f 2 -d fp32 | rows "$2 $1 ours-default"
    else
        { timeout 600 "$TREE/bin/$e" -p "$1" -b 8K -e 1M -f 2 -d fp32 -n 1000 -w 200
          timeout 600 "$TREE/bin/$e" -p "$1" -b 2M -e 64M -f 2 -d fp32 -n 40 -w 20; } | rows "$2 $1 ours-warm"
    fi
}
mpi() { # mpi IMPL P COLL: the defaults' loop (bench_run_mpi: the MPIs' best settings)
    bench_run_mpi "$1" "$2" -c "$3" -s "$SIZES" -n 20 -w 10 -r 1 -l "$1" 2>/dev/null |
        awk -v c="$3" -v p="$2" -v i="$1" '$1 == "RESULT" {print c, p, i "-default", $5, $6}'
}
sides=(ours-default ours-warm "${mpis[@]}")
[ -n "$BEFORE" ] && sides+=(before-default)
for round in $(seq 1 "$ROUNDS"); do
    for p in ${RANKS//,/ }; do
        for c in ${COLLS//,/ }; do
            n=${#sides[@]}
            for j in $(seq 0 $((n - 1))); do
                s=${sides[$(((j + round - 1) % n))]}
                echo "C2C $s $p $("$B/c2c" -n 5000 | awk '{print $2}')"
                case $s in
                    ours-default) ours "$p" "$c" default ;;
                    ours-warm) ours "$p" "$c" warm ;;
                    before-default) ours "$p" "$c" before ;;
                    *) mpi "$s" "$p" "$c" ;;
                esac | sed "s/^/R$round /"
            done
        done
    done
done >>"$raw"
if [ "$HOSTS" = 1 ]; then
    . tests/lib/netns.sh
    netns_up 2 >/dev/null || { echo "cold-start: netns_up failed" >&2; exit 1; }
    port=29611
    for round in $(seq 1 "$ROUNDS"); do
        for c in ${COLLS//,/ }; do
            e=$(exe "$c")
            for s in default warm; do
                port=$((port + 1))
                if [ $s = default ]; then
                    NETNS_MASTER_PORT=$port netns_env_launch "$tmp/h" "2 2" "$TREE/bin/$e" -b 8K -e 64M -f 2 -d fp32 >/dev/null
                    rows "$c 2x2 ours-$s" <"$tmp/h.r0.out"
                else
                    NETNS_MASTER_PORT=$port netns_env_launch "$tmp/h" "2 2" "$TREE/bin/$e" -b 8K -e 1M -f 2 -d fp32 -n 1000 -w 200 >/dev/null
                    rows "$c 2x2 ours-$s" <"$tmp/h.r0.out"
                    port=$((port + 1))
                    NETNS_MASTER_PORT=$port netns_env_launch "$tmp/h" "2 2" "$TREE/bin/$e" -b 2M -e 64M -f 2 -d fp32 -n 40 -w 20 >/dev/null
                    rows "$c 2x2 ours-$s" <"$tmp/h.r0.out"
                fi | sed "s/^/R$round /"
            done
        done
    done >>"$raw"
    netns_down
fi
/usr/bin/python3 - "$raw" "$OUT" "$*" <<'PY'
import sys, collections, datetime, statistics
raw, out, args = sys.argv[1:4]
t = collections.defaultdict(lambda: collections.defaultdict(dict))  # (coll, p, size) -> side -> round -> us
c2c = collections.defaultdict(list)
for line in open(raw):
    f = line.split()
    if f and f[0] == 'C2C':
        if len(f) > 3 and f[3].isdigit(): c2c[f[1]].append(int(f[3]))
        continue
    if len(f) < 5 or not f[0].startswith('R'): continue
    try: t[(f[1], f[2], int(f[4]))][f[3]][int(f[0][1:])] = float(f[5])
    except (ValueError, IndexError): pass
med = statistics.median
def m(d): return med(d.values()) if d else None
def fmt(x): return '-' if x is None else ('%.1f' % x if x >= 10 else '%.2f' % x)
def human(b):
    for u, s in (('M', 1 << 20), ('K', 1 << 10)):
        if b >= s: return '%d%s' % (b // s, u)
    return str(b)
L = ['# Cold start: hccl_test defaults against warm and against the MPIs, %s' %
     datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC'), '',
     'Command: `bench/cold-start.sh %s` (run from the repository root). Times: us per call, the slowest rank\'s mean, median over rounds. '
     'default = `bin/<coll>_test -p P -b 8K -e 64M -f 2` (-n 20 -w 10); warm = -n 1000 -w 200 to 1M, '
     '-n 40 -w 20 from 2M; MPIs: bench/mpi_bench.c at -n 20 -w 10, one sweep, with their best settings '
     '(bench/lib-local.sh bench_run_mpi: GLIBC_TUNABLES keeping freed buffers mapped, Open MPI yielding when idle). cold/warm = default / warm '
     '(target <= 1.25); before = -A TREE at the defaults (- without -A); vs MPI = better MPI default / ours default (>= 1 means collbench is faster). '
     'No wait for vCPU placement; the cross-core round trips measured before each run are listed below.' % args, '']
hdr = '| collective | ranks | size | before | default | warm | cold/warm | Open MPI | MPICH | vs MPI |'
groups = collections.OrderedDict()
for (c, p, b) in sorted(t, key=lambda k: (k[0], k[1], k[2])):
    groups.setdefault((c, p), []).append(b)
worst = []
for (c, p), sizes in groups.items():
    L += ['', hdr, '|---|---|---|---|---|---|---|---|---|---|']
    for b in sizes:
        d = t[(c, p, b)]
        dv, wv, bv = m(d.get('ours-default', {})), m(d.get('ours-warm', {})), m(d.get('before-default', {}))
        om, mp = m(d.get('openmpi-default', {})), m(d.get('mpich-default', {}))
        cw = dv / wv if dv and wv else None
        bm = min([x for x in (om, mp) if x] or [0]) or None
        vs = bm / dv if bm and dv else None
        worst.append((c, p, b, cw, vs))
        L.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (c, p, human(b), fmt(bv), fmt(dv), fmt(wv),
                 '-' if cw is None else '%.2f' % cw, fmt(om), fmt(mp), '-' if vs is None else '%.2f' % vs))
cw_all = [x for x in worst if x[3] is not None]
vs_all = [x for x in worst if x[4] is not None]
L += ['', '## Summary', '']
if cw_all:
    over = [x for x in cw_all if x[3] > 1.25]
    L.append('- cold/warm: %d rows, %d over 1.25; highest %.2f (%s %s ranks %s)' % (
        len(cw_all), len(over), max(x[3] for x in cw_all), *[(x[0], x[1], human(x[2])) for x in cw_all if x[3] == max(y[3] for y in cw_all)][0]))
    for x in sorted(over, key=lambda x: -x[3])[:12]:
        L.append('  - %s %s ranks %s: %.2f' % (x[0], x[1], human(x[2]), x[3]))
if vs_all:
    under = [x for x in vs_all if x[4] < 1.0]
    L.append('- vs the better MPI at the defaults: %d rows, %d below 1.0; lowest %.2f' % (
        len(vs_all), len(under), min(x[4] for x in vs_all)))
    for x in sorted(under, key=lambda x: x[4])[:20]:
        L.append('  - %s %s ranks %s: %.2f' % (x[0], x[1], human(x[2]), x[4]))
if c2c:
    L += ['', 'Cross-core round trip before each run (bench/c2c, ns; ~60-100 near, ~330 far): ' +
          '; '.join('%s: median %d, max %d' % (k, med(v), max(v)) for k, v in c2c.items())]
text = '\n'.join(L) + '\n'
print(text)
if out: open(out, 'w').write(text)
PY
