#!/usr/bin/env bash
# timeout: 600
# The tree AllReduce (double binary tree) in the algorithm matrix at every rank
# count 1..16, odd ones included (20-matrix stops at 8): counts 0/1/odd/large
# x 12 dtypes x 4 ops, in place and out of place. Small COLL_CHUNK values make
# many chunks (the pipeline, a short last chunk, chunks of one element), and
# simulated hosts (as 21-matrix-hosts) put the trees' links over tcp + shm.
set -u
M=$CB_O/build/tests/matrix
[ -x "$M" ] || { echo "missing $M (run make)"; exit 1; }
rc=0
run() {   # run ENV... -- MATRIX-ARGS...
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    out=$(env "${envs[@]}" timeout 240 "$M" -k allreduce -a tree "$@" 2>&1)
    r=$?
    echo "$out" | grep -E 'FAILED|n/a|matrix:|failed|expected' | head -20
    if [ $r -ne 0 ]; then echo "== ${envs[*]} matrix $* failed (exit $r)"; rc=1; fi
    if ! echo "$out" | grep -qE '^allreduce +tree +ok'; then echo "== ${envs[*]} matrix $*: tree did not run"; rc=1; fi
}
for n in $(seq 1 16); do
    q=""
    [ "$n" -gt 12 ] && q="-q"   # large counts up to 12 ranks
    run -- -n "$n" $q
done
run COLL_CHUNK=1000 -- -n 6
run COLL_CHUNK=64 -- -n 5 -q
run COLL_CHUNK=1 -- -n 3 -q
for layout in "2,2" "2,1,2 -I -q" "1,1,1 -q" "3,1 -q" "1,2,1,3 -I -q" "2,2,2,2" "4,4,4,4 -q" "1,1,1,1,2,1,1,1,1 -q"; do
    run -- -H $layout
done
exit $rc
