#!/usr/bin/env bash
# timeout: 240
# parallel: yes
# collbench sim: the command-line path (every algorithm at p = 1..64 with
# data checked is build/tests/test_sim_algos, in one process). Here: one
# --verify --compare-algos run per collective on an uneven 3-host layout and
# on one host of 5 (every usable algorithm's row a success, auto's choice
# marked; the shared-memory ones run on the host), the scalable collectives
# at 4,096 ranks on 512 hosts and allreduce / alltoall at 1,000 on 125 (128K,
# checked); determinism; the command-line errors.
set -u
CB=$CB_O/bin/collbench
[ -x "$CB" ] || { echo "missing $CB (run make)"; exit 1; }
rc=0
colls="allreduce allgather allgatherv reduce_scatter reduce_scatterv reduce broadcast scatter gather alltoall alltoallv"
declare -A ran
for run in "-n 7 -H 3,1,3 -d fp16 -o max -r 6" "-n 5 -H 1 -d int32 -o sum -r 3"; do
  for c in $colls; do
    out=$("$CB" sim $run -c "$c" -b 0 -e 100000 -f 9 --verify --compare-algos 2>&1)
    st=$?
    if [ $st -ne 0 ] || echo "$out" | grep -qE '\| (failed|error) |  (failed|error)' ||
       ! echo "$out" | grep -q ' success  <- auto'; then
        echo "== sim $run -c $c: exit $st"
        echo "$out" | grep -vE 'success|not usable|^data_size' | head -10
        rc=1
    fi
    for a in $(echo "$out" | awk '/^#   / && / success/ {print $2}' | sort -u); do ran[$c/$a]=1; done
  done
done
for k in allreduce/direct allreduce/cma allgather/direct alltoall/direct reduce/direct allreduce/hier; do
    [ -n "${ran[$k]:-}" ] || { echo "== $k did not run"; rc=1; }
done
echo "verified through the CLI: ${#ran[@]} collective/algorithm pairs"

# scale: every row a success, with the algorithms auto picks
scale() {   # scale N HOSTS COLL
    local t0 out st rows
    t0=$(date +%s.%N)
    out=$("$CB" sim -n "$1" -H "$2" -c "$3" --verify -b 128K -e 128K 2>&1)
    st=$?
    rows=$(echo "$out" | grep -c '| success ')
    printf '%s ranks on %s hosts, %s: %s success rows, %.1f s\n' "$1" "$2" "$3" "$rows" \
        "$(echo "$(date +%s.%N) - $t0" | bc)"
    if [ $st -ne 0 ] || [ "$rows" -ne 1 ] || echo "$out" | grep -qE '\| (failed|error) '; then
        echo "== sim -n $1 -H $2 -c $3 --verify: exit $st"; echo "$out" | tail -4; rc=1
    fi
}
for c in allreduce allgather reduce_scatter broadcast; do scale 4096 512 $c; done
scale 1000 125 allreduce
scale 1000 125 alltoall

# deterministic: the same prediction twice
a=$("$CB" sim -n 64 -H 8 -c alltoall -b 1M -e 1M --json | grep -o '"time_us": [0-9.]*')
b=$("$CB" sim -n 64 -H 8 -c alltoall -b 1M -e 1M --json | grep -o '"time_us": [0-9.]*')
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "== sim not deterministic: '$a' vs '$b'"; rc=1; }

# --buf-huge: the selection of one host follows the page size as the test executables' does
# (2 ranks, AllGather 1M: cma on 2 MiB pages, the staged direct algorithm on 4 KiB; test_select's HUGE rows)
for hb in "1 cma" "0 direct"; do
    set -- $hb
    alg=$("$CB" sim -n 2 -c allgather -b 1M -e 1M --buf-huge "$1" --json | grep -o '"algorithm": "[a-z_]*"' | head -1)
    [ "$alg" = "\"algorithm\": \"$2\"" ] || { echo "== sim --buf-huge $1: $alg, want $2"; rc=1; }
done
"$CB" sim -n 2 -c allreduce -b 128K -e 128K --buf-huge 1 | grep -q "buffers on 2 MiB pages" ||
    { echo "== sim --buf-huge 1: the header does not say so"; rc=1; }

# bad input: exit 2, one line naming the value
for bad in "-n 0 -c allreduce" "-n 4 -c allreduc" "-n 4 -H 5 -c allreduce" "-n 4 -H 2,x -c allreduce" \
           "-n 5 -H 2,2 -c allreduce" "-n 4 -c reduce -r 4" "-n 4 -c allreduce --algo nope" \
           "-n 4 -c allreduce -d fp33" "-n 4 -c allreduce --net-gbps 0" "-n 4 -c allreduce --bogus" "-n 4 -c allreduce --buf-huge 2"; do
    msg=$("$CB" sim $bad 2>&1 >/dev/null)
    st=$?
    if [ $st -ne 2 ] || [ "$(echo "$msg" | wc -l)" -ne 1 ]; then
        echo "== collbench sim $bad: exit $st (want 2), message: $msg"; rc=1
    fi
done
exit $rc
