#!/usr/bin/env bash
# timeout: 120
# The simulated-hosts infrastructure (tests/lib/netns.sh) on its own: three
# hosts with IPv6 and a second interface; distinct hostnames and host ids,
# ICMP between all of them on both nets and IPv6, private /dev/shm and
# /etc/hosts, the root namespace untouched, ssh into each host from the root
# namespace and between hosts; then cleanup leaves no namespace, process,
# mount or state behind: through netns_down, through the guardian when the
# test shell is SIGKILLed, and through the stale reaper when the guardian dies too.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/lib/netns.sh"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

root_host=$(hostname)
root_addrs=$(ip -br addr)
mounts_before=$(wc -l </proc/mounts)

netns_up 3 --ipv6 --second-if || { echo "FAIL: netns_up"; exit 1; }
netns_sshd_up || { echo "FAIL: netns_sshd_up"; exit 1; }

for i in 1 2 3; do
    h=$(netns_exec $i hostname)
    [ "$h" = "cbh$i" ] || bad "host $i: hostname '$h'"
    id=$(netns_exec $i sh -c 'echo $COLL_HOST_ID')
    [ "$id" = "cbh$i" ] || bad "host $i: COLL_HOST_ID '$id'"
    netns_exec $i ip -br addr show cbeth0 | grep -q "10.77.0.$i/24" || bad "host $i: no 10.77.0.$i on cbeth0"
    netns_exec $i ip -br addr show cbib0 | grep -q "10.78.0.$i/24" || bad "host $i: no 10.78.0.$i on cbib0"
    netns_exec $i ip -br addr show cbeth0 | grep -q "fd77::$i/64" || bad "host $i: no fd77::$i on cbeth0"
    netns_exec $i ip -br link show lo | grep -q UNKNOWN || bad "host $i: lo not up"
    [ "$(netns_exec $i getent hosts cbh3 | awk '{print $1}')" = 10.77.0.3 ] || bad "host $i: cbh3 does not resolve"
    for j in 1 2 3; do
        netns_ping $i 10.77.0.$j || bad "ping cbh$i -> 10.77.0.$j"
        netns_ping $i 10.78.0.$j || bad "ping cbh$i -> 10.78.0.$j"
        netns_ping $i fd77::$j || bad "ping6 cbh$i -> fd77::$j"
    done
    # ssh from the root namespace (ProxyCommand through the switch namespace)
    out=$(timeout 20 ssh -F "$NETNS_SSH_CONFIG" cbh$i 'echo $(hostname) ${SSH_CONNECTION%% *}')
    [ "$out" = "cbh$i 10.77.0.254" ] || bad "ssh cbh$i from the root namespace: '$out'"
done
[ "$(hostname)" = "$root_host" ] || bad "root hostname changed to $(hostname)"
[ "$(ip -br addr)" = "$root_addrs" ] || bad "root namespace addresses changed"
ip -br addr | grep -qE '10\.7[78]\.|fd77:' && bad "a test address leaked into the root namespace"

# ssh between hosts (by name, resolved inside the hosts), as mpirun does
out=$(netns_exec 1 timeout 20 ssh -F "$NETNS_SSH_CONFIG_IN" cbh2 'hostname; echo ${SSH_CONNECTION%% *}' | tr '\n' ' ')
[ "$out" = "cbh2 10.77.0.1 " ] || bad "ssh cbh1 -> cbh2: '$out'"
out=$(netns_exec 3 timeout 20 "$NETNS_SSH_WRAPPER" 10.77.0.1 hostname)
[ "$out" = cbh1 ] || bad "ssh wrapper cbh3 -> 10.77.0.1: '$out'"
out=$(netns_exec 2 timeout 20 "$NETNS_SSH_WRAPPER" fd77::3 hostname)
[ "$out" = cbh3 ] || bad "ssh cbh2 -> fd77::3: '$out'"
out=$(netns_exec 1 timeout 20 "$NETNS_SSH_WRAPPER" cbh2 "$ROOT/tests/lib/rank-wrapper.sh sh -c 'echo \$COLL_HOST_ID'")
[ "$out" = cbh2 ] || bad "rank-wrapper over ssh: COLL_HOST_ID '$out'"

# private /dev/shm per host
netns_exec 1 sh -c 'echo x >/dev/shm/cb30-probe'
netns_exec 1 test -e /dev/shm/cb30-probe || bad "cbh1 /dev/shm not writable"
netns_exec 2 test -e /dev/shm/cb30-probe && bad "cbh2 sees cbh1's /dev/shm"
[ -e /dev/shm/cb30-probe ] && bad "root sees cbh1's /dev/shm"

# cleanup through netns_down
dir=$NETNS_DIR
ids=" $(tr '\n' ' ' <"$dir/nsids")"
holders=$(awk '{print $1}' "$dir/holders")
read -r guard _ <"$dir/guardian"
n=$(netns_pids | wc -l)
[ "$n" -ge 7 ] || bad "only $n processes in the namespaces (4 holders + 3 sshd expected)"
netns_down
left=$(_netns_scan "$ids")
[ -z "$left" ] && [ -z "$(_netns_scan "$ids")" ] || bad "processes left in the namespaces: $left"
for p in $holders $guard; do kill -0 "$p" 2>/dev/null && bad "pid $p still alive"; done
[ -e "$dir" ] && bad "$dir left"
lsns -t net -n -o NS 2>/dev/null | while read -r ino; do
    case "$ids" in *"net:[$ino]"*) echo "FAIL: namespace $ino still listed"; exit 1 ;; esac
done || fail=1
grep -qE 'cbh[0-9]-shm|collbench-netns' /proc/mounts && bad "mounts left: $(grep -E 'cbh[0-9]-shm|collbench-netns' /proc/mounts)"
[ "$(wc -l </proc/mounts)" = "$mounts_before" ] || bad "mount count changed"
[ "$(ip -br addr)" = "$root_addrs" ] || bad "root namespace addresses changed after cleanup"

# A test shell killed with SIGKILL: its guardian cleans up.
crash_run() {   # starts a shell that brings up 2 hosts + sshd, prints its state dir, then hangs
    bash -c '. "$1"; netns_up 2 || exit 1; netns_sshd_up || exit 1; echo "$NETNS_DIR"; exec sleep 300' \
        crash "$ROOT/tests/lib/netns.sh" >"/tmp/cb30-$$.dir" 2>&1 &
    crash_pid=$!
    for _ in $(seq 1 200); do [ -s "/tmp/cb30-$$.dir" ] && break; sleep 0.1; done
    crash_dir=$(head -1 "/tmp/cb30-$$.dir")
    rm -f "/tmp/cb30-$$.dir"
}
crash_run
if [ -d "$crash_dir" ]; then
    ids=" $(tr '\n' ' ' <"$crash_dir/nsids")"
    kill -9 $crash_pid
    wait $crash_pid 2>/dev/null
    for _ in $(seq 1 100); do [ -e "$crash_dir" ] || break; sleep 0.1; done
    [ -e "$crash_dir" ] && bad "guardian did not remove $crash_dir"
    [ -n "$(_netns_scan "$ids")" ] && bad "guardian left processes: $(_netns_scan "$ids")"
else
    bad "crash run did not start: $crash_dir"; kill -9 $crash_pid 2>/dev/null
fi

# Guardian killed as well: the next netns_up (here: --reap-stale) reaps it.
crash_run
if [ -d "$crash_dir" ]; then
    ids=" $(tr '\n' ' ' <"$crash_dir/nsids")"
    read -r g _ <"$crash_dir/guardian"
    kill -9 "$g" $crash_pid
    wait $crash_pid 2>/dev/null
    sleep 0.5
    [ -n "$(_netns_scan "$ids")" ] || bad "nothing left to reap (test is void)"
    bash "$ROOT/tests/lib/netns.sh" --reap-stale 2>&1
    [ -e "$crash_dir" ] && bad "stale reaper did not remove $crash_dir"
    [ -n "$(_netns_scan "$ids")" ] && bad "stale reaper left processes: $(_netns_scan "$ids")"
else
    bad "crash run did not start: $crash_dir"; kill -9 $crash_pid 2>/dev/null
fi
grep -qE 'cbh[0-9]-shm|collbench-netns' /proc/mounts && bad "mounts left after crash runs"

[ $fail -eq 0 ] && echo "30-netns-infra: all passed"
exit $fail
