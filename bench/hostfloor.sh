# bench/hostfloor.sh - the cross-host floor of the multi-host benches
# (bench/multihost-bench.sh, bench/ab.sh -F; sourced by bash
# after tests/lib/netns.sh's `netns_up 2`, run as root from the repository root).
#
#   hostfloor_build                 build/bench/roofline (make bench)
#   hostfloor_iperf3_bidir T FILE   iperf3 --bidir -P 2 for T s cbh1 <-> cbh2: echoes GB/s,
#                                   both directions summed (empty on failure)
#   hostfloor_p2p_bidir PORT FILE   collbench bw -t p2p -s 64M between the hosts (1 rank
#                                   each, env launch): echoes the bidirectional GB/s,
#                                   both directions at once, summed (empty on failure);
#                                   HOSTFLOOR_P2P_ET iterations (default 40: ~1 s a test
#                                   on the bare veth, 11 s behind a 2 Gbit/s tbf)
#   hostfloor_floor COLL P H SIZE DUPLEX
#                                   roofline -p P -H H -D DUPLEX: echoes "floor_us net_us bytes"
#                                   (bench/roofline.h roof_host_bytes / roof_host_floor_us:
#                                   the link's bytes over DUPLEX / 2 each way, plus the
#                                   ranks' copies and reduction at this machine's rates)
#   hostfloor_floors COLL P H SIZES DUPLEX
#                                   the same for a list of sizes: "bytes floor_us net_us" per line
#   hostfloor_pct FLOOR_US COLL P BYTES BUSBW
#                                   the measured figure as % of the floor (floor time / time;
#                                   time from the bus bandwidth: 2 (p-1)/p S / busbw for allreduce)
# The duplex capacity is the better of the two tools: the floor is what the
# link allows, whichever tool gets closest. All traffic stays in 10.77.0.0/24.
HOSTFLOOR_RF=${HOSTFLOOR_RF:-$PWD/build/bench/roofline}

hostfloor_build() {
    make -s bench >&2 && [ -x "$HOSTFLOOR_RF" ]   # build/bench/roofline
}

hostfloor_iperf3_bidir() {
    local srv
    netns_exec 2 iperf3 -s -1 -p 5202 >"$2.srv" 2>&1 &
    srv=$!
    sleep 0.5
    netns_exec 1 iperf3 -c 10.77.0.2 -p 5202 --bidir -P 2 -t "$1" -J >"$2" 2>&1
    wait $srv
    /usr/bin/python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["end"]
print("%.3f" % ((e["sum_received"]["bits_per_second"] + e["sum_received_bidir_reverse"]["bits_per_second"]) / 8e9))' \
        "$2" 2>/dev/null
}

hostfloor_p2p_bidir() {
    NETNS_MASTER_PORT=$1 netns_env_launch "$2" "1 1" "$PWD/bin/collbench" bw -t p2p -s 64M -et "${HOSTFLOOR_P2P_ET:-40}" --ds 0 --dd 0 \
        -fmt json >/dev/null
    /usr/bin/python3 -c '
import json, sys
r = {(x["test"], x["src"]): x["bandwidth_gbs"] for x in json.load(open(sys.argv[1]))["results"]}
print("%.3f" % r[("bidirectional", 0)])' "$2.r0.out" 2>/dev/null
}

hostfloor_floor() {
    "$HOSTFLOOR_RF" -c "$1" -p "$2" -H "$3" -s "$4" -D "$5" -t 10 | awk '$1 == "HFLOOR" {print $NF, $(NF-1), $5; exit}'
}

hostfloor_floors() {
    "$HOSTFLOOR_RF" -c "$1" -p "$2" -H "$3" -s "$4" -D "$5" -t 10 | awk '$1 == "HFLOOR" {print $5, $NF, $(NF-1)}'
}

hostfloor_pct() {
    awk -v f="$1" -v c="$2" -v p="$3" -v s="$4" -v bw="$5" 'BEGIN {
        if (c != "allreduce" || !(f > 0) || !(bw > 0)) exit 1
        printf "%.0f\n", 100 * f / (2 * (p - 1) / p * s / bw / 1e3) }'
}
