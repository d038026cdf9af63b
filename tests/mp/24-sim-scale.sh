#!/usr/bin/env bash
# timeout: 300
# parallel: yes
# collbench sim at scale: (1) a 4,096-rank AlltoAll with real data checked
# element by element (--verify: 16.8 M blocks; the driver's fill and check are
# O(bytes), tools/driver/data.c) within a time bound; (2) a sizes-only
# 32,768-rank AllReduce sweep over the sizes where every rank used to hold a
# private copy of its working buffers (halving-doubling, Bruck, hierarchical
# regrouping: N x the vector) stays under a peak-RSS bound, since without data
# every simulated rank shares one working block (transport/sim.h); (3) so does
# a sizes-only hierarchical AlltoAll's leader (its gather, pack and receive
# blocks), or the sim copies the bytes of every leader's message.
set -u
CB=$CB_O/bin/collbench
[ -x "$CB" ] || { echo "missing $CB (run make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "no /usr/bin/time: cannot measure peak RSS"; exit 77; }
rc=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# (1) 1 and 2 elements per block (16 and 32 KiB per rank). ~5 s of CPU when
# measured (bench/results/sim-scale-20261203.md); the bound leaves room for
# a loaded machine. Before the O(bytes) check this took minutes.
A2A_BOUND_S=120
t0=$(date +%s.%N)
timeout $A2A_BOUND_S "$CB" sim -n 4096 -H 512 -c alltoall --verify -b 16K -e 32K >"$tmp/a2a" 2>&1
st=$?
t1=$(date +%s.%N)
rows=$(grep -c '| success ' "$tmp/a2a")
bad=$(grep -E '^[0-9]' "$tmp/a2a" | grep -vc '| success ')
echo "4,096-rank alltoall --verify: exit $st, $rows success rows, $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s"
if [ $st -ne 0 ] || [ "$rows" -ne 2 ] || [ "$bad" -ne 0 ]; then
    echo "== sim -n 4096 -H 512 -c alltoall --verify -b 16K -e 32K (bound $A2A_BOUND_S s): exit $st"
    grep -vE '^#' "$tmp/a2a" | head -10
    rc=1
fi

# sizes_only_rss NAME BOUND_MB ROWS ROW_RE SIM_ARGS...: one sizes-only sim run;
# fails (rc=1) unless it exits 0 with ROWS table rows matching ROW_RE and a peak
# RSS within BOUND_MB.
sizes_only_rss() {
    local name=$1 bound=$2 want=$3 re=$4 st rss_kb rows
    shift 4
    /usr/bin/time -f '%M' -o "$tmp/rss" "$CB" sim "$@" >"$tmp/out" 2>&1
    st=$?
    rss_kb=$(tail -1 "$tmp/rss")
    rows=$(grep -cE "$re" "$tmp/out")
    echo "$name: exit $st, $rows rows, peak RSS $((rss_kb / 1024)) MB (bound $bound)"
    if [ $st -ne 0 ] || [ "$rows" -ne "$want" ] || [ "$rss_kb" -gt $((bound * 1024)) ]; then
        echo "== sim $*: exit $st, $rows rows, peak RSS $rss_kb KB"
        grep -vE '^#' "$tmp/out" | head -10
        rc=1
    fi
}

# (2) 32,768 ranks on 4,096 hosts, no data, 256 KiB and 1 MiB: the
# algorithms auto picks there (hierarchical over halving-doubling) held a
# private copy per rank: peak RSS 9.2 GB before the shared working block,
# 0.7 GB with it (bench/results/sim-scale-20261203.md). ~5 s of CPU.
sizes_only_rss "32,768-rank sizes-only allreduce 256K..1M" 1500 2 '^[0-9]+ +\| [0-9.]+ +\| .*\| NULL ' \
    -n 32768 -H 4096 -c allreduce -b 256K -e 1M -f 4

# (3) hier AlltoAll of 4 MiB per rank, no data, 128 ranks on 32 hosts (L = 4)
# and on 8 hosts (L = 16, more than the 8 vectors the shared block once held):
# 24 and 69 MB peak RSS with the shared block (5 MB since the leaders' Bruck
# AlltoAllV copies no values without data); 671 and 495 MB when the leader
# took a private block (3 L n, or L n beyond 8 vectors) and the sim copied its
# bytes into the messages. < 1 s each.
for hosts in 32 8; do
    sizes_only_rss "128-rank sizes-only hier alltoall 4M on $hosts hosts" 200 1 '^[0-9]+ +\| [0-9.]+ +\| .*\| NULL .*hier' \
        -n 128 -H $hosts -c alltoall --algo hier -b 4M -e 4M
done
exit $rc
