#!/usr/bin/env bash
# timeout: 180
# parallel: yes
# The test executables' check finds wrong data: COLL_TEST_PLANT=RANK:INDEX makes
# one rank change one element of what it checks. Every executable, 3 ranks, the
# plant on rank 2 (rank 1 receives nothing in the v-tests' unequal layout) and
# the root there too: exit 1, the row "failed", nccl-tests' footer counting the
# wrong elements, the first mismatch named, the JSON's wrong count; the same run
# without the plant passes. In place too, where a form exists. A bad value is
# refused (exit 2, one line).
. "$(dirname "$0")/../lib/common.sh"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for t in all_reduce all_gather all_gatherv reduce_scatter reduce_scatterv reduce broadcast scatter alltoall alltoallv; do
    args=(-p 3 -b 12K -e 12K -n 2 -w 1 -r 2)
    "$BIN/${t}_test" "${args[@]}" >"$T/$t.ok" 2>&1; rc=$?
    check "$t without a plant: exit $rc" [ $rc -eq 0 ]
    COLL_TEST_PLANT=2:5 "$BIN/${t}_test" "${args[@]}" --json "$T/$t.json" >"$T/$t.out" 2>&1; rc=$?
    check "$t with one element changed on rank 2: exit $rc (want 1)" [ $rc -eq 1 ]
    has "$T/$t.out" "check buf[5] error" "$t: the first mismatch named"
    check "$t: the row says failed" grep -qE '^12288 +\| .*\| failed' "$T/$t.out"
    check "$t: the footer counts it" grep -qE '^# Out of bounds values : [1-9][0-9]* FAILED' "$T/$t.out"
    w=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["wrong"])' "$T/$t.json" 2>&1)
    check "$t: JSON wrong = $w (>= 1)" [ "${w:-0}" -ge 1 ] 2>/dev/null
done
for t in all_reduce reduce_scatter all_gather; do
    COLL_TEST_PLANT=2:5 "$BIN/${t}_test" -p 3 -b 12K -e 12K -n 2 -w 1 --in-place 1 >"$T/$t.ip" 2>&1; rc=$?
    check "$t in place with a plant: exit $rc (want 1)" [ $rc -eq 1 ]
done
out=$(COLL_TEST_PLANT=2 "$BIN/all_reduce_test" -p 2 -b 4K -e 4K 2>&1); rc=$?
check "COLL_TEST_PLANT=2 refused (exit $rc): $out" [ $rc -eq 2 ] && echo "$out" | grep -q "allowed RANK:INDEX"
finish
