#!/usr/bin/env bash
# timeout: 60
# The single-copy (cma) algorithms forced, with data checks, at 2, 3 and 4 real
# processes: the matrix (tests/matrix: every collective that has a cma
# algorithm, counts 0/1/odd/large, every dtype and op, every root, in place and
# out of place) with -a cma, once more with zero-copy buffers at 3 ranks (the
# peer copies become memcpy), and the hccl_test executables under
# COLL_ALGO=<collective>=cma with -c 1 at uneven sizes (1000 B to ~1.4 MB,
# steps of 7; root 1 for the rooted ones): every row "success", and the
# debug log shows cma ran on every rank (no silent fallback). gather has no
# executable: the matrix covers it. Once more at 3 ranks and at 2 with -z with
# every shared-memory copy non-temporal (COLL_COPY_NT_MIN=1), and the direct
# algorithms so (their copies and reductions into the result), private and -z.
set -u
. "$(dirname "$0")/../lib/common.sh"
M=$CB_O/build/tests/matrix
[ -x "$M" ] || { echo "missing $M (run make)"; exit 1; }
kinds="allreduce allgather broadcast scatter gather alltoall"
for v in "-n 2" "-n 3" "-n 4" "-n 3 -z"; do
    out=$(timeout 40 "$M" $v -a cma 2>&1)
    r=$?
    check "matrix $v -a cma: exit 0" test $r -eq 0
    for k in $kinds; do
        check "matrix $v: $k cma ran, no failure" grep -qE "^$k +cma +ok \([1-9][0-9]* cases, 0 failures" <<<"$out"
    done
    echo "$out" | grep -E 'FAILED|n/a|expected' | head -5
done
# every shm copy with non-temporal stores (COLL_COPY_NT_MIN=1: odd lengths and offsets)
for v in "-n 3" "-n 2 -z"; do
    out=$(COLL_COPY_NT_MIN=1 timeout 40 "$M" $v -a cma 2>&1)
    r=$?
    check "matrix $v -a cma, non-temporal copies: exit 0" test $r -eq 0
    for k in $kinds; do
        check "matrix $v, non-temporal: $k cma ran, no failure" \
            grep -qE "^$k +cma +ok \([1-9][0-9]* cases, 0 failures" <<<"$out"
    done
    echo "$out" | grep -E 'FAILED|n/a|expected' | head -5
done
# the staged direct algorithms' copies into the result stream too (coll_direct_copy_out),
# and so do their reductions into it, staged and zero-copy (coll_direct_reduce_out:
# the one-pass k-input kernels with non-temporal stores, any offset)
for v in "-n 3" "-n 3 -z"; do
    out=$(COLL_COPY_NT_MIN=1 timeout 40 "$M" $v -a direct 2>&1)
    check "matrix $v -a direct, non-temporal copies: exit 0" test $? -eq 0
    for k in allreduce reduce reduce_scatter reduce_scatterv allgather alltoall broadcast scatter gather; do
        check "matrix $v, non-temporal: $k direct ran, no failure" \
            grep -qE "^$k +direct +ok \([1-9][0-9]* cases, 0 failures" <<<"$out"
    done
done
for n in 2 3 4; do
    for t in all_reduce:allreduce all_gather:allgather broadcast:broadcast scatter:scatter alltoall:alltoall; do
        exe=${t%%:*} k=${t##*:}
        out=$(COLL_ALGO=$k=cma COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=TUNING timeout 20 "$BIN/${exe}_test" \
            -p $n -b 1000 -e 1500000 -f 7 -c 1 -n 2 -w 1 -r $((n - 1)) -d int32 2>&1)
        r=$?
        rows=$(grep -cE '^ *[0-9]+ +\|.*\| success' <<<"$out")
        ranks=$(grep -E "TUNING $k .*algorithm cma \(forced\)" <<<"$out" | grep -oE '\[rank [0-9]+\]' | sort -u | wc -l)
        check "$k cma, $n ranks: exit 0, 4 rows success, cma on all $n ranks (got $r, $rows, $ranks)" \
            test $r -eq 0 -a "$rows" -eq 4 -a "$ranks" -eq $n
    done
done
check "no process left" no_procs "$BIN/"
check "no shared memory left" no_shm_leftovers
finish
