#!/usr/bin/env bash
# bench/sim-calibrate.sh - does `collbench sim` predict what the real library
# does? Builds namespace hosts (tests/lib/netns.sh) whose links are limited
# with tc tbf in both directions (the host's cbeth0 = what it sends, the
# switch's end h<i>e0 = what it receives), writes a calibration file per link
# rate with the measuring tools (collbench net: bandwidth and latency between
# cbh1 and cbh2; collbench bw -t d2d: copy and reduction rates, cores, the
# copy rate per core while all copy; collbench bw -t hosts: what the cores
# push through TCP with the setup's ranks streaming on every host), runs
# all_reduce_test, all_gather_test and alltoall_test from 1 MiB up across the
# hosts (torchrun-style launch as tests/mp/31-multihost-env.sh) and predicts
# the same rows with `collbench sim --calibration FILE`. Prints and writes the
# table: setup, collective, size, measured (median of the repeats, and their
# spread), predicted, error %, and the algorithm each picked.
#
#   bench/sim-calibrate.sh [-o FILE.md] [-k REPEATS] [-n ITERS] [-N ITERS] [-e MAXSIZE] [-P] [SETUP ...]
#     SETUP   HOSTSxRANKS@GBIT, e.g. 2x1@1 4x4@5 (default: 2x1@1 2x4@1 4x1@5 4x2@5 4x4@5)
#     -k      repeats of every measured row (default 3; the median is compared)
#     -n      timed iterations per run from 16M up (default 3, after 1 warm-up)
#     -N      timed iterations per run below 16M (default 20)
#     -e      largest size (default 64M; sizes 1M, 4M, 16M, 64M)
#     -P      predict only, from the raw measurements of an earlier run (after a
#             change to the link model: no namespaces, seconds)
#     -C      as -P, but first write the calibration files again (now: not the load of the measurements)
#     -B      predict with the links' tbf bucket (--net-burst-bytes) over the measured runs' iterations
#             (--iters, --warmup 1); not the default: it fitted worse (docs/sim-calibration.md)
#     -o      results file (default bench/results/sim-calibration-<date>.md)
#     SIMCAL_BIN=DIR  measure with the executables in DIR (default bin/); predictions use bin/collbench
# Needs root (namespaces, tc). The namespace hosts share this machine's CPUs:
# the sim is told so with --cores-per-host (nproc / hosts), see docs/sim-calibration.md.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=bench/results/sim-calibration-$(date +%Y%m%d).md REP=3 NI=3 NS=20 MAXS=64M PREDICT_ONLY=0 RECAL=0 BUCKET=0
while getopts "o:k:n:N:e:PCBh" o; do
    case $o in
        o) OUT=$OPTARG ;; k) REP=$OPTARG ;; n) NI=$OPTARG ;; N) NS=$OPTARG ;; e) MAXS=$OPTARG ;; P) PREDICT_ONLY=1 ;;
        C) PREDICT_ONLY=1 RECAL=1 ;; B) BUCKET=1 ;;
        *) sed -n '2,29p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
SETUPS=("$@")
[ ${#SETUPS[@]} -gt 0 ] || SETUPS=(2x1@1 2x4@1 4x1@5 4x2@5 4x4@5)
for s in "${SETUPS[@]}"; do
    [[ $s =~ ^([2-4])x([1-4])@([0-9]+)$ ]] ||
        { echo "sim-calibrate: invalid setup '$s' (allowed: HOSTSxRANKS@GBIT with 2..4 hosts, 1..4 ranks, e.g. 4x2@5)" >&2; exit 2; }
done
[[ $REP =~ ^[1-9][0-9]*$ ]] || { echo "sim-calibrate: invalid -k '$REP' (allowed: 1 or more)" >&2; exit 2; }
[[ $NI =~ ^[1-9][0-9]*$ ]] || { echo "sim-calibrate: invalid -n '$NI' (allowed: 1 or more)" >&2; exit 2; }
[[ $NS =~ ^[1-9][0-9]*$ ]] || { echo "sim-calibrate: invalid -N '$NS' (allowed: 1 or more)" >&2; exit 2; }
[[ $MAXS =~ ^[0-9]+[KM]$ ]] || { echo "sim-calibrate: invalid -e '$MAXS' (allowed: a size like 16M)" >&2; exit 2; }
BIN=${SIMCAL_BIN:-$ROOT/bin}   # the measured executables (a copy lets a rebuild run beside a long measurement)
for b in collbench all_reduce_test all_gather_test alltoall_test; do
    [ -x "$BIN/$b" ] || { echo "missing $BIN/$b (make)" >&2; exit 1; }
done
RAW=$ROOT/build/bench/sim-calibrate
COLLS="allreduce allgather alltoall"
exe() { case $1 in allreduce) echo all_reduce_test ;; allgather) echo all_gather_test ;; alltoall) echo alltoall_test ;; esac; }
NCPU=$(nproc)

# tbf on both directions of every host's link (tests/lib/netns.sh)
limit() { netns_tbf "$1"; }   # limit GBIT

port=29700
calibrate() {   # calibrate GBIT FILE LAYOUT: the measuring runs write FILE (between cbh1 and cbh2; the
    # TCP CPU cost on every host of the setup, LAYOUT = its ranks per host, e.g. "4 4 4 4")
    local f=$2 layout=$3 i
    rm -f "$f"
    net_run() {   # net_run NAME CLIENT-ARGS...
        local name=$1
        shift
        port=$((port + 1))
        netns_exec 2 timeout 60 "$BIN/collbench" net -p "$port" --timeout 30 >/dev/null 2>&1 &
        netns_exec 1 timeout 60 "$BIN/collbench" net 10.77.0.2 -p "$port" --retry 10 "$@" --calibration-out "$f" \
            >"$RAW/net-$name-$g.out" 2>&1 || { cat "$RAW/net-$name-$g.out"; return 1; }
        wait
    }
    local g=$1
    net_run bw -s 1M -D 3 || return 1            # net_gbps: one TCP stream through the tbf link
    net_run lat --lat -n 2000 || return 1        # net_us: small messages (what the init probe sees)
    # net_step_us: one ring step, a lockstep exchange of one COLL_CHUNK (256K) each way through
    # libcoll. p2p reports a mean, which a single stall of several ms can double: 5 short runs,
    # each writing a copy of the file, and the copy with the median net_step_us is kept.
    local k
    for k in 1 2 3 4 5; do
        cp "$f" "$f.p2p$k"
        port=$((port + 1))
        NETNS_MASTER_PORT=$port netns_env_launch "$RAW/p2p-$g" "1 1" "$BIN/collbench" bw -t p2p -s 256K -et 10 \
            --calibration-out "$f.p2p$k" >&2 || return 1
    done
    k=$(for k in 1 2 3 4 5; do awk -F' *= *' -v k=$k '$1 == "net_step_us" {print $2, k}' "$f.p2p$k"; done | sort -n | sed -n 3p)
    mv "$f.p2p${k#* }" "$f" && rm -f "$f".p2p?
    # shm_gbps, reduce_gbps, cores_per_host, copy_core_gbps (the all-cores memcpy / cores: memory bandwidth)
    netns_exec 1 timeout 120 "$BIN/collbench" bw -t d2d -s 64M -et 10 --method memcpy --calibration-out "$f" >"$RAW/d2d-$g.out" 2>&1 || { cat "$RAW/d2d-$g.out"; return 1; }
    # net_cpu_gbps: what the shared cores push through TCP with the setup's own concurrency: every
    # rank of every host streams to the next host at once (bw -t hosts), without the rate limit;
    # 3 runs, each writing a copy of the file, and the copy with the median net_cpu_gbps is kept
    netns_tbf off
    for k in 1 2 3; do
        cp "$f" "$f.cpu$k"
        port=$((port + 1))
        NETNS_MASTER_PORT=$port netns_env_launch "$RAW/cpu-$g" "$layout" "$BIN/collbench" bw -t hosts -s 4M -et 16 \
            --calibration-out "$f.cpu$k" >&2 || { cat "$RAW/cpu-$g".r0.err >&2; return 1; }
        cat "$RAW/cpu-$g.r0.out" >>"$RAW/cpu-$g.out"
    done
    k=$(for k in 1 2 3; do awk -F' *= *' -v k=$k '$1 == "net_cpu_gbps" {print $2, k}' "$f.cpu$k"; done | sort -n | sed -n 2p)
    mv "$f.cpu${k#* }" "$f" && rm -f "$f".cpu?
    # for comparison only (the table's last line): FILE.net2 = FILE with the earlier net_cpu_gbps,
    # one 2-host stream both ways (collbench net -b -q 2 --calibration-cpu between cbh1 and cbh2)
    cp "$f" "$f.net2"
    port=$((port + 1))
    netns_exec 2 timeout 60 "$BIN/collbench" net -p "$port" --timeout 30 >/dev/null 2>&1 &
    netns_exec 1 timeout 60 "$BIN/collbench" net 10.77.0.2 -p "$port" --retry 10 -s 1M -D 3 -b -q 2 --calibration-cpu \
        --calibration-out "$f.net2" >"$RAW/net-cpu-$g.out" 2>&1 || { cat "$RAW/net-cpu-$g.out"; return 1; }
    wait
    limit "$g"
}

# The measured sweeps "BEGIN:END:ITERS": the sizes below 16M get NS timed iterations (a 1M row of
# 3 iterations is ~3 ms of traffic, against which tbf's 2 ms bucket, full after the driver's set-up
# between sizes, let 1M rows run up to 30% faster than the link: 20 iterations make it < 10%).
sweeps_of() {
    local m=$(($(size_bytes "$MAXS") >> 20))
    if [ "$m" -ge 16 ]; then echo "1M:4M:$NS 16M:$MAXS:$NI"; else echo "1M:$MAXS:$NS"; fi
}
size_bytes() { case $1 in *K) echo $((${1%K} << 10)) ;; *M) echo $((${1%M} << 20)) ;; *) echo "$1" ;; esac; }

measure() {   # measure SETUP: raw rows "setup coll bytes time_us algo"
    local s=$1 h l g layout="" k c rep out
    h=${s%%x*} l=${s#*x}; l=${l%@*} g=${s#*@}
    for k in $(seq 1 "$h"); do layout="$layout $l"; done
    limit "$g" || return 1
    # calibrated right before and right after the setup's measurements (the load on the shared
    # machine moves by the minute); the file the sim reads holds the mean of the two
    calibrate "$g" "$RAW/calib-$s.before" "$layout" || return 1
    for rep in $(seq 1 "$REP"); do
        for c in $COLLS; do
            # 1M and 4M with NS timed iterations, 16M up with NI (sweeps_of)
            for sw in $(sweeps_of); do
                IFS=: read -r b e n <<<"$sw"
                port=$((port + 1))
                out=$RAW/run-$s-$c-$rep-$b
                NETNS_MASTER_PORT=$port NETNS_RANK0_ENV="COLL_DEBUG=DEBUG COLL_DEBUG_SUBSYS=TUNING" \
                    netns_env_launch "$out" "$layout" "$BIN/$(exe "$c")" -b "$b" -e "$e" -f 4 -n "$n" -w 1 -c 0 >&2 ||
                    { echo "sim-calibrate: $s $c repeat $rep ($b..$e) failed (see $out.r*.err)" >&2; continue; }
                python3 - "$s" "$c" "$out.r0.out" "$out.r0.err" >>"$RAW/measured" <<'PY'
import re, sys
s, c, outf, errf = sys.argv[1:5]
# the i-th size of the sweep is the i-th distinct size the TUNING log names for this collective
# (the log's bytes may be per rank; the driver's 16-byte timing allreduces are left out)
algos, seen = [], set()
for l in open(errf, errors="replace"):
    m = re.search(r" %s (\d+) bytes on \d+ ranks: algorithm (\w+)" % c, l)
    if m and int(m.group(1)) > 64 and m.group(1) not in seen:
        seen.add(m.group(1)); algos.append(m.group(2))
rows = [l.split("|") for l in open(outf) if re.match(r"^\d+ +\|", l)]
for i, r in enumerate(rows):
    print(s, c, int(r[0]), "%.2f" % float(r[1]), algos[i] if i < len(algos) else "-")
PY
            done
            echo "  $s $c repeat $rep: $(awk -v s="$s" -v c="$c" '$1 == s && $2 == c {printf "%s:%s ", $3, $4}' "$RAW/measured" | tail -c 200)" >&2
        done
    done
    calibrate "$g" "$RAW/calib-$s.after" "$layout" || return 1
    local x
    for x in "" .net2; do
        awk -F' *= *' 'FNR == 1 { n++ } /^#/ { print; next } NF == 2 { v[$1] += $2; if (!($1 in seen)) { seen[$1] = 1; k[++nk] = $1 } }
            END { print "# the mean of the two calibrations above"; for (i = 1; i <= nk; i++) printf "%s = %.10g\n", k[i], v[k[i]] / n }' \
            "$RAW/calib-$s.before$x" "$RAW/calib-$s.after$x" >"$RAW/calib-$s.txt$x"
    done
}

if [ "$PREDICT_ONLY" = 0 ]; then
    [ "$(id -u)" = 0 ] || { echo "sim-calibrate: needs root (network namespaces, tc)" >&2; exit 1; }
    rm -rf "$RAW"
    mkdir -p "$RAW"
    . tests/lib/netns.sh
    maxh=2
    for s in "${SETUPS[@]}"; do h=${s%%x*}; [ "$h" -gt $maxh ] && maxh=$h; done
    export NETNS_RANK_TIMEOUT=300 COLL_EXEC_TIMEOUT=200
    : >"$RAW/measured"
    for s in "${SETUPS[@]}"; do
        h=${s%%x*}
        # a fresh set of hosts per setup: only the hosts of the setup exist (no idle links)
        netns_up "$h" >/dev/null || exit 1
        trap 'netns_down >/dev/null 2>&1' EXIT
        echo "setup $s" >&2
        measure "$s"
        netns_down >/dev/null 2>&1
    done
    printf '%s\n' "${SETUPS[@]}" >"$RAW/setups"
    echo "$REP $NI $MAXS $NCPU $NS" >"$RAW/params"
fi
[ -s "$RAW/measured" ] || { echo "sim-calibrate: no measurements in $RAW (run without -P first)" >&2; exit 1; }
read -r REP NI MAXS NCPU NS <"$RAW/params"
NS=${NS:-$NI}
mapfile -t SETUPS <"$RAW/setups"
if [ "$RECAL" = 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "sim-calibrate: needs root (network namespaces, tc)" >&2; exit 1; }
    . tests/lib/netns.sh
    for s in "${SETUPS[@]}"; do
        h=${s%%x*} l=${s#*x}; l=${l%@*} g=${s#*@}
        netns_up "$h" >/dev/null || exit 1
        trap 'netns_down >/dev/null 2>&1' EXIT
        limit "$g" && calibrate "$g" "$RAW/calib-$s.txt" "$(printf "$l %.0s" $(seq 1 "$h"))" || exit 1
        netns_down >/dev/null 2>&1
    done
fi

# -B: the links' tbf bucket in bytes (tests/lib/netns.sh netns_tbf: NETNS_TBF_BURST, default GBIT x 256
# kb; tc's kb and k are 1024 bytes): the sim drains it as tbf does (--net-burst-bytes), over as many calls
# back to back as the measured runs made (--iters, after --warmup 1: the bucket is full before it)
burst_of() {
    local b=${NETNS_TBF_BURST:-$(($1 * 256))kb}
    case $b in
        *kb | *k) echo $((${b%k*} * 1024)) ;; *mb | *m) echo $((${b%m*} * 1048576)) ;; *) echo "$b" ;;
    esac
}

# predictions: one sim sweep per setup, collective and iteration count
: >"$RAW/predicted"
rm -f "$RAW/predicted.net2"
for s in "${SETUPS[@]}"; do
    h=${s%%x*} l=${s#*x}; l=${l%@*} g=${s#*@}
    hl=$(printf "$l,%.0s" $(seq 1 "$h")); hl=${hl%,}
    for x in "" .net2; do   # .net2: the earlier 2-host net_cpu_gbps, where measured (comparison only)
        [ -z "$x" ] || [ -f "$RAW/calib-$s.txt$x" ] || continue
        # the H namespace hosts share this machine's cores and its last-level cache (the file's
        # cache_bytes, from collbench bw -t d2d): each gets 1/H of both
        llc=$(awk '$1 == "cache_bytes" {print $3}' "$RAW/calib-$s.txt$x"); llc=${llc:-0}
        for c in $COLLS; do
          for sw in $(sweeps_of); do
            IFS=: read -r b e n <<<"$sw"
            bin/collbench sim -H "$hl" -c "$c" -b "$b" -e "$e" -f 4 --calibration "$RAW/calib-$s.txt$x" \
                --cores-per-host "$(awk -v n="$NCPU" -v h="$h" 'BEGIN {print n / h}')" \
                --cache-bytes "$(awk -v b="$llc" -v h="$h" 'BEGIN {printf "%.0f", b / h}')" \
                $([ "$BUCKET" = 1 ] && echo "--net-burst-bytes $(burst_of "$g") --iters $n --warmup 1") --json |
                python3 -c 'import json,sys
s, c = sys.argv[1:3]
for r in json.load(sys.stdin)["rows"]:
    print(s, c, r["bytes"], "%.2f" % r["time_us"], r["algorithm"])' "$s" "$c" >>"$RAW/predicted$x" || exit 1
          done
        done
    done
done

{
    echo "# collbench sim against measurements: namespace hosts with tc tbf links - $(date +%Y-%m-%d)"
    echo
    [ "$PREDICT_ONLY" = 1 ] && echo "Predictions re-made from the raw measurements and calibration files of the run below: \`bench/sim-calibrate.sh -P$([ "$BUCKET" = 1 ] && echo " -B")$([ "$RECAL" = 1 ] && echo " -C")\`."
    echo "Generated by \`bench/sim-calibrate.sh -k $REP -n $NI -N $NS -e $MAXS$([ "$BUCKET" = 1 ] && echo " -B") ${SETUPS[*]}\` (as root); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $NCPU CPUs shared by every namespace host (and by the other engineers' builds), kernel $(uname -r)."
    echo "Setup HxL@G: H hosts x L ranks, every host's link limited to G Gbit/s each way (tbf on both ends of its veth)."
    echo "Measured: rank 0's aveg_time (slowest rank) of \`-n $NS -w 1 -c 0\` below 16M, \`-n $NI -w 1 -c 0\` from 16M, median of $REP repeats, spread = (max - min) / median."
    echo "Predicted: \`collbench sim -H L,..,L -c C -b B -e E -f 4 --calibration calib-HxL@G.txt --cores-per-host $NCPU/H --cache-bytes LLC/H$([ "$BUCKET" = 1 ] && echo " --net-burst-bytes TBF --iters N --warmup 1")\` for the sweeps measured (LLC: the file's cache_bytes$([ "$BUCKET" = 1 ] && echo "; TBF: the links' tbf bucket, G x 256 KiB; N: the measured runs' iterations")), the calibration file of the setup: the mean of the measuring runs right before and right after its measurements (below)."
    echo "Error = (predicted - measured) / measured."
    echo
    python3 - "$RAW/measured" "$RAW/predicted" "$RAW/predicted.net2" <<'PY'
import os, sys, statistics, collections
meas = collections.defaultdict(list); malgo = {}
for l in open(sys.argv[1]):
    s, c, b, t, a = l.split(); meas[(s, c, int(b))].append(float(t)); malgo[(s, c, int(b))] = a
pred = {}
for l in open(sys.argv[2]):
    s, c, b, t, a = l.split(); pred[(s, c, int(b))] = (float(t), a)
print("| setup | collective | size | measured us (median) | spread | predicted us | error % | real algorithm | sim algorithm |")
print("|---|---|---|---|---|---|---|---|---|")
errs = []
for k in sorted(pred, key=lambda k: (list(dict.fromkeys(x[0] for x in pred)).index(k[0]), k[1], k[2])):
    p, pa = pred[k]
    if k not in meas:
        print("| %s | %s | %dM | - | - | %.0f | - | - | %s |" % (k[0], k[1], k[2] >> 20, p, pa)); continue
    m = statistics.median(meas[k]); sp = (max(meas[k]) - min(meas[k])) / m
    e = (p - m) / m * 100; errs.append(abs(e))
    flag = "" if abs(e) <= 25 else " **"
    print("| %s | %s | %dM | %.0f | %.0f%% (n=%d) | %.0f | %+.1f%s | %s | %s |" % (k[0], k[1], k[2] >> 20, m, sp * 100, len(meas[k]), p, e, flag, malgo[k], pa))
if errs:
    print()
    print("%d rows: %d within +-25%%, median |error| %.1f%%, largest %.1f%%." % (len(errs), sum(1 for e in errs if e <= 25), statistics.median(errs), max(errs)))
if os.path.exists(sys.argv[3]):   # the same rows with the earlier 2-host net_cpu_gbps, where measured
    e2 = []
    for l in open(sys.argv[3]):
        s, c, b, t, a = l.split(); k = (s, c, int(b))
        if k in meas:
            m = statistics.median(meas[k]); e2.append(abs((float(t) - m) / m * 100))
    if e2:
        print("With net_cpu_gbps from one 2-host stream instead (collbench net -b -q 2 --calibration-cpu, the earlier calibration): %d rows, %d within +-25%%, median |error| %.1f%%, largest %.1f%%." % (len(e2), sum(1 for e in e2 if e <= 25), statistics.median(e2), max(e2)))
PY
    echo
    echo "Calibration files (as the measuring runs wrote them):"
    for f in "$RAW"/calib-*.txt; do
        echo
        echo "\`$(basename "$f")\`:"
        echo '```'
        grep -v '^$' "$f"
        echo '```'
    done
} >"$OUT.new"
mv "$OUT.new" "$OUT"
cat "$OUT"
echo "results: $OUT (raw: $RAW)" >&2
