#!/usr/bin/env bash
# bench/run-bench.sh - collbench side by side with the installed MPIs' own
# collectives, in one run, same machine, same sizes, same timing loop
# (bench/bench_common.h), and the ratios, beside each row's roofline.
#
#   bench/run-bench.sh [-c allreduce,allgather,...] [-p 2,4] [-s 8K,1M,64M] [-r ROUNDS]
#                      [-k REPS] [-i collbench,collbench-z,openmpi,mpich] [-W SECONDS] [-D] [-o FILE.md]
#
# -D: the row set at hccl_test's defaults, as users run it: every side times
# -n 20 calls after -w 10 warm-up calls, once (-k 1), the sizes in one sweep
# per launch (a fresh communicator, as bin/*_test), and nobody waits for a
# quiet placement (-W 0; the round trips are still listed). Without -D each
# side warms up with n/5 + 2 calls and times 2,000 (<= 64K), 200 (<= 2M) or
# 10 calls, the figures of the warm library.
#
# ROUNDS (default 3) interleave the implementations: every round runs each
# (-i, default all that are installed) once over the whole matrix, in an order
# that rotates by round, and measures the floor (bench/roofline: the least
# bytes of docs/performance.md over this machine's copy and reduce rates at
# the row's working set, measured in that round). A row shows the median over
# rounds with the range, "% floor" (the floor over the time, round by round,
# median), and the ratio to the better MPI computed round by round (median
# [min-max]). REPS (default 1): repetitions inside a run, the best kept.
# MPI gets its best settings: Open MPI yields when idle (oversubscribed) and
# uses vader's single-copy; both MPIs run with
# GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=8589934592
# (without it both collapse to ~0.2 GB/s at >= 32 MiB from page faults on this VM).
# Every side warms up with the same number of untimed calls.
# Placement: before each run the bench measures the cross-core round trip
# (bench/c2c) and, while it is over twice the smallest of 5 taken at the
# start (this VM's hypervisor now and then puts its two vCPUs far apart, and
# every staged collective then runs 3-5x slower: docs/performance.md "Slow
# launches"), waits for it to come back, up to -W SECONDS (default 60; 0 =
# never wait), the same for every implementation; the report lists the round
# trip before and after every run.
set -euo pipefail
cd "$(dirname "$0")/.."
COLLS=allreduce; RANKS=2,4; SIZES=8K,1M,64M; REPS=1; ROUNDS=3; IMPLS=; OUT=; WAIT=60; LOOP=()
while getopts "c:p:s:r:k:i:o:W:Dh" o; do
    case $o in
        c) COLLS=$OPTARG ;; p) RANKS=$OPTARG ;; s) SIZES=$OPTARG ;; k) REPS=$OPTARG ;; r) ROUNDS=$OPTARG ;;
        i) IMPLS=$OPTARG ;; o) OUT=$OPTARG ;; W) WAIT=$OPTARG ;; D) LOOP=(-n 20 -w 10) ;;
        *) sed -n '2,37p' "$0"; exit 2 ;;
    esac
done
[ ${#LOOP[@]} -eq 0 ] || { REPS=1; WAIT=0; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "run-bench: invalid -r '$ROUNDS': allowed a whole number >= 1" >&2; exit 2; }
[[ "$WAIT" =~ ^[0-9]+$ ]] || { echo "run-bench: invalid -W '$WAIT': allowed a whole number of seconds >= 0" >&2; exit 2; }
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "run-bench: invalid -k '$REPS': allowed a whole number >= 1" >&2; exit 2; }
for p in ${RANKS//,/ }; do
    [[ "$p" =~ ^[1-9][0-9]*$ ]] || { echo "run-bench: invalid rank count '$p' in -p: allowed whole numbers >= 1" >&2; exit 2; }
done
for i in ${IMPLS//,/ }; do
    case $i in collbench|collbench-z|openmpi|mpich) ;;
        *) echo "run-bench: invalid implementation '$i' in -i: allowed collbench, collbench-z, openmpi, mpich" >&2; exit 2 ;;
    esac
done
want() { [ -z "$IMPLS" ] || [[ ",$IMPLS," == *",$1,"* ]]; }
B=build/bench; mkdir -p $B
. bench/lib-local.sh
bench_build_coll || exit 1
# the floor's loops: this machine's best code (the library's reductions use AVX2/AVX-512 where present)
make -s bench >&2 || exit 1   # roofline, c2c, coll_bench, the MPI twins
# the cross-core round trip (bench/c2c.c), before and after every run: ~60-100 ns while the
# hypervisor keeps this VM's vCPUs near each other, ~330 ns while it puts them far apart, when
# every staged collective runs 3-5x slower (docs/performance.md "Slow launches")
BENCH_PLACE_WAIT=$WAIT
bench_place_init || exit 1
for p in ${RANKS//,/ }; do   # bad -c/-s (or a size below 4p): roofline's one-line error, exit 2
    $B/roofline -F -p "$p" -c "$COLLS" -s "$SIZES" >/dev/null || exit 2
done
impls=()
want collbench && impls+=(collbench)
want collbench-z && impls+=(collbench-z)
for m in openmpi mpich; do want $m && bench_build_mpi $m && impls+=($m); done
raw=$(mktemp); trap 'rm -f "$raw"' EXIT
n=${#impls[@]}
for round in $(seq 1 "$ROUNDS"); do
  for p in ${RANKS//,/ }; do
    $B/roofline -p "$p" -c "$COLLS" -s "$SIZES" | sed "s/^/R$round /"
    for j in $(seq 0 $((n - 1))); do
        impl=${impls[$(((j + round - 1) % n))]}   # the order rotates by round
        echo "R$round C2C $impl $p $(bench_place_wait)"
        case $impl in
            collbench) timeout 600 $B/coll_bench -p "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" "${LOOP[@]}" -l collbench ;;
            collbench-z) timeout 600 $B/coll_bench -p "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" "${LOOP[@]}" -z -l collbench-z ;;
            openmpi|mpich) bench_run_mpi "$impl" "$p" -c "$COLLS" -s "$SIZES" -r "$REPS" "${LOOP[@]}" -l "$impl" ;;
        esac 2>&1 | grep '^RESULT' | sed "s/^/R$round /" || echo "round $round: $impl failed at $p ranks" >&2
        echo "R$round C2C $impl $p $(bench_c2c)"
    done
  done
done | tee "$raw" >/dev/null
/usr/bin/python3 - "$raw" "$OUT" "$*" <<'PY'
import sys, collections, datetime, platform, statistics
raw, out, args = sys.argv[1], sys.argv[2], sys.argv[3]
res = collections.OrderedDict()   # (coll, p, bytes) -> impl -> {round: (time_us, busbw)}
floor = {}                        # (coll, p, bytes) -> {round: fields}
algo = {}
cpu_t = {}                        # (coll, p, bytes) -> impl -> {round: CPU us per call, all ranks}
c2c = collections.OrderedDict()   # (p, impl) -> {round: [ns before, ns after]}
for line in open(raw):
    f = line.split()
    if len(f) < 2 or not f[0].startswith('R'): continue
    rnd, f = int(f[0][1:]), f[1:]
    if f[0] == 'C2C' and len(f) >= 4:
        c2c.setdefault((int(f[2]), f[1]), {}).setdefault(rnd, []).append(f[3])
        continue
    if f[0] == 'FLOOR' and len(f) >= 15:
        key = (f[1], int(f[2]), int(f[3]))
        floor.setdefault(key, {})[rnd] = dict(copy=float(f[4]), rd=float(f[5]), wr=float(f[6]), k=int(f[8]),
            c1=float(f[9]), ck=float(f[10]), r1=float(f[11]), rk=float(f[12]), us=float(f[13]), bound=f[14])
        res.setdefault(key, {})
    elif f[0] == 'RESULT' and len(f) >= 8:
        impl, key = f[1], (f[2], int(f[3]), int(f[4]))
        res.setdefault(key, {}).setdefault(impl, {})[rnd] = (float(f[5]), float(f[7]))
        if len(f) > 8 and f[8] != '-': algo[(impl,) + key] = f[8]
        for x in f[8:]:
            if x.startswith('cpu='): cpu_t.setdefault(key, {}).setdefault(impl, {})[rnd] = float(x[4:])
def human(b):
    for u, s in (('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
        if b >= s: return '%g%s' % (b / s, u)
    return str(b)
med = statistics.median
def num(x):   # 3 significant digits, no exponent
    return '%.3g' % x if abs(x) < 100 else '%.0f' % x
def spread(xs, fmt=None):
    if not xs: return '-'
    f = (lambda x: fmt % x) if fmt else num
    return f(med(xs)) + ('' if len(xs) < 2 else (' [' + f(min(xs)) + '-' + f(max(xs)) + ']'))
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
try: load = open('/proc/loadavg').read().split()[0]
except OSError: load = '?'
nr = max([r for d in floor.values() for r in d] + [r for d in res.values() for i in d.values() for r in i] + [0])
lines = ['# collbench vs MPI, %s' % datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC'), '',
         'Machine: %s, %d CPUs (%s), load average %s at the end. Command: `bench/run-bench.sh %s` (%d rounds).' % (
             platform.node(), len(open('/proc/cpuinfo').read().split('processor')) - 1, cpu, load, args, nr), '',
         'Times: slowest rank\'s average per call (us), median over rounds [min-max]. '
         'floor: the least bytes (docs/performance.md) over the copy/reduce rates measured in the same round, '
         'bound by memory (mem) or by cores (core); "% fl" = floor / time, round by round, median. '
         'ratio = better MPI time / collbench time, round by round, median [min-max]; >1 means collbench is faster.', '',
         '| collective | ranks | size | floor us | collbench us | % fl | algo | -z us | % fl | Open MPI us | % fl | MPICH us | % fl | ratio | ratio -z |',
         '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
rates = []
for key, d in res.items():
    coll, p, b = key
    fl = floor.get(key, {})
    def col(impl):
        rr = d.get(impl, {})
        ts = [t for t, _ in rr.values()]
        pc = [100 * fl[r]['us'] / rr[r][0] for r in rr if r in fl and rr[r][0] > 0]
        return spread(ts, '%.1f' if ts and med(ts) >= 10 else '%.2f'), spread(pc)
    def ratio(impl):
        rs = []
        for r, (t, _) in d.get(impl, {}).items():
            m = [d[x][r][0] for x in ('openmpi', 'mpich') if r in d.get(x, {})]
            if m and t > 0: rs.append(min(m) / t)
        return spread(rs, '%.2f')
    fus = [v['us'] for v in fl.values()]
    bound = collections.Counter(v['bound'] for v in fl.values()).most_common(1)[0][0] if fl else ''
    cb, cz, om, mp = col('collbench'), col('collbench-z'), col('openmpi'), col('mpich')
    lines.append('| %s | %d | %s | %s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
        coll, p, human(b), spread(fus), bound, cb[0], cb[1], algo.get(('collbench',) + key, ''),
        cz[0], cz[1], om[0], om[1], mp[0], mp[1], ratio('collbench'), ratio('collbench-z')))
    if fl:
        v0 = next(iter(fl.values()))
        g = lambda k: spread([v[k] for v in fl.values()], '%.2f')
        rates.append('| %s | %d | %s | %.4g | %.4g | %d | %s | %s | %s | %s |' % (
            coll, p, human(b), v0['copy'] / (1 << 20), (v0['rd'] + v0['wr']) / (1 << 20), v0['k'],
            g('c1') if v0['copy'] else '-', g('ck') if v0['copy'] else '-',
            g('r1') if v0['rd'] else '-', g('rk') if v0['rd'] else '-'))
cpus = []
for key in res:
    if key not in cpu_t: continue
    def cc(impl):
        d = cpu_t[key].get(impl, {})
        t = res[key].get(impl, {})
        xs = list(d.values())
        share = [d[r] / t[r][0] for r in d if r in t and t[r][0] > 0]
        return '-' if not xs else '%s (%s)' % (spread(xs), num(med(share)) if share else '-')
    cpus.append('| %s | %d | %s | %s | %s | %s | %s |' % (key[0], key[1], human(key[2]),
                cc('collbench'), cc('collbench-z'), cc('openmpi'), cc('mpich')))
if cpus:
    lines += ['', 'CPU time per call (user + system, all ranks together, us), median [min-max] over rounds, '
              'and in parentheses the cores it ran on on average (CPU time / time, median): on a loaded '
              'machine a side is slow either because it needs more CPU per call or because it got fewer cores.', '',
              '| collective | ranks | size | collbench | -z | Open MPI | MPICH |', '|---|---|---|---|---|---|---|'] + cpus
if rates:
    lines += ['', 'The floors\' inputs: MiB copied and MiB read + written by the reduction (all ranks), '
              'k = cores the p ranks can use, rates in GB/s (copy: bytes copied; reduce: bytes of c = a + b) '
              'at the row\'s working set on 1 and k threads, median [min-max] over rounds.', '',
              '| collective | ranks | size | copy MiB | reduce MiB | k | copy 1 | copy k | reduce 1 | reduce k |',
              '|---|---|---|---|---|---|---|---|---|---|'] + rates
if c2c:
    rounds = sorted({r for d in c2c.values() for r in d})
    lines += ['', 'Placement: the cross-core round trip (bench/c2c, ns) before / after each run (before: after '
              'waiting up to -W s for it to fall under twice the smallest of 5 taken at the start). Far '
              'placement (~300 ns and more on the EPYC VM, against ~60-100 ns near) makes the staged '
              'collectives 3-5x slower (docs/performance.md "Slow launches"): a row whose range holds such a '
              'round was measured partly in it.', '',
              '| ranks | implementation | ' + ' | '.join('round %d' % r for r in rounds) + ' |',
              '|---|---|' + '---|' * len(rounds)]
    for (p, impl), d in c2c.items():
        lines.append('| %d | %s | %s |' % (p, impl, ' | '.join(' / '.join(d.get(r, ['-'])) for r in rounds)))
text = '\n'.join(lines) + '\n'
print(text)
if out:
    open(out, 'w').write(text)
PY
