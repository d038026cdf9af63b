#!/usr/bin/env bash
# timeout: 600
# parallel: yes
# ThreadSanitizer build (make O=build/tsan SAN=thread; rebuilt only when out of
# date): the rendezvous store runs in a thread of the process that made the
# unique id, so the bootstrap unit test and a few multi-process runs (whose
# parent hosts the store while its forked ranks talk to it) must be race free.
# TSAN_OPTIONS=halt_on_error=1; suppressions, each with its reason, only in
# tests/tsan.supp. Any report or non-zero exit fails the test.
set -u
cd "${CB_ROOT:-$(dirname "$0")/../..}"
ROOT=$PWD
T=build/tsan
LOG=$ROOT/build/test-logs/tsan
mkdir -p "$LOG"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/tests/tsan.supp"
export COLL_SOCKET_IFNAME="${COLL_SOCKET_IFNAME-=lo}"
REPORT='WARNING: ThreadSanitizer|ERROR: ThreadSanitizer|SUMMARY: ThreadSanitizer|FATAL: ThreadSanitizer'
SAN_CONTEXT=25
. "$ROOT/tests/lib/sanitize.sh"
# test_bootstrap first: it mostly waits on its store timeouts (~14 s), so it
# runs in the background while the tools it does not need are compiled
san_build $T thread tsan $T/build/tests/test_bootstrap
run_bg unit-test_bootstrap 180 $T/build/tests/test_bootstrap
san_build $T thread tsan $T/build/tests/matrix $T/bin/all_reduce_test $T/bin/broadcast_test $T/bin/collbench
run matrix-n3-allreduce 180 $T/build/tests/matrix -q -n 3 -k allreduce
run all_reduce-p2 60 $T/bin/all_reduce_test -p 2 -b 1K -e 64K -f 8 -n 3 -w 1
run broadcast-p3 60 $T/bin/broadcast_test -p 3 -b 1K -e 16K -f 4 -n 2 -w 1
run collbench-d2d 60 $T/bin/collbench bw -t d2d -s 1M -et 2
run collbench-flops 60 $T/bin/collbench flops -t fp32 -et 0.05 -c 2
san_finish "tsan"
echo "no ThreadSanitizer report"
