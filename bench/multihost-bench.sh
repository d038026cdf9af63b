#!/usr/bin/env bash
# bench/multihost-bench.sh - collbench across two simulated hosts
# (tests/lib/netns.sh: network + UTS + mount namespaces, veth pairs on a
# bridge, sshd in each) against the reference tools, in one run:
#   (a) link bandwidth: iperf3 -P 4 vs `collbench net -q 4 -s 64M` vs
#       `collbench bw -t p2p -s 64M` (env launch, one rank per host);
#       ratio to iperf3 (target >= 90%); the duplex capacity: iperf3 --bidir
#       -P 2 and p2p's bidirectional figure (both directions at once, summed)
#   (b) AllReduce 64 MiB, 2 hosts x 1 rank: all_reduce_test (env launch) vs
#       Open MPI's and MPICH's MPI_Allreduce (bench/mpi_bench.c, mpirun over
#       ssh into the namespaces); ratio to the better MPI (target 1.5x) and
#       each as % of the floor (bench/hostfloor.sh: the better duplex capacity
#       of (a), 2 (H-1)/H S each way, plus the reduction; docs/performance.md)
#   (c) the link limited by `tc qdisc add dev cbeth0 root tbf rate 2gbit
#       burst 1mb latency 50ms` in both hosts, 2 ranks per host:
#       all_reduce_test 8K..64M with COLL_ALGO=allreduce=ring, =hier and auto
#       (the algorithm of each row from --json; auto's INFO log kept), each
#       row as % of its floor (the duplex capacity of the limited link by
#       iperf3 --bidir -P 2; p2p over it would take minutes)
# and writes a markdown file with the tables and the exact commands.
#
#   bench/multihost-bench.sh [-o FILE.md] [-t SEC] [-k REPS] [-n ITERS]
#     -o  results file (default bench/results/multihost-<date>.md)
#     -t  seconds of each iperf3 / collbench net run (default 5)
#     -k  repetitions of (a) and (b), best kept (default 3)
#     -n  timed iterations per size in (c) from 2 MiB (default 20; 10x that below)
# Needs root (namespaces), iperf3, tc, mpicc.openmpi/mpicc.mpich for (b).
# All traffic stays inside the namespaces (10.77.0.0/24). Raw outputs are
# kept in build/bench/multihost-raw/.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/bin
OUT=bench/results/multihost-$(date +%Y%m%d).md T=5 REPS=3 NC=20
while getopts "o:t:k:n:h" o; do
    case $o in
        o) OUT=$OPTARG ;; t) T=$OPTARG ;; k) REPS=$OPTARG ;; n) NC=$OPTARG ;;
        *) sed -n '2,25p' "$0"; exit 2 ;;
    esac
done
for f in all_reduce_test collbench; do [ -x "$B/$f" ] || { echo "missing $B/$f (make)" >&2; exit 1; }; done
for c in iperf3 tc; do command -v $c >/dev/null || { echo "missing $c" >&2; exit 1; }; done
. "$ROOT/tests/lib/netns.sh"
. "$ROOT/tests/lib/netns_extra.sh"
. "$ROOT/bench/hostfloor.sh"

BB=$ROOT/build/bench
RAW=$BB/multihost-raw
rm -rf "$RAW"
mkdir -p "$BB" "$RAW" "$(dirname "$OUT")"
mpis=()
make -s bench >&2 || exit 1   # build/bench/mpi_bench.IMPL for each installed MPI
for m in openmpi mpich; do [ -x "$BB/mpi_bench.$m" ] && mpis+=("$m"); done
TUN="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=8589934592"   # as bench/run-bench.sh
hostfloor_build || exit 1

VALS=$RAW/values      # key value lines for the report
CMDS=$RAW/commands    # the exact commands, in order
: >"$VALS"; : >"$CMDS"
val() { echo "$1 $2" >>"$VALS"; }
cmd() { echo "$*" >>"$CMDS"; }   # record a command as run (namespace prefix included)

netns_up 2 || exit 1
# a sysfs of each host's own: without it UCX (MPICH ch4:ucx) lists only lo and
# cannot use TCP between the hosts (see tests/lib/netns_extra.sh)
netns_own_sysfs || exit 1
netns_sshd_up || exit 1
txmb() { echo $(( $(netns_exec 1 cat /sys/class/net/cbeth0/statistics/tx_bytes) / 1000000 )); }
export NETNS_RANK_TIMEOUT=300 COLL_EXEC_TIMEOUT=120
port=29700
nextport() { port=$((port + 1)); }

# ---------------------------------------------------------------- (a) link
echo "== (a) link bandwidth cbh1 -> cbh2, ${T}s per run, best of $REPS"
cmd "# (a) link bandwidth, cbh1 -> cbh2 (10.77.0.2); each run $REPS times, best kept"
cmd "cbh2: iperf3 -s -1 -p 5201"
cmd "cbh1: iperf3 -c 10.77.0.2 -p 5201 -P 4 -t $T -J      (and -P 2: as many streams as collbench's default COLL_NSOCKS=2)"
cmd "cbh2: collbench net -p 18515 --timeout 30"
cmd "cbh1: collbench net 10.77.0.2 -p 18515 -q 4 -s 64M -D $T --retry 5"
cmd "cbh1+cbh2: RANK=0/1 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=10.77.0.1 MASTER_PORT=<port> collbench bw -t p2p -s 64M -et 40 --ds 0 --dd 0 -fmt json"
cmd "  (the same with COLL_NSOCKS=4 COLL_SOCK_BUF=16M: four sockets like iperf3 -P 4)"
cmd "cbh2: iperf3 -s -1 -p 5202; cbh1: iperf3 -c 10.77.0.2 -p 5202 --bidir -P 2 -t $T -J   (duplex capacity, both directions summed)"
# iperf3_run STREAMS KEY FILE: one iperf3 run cbh1 -> cbh2, GB/s recorded under KEY
iperf3_run() {
    local srv v
    netns_exec 2 iperf3 -s -1 -p 5201 >"$RAW/iperf3-srv.$rep" 2>&1 &
    srv=$!
    sleep 0.5
    netns_exec 1 iperf3 -c 10.77.0.2 -p 5201 -P "$1" -t "$T" -J >"$3" 2>&1
    wait $srv
    v=$(/usr/bin/python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8e9))' "$3" 2>/dev/null)
    echo "  iperf3 -P $1: ${v:-failed} GB/s"
    [ -n "$v" ] && val "$2" "$v"
}
for rep in $(seq 1 "$REPS"); do
    iperf3_run 4 iperf3 "$RAW/iperf3.$rep.json"
    iperf3_run 2 iperf3_p2 "$RAW/iperf3-P2.$rep.json"
    v=$(hostfloor_iperf3_bidir "$T" "$RAW/iperf3-bidir.$rep.json")
    echo "  iperf3 --bidir -P 2: ${v:-failed} GB/s (both directions summed)"
    [ -n "$v" ] && val iperf3_bidir "$v"

    netns_exec 2 "$B/collbench" net -p 18515 --timeout 30 >"$RAW/net-srv.$rep" 2>&1 &
    srv=$!
    netns_exec 1 "$B/collbench" net 10.77.0.2 -p 18515 -q 4 -s 64M -D "$T" --retry 5 >"$RAW/net.$rep" 2>&1
    wait $srv
    v=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 {print $4; exit}' "$RAW/net.$rep")
    echo "  collbench net -q 4: ${v:-failed} GB/s"
    [ -n "$v" ] && val net "$v"

    nextport
    NETNS_MASTER_PORT=$port netns_env_launch "$RAW/p2p.$rep" "1 1" \
        "$B/collbench" bw -t p2p -s 64M -et 40 --ds 0 --dd 0 -fmt json >/dev/null
    read -r uni bi tr <<<"$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = {(x["test"], x["src"]): x["bandwidth_gbs"] for x in d["results"]}
print("%.3f %.3f %s" % (r[("unidirectional", 0)], r[("bidirectional", 0)], d.get("transport", "?")))' "$RAW/p2p.$rep.r0.out" 2>/dev/null)"
    echo "  collbench bw -t p2p: uni ${uni:-failed} GB/s, bidir ${bi:-?} GB/s (transport ${tr:-?})"
    [ -n "${uni:-}" ] && { val p2p "$uni"; val p2p_bi "$bi"; val p2p_transport "$tr"; }
    nextport
    COLL_NSOCKS=4 COLL_SOCK_BUF=16M NETNS_MASTER_PORT=$port netns_env_launch "$RAW/p2p4.$rep" "1 1" \
        "$B/collbench" bw -t p2p -s 64M -et 40 --ds 0 --dd 0 -fmt json >/dev/null
    v=$(/usr/bin/python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["results"][0]["bandwidth_gbs"])' "$RAW/p2p4.$rep.r0.out" 2>/dev/null)
    echo "  collbench bw -t p2p, COLL_NSOCKS=4 COLL_SOCK_BUF=16M: uni ${v:-failed} GB/s"
    [ -n "$v" ] && val p2p4 "$v"
done

# ----------------------------------------------------------- (b) allreduce
echo "== (b) AllReduce 64 MiB, 2 hosts x 1 rank, best of $REPS"
printf 'cbh1 slots=1\ncbh2 slots=1\n' >"$RAW/hf.ompi"
printf '10.77.0.1:1\n10.77.0.2:1\n' >"$RAW/hf.mpich"
cmd ""
cmd "# (b) AllReduce 64 MiB, 2 hosts x 1 rank; each $REPS times, best kept (mpi_bench: best of its own -r 3 too)"
cmd "cbh1+cbh2: RANK=0/1 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=10.77.0.1 MASTER_PORT=<port> all_reduce_test -b 64M -e 64M -n 20 -w 5 -c 0 --json <f>"
cmd "  (the same with COLL_ALGO=allreduce=ring)"
cmd "cbh1: GLIBC_TUNABLES=$TUN mpirun.openmpi --allow-run-as-root --hostfile hf.ompi(cbh1 slots=1, cbh2 slots=1) -n 2 --mca plm_rsh_agent 'ssh -F <ns ssh config>' --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 -x GLIBC_TUNABLES build/bench/mpi_bench.openmpi -c allreduce -s 64M -n 20 -w 5 -r 3 -l openmpi"
cmd "cbh1: mpirun.mpich -launcher ssh -launcher-exec <ssh -F wrapper> -f hf.mpich(10.77.0.1:1, 10.77.0.2:1) -n 2 -genv GLIBC_TUNABLES $TUN [-genv UCX_TLS tcp,self] build/bench/mpi_bench.mpich -c allreduce -s 64M -n 20 -w 5 -r 3 -l mpich"
cmd "# before (b): in each host 'mount -t sysfs cbhN-sysfs /sys' (netns_own_sysfs), so UCX sees cbeth0;"
cmd "# bytes sent by cbh1 per run: /sys/class/net/cbeth0/statistics/tx_bytes before and after"
for rep in $(seq 1 "$REPS"); do
    nextport
    tx0=$(txmb)
    NETNS_MASTER_PORT=$port NETNS_RANK0_ENV="COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=INIT,TUNING" \
        netns_env_launch "$RAW/ar.$rep" "1 1" "$B/all_reduce_test" -b 64M -e 64M -n 20 -w 5 -c 0 \
        --json "$RAW/ar.$rep.json" >/dev/null
    v=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.3f %s %.1f" % (r["busbw_gbs"], r["algorithm"], r["time_us"]["max"] if isinstance(r["time_us"], dict) else r["time_us"]))' "$RAW/ar.$rep.json" 2>/dev/null)
    echo "  collbench: ${v:-failed} (busbw GB/s, algorithm, time us)"
    [ -n "$v" ] && val ar_collbench "$v"
    val ar_collbench_tx "$(( $(txmb) - tx0 ))"
    nextport
    tx0=$(txmb)
    COLL_ALGO=allreduce=ring NETNS_MASTER_PORT=$port \
        netns_env_launch "$RAW/ar-ring.$rep" "1 1" "$B/all_reduce_test" -b 64M -e 64M -n 20 -w 5 -c 0 \
        --json "$RAW/ar-ring.$rep.json" >/dev/null
    v=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.3f %s" % (r["busbw_gbs"], r["algorithm"]))' "$RAW/ar-ring.$rep.json" 2>/dev/null)
    echo "  collbench COLL_ALGO=allreduce=ring: ${v:-failed} (busbw GB/s, algorithm)"
    [ -n "$v" ] && val ar_collbench_ring "$v"
    val ar_collbench_ring_tx "$(( $(txmb) - tx0 ))"
    for m in "${mpis[@]}" $(printf '%s\n' "${mpis[@]}" | grep -x mpich | sed 's/$/-tcp/'); do
        tx0=$(txmb)
        case $m in
            openmpi)
                netns_exec 1 env GLIBC_TUNABLES=$TUN timeout 300 mpirun.openmpi --allow-run-as-root \
                    --hostfile "$RAW/hf.ompi" -n 2 --mca plm_rsh_agent "ssh -F $NETNS_SSH_CONFIG_IN" \
                    --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
                    -x GLIBC_TUNABLES "$BB/mpi_bench.openmpi" -c allreduce -s 64M -n 20 -w 5 -r 3 -l openmpi \
                    >"$RAW/ar-openmpi.$rep" 2>&1 ;;
            mpich|mpich-tcp)
                # mpich-tcp: UCX restricted to TCP (by default UCX uses shared
                # memory / CMA between the namespaces: nothing crosses cbeth0)
                [ $m = mpich-tcp ] && ucx="-genv UCX_TLS tcp,self" || ucx=
                netns_exec 1 timeout 300 mpirun.mpich -launcher ssh -launcher-exec "$NETNS_SSH_WRAPPER" \
                    -f "$RAW/hf.mpich" -n 2 -genv GLIBC_TUNABLES "$TUN" $ucx \
                    "$BB/mpi_bench.mpich" -c allreduce -s 64M -n 20 -w 5 -r 3 -l $m \
                    >"$RAW/ar-$m.$rep" 2>&1 ;;
        esac
        v=$(awk '$1 == "RESULT" {print $8, $6; exit}' "$RAW/ar-$m.$rep")
        tx=$(( $(txmb) - tx0 ))
        echo "  $m: ${v:-failed} (busbw GB/s, time us), cbeth0 tx ${tx} MB"
        [ -n "$v" ] && val "ar_$m" "$v"
        val "ar_${m}_tx" "$tx"
    done
done

# the floor of (b): the better duplex capacity of (a), each run of (b) as % of it
dx=$(awk '$1 == "iperf3_bidir" || $1 == "p2p_bi" {print $2}' "$VALS" | sort -g | tail -1)
read -r fl nu bytes <<<"$(hostfloor_floor allreduce 2 2 64M "${dx:-0}")"
echo "  floor: ${fl:-failed} us (the link alone ${nu:-?} us) at duplex ${dx:-?} GB/s"
val floor "${fl:-0} ${nu:-0} ${dx:-0}"
cmd "build/bench/roofline -c allreduce -p 2 -H 2 -s 64M -D <the better duplex GB/s of (a)> -t 10   (the floor of (b): last field, us)"
awk '$1 ~ /^ar_/ && $1 !~ /_tx$/ {print $1, $2}' "$VALS" >"$RAW/ar-values"   # read before val appends
while read -r k v; do
    val "${k}_pct" "$(hostfloor_pct "${fl:-0}" allreduce 2 "${bytes:-0}" "$v" || echo 0)"
done <"$RAW/ar-values"

# ------------------------------------------------- (c) ring vs hier vs auto
echo "== (c) 2 hosts x 2 ranks, link limited to 2 Gbit/s (tbf), all_reduce_test 8K..64M"
for i in 1 2; do netns_exec $i tc qdisc add dev cbeth0 root tbf rate 2gbit burst 1mb latency 50ms || exit 1; done
cmd ""
cmd "# (c) both hosts: tc qdisc add dev cbeth0 root tbf rate 2gbit burst 1mb latency 50ms"
cmd "cbh1: iperf3 -c 10.77.0.2 -P 4 -t $T -J   (the limited link)"
cmd "cbh1,cbh1,cbh2,cbh2: RANK=0..3 WORLD_SIZE=4 LOCAL_RANK=0/1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=10.77.0.1 [COLL_ALGO=allreduce=ring | allreduce=hier | unset] all_reduce_test -b 8K -e 1M -f 2 -n $((NC * 10)) -w 2 -c 0 --json <f>, then -b 2M -e 64M -n $NC   (rank 0 also COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=TUNING)"
netns_exec 2 iperf3 -s -1 -p 5201 >"$RAW/iperf3-tbf-srv" 2>&1 &
srv=$!
sleep 0.5
netns_exec 1 iperf3 -c 10.77.0.2 -p 5201 -P 4 -t "$T" -J >"$RAW/iperf3-tbf.json" 2>&1
wait $srv
v=$(/usr/bin/python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8e9))' "$RAW/iperf3-tbf.json" 2>/dev/null)
echo "  iperf3 -P 4 over the limited link: ${v:-failed} GB/s"
val iperf3_tbf "${v:-0}"
v=$(hostfloor_iperf3_bidir "$T" "$RAW/iperf3-tbf-bidir.json")
echo "  iperf3 --bidir -P 2 over the limited link: ${v:-failed} GB/s (both directions summed)"
val iperf3_tbf_bidir "${v:-0}"
cmd "cbh1: iperf3 -c 10.77.0.2 -p 5202 --bidir -P 2 -t $T -J   (the limited link's duplex capacity)"
cmd "build/bench/roofline -c allreduce -p 4 -H 2 -s 8K,...,64M -D <that GB/s> -t 10   (the floor of each row)"
hostfloor_floors allreduce 4 2 8K,16K,32K,64K,128K,256K,512K,1M,2M,4M,8M,16M,32M,64M "${v:-0}" >"$RAW/c-floors"
# two sweeps per algorithm: up to 1 MiB an iteration takes ~1-4 ms here and
# $NC of them left single runs of one algorithm 2x apart; 10 x $NC there
for algo in ring hier auto; do
    for part in small large; do
        nextport
        [ $part = small ] && range="-b 8K -e 1M -n $((NC * 10))" || range="-b 2M -e 64M -n $NC"
        (
            [ $algo != auto ] && export COLL_ALGO=allreduce=$algo
            NETNS_MASTER_PORT=$port NETNS_RANK0_ENV="COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=INIT,TUNING" \
                netns_env_launch "$RAW/c-$algo-$part" "2 2" "$B/all_reduce_test" $range -f 2 -w 2 -c 0 \
                --json "$RAW/c-$algo-$part.json"
        ) >"$RAW/c-$algo-$part.launch" 2>&1
        echo "  $algo $part: exit $? $(grep -c '"bytes"' "$RAW/c-$algo-$part.json" 2>/dev/null) rows"
    done
done
for i in 1 2; do netns_exec $i tc qdisc del dev cbeth0 root; done
for f in "$RAW"/c-*-*.json; do   # each row of (c) as % of its floor
    /usr/bin/python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["results"]: print(r["bytes"], r["busbw_gbs"])' "$f" 2>/dev/null |
        while read -r b bw; do
            fl=$(awk -v b="$b" '$1 == b {print $2}' "$RAW/c-floors")
            a=${f##*/c-}
            val c_pct "${a%%-*} $b $(hostfloor_pct "${fl:-0}" allreduce 4 "$b" "$bw" || echo 0)"
        done
done
netns_down
trap - EXIT

# ------------------------------------------------------------------ report
/usr/bin/python3 - "$RAW" "$OUT" "$T" "$REPS" "$NC" <<'PY'
import json, os, sys, collections, datetime, subprocess, platform
raw, out, T, reps, nc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
vals = collections.defaultdict(list)
for l in open(os.path.join(raw, "values")):
    k, _, v = l.strip().partition(" ")
    vals[k].append(v.split())
def best(k, i=0):
    xs = [float(v[i]) for v in vals.get(k, [])]
    return max(xs) if xs else None
def allv(k, i=0):
    return ", ".join(v[i] for v in vals.get(k, [])) or "-"
def pct(a, b):
    return "%.0f%%" % (100 * a / b) if a and b else "-"
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
ver = subprocess.run([os.path.join(os.getcwd(), "bin/all_reduce_test"), "--version"], capture_output=True, text=True).stdout.strip()
load = open("/proc/loadavg").read().split()[:3]
L = []
L.append("# collbench across two hosts (network namespaces) - %s\n" % datetime.date.today().isoformat())
L.append("Generated by `bench/multihost-bench.sh -t %s -k %s -n %s`. %s; %s, %d CPUs, kernel %s; "
         "load average at the end %s (a shared 2-core VM: figures are noisy, ratios of one run are what counts)." %
         (T, reps, nc, ver, cpu, os.cpu_count(), platform.release(), " ".join(load)))
L.append("Hosts cbh1, cbh2: tests/lib/netns.sh (own network, UTS and mount namespaces; cbeth0 = veth into a bridge "
         "in a switch namespace; MTU 1500). GB/s = 1e9 bytes/s. Best of %s runs each (all runs listed).\n" % reps)
ip = best("iperf3")
L.append("## (a) Link bandwidth cbh1 -> cbh2\n")
L.append("| tool | GB/s (best) | all runs | vs iperf3 | target |")
L.append("|---|---|---|---|---|")
L.append("| iperf3 -P 4 (4 TCP streams) | %.3f | %s | 100%% | |" % (ip or 0, allv("iperf3")))
n = best("net")
L.append("| collbench net -q 4 -s 64M (4 connections) | %.3f | %s | %s | >= 90%% |" % (n or 0, allv("net"), pct(n, ip)))
p = best("p2p")
tr = vals.get("p2p_transport", [["?"]])[0][0]
L.append("| collbench bw -t p2p -s 64M, 0 -> 1 (1 rank per host, transport %s) | %.3f | %s | %s | >= 90%% |" % (tr, p or 0, allv("p2p"), pct(p, ip)))
p4 = best("p2p4")
L.append("| collbench bw -t p2p, COLL_NSOCKS=4 COLL_SOCK_BUF=16M | %.3f | %s | %s | >= 90%% |" % (p4 or 0, allv("p2p4"), pct(p4, ip)))
ip2 = best("iperf3_p2")
L.append("| iperf3 -P 2 (2 streams = collbench's default COLL_NSOCKS=2) | %.3f | %s | %s | |" % (ip2 or 0, allv("iperf3_p2"), pct(ip2, ip)))
L.append("| (collbench bw -t p2p bidirectional, 0 <-> 1, sum) | %.3f | %s | | |" % (best("p2p_bi") or 0, allv("p2p_bi")))
L.append("| (iperf3 --bidir -P 2, both directions summed) | %.3f | %s | | |" % (best("iperf3_bidir") or 0, allv("iperf3_bidir")))
L.append("")
L.append("p2p with the default 2 sockets vs iperf3 with 2 streams: %s." % pct(p, ip2))
L.append("")
L.append("## (b) AllReduce 64 MiB, 2 hosts x 1 rank (busbw = algbw for 2 ranks)\n")
fl = (vals.get("floor") or [["0", "0", "0"]])[0]
fus, nus, dx = float(fl[0]), float(fl[1]), float(fl[2])
L.append("Floor (docs/performance.md \"Across hosts\"): %.1f ms = the link %.1f ms (64 MiB each way at %.3f GB/s, half the better "
         "duplex capacity of (a)) + the reduction %.1f ms at this machine's rates; as busbw %.3f GB/s (the link alone %.3f). "
         "%% fl = floor / time of each run.\n" % (fus / 1e3, nus / 1e3, dx / 2, (fus - nus) / 1e3,
                                                  (64 << 20) / fus / 1e3 if fus else 0, (64 << 20) / nus / 1e3 if nus else 0))
def pcts(k):
    xs = sorted(float(v[0]) for v in vals.get(k + "_pct", []))
    return ("%.0f%% (%s)" % (xs[-1], ", ".join("%.0f" % x for x in xs))) if xs else "-"
L.append("| implementation | busbw GB/s (best) | all runs | % fl best (all runs) | cbh1 cbeth0 tx per run, MB | vs better MPI over the link | target |")
L.append("|---|---|---|---|---|---|---|")
def overlink(k):   # did this implementation's data cross cbeth0 (> 100 MB per run)?
    t = [float(v[0]) for v in vals.get(k + "_tx", [])]
    return bool(t) and min(t) > 100
cands = [(best("ar_" + m), m) for m in ("openmpi", "mpich", "mpich-tcp") if best("ar_" + m) and overlink("ar_" + m)]
mb, mbn = max(cands) if cands else (0, "-")
names = {"openmpi": "Open MPI MPI_Allreduce (btl tcp)", "mpich": "MPICH MPI_Allreduce, defaults (UCX picks its transports)",
         "mpich-tcp": "MPICH MPI_Allreduce, UCX_TLS=tcp,self"}
c = best("ar_collbench")
algs = sorted(set(v[1] for v in vals.get("ar_collbench", [])))
L.append("| collbench all_reduce_test, auto (picked %s) | %.3f | %s | %s | %s | %s | >= 1.5x |" % ("/".join(algs) or "?", c or 0, allv("ar_collbench"),
         pcts("ar_collbench"), allv("ar_collbench_tx"), ("%.2fx" % (c / mb)) if c and mb else "-"))
cr = best("ar_collbench_ring")
L.append("| collbench, COLL_ALGO=allreduce=ring | %.3f | %s | %s | %s | %s | >= 1.5x |" % (cr or 0, allv("ar_collbench_ring"),
         pcts("ar_collbench_ring"), allv("ar_collbench_ring_tx"), ("%.2fx" % (cr / mb)) if cr and mb else "-"))
for m in ("openmpi", "mpich", "mpich-tcp"):
    b = best("ar_" + m)
    L.append("| %s | %s | %s | %s | %s | %s | |" % (names[m], "%.3f" % b if b else "failed", allv("ar_" + m),
             pcts("ar_" + m) if overlink("ar_" + m) else "- (not the link's)", allv("ar_" + m + "_tx"),
             "(the reference)" if m == mbn else ("**not over the link**" if b and not overlink("ar_" + m) else "")))
L.append("")
L.append("Better MPI whose data crossed the link: %s, %.3f GB/s." % (names.get(mbn, "-"), mb or 0))
L.append("")
L.append("## (c) 2 hosts x 2 ranks, link limited by tbf rate 2gbit (iperf3 -P 4 over it: %s GB/s)\n" % allv("iperf3_tbf"))
def load_json(a):
    rows = {}
    for part in ("small", "large"):
        try:
            d = json.load(open(os.path.join(raw, "c-%s-%s.json" % (a, part))))
            rows.update({r["bytes"]: r for r in d["results"]})
        except Exception:
            pass
    return rows
R = {a: load_json(a) for a in ("ring", "hier", "auto")}
sizes = sorted(set().union(*[set(r) for r in R.values()]))
def h(b):
    for u, s in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= s: return "%g%s" % (b / s, u)
    return str(b)
cfl = {}
try:
    for l in open(os.path.join(raw, "c-floors")):
        b_, f_, n_ = l.split(); cfl[int(b_)] = float(f_)
except (OSError, ValueError):
    pass
cpct = {(v[0], int(v[1])): v[2] for v in vals.get("c_pct", [])}
L.append("Duplex capacity of the limited link (iperf3 --bidir -P 2, both directions summed): %s GB/s; "
         "floor = 2 (H-1)/H S each way at half of it + the copies and the reduction of 2 ranks per host "
         "(docs/performance.md \"Across hosts\"); %% = floor / time. tbf lets a 1 MB burst through at the "
         "unlimited speed, so rows of a few MiB and less can pass 100%% of a floor taken from the sustained rate.\n"
         % allv("iperf3_tbf_bidir"))
L.append("| size | floor us | ring busbw (% fl) | hier busbw (% fl) | auto busbw (% fl) | auto picked | better of ring/hier | auto picked the better? |")
L.append("|---|---|---|---|---|---|---|---|")
wrong = []
hier_wins_large = []
for b in sizes:
    g = lambda a: R[a].get(b, {}).get("busbw_gbs")
    ri, hi, au = g("ring"), g("hier"), g("auto")
    pick = R["auto"].get(b, {}).get("algorithm", "?")
    better = "ring" if (ri or 0) >= (hi or 0) else "hier"
    # within 5%: a tie (noise on this VM)
    close = ri and hi and abs(ri - hi) / max(ri, hi) < 0.05
    ok = "tie (<5%)" if close else ("yes" if pick == better else "**no**")
    if ok == "**no**": wrong.append(h(b))
    if b >= 8 << 20: hier_wins_large.append((hi or 0) > (ri or 0))
    f = lambda x: "%.4f" % x if x is not None else "-"
    fp = lambda a, x: "%s (%s%%)" % (f(x), cpct[(a, b)]) if x is not None and (a, b) in cpct else f(x)
    L.append("| %s | %s | %s | %s | %s | %s | %s%s | %s |" % (h(b), "%.0f" % cfl[b] if b in cfl else "-",
             fp("ring", ri), fp("hier", hi), fp("auto", au), pick, better,
             " (%+.0f%%)" % (100 * (max(ri, hi) / min(ri, hi) - 1)) if ri and hi else "", ok))
L.append("")
L.append("- hier beats ring at the large sizes (>= 8M): %s" % ("yes, at every one" if hier_wins_large and all(hier_wins_large)
         else "no" if not any(hier_wins_large) else "at %d of %d" % (sum(hier_wins_large), len(hier_wins_large))))
L.append("- auto picked the better algorithm at every size (ties within 5%% excepted): %s" % ("yes" if not wrong else "no, not at " + ", ".join(wrong)))
L.append("")
L.append("## Commands\n")
L.append("Run from the repository root as root; `cbhN:` = inside host N's namespaces (`netns_exec N` of tests/lib/netns.sh), "
         "env launches through `netns_env_launch` (one process per rank with RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE/MASTER_ADDR/MASTER_PORT).\n")
L.append("```")
L.extend(l.rstrip("\n") for l in open(os.path.join(raw, "commands")))
L.append("```")
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
echo "results: $OUT (raw outputs: ${RAW#$ROOT/})"
