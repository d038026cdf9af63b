#!/usr/bin/python3
"""A few coll collectives checked by value, for launcher tests (torchrun, mpirun,
tcp://, file://). Usage: smoke.py [INIT_METHOD]; RANK/WORLD_SIZE from the launcher."""
import datetime
import os
import sys

import torch
import torch.distributed as dist

import torch_coll  # noqa: F401  (also maps mpirun's variables to RANK/WORLD_SIZE)

init = sys.argv[1] if len(sys.argv) > 1 else "env://"
kw = {} if init == "env://" else {"rank": int(os.environ["RANK"]), "world_size": int(os.environ["WORLD_SIZE"])}
dist.init_process_group("coll", init_method=init, timeout=datetime.timedelta(seconds=60), **kw)
r, n = dist.get_rank(), dist.get_world_size()
t = torch.full((1000,), float(r + 1))
dist.all_reduce(t)
ok = bool((t == n * (n + 1) / 2).all())
b = torch.tensor([r * 10])
dist.broadcast(b, src=n - 1)
ok = ok and b.item() == (n - 1) * 10
dist.barrier()
print(f"smoke {'ok' if ok else 'FAILED'}: rank {r} of {n} ({init}, algo {torch_coll.last_algo()})", flush=True)
dist.destroy_process_group()
sys.exit(0 if ok else 1)
