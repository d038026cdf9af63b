#!/usr/bin/env bash
# timeout: 240
# examples/ (built by make into build/examples from include/coll.h only): each
# program runs with 1, 2 and 4 ranks launched torchrun-style (RANK, WORLD_SIZE,
# MASTER_ADDR, MASTER_PORT), as its header says; every rank must exit 0 and
# print its "ok" line; no /dev/shm segment is left.
set -u
. "$(dirname "$0")/../lib/common.sh"
E=${CB_O:?}/build/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export COLL_SHM_PREFIX="examples$$-"
# the secret every rank shares, random as the examples' headers ask
COLL_SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'); export COLL_SECRET
fail=0
for ex in allreduce split zero_copy; do
    [ -x "$E/$ex" ] || { echo "FAIL: missing $E/$ex (run make)"; fail=1; continue; }
    for n in 1 2 4; do
        port=$(free_port)
        pids=()
        for ((r = 0; r < n; r++)); do
            if [ $n -eq 1 ]; then
                timeout 60 "$E/$ex" >"$tmp/$ex-$n-$r.out" 2>&1 &   # no launcher: a single rank
            else
                env RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                    timeout 60 "$E/$ex" >"$tmp/$ex-$n-$r.out" 2>&1 &
            fi
            pids+=($!)
        done
        for ((r = 0; r < n; r++)); do
            wait ${pids[$r]}; rc=$?
            out=$(cat "$tmp/$ex-$n-$r.out")
            if [ $rc -ne 0 ] || ! echo "$out" | grep -qE "^$ex: rank $r of $n: .*ok"; then
                echo "FAIL: $ex with $n ranks, rank $r: exit $rc:"; echo "$out" | tail -5; fail=1
            fi
        done
        echo "$ex x$n: $(grep -h "^$ex: rank 0" "$tmp/$ex-$n-0.out")"
    done
done
left=$(ls /dev/shm 2>/dev/null | grep "^$COLL_SHM_PREFIX")
[ -z "$left" ] || { echo "FAIL: /dev/shm left: $left"; fail=1; }
exit $fail
