#!/usr/bin/env bash
# bench/env-ab.sh - one build of coll_bench under several environment settings
# (library knobs such as COLL_COPY_NT_MIN, COLL_ALGO, GLIBC_TUNABLES), and
# optionally Open MPI / MPICH, interleaved round by round (the order rotates),
# so a knob's effect is a ratio of runs made under the same state of a shared
# machine. Prints per collective, ranks and size the median [min-max] time of
# each setting (us, slowest rank) and, round by round, the ratio of the first
# setting's time to each other's (> 1: that setting is faster) and of the
# better MPI's time to each setting's.
#
#   bench/env-ab.sh [-c allgather,alltoall] [-p 2] [-s 64M] [-R ROUNDS] [-r REPS] [-z]
#                   [-m openmpi,mpich] [-o FILE.md] 'LABEL=VAR=V VAR2=V2' ...
# Each trailing argument is one setting: its label, '=', then the environment
# (space-separated VAR=VALUE, may be empty: 'base='); BENCH_COLL_BIN=PATH in it
# runs that coll_bench instead of this tree's (another build: before/after).
# -z: coll_mem_alloc buffers. Every MPI runs with bench/lib-local.sh's flags.
# Before every run the bench waits for near vCPU placement (bench_place_wait,
# bench/lib-local.sh; BENCH_PLACE_WAIT=0 to skip).
set -euo pipefail
cd "$(dirname "$0")/.."
COLLS=allgather,alltoall RANKS=2 SIZES=64M ROUNDS=3 REPS=1 MPIS= OUT= ZC=
while getopts "c:p:s:R:r:m:o:zh" o; do
    case $o in
        c) COLLS=$OPTARG ;; p) RANKS=$OPTARG ;; s) SIZES=$OPTARG ;; R) ROUNDS=$OPTARG ;; r) REPS=$OPTARG ;;
        m) MPIS=$OPTARG ;; o) OUT=$OPTARG ;; z) ZC=-z ;; *) sed -n '2,18p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "env-ab: invalid -R '$ROUNDS': allowed a whole number >= 1" >&2; exit 2; }
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "env-ab: invalid -r '$REPS': allowed a whole number >= 1" >&2; exit 2; }
[ $# -ge 1 ] || { echo "env-ab: no setting given: allowed 'LABEL=VAR=VALUE ...' arguments" >&2; exit 2; }
labels=() envs=()
for a in "$@"; do
    [[ "$a" =~ ^[A-Za-z0-9_.+-]+= ]] || { echo "env-ab: invalid setting '$a': allowed 'LABEL=VAR=VALUE ...' (label: letters, digits, _.+-)" >&2; exit 2; }
    labels+=("${a%%=*}") envs+=("${a#*=}")
done
for m in ${MPIS//,/ }; do
    case $m in openmpi|mpich) ;; *) echo "env-ab: invalid MPI '$m' in -m: allowed openmpi, mpich" >&2; exit 2 ;; esac
done
B=build/bench; mkdir -p $B
. bench/lib-local.sh
bench_build_coll || exit 1
bench_place_init || exit 1
impls=("${labels[@]}")
for m in ${MPIS//,/ }; do bench_build_mpi "$m" && impls+=("$m"); done
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
n=${#impls[@]}
for round in $(seq 1 "$ROUNDS"); do
  for p in ${RANKS//,/ }; do
    for j in $(seq 0 $((n - 1))); do
        k=$(((j + round - 1) % n)) impl=${impls[$(((j + round - 1) % n))]}
        bench_place_wait >/dev/null   # near placement first (lib-local.sh), for every side alike
        case $impl in
            openmpi|mpich) bench_run_mpi "$impl" "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" -l "$impl" ;;
            *) bin=$B/coll_bench
               for e in ${envs[$k]}; do case $e in BENCH_COLL_BIN=*) bin=${e#BENCH_COLL_BIN=} ;; esac; done
               # shellcheck disable=SC2086
               env ${envs[$k]} timeout 600 "$bin" -p "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" $ZC -l "$impl" ;;
        esac 2>&1 | grep '^RESULT' | sed "s/^/R$round /" || echo "round $round: $impl failed at $p ranks" >&2
    done
  done
done | tee "$raw" >/dev/null
/usr/bin/python3 - "$raw" "$OUT" "$0 $*" "${labels[*]}" "$(printf '%s\n' "$@")" <<'PY'
import sys, statistics, datetime
raw, out, cmd, labels, settings = sys.argv[1:6]
labels = labels.split()
res, algo = {}, {}
for line in open(raw):
    f = line.split()
    if len(f) < 7 or f[1] != 'RESULT': continue
    rnd, impl, key = int(f[0][1:]), f[2], (f[3], int(f[4]), int(f[5]))
    res.setdefault(key, {}).setdefault(impl, {})[rnd] = float(f[6])
    if len(f) > 9: algo[(impl,) + key] = f[9]
def num(x): return '%.3g' % x if abs(x) < 100 else '%.0f' % x
def spread(xs):
    if not xs: return '-'
    return num(statistics.median(xs)) + ('' if len(xs) < 2 else ' [%s-%s]' % (num(min(xs)), num(max(xs))))
def ratio(a, b):
    rs = [a[r] / b[r] for r in a if r in b and b[r] > 0]
    return spread(rs)
def human(b):
    for u, s in (('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
        if b >= s: return '%g%s' % (b / s, u)
    return str(b)
mpis = [m for m in ('openmpi', 'mpich') if any(m in d for d in res.values())]
hdr = ['collective', 'ranks', 'size'] + ['%s us' % l for l in labels + mpis]
hdr += ['%s/%s' % (labels[0], l) for l in labels[1:]] + (['MPI/%s' % l for l in labels] if mpis else [])
rows = ['| ' + ' | '.join(hdr) + ' |', '|' + '---|' * len(hdr)]
for (c, p, b), d in res.items():
    mpi = {}
    for m in mpis:
        for r, v in d.get(m, {}).items(): mpi[r] = min(v, mpi.get(r, v))
    cells = [c, str(p), human(b)] + ['%s (%s)' % (spread(list(d.get(l, {}).values())), algo.get((l, c, p, b), '-'))
                                     for l in labels] + [spread(list(d.get(m, {}).values())) for m in mpis]
    cells += [ratio(d.get(labels[0], {}), d.get(l, {})) for l in labels[1:]]
    if mpis: cells += [ratio(mpi, d.get(l, {})) for l in labels]
    rows.append('| ' + ' | '.join(cells) + ' |')
text = '\n'.join(['# env A/B, %s' % datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC'), '',
                  'Command: `%s`; load average %s at the end. Settings:' % (cmd, open('/proc/loadavg').read().split()[0]), '']
                 + ['- %s' % s for s in settings.splitlines()] + ['',
                  'Times: slowest rank\'s average per call (us), median [min-max] over rounds (algorithm); ratios '
                  'round by round, median [min-max]; MPI = the better MPI run.', ''] + rows) + '\n'
print(text)
if out: open(out, 'w').write(text)
PY
