#!/usr/bin/env bash
# timeout: 60
# A rank launched with the wrong unique id (here: another secret) is refused
# by the rendezvous store with a clear message; the genuine ranks give up
# after COLL_CONNECT_TIMEOUT instead of hanging (the first to time out marks
# the job failed, the other may stop on that); all exit non-zero; nothing left.
# "After the timeout": its 4 s plus 11 s, or 5 times a complete run of the same
# three ranks with the right secret measured first (about 1 s on the 2-core
# VM), whichever is more.
. "$(dirname "$0")/../lib/common.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# trio PORT SECRET_OF_RANK_2: the three ranks started (pids in $pids)
trio() {
    pids=()
    for r in 0 1 2; do
        secret=right; [ $r -eq 2 ] && secret=$2
        COLL_SECRET=$secret COLL_CONNECT_TIMEOUT=4 RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$1 \
            timeout 50 "$BIN/all_reduce_test" -b 8K -e 8K >"$tmp/r$r.out" 2>&1 &
        pids+=($!)
    done
}
t0=$(now_ms); trio "$(free_port)" right; wait "${pids[@]}"; base=$(( $(now_ms) - t0 ))
max=$(bound_ms 4000 5 "$base" 11000)
echo "baseline: the three ranks with the right secret take $base ms here: bound $max ms"
trio "$(free_port)" wrong
wait_rcs "${pids[@]}"; dt=$wait_ms
show_ranks "$tmp" 3
check "intruder exits 3 (setup failed)" test "${rcs[2]}" -eq 3
check "intruder told the store did not prove our secret" grep -q "did not prove it knows our secret" "$tmp/r2.out"
# 4 (timeout), 3 (setup failed), or 5 when the other genuine rank timed out
# first and marked the job failed in the store (its reason is passed on)
check "genuine ranks exit 3, 4 or 5 (${rcs[0]} ${rcs[1]})" bash -c "[[ '${rcs[0]}' =~ ^[345]$ && '${rcs[1]}' =~ ^[345]$ ]]"
for r in 0 1; do
    check "rank $r says a rank is missing (its own timeout or the other's)" grep -q "did not appear in rendezvous store\|not complete after\|joined; missing: 2" "$tmp/r$r.out"
done
check "genuine ranks give up within the timeout (+slack): ${dt} ms, bound $max" test $dt -lt "$max"
check "no process left" no_procs "$BIN/all_reduce_test"
check "no /dev/shm segment left" no_shm_leftovers
finish
