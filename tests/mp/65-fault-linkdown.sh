#!/usr/bin/env bash
# timeout: 240
# The inter-host link fails in the middle of a run: two simulated hosts
# (tests/lib/netns.sh) x 2 ranks, environment launch, a long allreduce sweep
# (4M..64M, 300 iterations a size: minutes) with COLL_EXEC_TIMEOUT=5. Once rank 0 prints its
# first row, the link is cut inside one host's namespace, two ways:
#   down  `ip link set cbeth0 down` in cbh2 (the peer sees no FIN/RST: silence)
#   loss  every packet arriving on cbh1's cbeth0 dropped (netns_blackhole of
#         tests/lib/netns_extra.sh: tc ingress + u32 + mirred to a dead veth;
#         this kernel has no sch_netem, so no `netem loss 100%`): the link
#         stays up, packets vanish
# Every rank must exit non-zero (4 = timeout or 5 = a peer aborted) within
# COLL_EXEC_TIMEOUT + slack of the cut; a rank that timed out must name the
# collective, the size and the peer rank(s) with their host (cbh1/cbh2) it was
# waiting for, an aborted rank must say during which collective and size. Then
# nothing is left behind: no rank process in the hosts, no collbench segment in
# their /dev/shm, and after netns_down no holder process and no state
# directory (namespaces freed).
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
. "$ROOT/tests/lib/netns.sh"
. "$ROOT/tests/lib/netns_extra.sh"
[ -x "$B/all_reduce_test" ] || { echo "FAIL: missing $B/all_reduce_test"; exit 1; }
command -v tc >/dev/null || { echo "FAIL: tc (iproute2) not installed"; exit 1; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
now_ms() { local u _r; read -r u _r </proc/uptime; u=${u/./}; echo $(( 10#$u * 10 )); }   # monotonic (tests/lib/common.sh)

TO=5          # COLL_EXEC_TIMEOUT
netns_up 2 || { echo "FAIL: netns_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"
export NETNS_EXEC_TIMEOUT=$TO COLL_EXEC_TIMEOUT=$TO NETNS_RANK_TIMEOUT=120
port=29610
# The slack allowed beyond COLL_EXEC_TIMEOUT (a rank may be mid-transfer, the
# ranks' teardown, a 2-core VM): 10 s, or 5 times a complete short run of the
# same 4 ranks on the same two hosts (start, one 4M AllReduce, teardown),
# measured now, whichever is more.
t0=$(now_ms)
NETNS_MASTER_PORT=$port netns_env_launch "$W/base" "2 2" "$B/all_reduce_test" -b 4M -e 4M -n 1 -w 0 -c 0 \
    >"$W/base.launch" 2>&1 || bad "the baseline run failed: $(tail -n 3 "$W/base.launch")"
base=$(( $(now_ms) - t0 ))
SLACK_MS=$(( 5 * base > 10000 ? 5 * base : 10000 ))
echo "baseline: a complete run of the 4 ranks takes $base ms here: slack $SLACK_MS ms"

for how in down loss; do
    # bring the link back for the next round
    netns_blackhole_off 1
    netns_exec 2 ip link set cbeth0 up
    for _ in $(seq 1 50); do netns_ping 1 10.77.0.2 && netns_ping 2 10.77.0.1 && break; sleep 0.1; done
    port=$((port + 1))
    out=$W/linkdown-$how
    NETNS_MASTER_PORT=$port netns_env_launch "$out" "2 2" \
        "$B/all_reduce_test" -b 4M -e 64M -f 2 -n 300 -w 1 -c 0 >"$out.launch" 2>&1 &
    launch=$!
    started=0
    for _ in $(seq 1 300); do
        grep -qE '^[0-9]+ +\|' "$out.r0.out" 2>/dev/null && { started=1; break; }
        sleep 0.1
    done
    if [ $started = 0 ]; then
        bad "$how: the run did not start (no row within 30 s)"
        tail -n 5 "$out.r0.err" 2>/dev/null
        exit 1   # the EXIT trap (netns_down) ends the ranks and the hosts
    fi
    sleep 0.5
    t0=$(now_ms)
    case $how in
        down) netns_exec 2 ip link set cbeth0 down ;;
        loss) netns_blackhole 1 ;;
    esac || bad "$how: could not cut the link"
    wait $launch
    dt=$(( $(now_ms) - t0 ))
    echo "--- $how: all ranks ended ${dt} ms after the cut:"
    [ $dt -le $(( TO * 1000 + SLACK_MS )) ] || bad "$how: ranks took ${dt} ms to fail (> ${TO} s + $SLACK_MS ms)"
    for r in 0 1 2 3; do
        h=$(( r / 2 + 1 ))
        err=$out.r$r.err
        rc=$(sed -n "s/^rank $r (cbh$h) exit \([0-9]*\).*/\1/p" "$out.launch")
        msg=$(grep -m1 -E 'timeout after|aborted|died|error|fail' "$err")
        echo "    rank $r (cbh$h) exit ${rc:-0}: $msg"
        case ${rc:-0} in
            4) # timed out: names the collective, size, and the peer rank(s) with host
               echo "$msg" | grep -qE "timeout after 5\.0 s \(COLL_EXEC_TIMEOUT\) in allreduce of [0-9]+ bytes waiting for .*rank [0-3] \(host cbh[12]" ||
                   bad "$how: rank $r timed out but its message lacks collective/size/peer rank+host: $msg" ;;
            5) # aborted by a peer: names the collective and size (the tool's
               # "timed loop failed (allreduce, N bytes)" or libcoll's "during
               # allreduce of N bytes") and the peer rank with its host
               echo "$msg" | grep -qE "allreduce(,| of) [0-9]+ bytes" && echo "$msg" | grep -qE "rank [0-3] \(host cbh[12]" ||
                   bad "$how: rank $r aborted but its message lacks collective/size/peer: $msg" ;;
            0) bad "$how: rank $r exited 0 after the link was cut" ;;
            *) bad "$how: rank $r exit $rc (want 4 timeout or 5 aborted): $(tail -n 2 "$err")" ;;
        esac
    done
    # at least one rank must name a rank on the other host (the cut link)
    grep -qE "rank [23] \(host cbh2" "$out.r0.err" "$out.r1.err" ||
        grep -qE "rank [01] \(host cbh1" "$out.r2.err" "$out.r3.err" ||
        bad "$how: no rank names a peer across the cut link"
    left=$(netns_pids | while read -r p; do
        case " ${NETNS_HOLDER[*]} $NETNS_SWITCH " in *" $p "*) continue ;; esac
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null; echo " (pid $p)"
    done)
    [ -z "$left" ] || bad "$how: processes left in the hosts: $left"
    for h in 1 2; do   # each host's own /dev/shm (private tmpfs)
        seg=$(netns_exec $h ls /dev/shm | grep collbench)
        [ -z "$seg" ] || bad "$how: shared-memory segments left on cbh$h: $seg"
    done
    [ $fail = 0 ] && echo "ok: $how: every rank failed (exit 4/5) within ${dt} ms naming peer, host, collective and size"
done

# Nothing left behind after teardown: holders gone (namespaces freed), state removed.
holders="${NETNS_HOLDER[*]} $NETNS_SWITCH"
dir=$NETNS_DIR
netns_down
trap - EXIT
for p in $holders; do [ -d /proc/$p ] && bad "holder $p still running after netns_down"; done
[ -d "$dir" ] && bad "state directory $dir left"
[ $fail = 0 ] && echo "65-fault-linkdown: all passed"
exit $fail
