#!/usr/bin/env bash
# bench/placement.sh - does the placement of this machine's CPUs move, and
# what does it do to a collective? Takes N samples; each one measures the
# cross-core round trip (bench/c2c), runs coll_bench once, and measures the
# round trip again. A sample is "near" when both round trips are under twice
# the smallest seen in the run, "far" when both are over it, else "moved".
# Prints every sample, then the median time per class and size.
#
#   bench/placement.sh [-c reduce_scatter] [-p 4] [-s 1M,16M] [-n 40] [-z] [-m mpich|openmpi] [-o FILE.md]
# -m: run that MPI's own benchmark on P ranks first (a 1M and 64M sweep of the
#     same collective), as run-bench.sh does between collbench's runs.
# -z: coll_mem_alloc buffers.
set -u
cd "$(dirname "$0")/.."
COLL=reduce_scatter P=4 SIZES=1M,16M N=40 Z="" MPI="" OUT=""
while getopts "c:p:s:n:zm:o:" o; do
    case $o in
        c) COLL=$OPTARG ;; p) P=$OPTARG ;; s) SIZES=$OPTARG ;; n) N=$OPTARG ;; z) Z=-z ;;
        m) MPI=$OPTARG ;; o) OUT=$OPTARG ;;
        *) sed -n '2,13p' "$0"; exit 2 ;;
    esac
done
[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "placement: invalid -n '$N': allowed a whole number >= 1" >&2; exit 2; }
[[ "$P" =~ ^[1-9][0-9]*$ ]] || { echo "placement: invalid -p '$P': allowed a whole number >= 1" >&2; exit 2; }
case $MPI in ""|mpich|openmpi) ;; *) echo "placement: invalid -m '$MPI': allowed mpich, openmpi" >&2; exit 2 ;; esac
B=build/bench; mkdir -p $B
. bench/lib-local.sh
bench_build_coll || exit 1
bench_place_init || exit 1   # builds $B/c2c (the samples do not wait: placement is what they measure)
if [ -n "$MPI" ]; then
    bench_build_mpi "$MPI" || { echo "placement: $MPI is not installed" >&2; exit 2; }
fi
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
[ -n "$MPI" ] && bench_run_mpi "$MPI" "$P" -c "$COLL" -s 1M,64M -r 1 -l "$MPI" >/dev/null 2>&1
for i in $(seq 1 "$N"); do
    a=$(bench_c2c)
    t=$(timeout 300 $B/coll_bench -p "$P" -c "$COLL" -s "$SIZES" -r 1 $Z -l x 2>/dev/null |
        awk '$1 == "RESULT" {printf "%s=%s ", $5, $6}')
    b=$(bench_c2c)
    echo "$i $a $b $t" >>"$raw"
done
/usr/bin/python3 - "$raw" "$OUT" "$*" "$COLL" "$P" <<'PY'
import sys, statistics, datetime
raw, out, args, coll, p = sys.argv[1:6]
rows = []
for l in open(raw):
    f = l.split()
    if len(f) < 3: continue
    rows.append((int(f[0]), float(f[1]), float(f[2]), dict(x.split('=') for x in f[3:])))
lo = min(min(a, b) for _, a, b, _ in rows) if rows else 0
def cls(a, b):
    if a < 2 * lo and b < 2 * lo: return 'near'
    if a >= 2 * lo and b >= 2 * lo: return 'far'
    return 'moved'
sizes = sorted({s for *_, t in rows for s in t}, key=int)
L = ['# Placement and a %s on %s ranks, %s' % (coll, p, datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC')), '',
     'Command: `bench/placement.sh %s`. c2c: the cross-core round trip before / after the run (ns, bench/c2c); '
     'near: both under twice the smallest of the run (%.0f ns), far: both over it.' % (args, lo), '',
     '| sample | c2c before | c2c after | class | ' + ' | '.join('%s B us' % s for s in sizes) + ' |',
     '|---|---|---|---|' + '---|' * len(sizes)]
for i, a, b, t in rows:
    L.append('| %d | %.0f | %.0f | %s | %s |' % (i, a, b, cls(a, b), ' | '.join(t.get(s, '-') for s in sizes)))
L += ['', '| class | samples | ' + ' | '.join('%s B: median us [min-max]' % s for s in sizes) + ' |',
      '|---|---|' + '---|' * len(sizes)]
for c in ('near', 'far', 'moved'):
    sel = [t for i, a, b, t in rows if cls(a, b) == c]
    if not sel: continue
    cells = []
    for s in sizes:
        xs = [float(t[s]) for t in sel if s in t]
        cells.append('%.1f [%.1f-%.1f]' % (statistics.median(xs), min(xs), max(xs)) if xs else '-')
    L.append('| %s | %d | %s |' % (c, len(sel), ' | '.join(cells)))
text = '\n'.join(L) + '\n'
print(text)
if out: open(out, 'w').write(text)
PY
