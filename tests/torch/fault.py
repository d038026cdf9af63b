#!/usr/bin/python3
"""Faults on the coll backend. Usage: fault.py kill VICTIM | fault.py timeout SECONDS
  kill V:     every rank all_reduces in a loop; rank V SIGKILLs itself after 20 calls;
              the others must raise (RuntimeError) within the group timeout (30 s).
  timeout S:  group timeout S seconds; rank 1 sleeps 3 x S before its all_reduce;
              rank 0's must raise within about S, naming the rank; rank 1's must then
              raise too (the communicator was aborted).
Each rank prints "raised after X s: MESSAGE" and exits 0 when it raised as expected."""
import datetime
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

import torch_coll  # noqa: F401

mode, arg = sys.argv[1], float(sys.argv[2])
timeout = 30 if mode == "kill" else arg
dist.init_process_group("coll", init_method="env://", timeout=datetime.timedelta(seconds=timeout))
r = dist.get_rank()
t = torch.ones(1 << 16)
t0 = time.monotonic()
try:
    if mode == "kill":
        for i in range(1000000):
            if r == int(arg) and i == 20:
                os.kill(os.getpid(), signal.SIGKILL)
            dist.all_reduce(t)
            if i == 19:
                t0 = time.monotonic()
    else:
        if r == 1:
            time.sleep(3 * arg)
            t0 = time.monotonic()
        dist.all_reduce(t)
    print(f"rank {r}: no error", flush=True)
    sys.exit(1)
except RuntimeError as e:
    print(f"rank {r}: raised after {time.monotonic() - t0:.1f} s: {e}", flush=True)
    sys.exit(0)
