#!/usr/bin/python3
"""ddp-bench.py - DDP training of a small MLP on synthetic data, per torch.distributed backend.

    PYTHONPATH=python torchrun --nproc_per_node=2 bench/ddp-bench.py --backend coll --steps 30

Each rank trains the same model (same seed: identical initial parameters) on its own
synthetic batches (seed + rank) for --steps timed steps after --warmup, one thread per
rank (torch.set_num_threads(1), deterministic algorithms). Rank 0 prints one JSON line:
step time (slowest rank's mean), samples/s over all ranks, and the share of step time
spent in communication: 1 - (step time without gradient AllReduce, DDP's no_sync(),
measured in the same run) / (step time with it), the exposed communication seed 001
tunes by. The seed's scaling efficiency, samples/s(N) / (N x samples/s(1)), is
computed by bench/ddp-bench.sh from the 1-rank run. --save FILE writes the final
parameters (rank 0) so two backends can be compared bit for bit.
"""
import argparse
import datetime
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def die(msg):
    print(f"ddp-bench: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", default="coll", help="coll | gloo (default coll)")
    p.add_argument("--steps", type=int, default=30, help="timed steps (default 30)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first (default 5)")
    p.add_argument("--batch", type=int, default=32, help="samples per rank per step (default 32)")
    p.add_argument("--width", type=int, default=1024, help="hidden width (default 1024)")
    p.add_argument("--depth", type=int, default=4, help="hidden layers (default 4)")
    p.add_argument("--seed", type=int, default=1, help="seed of parameters and data (default 1)")
    p.add_argument("--bucket-mb", type=float, default=25, help="DDP bucket_cap_mb (default 25, DDP's)")
    p.add_argument("--save", default=None, help="write rank 0's final parameters here (torch.save)")
    p.add_argument("--timeout", type=float, default=300, help="group timeout in seconds")
    a = p.parse_args()
    if a.backend not in ("coll", "gloo", "mpi"):
        die(f"bad --backend '{a.backend}' (allowed: coll, gloo, mpi)")
    for k in ("steps", "batch", "width", "depth"):
        if getattr(a, k) < 1:
            die(f"bad --{k} {getattr(a, k)} (must be >= 1)")
    if a.warmup < 0:
        die(f"bad --warmup {a.warmup} (must be >= 0)")
    return a


def model(a):
    torch.manual_seed(a.seed)
    layers, d = [], 512
    for _ in range(a.depth):
        layers += [nn.Linear(d, a.width), nn.ReLU()]
        d = a.width
    layers.append(nn.Linear(d, 10))
    return nn.Sequential(*layers)


def batches(a, rank, n):
    g = torch.Generator().manual_seed(a.seed * 100003 + rank)
    teacher = torch.Generator().manual_seed(a.seed)
    w = torch.randn(512, 10, generator=teacher)
    for _ in range(n):
        x = torch.randn(a.batch, 512, generator=g)
        yield x, (x @ w).argmax(dim=1)


def run(ddp, opt, data, steps, sync):
    """Mean step time (s) of `steps` steps; sync=False: gradients stay local (no_sync)."""
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.perf_counter()
    for _ in range(steps):
        x, y = next(data)
        opt.zero_grad(set_to_none=True)
        if sync:
            loss_fn(ddp(x), y).backward()
        else:
            with ddp.no_sync():
                loss_fn(ddp(x), y).backward()
        opt.step()
    return (time.perf_counter() - t0) / steps


def slowest(v):
    t = torch.tensor([v], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def main():
    a = parse_args()
    try:
        import torch_coll  # noqa: F401
    except ImportError as e:
        if a.backend == "coll":
            die(f"backend coll needs torch_coll ({e}): run `make torch`, PYTHONPATH=<repo>/python")
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    dist.init_process_group(a.backend, init_method="env://", timeout=datetime.timedelta(seconds=a.timeout))
    rank, n = dist.get_rank(), dist.get_world_size()
    m = model(a)
    ddp = DDP(m, bucket_cap_mb=a.bucket_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    data = batches(a, rank, 2 * a.warmup + 2 * a.steps + 1)
    run(ddp, opt, data, a.warmup, True)
    dist.barrier()
    step = slowest(run(ddp, opt, data, a.steps, True))
    if a.save and rank == 0:  # before the no_sync steps, after which the ranks' copies differ
        torch.save({k: v.clone() for k, v in m.state_dict().items()}, a.save)
    dist.barrier()
    local = slowest(run(ddp, opt, data, max(a.steps // 2, 1), False))
    nparam = sum(p.numel() for p in m.parameters())
    if rank == 0:
        print(json.dumps({"backend": a.backend, "ranks": n, "steps": a.steps, "batch": a.batch, "params": nparam,
                          "grad_mb": round(nparam * 4 / 2**20, 2), "step_ms": round(step * 1e3, 3),
                          "samples_per_s": round(n * a.batch / step, 1),
                          "comm_share": round(max(0.0, 1 - local / step), 3), "nosync_step_ms": round(local * 1e3, 3)}),
              flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if a.backend == "gloo":
        # Torch 1.13's Gloo group can deadlock at interpreter exit (seen in CI): DDP's reducer
        # holds the group, and its destructor, run with the GIL held, joins a Gloo worker
        # thread that is freeing a finished work's tensors and waits for the GIL to drop
        # their Python objects. Everything is done and printed: leave without destructors.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
