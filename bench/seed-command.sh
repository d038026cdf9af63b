#!/usr/bin/env bash
# bench/seed-command.sh - the seed's exact command against Open MPI's own
# MPI_Allreduce at the same defaults, as a user runs both:
#   mpirun -n 8 ./bin/all_reduce_test -p 8 -b 8K -e 64M -f 2 -d fp32 -o sum
#   mpirun -n 8 build/bench/mpi_bench.openmpi -c allreduce -s 8K..64M -n 20 -w 10 -r 1
# (Open MPI's mpirun with --allow-run-as-root --oversubscribe, which root and
# 8 ranks on fewer cores need; nothing else: no GLIBC_TUNABLES, no placement
# wait). ROUNDS (default 3) alternate the two, the order swapping each round;
# each row is the median over rounds [min-max] and the ratio Open MPI /
# collbench round by round (> 1: collbench faster).
#
#   bench/seed-command.sh [-r ROUNDS] [-p RANKS] [-o FILE.md]
set -u
cd "$(dirname "$0")/.."
ROUNDS=3 P=8 OUT=
while getopts "r:p:o:h" o; do
    case $o in
        r) ROUNDS=$OPTARG ;; p) P=$OPTARG ;; o) OUT=$OPTARG ;; *) sed -n '2,13p' "$0"; exit 2 ;;
    esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "seed-command: invalid -r '$ROUNDS': allowed a whole number >= 1" >&2; exit 2; }
[[ "$P" =~ ^[1-9][0-9]*$ ]] && [ "$P" -ge 2 ] || { echo "seed-command: invalid -p '$P': allowed a whole number >= 2" >&2; exit 2; }
command -v mpirun.openmpi >/dev/null || { echo "seed-command: mpirun.openmpi is missing (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 1; }
make -s >/dev/null || exit 1
B=build/bench; mkdir -p $B
. bench/lib-local.sh
bench_build_mpi openmpi || exit 1
SIZES=$(/usr/bin/python3 -c 'print(",".join(str(8192 << i) for i in range(14)))')
MPIRUN=(mpirun.openmpi --allow-run-as-root --oversubscribe -n "$P")
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
for r in $(seq 1 "$ROUNDS"); do
    for k in 0 1; do
        if [ $(((r + k) % 2)) = 1 ]; then
            timeout 900 "${MPIRUN[@]}" ./bin/all_reduce_test -p "$P" -b 8K -e 64M -f 2 -d fp32 -o sum 2>/dev/null |
                awk -v r=$r '$1 ~ /^[0-9]+$/ && $2 == "|" {print r, "collbench", $1, $3}'
        else
            timeout 900 "${MPIRUN[@]}" "$B/mpi_bench.openmpi" -c allreduce -s "$SIZES" -n 20 -w 10 -r 1 -l openmpi 2>/dev/null |
                awk -v r=$r '$1 == "RESULT" {print r, "openmpi", $5, $6}'
        fi
    done
done >"$raw"
/usr/bin/python3 - "$raw" "$OUT" "$P" "$*" <<'PY'
import sys, collections, datetime, statistics
raw, out, p, args = sys.argv[1:5]
t = collections.defaultdict(dict)
for line in open(raw):
    r, who, b, us = line.split()
    t[(int(b), who)][int(r)] = float(us)
sizes = sorted({b for b, _ in t})
def sp(d):
    v = list(d.values())
    if not v: return '-'
    f = lambda x: '%.1f' % x
    return f(statistics.median(v)) + ('' if len(v) < 2 else ' [%s-%s]' % (f(min(v)), f(max(v))))
L = ['# The seed\'s command against Open MPI at the defaults, %s' % datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC'), '',
     'Command: `bench/seed-command.sh %s`: `mpirun -n %s ./bin/all_reduce_test -p %s -b 8K -e 64M -f 2 -d fp32 -o sum` '
     'against `mpirun -n %s mpi_bench.openmpi` (MPI_Allreduce, -n 20 -w 10, one sweep), Open MPI\'s mpirun with '
     '--allow-run-as-root --oversubscribe and nothing else. us per call (slowest rank), median [min-max] over rounds; '
     'ratio = Open MPI / collbench round by round (> 1: collbench faster).' % (args, p, p, p), '',
     '| size | collbench us | Open MPI us | ratio |', '|---|---|---|---|']
low = None
for b in sizes:
    c, o = t.get((b, 'collbench'), {}), t.get((b, 'openmpi'), {})
    rs = [o[r] / c[r] for r in c if r in o and c[r] > 0]
    rt = '-' if not rs else '%.2f [%.2f-%.2f]' % (statistics.median(rs), min(rs), max(rs))
    if rs: low = min(low or 99, statistics.median(rs))
    L.append('| %s | %s | %s | %s |' % (b, sp(c), sp(o), rt))
if low is not None: L += ['', 'Lowest median ratio: %.2f' % low]
text = '\n'.join(L) + '\n'
print(text)
if out: open(out, 'w').write(text)
PY
