#!/usr/bin/env python3
"""tests/lib/plain_pattern.py - one rank of a job that moves a known plaintext.

Run by tests/mp/88-tcp-encrypt.sh under a torchrun-style launch (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT, COLL_SECRET) through libcoll.so with
ctypes: every rank fills 1 MiB with PATTERN followed by its rank (repeated),
runs an AllGather and a Broadcast from rank 0 of it, and checks what it got.
Exit 0 when both are right, 1 when data is wrong, 3 when the library fails.
"""
import ctypes
import os
import sys

PATTERN = b"CB-PLAINTEXT-PROBE-"
SIZE = 1 << 20


def block(rank):
    unit = PATTERN + b"%04d|" % rank
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def main():
    lib = ctypes.CDLL(os.path.join(sys.argv[1], "libcoll.so"))
    lib.coll_last_error.restype = ctypes.c_char_p
    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    addr, port = os.environ["MASTER_ADDR"].encode(), int(os.environ["MASTER_PORT"])
    class Id(ctypes.Structure):  # coll_unique_id_t, passed by value
        _fields_ = [("b", ctypes.c_uint8 * 128)]

    uid = Id()
    comm = ctypes.c_void_p()
    fn = lib.coll_unique_id_listen if rank == 0 else lib.coll_unique_id_from_addr
    st = fn(addr, port, None, ctypes.byref(uid))
    if st == 0:
        lib.coll_comm_init_rank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, Id, ctypes.c_int]
        st = lib.coll_comm_init_rank(ctypes.byref(comm), n, uid, rank)
    if st != 0:
        print("rank %d: setup: %s" % (rank, lib.coll_last_error().decode()), file=sys.stderr)
        return 3
    send = ctypes.create_string_buffer(block(rank), SIZE)
    recv = ctypes.create_string_buffer(SIZE * n)
    st = lib.coll_all_gather(send, recv, ctypes.c_size_t(SIZE), 4, comm)  # COLL_UINT8
    bc = ctypes.create_string_buffer(block(0) if rank == 0 else b"\0" * SIZE, SIZE)
    if st == 0:
        st = lib.coll_broadcast(bc, ctypes.c_size_t(SIZE), 4, 0, comm)
    if st != 0:
        print("rank %d: collective: %s" % (rank, lib.coll_last_error().decode()), file=sys.stderr)
        lib.coll_comm_destroy(comm)
        return 3
    ok = all(recv.raw[r * SIZE:(r + 1) * SIZE] == block(r) for r in range(n)) and bc.raw[:SIZE] == block(0)
    lib.coll_comm_destroy(comm)
    print("rank %d: %s" % (rank, "data right" if ok else "DATA WRONG"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
