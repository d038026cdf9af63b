#!/usr/bin/env bash
# timeout: 120
# coll_comm_split (build/tests/split_test, tests/split/split_test.c): 8 ranks on
# 2 simulated hosts split by host, by parity, by a key that reverses the order,
# with COLL_SPLIT_NOCOLOR and nested; AllReduce exact on each sub-communicator;
# bad arguments and an aborted parent refused; communicators destroyed in a
# different order on every rank. Afterwards no /dev/shm segment and no process
# of the test is left.
set -u
T=${CB_O:?}/build/tests/split_test
[ -x "$T" ] || { echo "missing $T (run make)"; exit 1; }
fail=0
export COLL_SHM_PREFIX="splittest$$-"
timeout 90 "$T"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: split_test exit $rc"; fail=1; }
sleep 0.2
left=$(ls /dev/shm 2>/dev/null | grep "^$COLL_SHM_PREFIX")
[ -z "$left" ] || { echo "FAIL: /dev/shm left: $left"; fail=1; }
procs=$(pgrep -f "^$T" || true)
[ -z "$procs" ] || { echo "FAIL: processes left: $procs"; ps -o pid,args -p $procs; fail=1; }
[ $fail -eq 0 ] && echo "78-split: ok"
exit $fail
