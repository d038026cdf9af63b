#!/usr/bin/env bash
# timeout: 240
# Random packet loss on the link between two simulated hosts (this kernel has
# no sch_netem: nftables' `numgen random mod 100 < P drop` on the input and
# output hooks of cbh1's cbeth0 drops P% of the packets each way). 2 hosts x 2
# ranks, environment launch (handshakes included: the rendezvous and the tree
# cross the lossy link too), AllReduce 64K..4M with the result check on, at
# 0%, 1% and 5% loss: every run must succeed with every row "success", and the
# slowdown against 0% is measured and printed (rank 0's wall time and the 4M
# row's average time). TCP retransmits what is lost, so it is slower, never
# wrong.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
. "$ROOT/tests/lib/netns.sh"
command -v nft >/dev/null || { echo "nft (nftables) missing: scripts/install-deps.sh test"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
now_ms() { local u _r; read -r u _r </proc/uptime; u=${u/./}; echo $(( 10#$u * 10 )); }
netns_up 2 || { echo "FAIL: netns_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"
export NETNS_RANK_TIMEOUT=150 COLL_EXEC_TIMEOUT=60 COLL_CONNECT_TIMEOUT=60
loss() {   # loss P: P% random drop each way on cbh1's link (0: none)
    netns_exec 1 nft delete table inet cbloss 2>/dev/null
    [ "$1" = 0 ] && return 0
    netns_exec 1 nft -f - <<EOF2
table inet cbloss {
    chain in { type filter hook input priority 0; iifname "cbeth0" numgen random mod 100 < $1 counter drop; }
    chain out { type filter hook output priority 0; oifname "cbeth0" numgen random mod 100 < $1 counter drop; }
}
EOF2
}
port=29650
declare -A wall avg4m
for p in 0 1 5; do
    loss $p || { bad "cannot install the ${p}% rule"; break; }
    port=$((port + 1))
    out=$W/loss$p
    t0=$(now_ms)
    NETNS_MASTER_PORT=$port netns_env_launch "$out" "2 2" \
        "$B/all_reduce_test" -b 64K -e 4M -f 4 -n 10 -w 2 -c 1 >"$out.launch" 2>&1 || {
        bad "${p}% loss: the run failed:"; cat "$out.launch"; tail -n 3 "$out".r*.err; }
    wall[$p]=$(( $(now_ms) - t0 ))
    rows=$(netns_check_rows "$out.r0.out") || bad "${p}% loss: rows not all success ($rows)"
    avg4m[$p]=$(awk -F'|' '$1+0 == 4194304 {gsub(/ /,"",$2); print $2}' "$out.r0.out")
    dropped=0
    [ $p != 0 ] && dropped=$(netns_exec 1 nft list table inet cbloss | awk '/counter packets/ {for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1)} END {print n + 0}')
    [ $p = 0 ] || [ "$dropped" -gt 0 ] || bad "${p}% loss: nothing was dropped"
    echo "loss ${p}%: $rows, $dropped packets dropped, rank 0 wall ${wall[$p]} ms, 4M allreduce avg ${avg4m[$p]:-?} us"
done
loss 0
for p in 1 5; do
    [ -n "${avg4m[0]:-}" ] && [ -n "${avg4m[$p]:-}" ] &&
        echo "slowdown at ${p}% loss: wall x$(awk -v a="${wall[$p]}" -v b="${wall[0]}" 'BEGIN{printf "%.2f", a/b}'), 4M avg x$(awk -v a="${avg4m[$p]}" -v b="${avg4m[0]}" 'BEGIN{printf "%.2f", a/b}')"
done
[ $fail = 0 ] && echo "all checks passed"
exit $fail
