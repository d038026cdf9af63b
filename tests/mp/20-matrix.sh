#!/usr/bin/env bash
# timeout: 600
# The algorithm matrix: every collective x every registered algorithm forced
# in turn x counts 0/1/odd/large x 12 dtypes x 4 ops x every root, in place
# and out of place, on 1, 2, 3, 4, 5, 6, 7 and 8 real processes.
set -u
M=$CB_O/build/tests/matrix
[ -x "$M" ] || { echo "missing $M (run make)"; exit 1; }
rc=0
for n in 1 2 3 4 5 6 7 8; do
    q=""
    [ "$n" -ge 7 ] && q="-q"     # large counts at 1..5 ranks; small ones everywhere
    out=$(timeout 240 "$M" -n "$n" $q 2>&1)
    r=$?
    echo "$out" | grep -E 'FAILED|n/a|matrix:|failed|expected' | head -40
    if [ $r -ne 0 ]; then echo "== matrix -n $n failed (exit $r)"; rc=1; fi
    # every algorithm listed must have run (no silent skip), except hierarchical ones on one host
    if echo "$out" | grep 'n/a here' | grep -vq -E 'hier'; then
        echo "== matrix -n $n: an algorithm could not be forced on one host"; rc=1
    fi
done
# Zero-copy buffers (coll_mem_alloc) and the single-copy (CMA) large-message
# path forced down to small messages, with the cooperative copy (sender writes
# pieces while the receiver reads others) down to 4 KiB pieces too; and
# everything with CMA off. ZC: point-to-point messages from zero-copy buffers
# copied once out of the sender's region down to 1 KiB, shared in 4 KiB pieces
# where the destination is zero-copy too; -Z: only the even ranks' buffers are
# zero-copy (every mix of the two kinds within one call). RING: a 1M stage
# ring in a 2M stage, so calls alternate between rotated windows (up to 512K
# a half) and the whole-stage layout (coll_stage_rot); at the defaults every
# staged call of the matrix takes a rotated window.
for variant in "-n 3 -z" "-n 4 -z -q" "-n 3 -Z" "ZC -n 2 -z" "ZC -n 5 -Z -q" "CMA_MIN -n 3" "CMA_COOP -n 2" \
               "CMA_COOP -n 5 -q" "CMA_OFF -n 4 -q" "RING -n 3" "RING -n 2 -q"; do
    envs=()
    case $variant in ZC*) envs=(COLL_SHM_ZC_MIN=1K COLL_CMA_PIECE=4K); variant=${variant#ZC } ;;
                     CMA_MIN*) envs=(COLL_CMA_MIN=1K COLL_CMA_COOP=0); variant=${variant#CMA_MIN } ;;
                     CMA_COOP*) envs=(COLL_CMA_MIN=1K COLL_CMA_PIECE=4K); variant=${variant#CMA_COOP } ;;
                     CMA_OFF*) envs=(COLL_CMA=0); variant=${variant#CMA_OFF } ;;
                     RING*) envs=(COLL_STAGE_RING=1M COLL_BUFFSIZE=2M); variant=${variant#RING } ;; esac
    out=$(env "${envs[@]}" timeout 240 "$M" $variant 2>&1)
    r=$?
    echo "$out" | grep -E 'FAILED|matrix:|expected' | head -20
    if [ $r -ne 0 ]; then echo "== ${envs[*]} matrix $variant failed (exit $r)"; rc=1; fi
done
exit $rc
