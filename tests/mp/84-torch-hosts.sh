#!/usr/bin/env bash
# timeout: 420
# The coll torch backend across simulated hosts (tests/lib/netns.sh): 2 hosts x 1
# rank, torchrun-style env launch with MASTER_ADDR = cbh1; every ProcessGroup
# operation x dtype class x ReduceOp checked against Gloo over the same ranks
# (tests/torch/ops_check.py); then 2 hosts x 2 ranks (shm within, tcp across) on the
# launcher smoke test.
. "$(dirname "$0")/../lib/common.sh"
. "$CB_ROOT/tests/lib/torch.sh"
. "$CB_ROOT/tests/lib/netns.sh"
torch_ready || exit 1
netns_up 2 || { echo "FAIL: netns_up"; exit 1; }
W=$NETNS_DIR/torch
mkdir -p "$W"
export GLOO_SOCKET_IFNAME=cbeth0 NETNS_RANK_TIMEOUT=300
s=$(now_ms)
NETNS_MASTER_PORT=29611 netns_env_launch "$W/ops" "1 1" "$TORCH_PY" "$CB_ROOT/tests/torch/ops_check.py"
rc=$?
check "2 hosts x 1 rank: every op x dtype x ReduceOp as Gloo ($(( ($(now_ms) - s) / 1000 ))s; $(grep -h 'checks,' "$W/ops.r0.out" | head -n 1))" [ $rc -eq 0 ]
[ $rc -eq 0 ] || grep -h FAIL "$W"/ops.r*.out | head -n 20
NETNS_MASTER_PORT=29612 NETNS_RANK_TIMEOUT=120 netns_env_launch "$W/smoke" "2 2" "$TORCH_PY" "$CB_ROOT/tests/torch/smoke.py"
rc=$?
check "2 hosts x 2 ranks: smoke ($(cat "$W/smoke.r0.out"))" [ $rc -eq 0 ]
finish
