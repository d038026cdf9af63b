#!/usr/bin/env bash
# timeout: 180
# IPv6 across simulated hosts (tests/lib/netns.sh --ipv6: cbeth0 has 10.77.0.i
# and fd77::i/64). torchrun-style launch, 2 hosts x 2 ranks, all_reduce
# -b 8K -e 1M -f 4 checked, MASTER_ADDR=fd77::1:
#   1. COLL_SOCKET_FAMILY=AF_INET6 on dual-stack hosts: the rendezvous store,
#      every rank's interface address and data listener are fd77:: ones;
#   2. IPv6-only hosts (IPv4 addresses removed), no COLL_SOCKET_FAMILY: the
#      default picks the IPv6 address by itself.
# (COLL_SOCKET_FAMILY also applies to resolving MASTER_ADDR: AF_INET6 with an
# IPv4 MASTER_ADDR fails at once with "cannot resolve host", by design.)
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
. "$ROOT/tests/lib/netns.sh"
[ -x "$B/all_reduce_test" ] || { echo "FAIL: missing $B/all_reduce_test"; exit 1; }
fail=0

netns_up 2 --ipv6 || { echo "FAIL: netns_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"
export NETNS_RANK_TIMEOUT=60

v6_case() {   # v6_case NAME MASTER_ADDR PORT "ENV..."
    local name=$1 master=$2 port=$3 envs=$4 out=$W/$1 r h bad=0 res
    NETNS_MASTER_ADDR=$master NETNS_MASTER_PORT=$port netns_env_launch "$out" "2 2" \
        env COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=BOOTSTRAP,TCP,INIT $envs \
        "$B/all_reduce_test" -b 8K -e 1M -f 4 -c 1 -n 3 -w 1 -p 2
    local rc=$?
    res=$(netns_check_rows "$out.r0.out")
    if [ $rc -ne 0 ] || ! netns_check_rows "$out.r0.out" >/dev/null; then
        echo "FAIL: $name: $rc rank(s) failed, $res"; fail=1; return
    fi
    for r in 0 1 2 3; do
        h=$((r / 2 + 1))
        grep -q "using interface cbeth0 address fd77::$h " "$out.r$r.err" ||
            { echo "FAIL: $name: rank $r: $(grep -m1 'using interface' "$out.r$r.err")"; bad=1; }
        grep -q "TCP data listener on \[fd77::$h\]:" "$out.r$r.err" ||
            { echo "FAIL: $name: rank $r: $(grep -m1 'listener' "$out.r$r.err")"; bad=1; }
    done
    grep -q "INIT topology: 4 ranks on 2 host(s)" "$out.r0.err" ||
        { echo "FAIL: $name: $(grep -m1 topology "$out.r0.err")"; bad=1; }
    case $master in
        *:*) grep -q "rendezvous store listening on \[$master\]:$port" "$out.r0.err" ||
                 { echo "FAIL: $name: $(grep -m1 'rendezvous' "$out.r0.err")"; bad=1; } ;;
    esac
    [ $bad = 0 ] && echo "ok: $name: $res, every rank on [fd77::<host>] ($(grep -m1 -o 'rendezvous store listening on [^ ]*' "$out.r0.err"))"
    [ $bad = 0 ] || fail=1
}

v6_case dual-stack fd77::1 29801 "COLL_SOCKET_FAMILY=AF_INET6"

for i in 1 2; do netns_exec $i ip addr del 10.77.0.$i/24 dev cbeth0 || { echo "FAIL: cannot remove IPv4 from cbh$i"; fail=1; }; done
netns_exec 1 ip -br addr show cbeth0 | grep -q '10\.77' && { echo "FAIL: IPv4 still on cbh1"; fail=1; }
v6_case v6-only fd77::1 29803 ""

[ $fail -eq 0 ] && echo "34-ipv6: all passed"
exit $fail
