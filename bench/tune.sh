#!/usr/bin/env bash
# bench/tune.sh - measure every algorithm of each collective on local ranks and
# print, per (collective, ranks, size), the fastest one: the data behind the
# single-host rules in src/coll/selection/tuning_rules.c.
#
#   bench/tune.sh [-c allreduce,broadcast,...] [-p 2,4] [-s 8K,64K,1M,8M,64M] [-k REPS] [-a ALGOS] [-H HOSTS]
#     -k  repetitions inside each coll_bench run, the best kept (default 3)
#     -a  only these algorithms (comma-separated; default every one but hier)
#     -H  the ranks on HOSTS simulated hosts (coll_bench -H: shm within, TCP on 127.0.0.1 between)
# Every run waits for near vCPU placement first (bench/lib-local.sh bench_place_wait).
set -euo pipefail
cd "$(dirname "$0")/.."
COLLS=allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall,scatter,gather
RANKS=2,4; SIZES=8K,64K,256K,1M,8M,64M; REPS=3; ALGOS=; HOSTS=
while getopts "c:p:s:k:a:H:" o; do
    case $o in c) COLLS=$OPTARG ;; p) RANKS=$OPTARG ;; s) SIZES=$OPTARG ;; k) REPS=$OPTARG ;;
               a) ALGOS=$OPTARG ;; H) HOSTS=$OPTARG ;; *) exit 2 ;; esac
done
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "tune: invalid -k '$REPS' (allowed: repetitions, 1 or more)" >&2; exit 2; }
HOPT=${HOSTS:+-H $HOSTS}
make -s lib bin/all_reduce_test
mkdir -p build/bench
make -s bench >&2 || exit 1
B=build/bench
. bench/lib-local.sh
bench_place_init || exit 1   # every run waits for near vCPU placement first (BENCH_PLACE_WAIT)
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
for c in ${COLLS//,/ }; do
    algos=$(./bin/all_reduce_test --list-algos | awk -v k="$c" -v only=",$ALGOS," \
        '$1 == k && (only == ",," ? $2 !~ /hier/ : index(only, "," $2 ",")) {print $2}')
    for p in ${RANKS//,/ }; do
        for a in $algos; do
            bench_place_wait >/dev/null
            COLL_ALGO="$c=$a" timeout 300 build/bench/coll_bench -p "$p" $HOPT -c "$c" -s "$SIZES" -r "$REPS" -l "$a" 2>/dev/null \
                | grep '^RESULT' >>"$raw" || true
        done
        bench_place_wait >/dev/null
        timeout 300 build/bench/coll_bench -p "$p" $HOPT -c "$c" -s "$SIZES" -r "$REPS" -l auto 2>/dev/null | grep '^RESULT' >>"$raw" || true
    done
done
/usr/bin/python3 - "$raw" <<'PY'
import sys, collections
best = collections.OrderedDict(); auto = {}; every = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    f = l.split()
    label, coll, p, b, t = f[1], f[2], int(f[3]), int(f[4]), float(f[5])
    if label == 'auto':
        auto[(coll, p, b)] = (f[8] if len(f) > 8 else '?', t); continue
    every[(coll, p, b)][label] = t
    k = (coll, p, b)
    if k not in best or t < best[k][1]: best[k] = (label, t)
print('| collective | ranks | bytes | fastest | us | auto picks | auto us | all (us) |')
print('|---|---|---|---|---|---|---|---|')
for k, (a, t) in best.items():
    au = auto.get(k, ('?', float('nan')))
    alls = ' '.join('%s=%.1f' % (x, y) for x, y in sorted(every[k].items(), key=lambda z: z[1]))
    print('| %s | %d | %d | %s | %.1f | %s | %.1f | %s |' % (k[0], k[1], k[2], a, t, au[0], au[1], alls))
PY
