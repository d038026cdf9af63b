#!/usr/bin/env bash
# timeout: 420
# Beyond one host, torchrun-style environment launch (RANK WORLD_SIZE
# LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT) on simulated hosts
# (tests/lib/netns.sh: network + UTS + mount namespaces on a bridge):
# 2 hosts x 2 ranks and 3 hosts x (2,1,2) ranks, MASTER_ADDR = cbh1's address,
# every one of the ten test executables with -b 8K -e 1M -f 4 and the check on.
# Every rank must exit 0 and rank 0's rows must all be "success"; rank 0's
# INFO log must show the expected number of hosts (shm within, tcp across).
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
. "$ROOT/tests/lib/netns.sh"
TESTS="all_reduce all_gather all_gatherv reduce_scatter reduce_scatterv reduce broadcast scatter alltoall alltoallv"
for t in $TESTS; do [ -x "$B/${t}_test" ] || { echo "FAIL: missing $B/${t}_test"; exit 1; }; done
fail=0

netns_up 3 || { echo "FAIL: netns_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"
port=29500
export NETNS_RANK_TIMEOUT=90

for layout in "2 2" "2 1 2"; do
    world=0 nhosts=0
    for n in $layout; do world=$((world + n)); nhosts=$((nhosts + 1)); done
    for t in $TESTS; do
        port=$((port + 1))      # a fresh port per job (no TIME_WAIT surprises)
        args="-b 8K -e 1M -f 4 -c 1 -n 3 -w 1 -p 2"
        # rooted collectives: root on the last host for the uneven layout
        case $t in reduce|broadcast|scatter) [ $nhosts = 3 ] && args="$args -r $((world - 1))" ;; esac
        out=$W/${t}-${nhosts}h
        what="$t on hosts of ($layout) ranks"
        s=$(date +%s.%N)
        NETNS_MASTER_PORT=$port NETNS_RANK0_ENV="COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=INIT" \
            netns_env_launch "$out" "$layout" "$B/${t}_test" $args
        rc=$?
        el=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
        res=$(netns_check_rows "$out.r0.out")
        rows_ok=$?
        if [ $rc -ne 0 ] || [ $rows_ok -ne 0 ]; then
            echo "FAIL: $what: $rc rank(s) failed, $res"
            tail -n 3 "$out.r0.out" | sed 's/^/    /'
            fail=1
            continue
        fi
        if ! grep -q "INIT topology: $world ranks on $nhosts host(s)" "$out.r0.err"; then
            echo "FAIL: $what: rank 0 did not see $world ranks on $nhosts hosts:"
            grep -i topology "$out.r0.err"
            fail=1
            continue
        fi
        echo "ok: $what: $res (${el}s)"
    done
done

[ $fail -eq 0 ] && echo "31-multihost-env: all passed"
exit $fail
