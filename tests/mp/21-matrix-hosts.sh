#!/usr/bin/env bash
# timeout: 900
# The algorithm matrix across simulated hosts (matrix -H): every rank of a
# simulated host "simhost<h>" shares memory with its host mates and reaches
# the other hosts over TCP on 127.0.0.1 only. Every algorithm is forced in
# turn: flat ones (ring, hd, binomial...) now run over tcp + shm, hierarchical
# ones (hier) run for real. Layouts: uniform (2,2), uneven (2,1,2 and 3,1),
# one rank per host (1,1,1), and ranks dealt round-robin (-I) so a host's ranks
# are not contiguous; 4 and 9 hosts of uneven sizes for the log-step and
# hierarchical alltoall(v) / allgatherv / reduce_scatterv (Bruck, halving, hier). Only single-host (shm-only) algorithms may be n/a here,
# and hierarchical ones when every host has one rank. Two layouts run with
# COLL_NSOCKS=2: on a machine with fewer cores than ranks the auto value is one
# socket, and the striped messages (chunk headers, reductions fed per chunk)
# must still be exercised.
set -u
M=$CB_O/build/tests/matrix
[ -x "$M" ] || { echo "missing $M (run make)"; exit 1; }
rc=0
for layout in "2,2" "2,1,2 -q" "2,1,2 -I -q" "1,1,1 -q" "3,1 -q" "2,2 -I -q" "1,2,1,3 -I -q" "1,1,1,1,2,1,1,1,1 -q"; do
    ns=""
    case "$layout" in "2,2" | "1,1,1 -q") ns=COLL_NSOCKS=2 ;; esac
    out=$(env $ns timeout 240 "$M" -H $layout 2>&1)
    r=$?
    echo "$out" | grep -E 'FAILED|matrix:|failed|expected' | head -40
    if [ $r -ne 0 ]; then echo "== matrix -H $layout failed (exit $r)"; rc=1; fi
    # what may be n/a: shm-only algorithms (direct, shm, cma) across hosts; hier with one rank per host
    single=$(echo "$out" | grep 'n/a here' | grep -vE '^\S+ +(direct|shm|cma) ')
    case "$layout" in 1,1,1*) single=$(echo "$single" | grep -v ' hier ') ;; esac
    if [ -n "$single" ]; then
        echo "== matrix -H $layout: algorithms that could not be forced across hosts:"; echo "$single"; rc=1
    fi
    if ! echo "$layout" | grep -q '^1,1,1' && ! echo "$out" | grep -qE '^allreduce +hier +ok'; then
        echo "== matrix -H $layout: allreduce hier did not run"; rc=1
    fi
done
exit $rc
