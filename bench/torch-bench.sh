#!/usr/bin/env bash
# bench/torch-bench.sh - coll vs gloo from Python, interleaved rounds (run it under
# flock /tmp/collbench-bench.lock; see bench/results/torch-*-20261206.md).
#
#   bench/torch-bench.sh bw  LAYOUT [ROUNDS] [SIZES]   scripts/torch-bandwidth-test.py
#   bench/torch-bench.sh ddp LAYOUT [ROUNDS] [STEPS]   bench/ddp-bench.py
#
# LAYOUT: "N" = N local ranks (env:// on 127.0.0.1); "A B" = simulated hosts
# (tests/lib/netns.sh) with A and B ranks, MASTER_ADDR = cbh1. Each round runs coll
# then gloo (coll/gloo/coll/gloo...), so drift hits both. Prints every run's table
# (bw) or JSON line (ddp) prefixed by the round and backend. Exit 2 on bad arguments.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/lib/common.sh"
PY=/usr/bin/python3
export PYTHONPATH=$ROOT/python PYTHONWARNINGS=ignore
mode=${1:-}; layout=${2:-}; rounds=${3:-3}; extra=${4:-}
case "$mode" in bw|ddp) ;; *) echo "torch-bench.sh: bad mode '$mode' (allowed: bw, ddp)" >&2; exit 2 ;; esac
[[ "$layout" =~ ^[1-9][0-9]*( [1-9][0-9]*)*$ ]] || { echo "torch-bench.sh: bad LAYOUT '$layout' (e.g. 2, or \"1 1\" for 2 hosts)" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "torch-bench.sh: bad ROUNDS '$rounds' (a positive integer)" >&2; exit 2; }
[ -f "$ROOT/python/torch_coll/_C.so" ] || { echo "torch-bench.sh: python/torch_coll is not built (make torch)" >&2; exit 2; }

if [ "$mode" = bw ]; then
    cmd=("$ROOT/scripts/torch-bandwidth-test.py" --iters 20 --warmup 10 --sizes "${extra:-8K,64K,1M,16M,64M}")
else
    cmd=("$ROOT/bench/ddp-bench.py" --steps "${extra:-30}" --warmup 5 ${TORCH_BENCH_DDP_ARGS:-})
fi
W=$(mktemp -d)
hosts=0; for _ in $layout; do hosts=$((hosts + 1)); done
if [ $hosts -gt 1 ]; then
    . "$ROOT/tests/lib/netns.sh"
    netns_up $hosts >/dev/null || { echo "torch-bench.sh: netns_up failed" >&2; exit 1; }
    export GLOO_SOCKET_IFNAME=cbeth0 NETNS_RANK_TIMEOUT=600
fi
trap 'rm -rf "$W"' EXIT
port=29700
for r in $(seq 1 "$rounds"); do
    for be in coll gloo; do
        port=$((port + 1))
        if [ $hosts -gt 1 ]; then
            NETNS_MASTER_PORT=$port netns_env_launch "$W/run" "$layout" "$PY" "${cmd[@]}" --backend $be >/dev/null
        else
            n=$layout pids=()
            for k in $(seq 0 $((n - 1))); do
                RANK=$k WORLD_SIZE=$n LOCAL_RANK=$k LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                    timeout -k 5 "${TORCH_BENCH_TIMEOUT:-240}" "$PY" "${cmd[@]}" --backend $be >"$W/run.r$k.out" 2>"$W/run.r$k.err" &
                pids+=($!)
            done
            for p in "${pids[@]}"; do wait "$p"; done
        fi
        if [ "$mode" = bw ]; then
            sed "s/^/round $r $be | /" "$W/run.r0.out"
        else
            echo "round $r $be layout ($layout) $(cat "$W/run.r0.out")"
        fi
        grep -h -i "error" "$W"/run.r*.err | head -n 3
    done
done
