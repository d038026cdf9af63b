#!/usr/bin/env bash
# timeout: 240
# Interface selection across simulated hosts with two interfaces each:
# cbeth0 (10.77.0.i, where the rendezvous is) and cbib0 (10.78.0.i). Through a
# torchrun-style launch of 2 hosts x 2 ranks (all_reduce, 1 MiB, checked):
#   (unset)                      -> cbeth0 (first up non-loopback interface)
#   COLL_SOCKET_IFNAME=cbib      -> cbib0   (prefix)
#   COLL_SOCKET_IFNAME=^cbib     -> cbeth0  (exclude prefix)
#   COLL_SOCKET_IFNAME==cbeth0   -> cbeth0  (exact)
#   COLL_SOCKET_IFNAME=^=cbeth0  -> cbib0   (exclude exact)
#   COLL_SOCKET_IFNAME==cbib     -> no interface: fails (exit != 0), no hang
#   COLL_IF_IP=10.78.0.<i>       -> cbib0 (wins over COLL_SOCKET_IFNAME=cbeth)
# Checked three ways: every rank's COLL_DEBUG=INFO log names the interface and
# its own address of that net, the data listeners are on that address, and the
# kernel's byte counters (/proc/net/dev inside the host) show the collective's
# traffic on that interface and not on the other.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
. "$ROOT/tests/lib/netns.sh"
[ -x "$B/all_reduce_test" ] || { echo "FAIL: missing $B/all_reduce_test"; exit 1; }
fail=0

netns_up 2 --second-if || { echo "FAIL: netns_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"
port=29600
LAYOUT="2 2"
# a wrong choice (e.g. loopback advertised across hosts) must fail, not stall the suite
export NETNS_RANK_TIMEOUT=45

rxbytes() {   # rxbytes HOST IF: received bytes of IF inside HOST
    netns_exec "$1" cat /proc/net/dev | awk -v i="$2:" '$1 == i {print $2}'
}

case_ok() {   # case_ok NAME WANT_IF "ENV..." : one launch, checks
    local name=$1 want=$2 envs=$3 other net r h out rc res
    case $want in cbeth0) other=cbib0 net=10.77.0 ;; cbib0) other=cbeth0 net=10.78.0 ;; esac
    port=$((port + 1))
    out=$W/$name
    local want0 other0 want1 other1
    want0=$(rxbytes 2 $want); other0=$(rxbytes 2 $other)
    NETNS_MASTER_PORT=$port netns_env_launch "$out" "$LAYOUT" \
        env COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=BOOTSTRAP,TCP $envs \
        "$B/all_reduce_test" -b 1M -e 1M -n 10 -w 1 -c 1 -p 2
    rc=$?
    want1=$(rxbytes 2 $want); other1=$(rxbytes 2 $other)
    res=$(netns_check_rows "$out.r0.out")
    if [ $rc -ne 0 ] || ! netns_check_rows "$out.r0.out" >/dev/null; then
        echo "FAIL: $name ($envs): $rc rank(s) failed, $res"; fail=1; return
    fi
    local bad=0
    for r in 0 1 2 3; do
        h=$((r / 2 + 1))
        if ! grep -q "using interface $want address $net.$h\b" "$out.r$r.err"; then
            echo "FAIL: $name: rank $r (cbh$h) did not use $want $net.$h:"
            grep -E 'using interface|listener' "$out.r$r.err" | head -2 | sed 's/^/    /'
            bad=1
        fi
        if ! grep -q "TCP data listener on $net.$h:[0-9]* (interface $want)" "$out.r$r.err"; then
            echo "FAIL: $name: rank $r: data listener not on $want $net.$h:"
            grep 'listener' "$out.r$r.err" | head -2 | sed 's/^/    /'
            bad=1
        fi
    done
    local dw=$((want1 - want0)) dother=$((other1 - other0))
    # 10+1 allreduces of 1 MiB on 4 ranks over 2 hosts move several MiB into cbh2
    if [ $dw -lt 4000000 ] || [ $dother -gt 500000 ]; then
        echo "FAIL: $name: cbh2 received $dw bytes on $want, $dother on $other"
        bad=1
    fi
    [ $bad = 0 ] && echo "ok: $name ($envs): $res, all ranks on $want ($net.x), cbh2 rx $want +$dw bytes, $other +$dother"
    [ $bad = 0 ] || fail=1
}

case_ok default cbeth0 ""
case_ok prefix cbib0 "COLL_SOCKET_IFNAME=cbib"
case_ok exclude-prefix cbeth0 "COLL_SOCKET_IFNAME=^cbib"
case_ok exact cbeth0 "COLL_SOCKET_IFNAME==cbeth0"
case_ok exclude-exact cbib0 "COLL_SOCKET_IFNAME=^=cbeth0"

# COLL_IF_IP (per host, so not through case_ok's common env): wins over IFNAME
port=$((port + 1))
out=$W/if-ip
pids=()
r=0
for h in 1 2; do
    for l in 0 1; do
        netns_exec $h env RANK=$r WORLD_SIZE=4 LOCAL_RANK=$l LOCAL_WORLD_SIZE=2 MASTER_ADDR=10.77.0.1 \
            MASTER_PORT=$port COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=BOOTSTRAP,TCP COLL_SOCKET_IFNAME=cbeth \
            COLL_IF_IP=10.78.0.$h timeout -k 5 90 "$B/all_reduce_test" -b 64K -e 64K -n 2 -w 1 -p 2 \
            >"$out.r$r.out" 2>"$out.r$r.err" &
        pids[$r]=$!
        r=$((r + 1))
    done
done
bad=0
for r in 0 1 2 3; do
    wait ${pids[$r]} || { echo "FAIL: COLL_IF_IP: rank $r exit $?: $(tail -n 1 "$out.r$r.err")"; bad=1; }
    h=$((r / 2 + 1))
    grep -q "TCP data listener on 10.78.0.$h:" "$out.r$r.err" ||
        { echo "FAIL: COLL_IF_IP: rank $r not listening on 10.78.0.$h: $(grep listener "$out.r$r.err")"; bad=1; }
done
netns_check_rows "$out.r0.out" >/dev/null || { echo "FAIL: COLL_IF_IP: $(netns_check_rows "$out.r0.out")"; bad=1; }
[ $bad = 0 ] && echo "ok: COLL_IF_IP=10.78.0.<i> with COLL_SOCKET_IFNAME=cbeth: all ranks on 10.78.0.x"
[ $bad = 0 ] || fail=1

# No interface matches: every rank fails (setup error), none hangs.
port=$((port + 1))
s=$(date +%s)
NETNS_RANK_TIMEOUT=60 NETNS_MASTER_PORT=$port netns_env_launch "$W/nomatch" "$LAYOUT" \
    env COLL_SOCKET_IFNAME==cbib "$B/all_reduce_test" -b 8K -e 8K -n 2 -w 1 -p 2 >/dev/null
nbad=$?
el=$(( $(date +%s) - s ))
if [ $nbad -ne 4 ]; then
    echo "FAIL: COLL_SOCKET_IFNAME==cbib (no such interface): only $nbad of 4 ranks failed"; fail=1
elif [ $el -ge 55 ]; then
    echo "FAIL: COLL_SOCKET_IFNAME==cbib: ranks hung until the timeout (${el}s)"; fail=1
else
    echo "ok: COLL_SOCKET_IFNAME==cbib fails on every rank in ${el}s: $(grep -h -m1 -i 'interface' "$W"/nomatch.r1.err | head -1)"
fi

[ $fail -eq 0 ] && echo "33-ifname: all passed"
exit $fail
