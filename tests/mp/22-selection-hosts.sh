#!/usr/bin/env bash
# timeout: 180
# Selection across simulated hosts (one rank per COLL_HOST_ID, env launch on
# 127.0.0.1), as collbench topo reports it: the network probe at init sets the
# tcp constants (COLL_NET_PROBE=0 keeps the built-in ones, COLL_TUNING_FILE
# wins), COLL_PEERS_MAX from the environment keeps the O(p)-peer algorithms
# (pairwise alltoall) out, and the log-step allgatherv / reduce_scatterv
# algorithms are chosen for small sizes. The per-layout rules (past the
# default COLL_PEERS_MAX, no gather/scatter/alltoall(v) algorithm that talks
# to every member) are asserted by build/tests/test_select.
set -u
. "$(dirname "$0")/../lib/common.sh"
CB=${CB_O:?}/bin/collbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

topo() {   # topo NAME P ENV...: collbench topo on P simulated hosts of one rank; rank 0's output in $tmp/NAME
    local name=$1 p=$2 port r pids=(); shift 2
    port=$(free_port)
    for r in $(seq 0 $((p - 1))); do
        env RANK=$r WORLD_SIZE=$p LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_HOST_ID=simhost$r \
            COLL_IF_IP=127.0.0.1 "$@" timeout 90 "$CB" topo -q >"$tmp/$name.$r" 2>&1 &
        pids+=($!)
    done
    local rc=0
    for r in "${pids[@]}"; do wait "$r" || rc=1; done
    cp "$tmp/$name.0" "$tmp/$name"
    return $rc
}
row() { awk -v c="$2" '$1 == c {$1 = ""; print}' "$tmp/$1" | xargs; }

if topo many 6 COLL_PEERS_MAX=4; then pass "topo on 6 hosts"; else fail "topo on 6 hosts: $(tail -3 "$tmp/many")"; fi
grep -q '^Network .*(measured at init between the leaders of hosts 0 and 1)' "$tmp/many" &&
    pass "network probed: $(grep '^Network' "$tmp/many")" || fail "no probe: $(grep '^Network' "$tmp/many")"
for c in alltoall; do
    r=$(row many $c)
    case " $r " in *" pairwise "* | *" linear "* | " ") fail "$c past COLL_PEERS_MAX: '$r'" ;;
                   *) pass "$c past COLL_PEERS_MAX: $r" ;; esac
done
for c in allgatherv:bruck reduce_scatterv:halving; do
    r=$(row many ${c%%:*})
    [ "${r%% *}" = "${c#*:}" ] && pass "${c%%:*} 1K: ${c#*:}" || fail "${c%%:*}: '$r', expected ${c#*:} at 1K"
done

topo off 3 COLL_NET_PROBE=0 || fail "topo COLL_NET_PROBE=0"
grep -q '^Network .*3.3 us .*(built-in: COLL_NET_PROBE=0)' "$tmp/off" && pass "probe off" ||
    fail "probe off: $(grep '^Network' "$tmp/off")"
printf 'tcp 40 1.5 12 0 7\n' >"$tmp/tune"
topo file 3 COLL_TUNING_FILE="$tmp/tune" || fail "topo COLL_TUNING_FILE"
grep -q '^Network .*latency 40.0 us + 7.0 us a step, 1.50 GB/s (COLL_TUNING_FILE)' "$tmp/file" && pass "tuning file" ||
    fail "tuning file: $(grep '^Network' "$tmp/file")"
finish
