#!/usr/bin/env bash
# bench/run-bench.sh - collbench side by side with the installed MPIs' own
# collectives, in one run, same machine, same sizes, same timing loop
# (bench/bench_common.h), and the ratios. Absolute figures drift on a shared
# VM; the ratios of one run are what we compare.
#
#   bench/run-bench.sh [-c allreduce,allgather,...] [-p 2,4] [-s 8K,1M,64M] [-r REPS] [-o FILE.md]
#
# MPI gets its best settings: Open MPI yields when idle (oversubscribed) and
# uses vader's single-copy; both MPIs run with
# GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=8589934592
# (without it both collapse to ~0.2 GB/s at >= 32 MiB from page faults on this VM).
# Every side warms up with the same number of untimed calls and keeps the best
# of REPS repetitions.
set -euo pipefail
cd "$(dirname "$0")/.."
COLLS=allreduce; RANKS=2,4; SIZES=8K,1M,64M; REPS=3; OUT=
while getopts "c:p:s:r:o:h" o; do
    case $o in
        c) COLLS=$OPTARG ;; p) RANKS=$OPTARG ;; s) SIZES=$OPTARG ;; r) REPS=$OPTARG ;; o) OUT=$OPTARG ;;
        *) sed -n '2,16p' "$0"; exit 2 ;;
    esac
done
B=build/bench; mkdir -p $B
make -s lib
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc -Ibench -o $B/coll_bench bench/coll_bench.c lib/libcoll.a -pthread -lm -ldl
impls=(collbench collbench-z)
if command -v mpicc.openmpi >/dev/null; then mpicc.openmpi -O2 -Ibench -o $B/mpi_bench.openmpi bench/mpi_bench.c; impls+=(openmpi); fi
if command -v mpicc.mpich >/dev/null; then mpicc.mpich -O2 -Ibench -o $B/mpi_bench.mpich bench/mpi_bench.c; impls+=(mpich); fi
TUN="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=8589934592"
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
for p in ${RANKS//,/ }; do
    for impl in "${impls[@]}"; do
        case $impl in
            collbench) timeout 600 $B/coll_bench -p "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" -l collbench ;;
            collbench-z) timeout 600 $B/coll_bench -p "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" -z -l collbench-z ;;
            openmpi) GLIBC_TUNABLES=$TUN timeout 600 mpirun.openmpi --allow-run-as-root --oversubscribe \
                         --mca mpi_yield_when_idle 1 -x GLIBC_TUNABLES -n "$p" \
                         $B/mpi_bench.openmpi -c "$COLLS" -s "$SIZES" -r "$REPS" -l openmpi ;;
            mpich) GLIBC_TUNABLES=$TUN timeout 600 mpirun.mpich -genv GLIBC_TUNABLES "$TUN" -n "$p" \
                       $B/mpi_bench.mpich -c "$COLLS" -s "$SIZES" -r "$REPS" -l mpich ;;
        esac 2>&1 | grep '^RESULT' || echo "RESULT $impl FAILED $p 0 0 0 0" >&2
    done
done | tee "$raw" >/dev/null
/usr/bin/python3 - "$raw" "$OUT" "$*" <<'PY'
import sys, collections, datetime, platform, subprocess
raw, out, args = sys.argv[1], sys.argv[2], sys.argv[3]
rows = collections.OrderedDict()
algo = {}
for line in open(raw):
    f = line.split()
    if len(f) < 8 or f[0] != 'RESULT': continue
    impl, coll, p, b, t, alg, bus = f[1], f[2], int(f[3]), int(f[4]), float(f[5]), float(f[6]), float(f[7])
    rows.setdefault((coll, p, b), {})[impl] = (t, bus)
    if len(f) > 8: algo[(impl, coll, p, b)] = f[8]
def human(b):
    for u, s in (('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
        if b >= s: return '%g%s' % (b / s, u)
    return str(b)
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
lines = ['# collbench vs MPI, %s' % datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC'), '',
         'Machine: %s, %d CPUs (%s). Command: `bench/run-bench.sh %s`' % (platform.node(), len(open('/proc/cpuinfo').read().split('processor')) - 1, cpu, args), '',
         'time = slowest rank\'s average per call (us), busbw in GB/s (nccl-tests factors). '
         'Ratio = collbench busbw / better MPI busbw (for 8K: better MPI time / collbench time); >1 means collbench is faster.', '',
         '| collective | ranks | size | collbench us | busbw | algo | -z us | -z busbw | Open MPI us | busbw | MPICH us | busbw | ratio | ratio -z |',
         '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
for (coll, p, b), d in rows.items():
    def g(k):
        return d.get(k, (float('nan'), float('nan')))
    cb, cz, om, mp = g('collbench'), g('collbench-z'), g('openmpi'), g('mpich')
    best_t = min(x[0] for x in (om, mp) if x[0] == x[0]) if (om[0] == om[0] or mp[0] == mp[0]) else float('nan')
    best_b = max(x[1] for x in (om, mp) if x[1] == x[1]) if (om[1] == om[1] or mp[1] == mp[1]) else float('nan')
    small = b <= 65536
    r = (best_t / cb[0]) if small else (cb[1] / best_b if best_b else float('nan'))
    rz = (best_t / cz[0]) if small else (cz[1] / best_b if best_b else float('nan'))
    lines.append('| %s | %d | %s | %.1f | %.2f | %s | %.1f | %.2f | %.1f | %.2f | %.1f | %.2f | %.2f | %.2f |' % (
        coll, p, human(b), cb[0], cb[1], algo.get(('collbench', coll, p, b), ''), cz[0], cz[1], om[0], om[1], mp[0], mp[1], r, rz))
text = '\n'.join(lines) + '\n'
print(text)
if out:
    open(out, 'w').write(text)
PY
