#!/usr/bin/python3
"""torch-bandwidth-test.py - seed 001's hccl_bandwidth_test.py, made correct for CPUs.

AllReduce (fp32, SUM) bandwidth from Python through torch.distributed, so the same
command compares backends: coll (libcoll, python/torch_coll), gloo, mpi.

    torchrun --nproc_per_node=2 scripts/torch-bandwidth-test.py --backend coll
    PYTHONPATH=python torchrun --nnodes=2 --node_rank=N --master_addr=H --master_port=29500 \\
        --nproc_per_node=1 scripts/torch-bandwidth-test.py --backend gloo --link-gbps 10

What changed from the seed: no torch.cuda.synchronize (CPU tensors: all_reduce returns
when done); every rank times every call with a monotonic clock, and a size's time is
the slowest rank's mean (the table also shows the fastest rank's); the bandwidth is the
seed's formula, size x 2(n-1)/n / time (bus bandwidth, GB = 2^30 bytes); utilisation is
against --link-gbps (the seed printed 200 Gbps = 25 GB/s). Sizes take K/M/G suffixes
(binary); a bare number is MB, as in the seed. Uses /usr/bin/python3 (Debian's torch);
run with PYTHONPATH=<repo>/python for the coll backend. Exit 2 on bad arguments.
"""
import argparse
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

SEED_SIZES = "1,4,16,64,256"  # MB, seed 001
UNITS = {"": 2**20, "K": 2**10, "M": 2**20, "G": 2**30}


def die(msg):
    print(f"torch-bandwidth-test: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_size(text):
    s = text.strip().upper()
    if s.endswith("B") and len(s) > 1 and s[-2] in "KMG":
        s = s[:-1]  # 8KB, 1MB
    num, unit = (s[:-1], s[-1]) if s and s[-1] in "KMG" else (s, "")
    try:
        v = float(num)
    except ValueError:
        die(f"bad size '{text}' (allowed: a number of MB, or a number with K, M or G, e.g. 8K, 1M, 256M)")
    b = int(v * UNITS[unit])
    if b < 4 or b % 4:
        die(f"size '{text}' is {b} bytes: must be a positive multiple of 4 (fp32)")
    return b


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", default="coll", help="coll | gloo | mpi (default coll)")
    p.add_argument("--sizes", default=SEED_SIZES, help=f"comma-separated sizes (default the seed's {SEED_SIZES} MB)")
    p.add_argument("--iters", type=int, default=100, help="timed calls per size (default 100, the seed's)")
    p.add_argument("--warmup", type=int, default=10, help="untimed calls per size (default 10)")
    p.add_argument("--link-gbps", type=float, default=None, help="link speed in Gbit/s for the utilisation column")
    p.add_argument("--init-method", default="env://", help="torch init_method (default env://)")
    p.add_argument("--timeout", type=float, default=300, help="group timeout in seconds (default 300)")
    a = p.parse_args()
    if a.backend not in ("coll", "gloo", "mpi"):
        die(f"bad --backend '{a.backend}' (allowed: coll, gloo, mpi)")
    if a.iters < 1 or a.warmup < 0:
        die(f"bad --iters {a.iters} / --warmup {a.warmup} (need iters >= 1, warmup >= 0)")
    if a.link_gbps is not None and a.link_gbps <= 0:
        die(f"bad --link-gbps {a.link_gbps} (must be > 0)")
    a.size_bytes = [parse_size(s) for s in a.sizes.split(",") if s.strip()]
    if not a.size_bytes:
        die("--sizes is empty")
    return a


def init(a):
    try:
        import torch_coll  # noqa: F401  (registers "coll"; takes RANK/WORLD_SIZE from mpirun/srun)
    except ImportError as e:
        if a.backend == "coll":
            die(f"backend coll needs torch_coll ({e}): run `make torch` and set PYTHONPATH=<repo>/python")
    if a.backend == "mpi" and not dist.is_mpi_available():
        die("backend mpi: this torch was built without MPI (Debian's python3-torch is); use coll or gloo")
    dist.init_process_group(a.backend, init_method=a.init_method,
                            timeout=datetime.timedelta(seconds=a.timeout))


def measure(nbytes, a):
    """(slowest rank's mean, fastest rank's mean) of all_reduce over nbytes, seconds."""
    t = torch.randn(nbytes // 4, dtype=torch.float32)
    for _ in range(a.warmup):
        dist.all_reduce(t)
    dist.barrier()
    total = 0.0
    for _ in range(a.iters):
        t0 = time.perf_counter()
        dist.all_reduce(t)
        total += time.perf_counter() - t0
    mean = torch.tensor([total / a.iters], dtype=torch.float64)
    hi, lo = mean.clone(), mean.clone()
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    return hi.item(), lo.item()


def human(b):
    for unit, f in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if b >= f and b % f == 0:
            return f"{b // f}{unit}"
    return f"{b}B"


def main():
    a = parse_args()
    init(a)
    rank, n = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        print(f"# all_reduce fp32 sum, backend {a.backend}, {n} ranks, {a.iters} calls after {a.warmup} "
              f"per size; time = slowest rank's mean; bandwidth = size x 2(n-1)/n / time (GB = 2^30 B)")
        link = f"  link {a.link_gbps:g} Gbit/s = {a.link_gbps / 8 * 1e9 / 2**30:.2f} GB/s" if a.link_gbps else ""
        print(f"# {os.uname().nodename}{link}")
        print(f"{'size':>6} {'avg_ms':>10} {'fastest_ms':>10} {'algbw_GB/s':>11} {'busbw_GB/s':>11} {'util_%':>7}")
    for nbytes in a.size_bytes:
        slow, fast = measure(nbytes, a)
        algbw = nbytes / slow / 2**30
        busbw = algbw * 2 * (n - 1) / n
        util = f"{busbw / (a.link_gbps / 8 * 1e9 / 2**30) * 100:7.1f}" if a.link_gbps else f"{'-':>7}"
        if rank == 0:
            print(f"{human(nbytes):>6} {slow * 1e3:10.3f} {fast * 1e3:10.3f} {algbw:11.3f} {busbw:11.3f} {util}",
                  flush=True)
        dist.barrier()
    dist.destroy_process_group()
    if a.backend == "gloo":  # torch 1.13's Gloo can deadlock at exit: see bench/ddp-bench.py
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
