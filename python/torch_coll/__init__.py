"""torch_coll: the torch.distributed backend "coll", over libcoll (include/coll.h).

    import torch_coll                      # registers the backend
    dist.init_process_group("coll", init_method="env://", timeout=timedelta(seconds=60))

Rendezvous goes through the store torch gives the backend (env://, tcp://, file://,
torchrun), so it works wherever Gloo does. Build with `make torch`; run with
/usr/bin/python3 (Debian's python3-torch) and PYTHONPATH=<repo>/python.

Timeouts: an operation that runs past the group's timeout (init_process_group /
new_group timeout=...) aborts the group's communicator and raises, naming the rank.
libcoll's own per-wait timeout (COLL_EXEC_TIMEOUT, or HCCL_EXEC_TIMEOUT) is taken from
the environment; when neither is set it is set here, before the first communicator,
from HCCL_TIMEOUT (seed 001's variable) or else the first group's timeout.
"""
import atexit
import os

import torch.distributed as dist

from . import _C

__all__ = ["last_algo", "version", "env_from_launcher"]

# (rank, size, local rank, local size) variables of the launchers torchrun is not.
_LAUNCHERS = [
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
]


def env_from_launcher():
    """Without torchrun's RANK/WORLD_SIZE, take them (and LOCAL_RANK, LOCAL_WORLD_SIZE)
    from Open MPI's, MPICH's or Slurm's variables, and MASTER_ADDR defaults to
    127.0.0.1, so that `mpirun -x MASTER_PORT=29500 python3 train.py` works with
    init_method="env://". Called on import; changes nothing under torchrun."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:
        return
    for rank, size, lrank, lsize in _LAUNCHERS:
        if rank in env and size in env:
            env["RANK"], env["WORLD_SIZE"] = env[rank], env[size]
            if lrank in env:
                env.setdefault("LOCAL_RANK", env[lrank])
            if lsize in env and env[lsize].isdigit():
                env.setdefault("LOCAL_WORLD_SIZE", env[lsize])
            env.setdefault("MASTER_ADDR", "127.0.0.1")
            return


def _set_exec_timeout(timeout):
    env = os.environ
    if "COLL_EXEC_TIMEOUT" in env or "HCCL_EXEC_TIMEOUT" in env:
        return
    if env.get("HCCL_TIMEOUT"):
        env["COLL_EXEC_TIMEOUT"] = env["HCCL_TIMEOUT"]
    else:
        env["COLL_EXEC_TIMEOUT"] = "%g" % max(timeout.total_seconds(), 0.001)


def _create(store, rank, size, timeout):
    _set_exec_timeout(timeout)
    return _C.create_process_group(store, rank, size, timeout)


def last_algo(group=None):
    """libcoll's algorithm for the last collective of group (default: the world)."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    return _C.last_algo(pg)


def version():
    """Version of the libcoll linked into the extension."""
    return _C.version()


env_from_launcher()
if "COLL" not in dist.Backend._plugins:
    dist.Backend.register_backend("coll", _create)
atexit.register(_C.shutdown_all)
