#!/usr/bin/env bash
# timeout: 300
# The ring AllReduce across hosts in COLL_NET_CHUNK chunks (default 256K, as COLL_CHUNK): on two
# simulated hosts (tests/lib/netns.sh) with one rank each and with (2,1)
# ranks, COLL_ALGO=allreduce=ring, counts that are no multiple of the chunk
# (750,003 to 12,000,048 fp32: 1 to 6 chunks of a segment, the last one
# short) and the check on: every row "success", with the default net chunk,
# with COLL_NET_CHUNK=2M (bigger than COLL_CHUNK) and with 8K (below
# COLL_CHUNK: COLL_CHUNK applies). The ranks must agree on the chunk (each
# step's pieces are computed on both sides): a disagreement fails the check
# or times out.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
. "$ROOT/tests/lib/netns.sh"
[ -x "$B/all_reduce_test" ] || { echo "FAIL: missing $B/all_reduce_test"; exit 1; }
netns_up 2 || { echo "FAIL: netns_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"
export NETNS_RANK_TIMEOUT=120 COLL_ALGO=allreduce=ring
port=29640 fail=0
for layout in "1 1" "2 1"; do
    for nc in default 2M 8K; do
        port=$((port + 1))
        out=$W/ring-${layout// /_}-$nc
        (
            [ $nc = default ] || export COLL_NET_CHUNK=$nc
            NETNS_MASTER_PORT=$port netns_env_launch "$out" "$layout" "$B/all_reduce_test" \
                -b 3000012 -e 48000192 -f 4 -n 2 -w 1 -c 1 -d fp32
        )
        rc=$?
        res=$(netns_check_rows "$out.r0.out")
        rows_ok=$?
        if [ $rc -eq 0 ] && [ $rows_ok -eq 0 ] && [ "${res%%/*}" -eq 3 ]; then
            echo "ok   ring, hosts of ($layout) ranks, COLL_NET_CHUNK=$nc: $res"
        else
            echo "FAIL ring, hosts of ($layout) ranks, COLL_NET_CHUNK=$nc: exit $rc, $res"
            tail -n 3 "$out.r0.err" | sed 's/^/   | /'
            fail=1
        fi
    done
done
[ $fail -eq 0 ] && echo "all ring net-chunk runs passed"
exit $fail
