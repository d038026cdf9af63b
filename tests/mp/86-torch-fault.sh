#!/usr/bin/env bash
# timeout: 240
# Faults on the coll torch backend (tests/torch/fault.py):
#  - kill -9 of one of 3 ranks mid-loop: the others raise a RuntimeError within the
#    group timeout (30 s; libcoll notices the death far sooner), naming the dead rank;
#  - a rank late by 3x the group timeout (2 s): the waiting rank raises after about
#    2 s, naming itself ("rank 0") and the timeout; the late rank raises too.
. "$(dirname "$0")/../lib/common.sh"
. "$CB_ROOT/tests/lib/torch.sh"
torch_ready || exit 1
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
F=$CB_ROOT/tests/torch/fault.py

torch_launch "$W/kill" 3 "$TORCH_PY" "$F" kill 1 >"$W/kill.log"
for r in 0 2; do
    msg=$(cat "$W/kill.r$r.out")
    secs=$(echo "$msg" | sed -n 's/.*raised after \([0-9.]*\) s.*/\1/p')
    check "kill -9 rank 1: rank $r raised in ${secs:-?} s: $msg" \
        awk -v s="${secs:-999}" 'BEGIN { exit !(s < 30) }'
    check "rank $r's message names rank 1" grep -q "rank 1" "$W/kill.r$r.out"
done

torch_launch "$W/to" 2 "$TORCH_PY" "$F" timeout 2 >"$W/to.log"
msg=$(cat "$W/to.r0.out")
secs=$(echo "$msg" | sed -n 's/.*raised after \([0-9.]*\) s.*/\1/p')
check "timeout 2 s: rank 0 raised after ${secs:-?} s: $msg" awk -v s="${secs:-999}" 'BEGIN { exit !(s >= 1.5 && s < 8) }'
check "the message names rank 0 and the timeout" grep -Eq "rank 0 of 2.*(timed out|timeout)" "$W/to.r0.out"
check "the late rank 1 raised too: $(cat "$W/to.r1.out")" grep -q "rank 1: raised" "$W/to.r1.out"
check "no process left" no_procs "tests/torch/fault.py"
check "no /dev/shm segment left" no_shm_leftovers
finish
