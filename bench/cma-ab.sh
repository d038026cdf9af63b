#!/usr/bin/env bash
# bench/cma-ab.sh - the single-copy (cma) algorithms against what automatic
# selection picks today and against the MPIs, on one host, interleaved round
# by round (the order rotates) so that all see the same state of a shared
# machine. Settings per round and rank count:
#   auto      coll_bench as built (rules, then the cost model), or with
#             COLL_ALGO=SPEC under -b SPEC (a baseline forced instead)
#   cma       coll_bench with every collective of -c that has a cma algorithm
#             forced to it (COLL_ALGO)
#   openmpi   mpi_bench under Open MPI (vader single-copy), run-bench.sh's flags
#   mpich     mpi_bench under MPICH (-i to include it: slow at 4 ranks here)
# Prints, per collective, ranks and size, the median [min-max] over rounds of
# each setting's time per call (us, slowest rank) and the ratios auto/cma
# (> 1: cma faster) and better MPI / cma, round by round, median; with -o
# also into a markdown file with the command.
#
#   bench/cma-ab.sh [-c allgather,alltoall,...] [-p 2,4] [-s 1M,64M] [-R ROUNDS] [-r REPS]
#                   [-i auto,cma,openmpi,mpich] [-b SPEC] [-o FILE.md]
set -euo pipefail
cd "$(dirname "$0")/.."
COLLS=allgather,alltoall,broadcast,scatter,gather RANKS=2,4 SIZES=1M,64M ROUNDS=3 REPS=1
IMPLS=auto,cma,openmpi OUT= BASE=
while getopts "c:p:s:R:r:i:b:o:h" o; do
    case $o in
        c) COLLS=$OPTARG ;; p) RANKS=$OPTARG ;; s) SIZES=$OPTARG ;; R) ROUNDS=$OPTARG ;; r) REPS=$OPTARG ;;
        i) IMPLS=$OPTARG ;; b) BASE=$OPTARG ;; o) OUT=$OPTARG ;; *) sed -n '2,19p' "$0"; exit 2 ;;
    esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "cma-ab: invalid -R '$ROUNDS': allowed a whole number >= 1" >&2; exit 2; }
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "cma-ab: invalid -r '$REPS': allowed a whole number >= 1" >&2; exit 2; }
for i in ${IMPLS//,/ }; do
    case $i in auto|cma|openmpi|mpich) ;;
        *) echo "cma-ab: invalid setting '$i' in -i: allowed auto, cma, openmpi, mpich" >&2; exit 2 ;; esac
done
spec=
for c in ${COLLS//,/ }; do
    case $c in allreduce|allgather|alltoall|broadcast|scatter|gather) spec=${spec:+$spec;}$c=cma ;;
        reduce|reduce_scatter) ;;
        *) echo "cma-ab: invalid collective '$c' in -c: allowed allreduce, allgather, reduce_scatter, broadcast, reduce, alltoall, scatter, gather" >&2; exit 2 ;;
    esac
done
B=build/bench; mkdir -p $B
. bench/lib-local.sh
bench_build_coll || exit 1
impls=()
for i in ${IMPLS//,/ }; do
    case $i in openmpi|mpich) bench_build_mpi "$i" || continue ;; esac
    impls+=("$i")
done
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
n=${#impls[@]}
for round in $(seq 1 "$ROUNDS"); do
  for p in ${RANKS//,/ }; do
    for j in $(seq 0 $((n - 1))); do
        impl=${impls[$(((j + round - 1) % n))]}
        case $impl in
            auto) COLL_ALGO="$BASE" timeout 600 $B/coll_bench -p "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" -l auto ;;
            cma) COLL_ALGO="$spec" timeout 600 $B/coll_bench -p "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" -l cma ;;
            openmpi|mpich) bench_run_mpi "$impl" "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" -l "$impl" ;;
        esac 2>&1 | grep '^RESULT' | sed "s/^/R$round /" || echo "round $round: $impl failed at $p ranks" >&2
    done
  done
done | tee "$raw" >/dev/null
/usr/bin/python3 - "$raw" "$OUT" "$*" "$(nproc)" <<'PY'
import sys, collections, datetime, statistics
raw, out, args, ncpu = sys.argv[1:5]
res = collections.OrderedDict()   # (coll, p, bytes) -> impl -> {round: us}
algo = {}
for line in open(raw):
    f = line.split()
    if len(f) < 7 or f[1] != 'RESULT': continue
    rnd, impl, key = int(f[0][1:]), f[2], (f[3], int(f[4]), int(f[5]))
    res.setdefault(key, {}).setdefault(impl, {})[rnd] = float(f[6])
    if len(f) > 9 and f[9] != '-': algo[(impl,) + key] = f[9]
def human(b):
    for u, s in (('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
        if b >= s: return '%g%s' % (b / s, u)
    return str(b)
def num(x): return '%.3g' % x if abs(x) < 100 else '%.0f' % x
def spread(xs):
    if not xs: return '-'
    return num(statistics.median(xs)) + ('' if len(xs) < 2 else ' [%s-%s]' % (num(min(xs)), num(max(xs))))
def ratio(d, a, b):   # per round a/b, median [min-max]
    rs = [d[a][r] / d[b][r] for r in d.get(a, {}) if r in d.get(b, {}) and d[b][r] > 0]
    return spread(rs) if rs else '-'
impls = [i for i in ('auto', 'cma', 'openmpi', 'mpich') if any(i in d for d in res.values())]
hdr = ['collective', 'ranks', 'size'] + ['%s us' % i for i in impls] + ['auto algo', 'auto/cma', 'MPI/cma', 'MPI/auto']
rows = ['| ' + ' | '.join(hdr) + ' |', '|' + '---|' * len(hdr)]
for (c, p, b), d in res.items():
    mpi = {}
    for r in set(r for i in ('openmpi', 'mpich') for r in d.get(i, {})):
        v = [d[i][r] for i in ('openmpi', 'mpich') if r in d.get(i, {})]
        mpi[r] = min(v)
    d2 = dict(d, mpi=mpi)
    cells = [c, str(p), human(b)] + [spread(list(d.get(i, {}).values())) for i in impls]
    cells += [algo.get(('auto', c, p, b), '-'), ratio(d2, 'auto', 'cma'), ratio(d2, 'mpi', 'cma'), ratio(d2, 'mpi', 'auto')]
    rows.append('| ' + ' | '.join(cells) + ' |')
text = '\n'.join(['# cma vs auto vs MPI, %s' % datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC'), '',
                  'Command: `bench/cma-ab.sh %s` on %s CPUs, load average %s at the end. Times: slowest rank\'s '
                  'average per call (us), median [min-max] over rounds; ratios round by round, median [min-max]; '
                  'MPI = the better of the MPIs run.' % (args, ncpu, open('/proc/loadavg').read().split()[0]), ''] + rows) + '\n'
print(text)
if out: open(out, 'w').write(text)
PY
