# tests/lib/torch.sh - helpers for the torch.distributed backend tests (sourced after
# common.sh): torch_ready checks Debian's torch and builds python/torch_coll (make
# torch) once; torch_launch starts N local ranks torchrun-style (env://).
TORCH_PY=${TORCH_PY:-/usr/bin/python3}
export PYTHONPATH=$CB_ROOT/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONWARNINGS=ignore

# torch_ready: 0 if torch imports and torch_coll is built (building it if needed,
# under a lock: two torch tests may start at once); else prints why (a FAIL, never a skip).
torch_ready() {
    local err
    if ! err=$("$TORCH_PY" -c 'import torch, torch.distributed' 2>&1); then
        echo "FAIL: $TORCH_PY cannot import torch ($(echo "$err" | tail -n 1)): install python3-torch and libtorch-dev (scripts/install-deps.sh torch)"
        return 1
    fi
    if ! flock "$CB_ROOT/build/.torch-build.lock" make -s -j"$(nproc)" -C "$CB_ROOT" torch >"$CB_ROOT/build/torch-build.log" 2>&1; then
        echo "FAIL: make torch failed:"; tail -n 15 "$CB_ROOT/build/torch-build.log"
        return 1
    fi
    "$TORCH_PY" -c 'import torch_coll' 2>&1 || { echo "FAIL: import torch_coll failed"; return 1; }
}

# torch_launch OUT N CMD...: N local ranks of CMD with RANK WORLD_SIZE LOCAL_RANK
# LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT (what torchrun sets); rank r writes
# OUT.r<r>.out/.err; returns the number of ranks that failed (printing their last lines).
torch_launch() {
    local out=$1 n=$2 r bad=0 port
    shift 2
    port=$(free_port)
    local pids=()
    for r in $(seq 0 $((n - 1))); do
        RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            timeout -k 5 "${TORCH_RANK_TIMEOUT:-150}" "$@" >"$out.r$r.out" 2>"$out.r$r.err" &
        pids[$r]=$!
    done
    for r in $(seq 0 $((n - 1))); do
        wait "${pids[$r]}"
        local rc=$?
        if [ $rc -ne 0 ]; then
            bad=$((bad + 1))
            echo "rank $r exit $rc; its last lines:"; tail -n 5 "$out.r$r.err" "$out.r$r.out" | sed 's/^/    /'
        fi
    done
    return $bad
}
