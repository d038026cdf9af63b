#!/usr/bin/env bash
# timeout: 600
# The torch.distributed backend "coll" (python/torch_coll): every ProcessGroup
# operation of torch 1.13 x dtype class x ReduceOp, checked against Gloo's result
# over the same ranks (tests/torch/ops_check.py), on 2 and 3 local ranks launched
# torchrun-style (env://); then nothing left behind. Needs Debian's python3-torch
# and libtorch-dev: without them this test fails saying so (never skipped).
. "$(dirname "$0")/../lib/common.sh"
. "$CB_ROOT/tests/lib/torch.sh"
torch_ready || exit 1
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
for n in 2 3; do
    s=$(now_ms)
    torch_launch "$W/ops$n" $n "$TORCH_PY" "$CB_ROOT/tests/torch/ops_check.py"
    rc=$?
    el=$(( ($(now_ms) - s) / 1000 ))
    summary=$(grep -h "checks," "$W/ops$n".r*.out | head -n 1)
    check "$n local ranks: every op x dtype x ReduceOp as Gloo (${el}s; $summary)" [ $rc -eq 0 ]
    [ $rc -eq 0 ] || grep -h FAIL "$W/ops$n".r*.out | head -n 20
done
check "no process left" no_procs "tests/torch/ops_check.py"
check "no /dev/shm segment left" no_shm_leftovers
finish
