#!/usr/bin/env bash
# timeout: 600
# mpirun launch: Open MPI and MPICH (MPI only gives rank/size and broadcasts the
# unique id), including the seed's exact command line.
set -u
B=${CB_O:?}/bin
cd "$CB_O"
fail=0
have=0

rows_ok() {   # rows_ok OUTPUT: at least one row, every row success
    local rows ok
    rows=$(printf '%s\n' "$1" | grep -cE '^[0-9]+ +\|')
    ok=$(printf '%s\n' "$1" | grep -E '^[0-9]+ +\|' | awk -F'|' '{gsub(/ /,"",$4); if ($4=="success") n++} END {print n+0}')
    [ "$rows" -gt 0 ] && [ "$rows" -eq "$ok" ]
}

if command -v mpirun.openmpi >/dev/null && [ -f lib/collbench-mpi-openmpi.so ]; then
    have=1
    for t in all_reduce alltoallv broadcast; do
        out=$(timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n 4 "$B/${t}_test" -p 4 -r 3 -b 8K -e 256K -f 4 -n 3 -w 1 2>&1); rc=$?
        if [ $rc -ne 0 ] || ! rows_ok "$out"; then echo "FAIL: Open MPI $t: exit $rc"; echo "$out" | tail -5; fail=1; fi
    done
    # a launcher warning, not an error, for a -p that does not match
    out=$(timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 "$B/all_reduce_test" -p 8 -b 1K -e 1K -n 1 -w 0 2>&1); rc=$?
    [ $rc -eq 0 ] && echo "$out" | grep -q "warning: -p 8 but 2 ranks" || { echo "FAIL: -p mismatch: exit $rc: $out"; fail=1; }
    # -r out of range is refused before MPI starts anything
    out=$(timeout 60 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 "$B/broadcast_test" -r 2 -b 1K -e 1K 2>&1); rc=$?
    [ $rc -ne 0 ] && echo "$out" | grep -q "invalid -r '2'" || { echo "FAIL: Open MPI -r 2 of 2: exit $rc: $out"; fail=1; }
else
    echo "Open MPI or lib/collbench-mpi-openmpi.so missing"
fi

if command -v mpirun.mpich >/dev/null && [ -f lib/collbench-mpi-mpich.so ]; then
    have=1
    for t in all_reduce all_gatherv reduce; do
        out=$(timeout 120 mpirun.mpich -n 4 "$B/${t}_test" -p 4 -r 1 -b 8K -e 256K -f 4 -n 3 -w 1 2>&1); rc=$?
        if [ $rc -ne 0 ] || ! rows_ok "$out"; then echo "FAIL: MPICH $t: exit $rc"; echo "$out" | tail -5; fail=1; fi
    done
else
    echo "MPICH or lib/collbench-mpi-mpich.so missing"
fi

# The seed's exact command (mpirun is whichever MPI the system made default).
if command -v mpirun >/dev/null; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    out=$(timeout 500 mpirun -n 8 ./bin/all_reduce_test -p 8 -b 8K -e 64M -f 2 -d fp32 -o sum 2>&1); rc=$?
    echo "$out" | head -3
    n=$(printf '%s\n' "$out" | grep -cE '^[0-9]+ +\|')
    if [ $rc -ne 0 ] || ! rows_ok "$out" || [ "$n" -ne 14 ]; then
        echo "FAIL: seed command: exit $rc, $n rows"; echo "$out" | tail -5; fail=1
    fi
    echo "$out" | head -1 | grep -qx 'the minbytes is 8192, maxbytes is 67108864, iters is 20, warmup_iters is 10' \
        || { echo "FAIL: seed command first line"; fail=1; }
fi
[ $have -eq 1 ] || exit 77
[ $fail -eq 0 ] && echo "12-launch-mpirun: all passed"
exit $fail
