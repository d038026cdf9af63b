#!/usr/bin/env bash
# timeout: 300
# scripts/pre-test-check.sh on three simulated hosts (tests/lib/netns.sh, sshd
# in each), run from inside cbh1 like on a login node, with
# --ssh "ssh -F <in-namespace config>" against cbh1 cbh2 cbh3:
#   healthy     every line OK or WARN (the 2-core VM is busy: cpu WARN), exit 0
# then three breakages at once, one run, which must give FAIL lines for
# exactly those hosts and checks (no other FAIL: each is told apart from the
# others) and a non-zero exit:
#   ssh         cbh2's sshd stopped                           -> FAIL cbh2 ssh
#   version     in cbh3's private mount namespace a fake all_reduce_test that
#               says 9.9.9 is bind-mounted over the real one   -> FAIL cbh3 version
#   port        cbh3 silently drops TCP to the tested port (netns_blackhole of
#               tests/lib/netns_extra.sh: tc ingress u32 + mirred into a dead
#               veth, a firewall DROP; this kernel has no netem/gact and
#               neither iptables nor nft is installed)         -> FAIL cbh3 port 18515
#               (from cbh1: the pairs with cbh2 are not tried, its ssh failed)
# (Until 2026-12 each breakage had its own run and a healthy run ended the
# test: five runs of the script, 4 of them repeating the same ~30 checks.)
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
PTC=$ROOT/scripts/pre-test-check.sh
. "$ROOT/tests/lib/netns.sh"
. "$ROOT/tests/lib/netns_extra.sh"
for f in "$B/all_reduce_test" "$B/collbench" "$PTC"; do [ -x "$f" ] || { echo "FAIL: missing $f"; exit 1; }; done
command -v mpirun.openmpi >/dev/null || { echo "FAIL: mpirun.openmpi not installed"; exit 1; }
. "$ROOT/tests/lib/common.sh"

netns_up 3 || { echo "FAIL: netns_up"; exit 1; }
netns_sshd_up || { echo "FAIL: netns_sshd_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"
PORT=18515

ptc() {   # ptc NAME: run the check from cbh1, output in $W/NAME.out, sets rc
    netns_exec 1 timeout -k 5 150 "$PTC" --ssh "ssh -F $NETNS_SSH_CONFIG_IN" --bin "$B" \
        --mpirun mpirun.openmpi --port $PORT --timeout 20 cbh1 cbh2 cbh3 >"$W/$1.out" 2>&1
    rc=$?
    fails=$(grep '^FAIL' "$W/$1.out")
}

# is_line ST HOST CHECK: filter of report lines "%-5s %-16s %-18s %s" (status
# regex, host, check: the check is columns 24..41, it may contain a blank)
is_line() {
    awk -v s="$1" -v h="$2" -v c="$3" '{ k = substr($0, 24, 18); sub(/ +$/, "", k) }
        $1 ~ "^(" s ")$" && $2 == h && k == c'
}

# expect NAME HOST CHECK [HOST CHECK]...: exit non-zero, >= 1 FAIL line for
# each HOST and CHECK, and no FAIL line for anything else
expect() {
    local name=$1 other=$fails mine
    shift
    echo "--- $name (exit $rc):"
    grep -E '^(FAIL|summary)' "$W/$name.out" | sed 's/^/    /'
    [ $rc -ne 0 ] || fail "$name: exit 0 although hosts are broken"
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "$name: pre-test-check.sh hung (killed by timeout)"
    while [ $# -ge 2 ]; do
        mine=$(echo "$fails" | is_line FAIL "$1" "$2")
        if [ -n "$mine" ]; then
            other=$(echo "$other" | grep -vxF -f <(echo "$mine"))
            echo "ok: $name: FAIL for $1 $2"
        else
            fail "$name: no FAIL line for $1 / $2"
        fi
        shift 2
    done
    [ -z "$other" ] || fail "$name: FAIL lines for other hosts/checks: $other"
    grep -q '^summary: ' "$W/$name.out" || fail "$name: no summary line"
}

healthy() {
    local name=$1
    ptc "$name"
    echo "--- $name (exit $rc):"
    cat "$W/$name.out" | sed 's/^/    /'
    [ $rc -eq 0 ] || fail "$name: exit $rc (want 0)"
    [ -z "$fails" ] || fail "$name: FAIL lines on healthy hosts"
    n=$(grep -cE '^(OK|WARN) ' "$W/$name.out")
    [ "$n" -ge 30 ] || fail "$name: only $n OK/WARN lines (want 8 per host + 3 interfaces + 6 port pairs)"
    for h in cbh1 cbh2 cbh3; do
        for c in ssh version mpi cpu memory dev-shm open-files somaxconn interface "port $PORT"; do
            is_line 'OK|WARN' "$h" "$c" <"$W/$name.out" | grep -q . || fail "$name: no OK/WARN line for $h $c"
        done
    done
    [ "$FAILS" -eq 0 ] && echo "ok: $name: all OK/WARN, exit 0"
}

healthy healthy

# (a) ssh refused on cbh2
netns_sshd_stop 2 || fail "could not stop cbh2's sshd"
# (b) another version on cbh3 (its own mount namespace: cbh1 and cbh2 unaffected)
fake=$W/fake_all_reduce_test
printf '#!/bin/sh\necho "all_reduce_test (collbench) 9.9.9"\n' >"$fake"
chmod +x "$fake"
netns_exec 3 mount --bind "$fake" "$B/all_reduce_test" || fail "bind mount on cbh3 failed"
[ "$("$B/all_reduce_test" --version)" != "all_reduce_test (collbench) 9.9.9" ] || fail "the fake leaked into the root namespace"
# (c) TCP to the tested port dropped on cbh3 (ssh and everything else still work)
netns_blackhole 3 $PORT || fail "could not block port $PORT on cbh3"

ptc broken
expect broken cbh2 ssh cbh3 version cbh3 "port $PORT"
netns_blackhole_off 3
netns_exec 3 umount "$B/all_reduce_test" || fail "umount on cbh3 failed"
finish
