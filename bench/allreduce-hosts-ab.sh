#!/usr/bin/env bash
# bench/allreduce-hosts-ab.sh - AllReduce (64 MiB, or -s) between two simulated hosts
# (tests/lib/netns.sh, one rank each) under several collbench settings and
# MPICH's MPI_Allreduce over TCP (UCX_TLS=tcp,self), interleaved round by
# round so that all see the same state of a shared machine. Per round: busbw
# of each (all_reduce_test's --json, mpi_bench's RESULT) and each setting's
# ratio to MPICH of that round, and the floor of that round (bench/hostfloor.sh:
# the link's duplex capacity, the better of iperf3 --bidir and collbench bw -t
# p2p both ways, plus the reduction each rank must do, docs/performance.md
# "Across hosts") with each figure as % of it; at the end the median ratio and
# the median % of the floor [lowest-highest] per setting. The table and the
# commands go into a markdown file.
#
#   bench/allreduce-hosts-ab.sh [-o FILE.md] [-r ROUNDS] [-n ITERS] [-s SIZE] [-g GBIT] [SETTING ...]
#     -o  results file (default bench/results/allreduce-hosts-ab-<date>.md)
#     -g  limit each host's link to GBIT Gbit/s each way (tc tbf on both ends of
#         its veth, as bench/sim-calibrate.sh): the wire, not the 2 shared
#         cores, is then the floor, and the duplex capacity the tools measure is
#         the rate set (an unlimited veth is CPU-bound: its measured capacity
#         moves with the load, and collectives were seen at 63-155% of it)
#     -s  message size (default 64M; K/M suffixes)
#     -r  rounds (default 6)
#     -n  timed iterations per run (default 20, after 5 warm-up)
#     SETTING: "default" or comma-separated VAR=VALUE for both ranks, e.g.
#              COLL_TCP_SPIN_US=0 or COLL_NSOCKS=4,COLL_SOCK_BUF=16M
#              (default: default COLL_TCP_SPIN_US=0)
# Needs root (namespaces), mpicc.mpich and sshd (mpirun reaches the hosts by
# ssh into the namespaces). All traffic stays in 10.77.0.0/24.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=bench/results/allreduce-hosts-ab-$(date +%Y%m%d).md ROUNDS=6 NI=20 SIZE=64M GBIT=
while getopts "o:r:n:s:g:h" o; do
    case $o in
        o) OUT=$OPTARG ;; r) ROUNDS=$OPTARG ;; n) NI=$OPTARG ;; s) SIZE=$OPTARG ;; g) GBIT=$OPTARG ;;
        *) sed -n '2,20p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[[ $SIZE =~ ^[0-9]+[KM]?$ ]] || { echo "allreduce-hosts-ab: invalid -s '$SIZE': allowed a byte count with optional K or M (e.g. 8K, 64M)" >&2; exit 2; }
[ -z "$GBIT" ] || { [[ $GBIT =~ ^[0-9]+$ ]] && [ "$GBIT" -ge 1 ] && [ "$GBIT" -le 100 ]; } ||
    { echo "allreduce-hosts-ab: invalid -g '$GBIT': allowed a whole number of Gbit/s from 1 to 100" >&2; exit 2; }
SETTINGS=("$@")
[ ${#SETTINGS[@]} -gt 0 ] || SETTINGS=(default COLL_TCP_SPIN_US=0)
for s in "${SETTINGS[@]}"; do
    [ "$s" = default ] && continue
    for kv in ${s//,/ }; do
        [[ $kv =~ ^COLL_[A-Z0-9_]+=[^,[:space:]]+$ ]] ||
            { echo "allreduce-hosts-ab: invalid setting '$kv': allowed 'default' or COLL_VAR=VALUE[,...]" >&2; exit 2; }
    done
done
[ -x bin/all_reduce_test ] || { echo "missing bin/all_reduce_test (make)" >&2; exit 1; }
command -v mpicc.mpich >/dev/null || { echo "missing mpicc.mpich (scripts/install-deps.sh)" >&2; exit 1; }
. tests/lib/netns.sh
. tests/lib/netns_extra.sh
. bench/hostfloor.sh
BB=$ROOT/build/bench RAW=$ROOT/build/bench/allreduce-ab-raw
rm -rf "$RAW"
mkdir -p "$RAW" "$(dirname "$OUT")"
mpicc.mpich -O2 -Ibench -o "$BB/mpi_bench.mpich" bench/mpi_bench.c || exit 1
hostfloor_build || exit 1
TUN="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=8589934592"   # as bench/run-bench.sh
netns_up 2 >/dev/null || exit 1
trap 'netns_down >/dev/null 2>&1' EXIT
netns_own_sysfs >/dev/null || exit 1   # UCX sees cbeth0 only with a sysfs of the host's own
netns_sshd_up >/dev/null || exit 1
if [ -n "$GBIT" ]; then   # both directions of both links; burst as sim-calibrate.sh
    for i in 1 2; do
        netns_exec "$i" tc qdisc replace dev cbeth0 root tbf rate "${GBIT}gbit" burst "$((GBIT * 256))kb" latency 20ms || exit 1
        nsenter -t "$NETNS_SWITCH" -n tc qdisc replace dev "h${i}e0" root tbf rate "${GBIT}gbit" burst "$((GBIT * 256))kb" latency 20ms || exit 1
    done
fi
printf '10.77.0.1:1\n10.77.0.2:1\n' >"$RAW/hf.mpich"
export NETNS_RANK_TIMEOUT=300 COLL_EXEC_TIMEOUT=120
port=29900

# collbench SETTING -> busbw GB/s (empty on failure)
collbench() {
    port=$((port + 1))
    local f=$RAW/cb.json kv
    rm -f "$f"
    (
        [ "$1" = default ] || for kv in ${1//,/ }; do export "${kv?}"; done
        NETNS_MASTER_PORT=$port netns_env_launch "$RAW/cb" "1 1" "$ROOT/bin/all_reduce_test" \
            -b "$SIZE" -e "$SIZE" -n "$NI" -w 5 -c 0 --json "$f" >/dev/null
    )
    python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["results"][0]["busbw_gbs"])' "$f" 2>/dev/null
}
mpich() {
    netns_exec 1 timeout 300 mpirun.mpich -launcher ssh -launcher-exec "$NETNS_SSH_WRAPPER" \
        -f "$RAW/hf.mpich" -n 2 -genv GLIBC_TUNABLES "$TUN" -genv UCX_TLS tcp,self \
        "$BB/mpi_bench.mpich" -c allreduce -s "$SIZE" -n "$NI" -w 5 -r 1 -l mpich-tcp >"$RAW/mpich.out" 2>&1
    awk '$1 == "RESULT" {printf "%.3f", $8; exit}' "$RAW/mpich.out"
}

: >"$RAW/rows"
: >"$RAW/floors"
for r in $(seq 1 "$ROUNDS"); do
    row="$r"
    for s in "${SETTINGS[@]}"; do v=$(collbench "$s"); row="$row ${v:--}"; done
    m=$(mpich)
    row="$row ${m:--}"
    # the floor of this round: duplex capacity now, the better of the two tools
    port=$((port + 1))
    di=$(hostfloor_iperf3_bidir 3 "$RAW/iperf3-bidir.$r.json")
    dp=$(hostfloor_p2p_bidir $port "$RAW/p2p.$r")
    dx=$(printf '%s\n%s\n' "${di:-0}" "${dp:-0}" | sort -g | tail -1)
    read -r fl nu bytes <<<"$(hostfloor_floor allreduce 2 2 "$SIZE" "$dx")"
    pcts=
    for v in ${row#* }; do pcts="$pcts $(hostfloor_pct "${fl:-0}" allreduce 2 "${bytes:-0}" "$v" || echo -)"; done
    echo "round $r: ${row#* }  (settings in order, then MPICH); duplex iperf3 ${di:--} p2p ${dp:--} GB/s," \
        "floor ${fl:--} us (link ${nu:--}), % of floor:$pcts"
    echo "$row" >>"$RAW/rows"
    echo "$r ${di:--} ${dp:--} ${fl:--} ${nu:--} ${bytes:--}$pcts" >>"$RAW/floors"
done

{
    echo "# AllReduce $SIZE, 2 namespace hosts x 1 rank: collbench settings vs MPICH over TCP - $(date +%Y-%m-%d)"
    echo
    echo "Generated by \`${HOSTFLOOR_P2P_ET:+HOSTFLOOR_P2P_ET=$HOSTFLOOR_P2P_ET }bench/allreduce-hosts-ab.sh -r $ROUNDS -n $NI -s $SIZE${GBIT:+ -g $GBIT} ${SETTINGS[*]}\`; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r)."
    echo "Busbw GB/s (= algbw for 2 ranks); each round runs every setting and MPICH back to back, then measures the floor; ratio = collbench / MPICH of the same round;"
    echo "% fl = the round's floor / the time (docs/performance.md \"Across hosts\": 2 (H-1)/H S over the duplex capacity / 2 each way, plus the reduction at this machine's rates)."
    echo "Duplex capacity: both directions at once, summed: iperf3 --bidir -P 2 -t 3 and collbench bw -t p2p -s 64M (bidirectional); the floor takes the better."
    echo
    printf '| round |'; for s in "${SETTINGS[@]}"; do printf ' %s |' "$s"; done
    echo ' MPICH (UCX_TLS=tcp,self) | duplex GB/s iperf3 / p2p | floor ms (link alone) |'
    printf '|---|'; for _ in "${SETTINGS[@]}"; do printf -- '---|'; done; echo '---|---|---|'
    python3 - "$RAW/rows" "$RAW/floors" "${#SETTINGS[@]}" "${SETTINGS[@]}" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
fls = {l.split()[0]: l.split() for l in open(sys.argv[2]) if l.strip()}
n = int(sys.argv[3]); names = sys.argv[4:4 + n] + ["MPICH"]
ratios = [[] for _ in range(n)]
pct = [[] for _ in range(n + 1)]
def num(x):
    try: return float(x)
    except ValueError: return None
for r in rows:
    m = num(r[-1]); cells = []
    f = fls.get(r[0], [r[0]] + ["-"] * (7 + n))
    for i in range(n + 1):
        v, pc = num(r[1 + i]), num(f[6 + i])
        if pc is not None: pct[i].append(pc)
        ps = ", %.0f%% fl" % pc if pc is not None else ""
        if i < n and v is not None and m:
            ratios[i].append(v / m); cells.append("%.3f (%.2fx%s)" % (v, v / m, ps))
        else:
            cells.append(r[1 + i] + (" (%s)" % ps[2:] if ps else ""))
    ms = lambda x: "%.1f" % (float(x) / 1e3) if num(x) is not None else "-"
    print("| %s | %s | %s / %s | %s (%s) |" % (r[0], " | ".join(cells), f[1], f[2], ms(f[3]), ms(f[4])))
print()
for i in range(n + 1):
    q, pc = ratios[i] if i < n else [], pct[i]
    if q:
        print("- %s: median %.2fx MPICH, lowest %.2fx, highest %.2fx, >= 1.5x in %d of %d rounds"
              % (names[i], statistics.median(q), min(q), max(q), sum(1 for x in q if x >= 1.5), len(q)), end="")
    else:
        print("- %s" % names[i], end="")
    if pc:
        print("%s %% of floor median %.0f%% [%.0f-%.0f%%] over %d rounds"
              % (";" if q else ":", statistics.median(pc), min(pc), max(pc), len(pc)))
    else:
        print("%s no floor" % (";" if q else ":"))
PY
    echo
    echo "Commands (as root, from the repository root; \`cbhN:\` = inside host N's namespaces):"
    echo
    echo '```'
    echo "cbh1+cbh2: RANK=0/1 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=10.77.0.1 MASTER_PORT=<port> [SETTING] all_reduce_test -b $SIZE -e $SIZE -n $NI -w 5 -c 0 --json <f>"
    echo "cbh2: iperf3 -s -1 -p 5202; cbh1: iperf3 -c 10.77.0.2 -p 5202 --bidir -P 2 -t 3 -J"
    echo "cbh1+cbh2: (as above) collbench bw -t p2p -s 64M -et ${HOSTFLOOR_P2P_ET:-40} --ds 0 --dd 0 -fmt json   (bidirectional figure)"
    echo "build/bench/roofline -c allreduce -p 2 -H 2 -s $SIZE -D <the better duplex GB/s> -t 10   (floor_us = last field)"
    echo "cbh1: mpirun.mpich -launcher ssh -launcher-exec <ssh -F wrapper> -f hf.mpich(10.77.0.1:1, 10.77.0.2:1) -n 2 -genv GLIBC_TUNABLES $TUN -genv UCX_TLS tcp,self build/bench/mpi_bench.mpich -c allreduce -s $SIZE -n $NI -w 5 -r 1"
    echo '```'
} >"$OUT"
echo "results: $OUT (raw: $RAW)"
