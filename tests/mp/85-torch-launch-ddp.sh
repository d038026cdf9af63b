#!/usr/bin/env bash
# timeout: 420
# The coll torch backend under every launcher, and DDP beside Gloo:
#  - torchrun's environment (env://, 2 ranks), mpirun (Open MPI, 2 ranks: torch_coll maps
#    OMPI_COMM_WORLD_* to RANK/WORLD_SIZE), tcp:// and file:// init methods;
#  - bench/ddp-bench.py on 2 ranks under coll and under gloo, same seed: the
#    parameters after training must be bitwise identical (deterministic mode).
. "$(dirname "$0")/../lib/common.sh"
. "$CB_ROOT/tests/lib/torch.sh"
torch_ready || exit 1
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
SMOKE=$CB_ROOT/tests/torch/smoke.py

# torchrun itself cannot start on Debian 12: its python3-torch 1.13 under Python 3.11
# fails in torch.distributed.elastic (Std.from_str returns None: AttributeError
# 'NoneType' object has no attribute 'get'), for every backend. So the launch is
# torchrun's environment (RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR
# MASTER_PORT) set by torch_launch, with init_method env://.
torch_launch "$W/env" 2 "$TORCH_PY" "$SMOKE"
rc=$?
check "torchrun-style env:// launch, 2 ranks (exit $rc): $(cat "$W/env.r1.out")" [ $rc -eq 0 ]

if [ -x /usr/bin/mpirun.openmpi ]; then
    port=$(free_port)
    out=$(timeout -k 5 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 -x MASTER_PORT=$port \
        -x PYTHONPATH -x PYTHONWARNINGS -x COLL_SOCKET_IFNAME "$TORCH_PY" "$SMOKE" 2>&1); rc=$?
    check "mpirun (Open MPI) 2 ranks (exit $rc)" [ $rc -eq 0 -a "$(echo "$out" | grep -c 'smoke ok')" -eq 2 ]
    [ $rc -eq 0 ] || echo "$out" | tail -n 8
else
    fail "mpirun.openmpi not installed (scripts/install-deps.sh build)"
fi

port=$(free_port)
torch_launch "$W/tcp" 3 "$TORCH_PY" "$SMOKE" "tcp://127.0.0.1:$port"
rc=$?
check "tcp:// init, 3 ranks (exit $rc)" [ $rc -eq 0 ]
torch_launch "$W/file" 2 "$TORCH_PY" "$SMOKE" "file://$W/rendezvous"
rc=$?
check "file:// init, 2 ranks (exit $rc)" [ $rc -eq 0 ]

for be in coll gloo; do
    torch_launch "$W/ddp-$be" 2 "$TORCH_PY" "$CB_ROOT/bench/ddp-bench.py" --backend $be --steps 6 --warmup 2 \
        --width 256 --depth 2 --save "$W/params-$be.pt"
    rc=$?
    check "DDP 2 ranks on $be (exit $rc): $(cat "$W/ddp-$be.r0.out")" [ $rc -eq 0 ]
done
cmp=$("$TORCH_PY" "$CB_ROOT/tests/torch/ddp_compare.py" "$W/params-coll.pt" "$W/params-gloo.pt" 2>&1)
rc=$?
check "DDP parameters identical under coll and gloo ($cmp)" [ $rc -eq 0 ]
check "no process left" no_procs "tests/torch/smoke.py"
check "no /dev/shm segment left" no_shm_leftovers
finish
