#!/usr/bin/env bash
# timeout: 120
# (69-shm-64m checks the 64 MiB and 1 MiB cases; this one the warning's exact
# form, outbox reuse and no shrink with room.)
# The shared-memory segment fits the /dev/shm it finds (private mount
# namespaces with a small tmpfs stand in for a container's): 8 ranks at the
# default sizes in Docker's default 64 MiB shrink their staging with ONE
# warning and every row succeeds; pairwise alltoall (7 peers per rank, 4
# outboxes each, so outboxes are lent again and again) with tiny slots and no
# CMA succeeds there too; with room (256 MiB) nothing shrinks.
. "$(dirname "$0")/../lib/common.sh"
out=$(mktemp); big=$(mktemp); trap 'rm -f "$out" "$big"' EXIT
unshare -m sh -c "mount -t tmpfs -o size=64M tmpfs /dev/shm &&
  '$BIN/all_reduce_test' -p 8 -b 8K -e 1M -f 4; echo rc=\$?;
  COLL_SHM_SLOT=4K COLL_CMA=0 '$BIN/alltoall_test' -p 8 --algo pairwise -b 8K -e 2M -f 16; echo rc=\$?" >"$out" 2>&1
cat "$out"
unshare -m sh -c "mount -t tmpfs -o size=256M tmpfs /dev/shm &&
  '$BIN/all_reduce_test' -p 8 -b 8K -e 8K; echo rc=\$?" >"$big" 2>&1
cat "$big"
check "mount namespace worked" grep -q '^rc=' "$out"
check "both runs exit 0" test "$(grep -c '^rc=0$' "$out")" = 2
check "4 allreduce + 3 alltoall rows, all success" test "$(grep -c '| success' "$out")" = 7
check "no failed row" bash -c "! grep -qi 'fail' '$out'"
check "one shrink warning per run, in the documented form" test "$(grep -c 'shm: /dev/shm has 64 MiB free, the segment for 8 local ranks needs .* MiB at the configured sizes: shrinking to .* MiB (staging .* KiB per rank, slots .* KiB; set COLL_BUFFSIZE / COLL_SHM_SLOT or enlarge /dev/shm)' "$out")" = 2
check "with room: success, no shrink" bash -c "grep -q '^rc=0$' '$big' && grep -q '| success' '$big' && ! grep -q shrinking '$big'"
check "no process left" no_procs "$BIN/all_reduce_test"
check "no /dev/shm segment left" no_shm_leftovers
finish
