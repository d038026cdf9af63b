#!/usr/bin/python3
"""Every ProcessGroup operation of torch 1.13 on the "coll" backend, checked against
Gloo's result (same inputs, a Gloo group over the same ranks) or, where Gloo has no
such operation or dtype, against a reference computed from every rank's inputs.

Launch like torchrun: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT in the environment
(tests/mp/83-torch-ops.sh). Prints one line per failed check and a summary; exit 1 on
any failure."""
import datetime
import os
import sys

import torch
import torch.distributed as dist

import torch_coll  # noqa: F401  (registers "coll")

RANK = int(os.environ["RANK"])
N = int(os.environ["WORLD_SIZE"])
FAILS = []
CHECKS = [0]
R = dist.ReduceOp
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
DTYPES = FLOATS + INTS + [torch.bool]
COUNTS = [1, 4099]


def data(rank, dtype, count, salt=0):
    """Small integers (exact sums and products in every dtype), the same on every rank."""
    g = torch.Generator().manual_seed(1000 * rank + 17 * count + salt + DTYPES.index(dtype))
    if dtype == torch.bool:
        return torch.randint(0, 2, (count,), generator=g).bool()
    lo = 0 if dtype == torch.uint8 else -3
    return torch.randint(lo, 4, (count,), generator=g).to(dtype)


def check(name, got, want):
    CHECKS[0] += 1
    if isinstance(want, (list, tuple)):
        ok = len(got) == len(want) and all(torch.equal(a, b) for a, b in zip(got, want))
    else:
        ok = torch.equal(got, want)
    if not ok:
        FAILS.append(name)
        print(f"rank {RANK}: FAIL {name}: got {got} want {want}", flush=True)


# Every tensor handed to Gloo stays referenced from Python until exit. Torch 1.13's Gloo
# worker threads free a finished work's tensors; when that drops the last reference to a
# tensor with a Python object they need the GIL, and the group's destructor (in
# destroy_process_group, with the GIL held) joins them: a deadlock at exit, seen in CI.
GLOO_KEEP = []


def gloo_ok(dtype):
    # Gloo 1.13 has no bfloat16, int16 or bool: those are checked against the reference
    return dtype not in (torch.bfloat16, torch.int16, torch.bool)


def ref_reduce(dtype, count, op, salt=0):
    xs = [data(r, dtype, count, salt) for r in range(N)]
    if dtype == torch.bool and op != R.BXOR:
        xs = [x.to(torch.int64) for x in xs]
        out = xs[0].clone()
        for x in xs[1:]:
            out = torch.maximum(out, x) if op in (R.SUM, R.MAX, R.BOR) else torch.minimum(out, x)
        return out.bool()
    out = xs[0].clone()
    for x in xs[1:]:
        out = {R.SUM: torch.add, R.PRODUCT: torch.mul, R.MIN: torch.minimum, R.MAX: torch.maximum,
               R.BAND: torch.bitwise_and, R.BOR: torch.bitwise_or, R.BXOR: torch.bitwise_xor}[op](out, x)
    return out


def ops_for(dtype):
    if dtype == torch.bool or dtype in INTS:
        return [R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR]
    return [R.SUM, R.PRODUCT, R.MIN, R.MAX]


def reduced(dtype, count, op, gloo, salt=0):
    """The expected reduction: Gloo's all_reduce where Gloo can, else the reference."""
    if not gloo_ok(dtype):
        return ref_reduce(dtype, count, op, salt)
    t = data(RANK, dtype, count, salt)
    dist.all_reduce(t, op=op, group=gloo)
    GLOO_KEEP.append(t)
    return t


def test_allreduce(gloo):
    for dt in DTYPES:
        for count in COUNTS:
            for op in ops_for(dt):
                want = reduced(dt, count, op, gloo)
                t = data(RANK, dt, count)
                dist.all_reduce(t, op=op)
                check(f"all_reduce {dt} n={count} {op}", t, want)
                t = data(RANK, dt, count)
                dist.reduce(t, dst=N - 1, op=op)
                if RANK == N - 1:
                    check(f"reduce {dt} n={count} {op}", t, want)
                if dt == torch.bool:
                    continue
                outs = [torch.empty(count, dtype=dt) for _ in range(N)]
                dist.reduce_scatter(outs[RANK], [data(RANK, dt, count * N).view(N, count)[i].clone()
                                                 for i in range(N)], op=op)
                full = reduced(dt, count * N, op, gloo)
                check(f"reduce_scatter {dt} n={count} {op}", outs[RANK], full.view(N, count)[RANK])
                o = torch.empty(count, dtype=dt)
                dist.reduce_scatter_tensor(o, data(RANK, dt, count * N), op=op)
                check(f"reduce_scatter_tensor {dt} n={count} {op}", o, full.view(N, count)[RANK])


def test_avg_and_refusals(gloo):
    for dt in FLOATS:
        want = reduced(dt, 333, R.SUM, gloo) / N
        t = data(RANK, dt, 333)
        dist.all_reduce(t, op=R.AVG)
        check(f"all_reduce {dt} AVG", t, want)
    for dt, op, word in [(torch.int32, R.AVG, "AVG"), (torch.float32, R.BXOR, "BXOR"),
                         (torch.bfloat16, R.BAND, "BAND"), (torch.bool, R.AVG, "AVG")]:
        CHECKS[0] += 1
        try:
            dist.all_reduce(data(RANK, dt, 5), op=op)
            FAILS.append(f"all_reduce {dt} {op} not refused")
        except RuntimeError as e:
            if word not in str(e):
                FAILS.append(f"all_reduce {dt} {op} refused without naming {word}: {e}")
    CHECKS[0] += 1
    try:
        dist.all_reduce(torch.zeros(3, dtype=torch.complex64), op=R.MAX)
        FAILS.append("complex MAX not refused")
    except (RuntimeError, ValueError):
        pass


def test_coalesced(gloo):
    for dt in [torch.float32, torch.int64, torch.bfloat16]:
        ts = [data(RANK, dt, c, salt=c) for c in (3, 1000, 17)]
        want = [reduced(dt, c, R.SUM, gloo, salt=c) for c in (3, 1000, 17)]
        dist.all_reduce_coalesced(ts, op=R.SUM)
        check(f"all_reduce_coalesced {dt}", ts, want)
        outs = [[torch.empty(c, dtype=dt) for _ in range(N)] for c in (3, 1000, 17)]
        dist.all_gather_coalesced(outs, [data(RANK, dt, c, salt=c) for c in (3, 1000, 17)])
        check(f"all_gather_coalesced {dt}", [o for l in outs for o in l],
              [data(r, dt, c, salt=c) for c in (3, 1000, 17) for r in range(N)])


def test_movement(gloo):
    for dt in DTYPES + [torch.complex64]:
        for count in COUNTS:
            ref = [data(r, dt, count) if dt != torch.complex64 else
                   torch.complex(data(r, torch.float32, count), data(r, torch.float32, count, 1)) for r in range(N)]
            mine = ref[RANK]
            t = mine.clone()
            dist.broadcast(t, src=N - 1)
            check(f"broadcast {dt} n={count}", t, ref[N - 1])
            outs = [torch.empty_like(mine) for _ in range(N)]
            dist.all_gather(outs, mine)
            check(f"all_gather {dt} n={count}", outs, ref)
            flat = torch.empty(count * N, dtype=dt)
            dist.all_gather_into_tensor(flat, mine)
            check(f"all_gather_into_tensor {dt} n={count}", flat, torch.cat(ref))
            gl = [torch.empty_like(mine) for _ in range(N)] if RANK == 0 else None
            dist.gather(mine, gl, dst=0)
            if RANK == 0:
                check(f"gather {dt} n={count}", gl, ref)
            o = torch.empty_like(mine)
            dist.scatter(o, [x.clone() for x in ref] if RANK == 1 % N else None, src=1 % N)
            check(f"scatter {dt} n={count}", o, ref[RANK])


def test_alltoall(gloo):
    for dt in [torch.float32, torch.bfloat16, torch.int8, torch.bool]:
        # rank r sends (r + i + 1) rows of 3 to rank i
        rows = [RANK + i + 1 for i in range(N)]
        inp = data(RANK, dt, sum(rows) * 3).view(-1, 3)
        outrows = [r + RANK + 1 for r in range(N)]
        out = torch.empty(sum(outrows), 3, dtype=dt)
        dist.all_to_all_single(out, inp, output_split_sizes=outrows, input_split_sizes=rows)
        want = torch.cat([data(r, dt, sum(s + r + 1 for s in range(N)) * 3).view(-1, 3)
                          [sum(r + k + 1 for k in range(RANK)):][:r + RANK + 1] for r in range(N)])
        check(f"all_to_all_single splits {dt}", out, want)
        if gloo_ok(dt) and dt != torch.bool:
            g = torch.empty(sum(outrows), 3, dtype=dt)
            dist.all_to_all_single(g, inp, output_split_sizes=outrows, input_split_sizes=rows, group=gloo)
            GLOO_KEEP.extend((g, inp))
            check(f"all_to_all_single splits {dt} vs gloo", out, g)
        inp = data(RANK, dt, 4 * N)
        out = torch.empty(4 * N, dtype=dt)
        dist.all_to_all_single(out, inp)
        check(f"all_to_all_single equal {dt}", out,
              torch.cat([data(r, dt, 4 * N)[4 * RANK:4 * RANK + 4] for r in range(N)]))
        ins = [data(RANK, dt, i + 1, salt=7) for i in range(N)]
        outs = [torch.empty(RANK + 1, dtype=dt) for _ in range(N)]
        dist.all_to_all(outs, ins)
        check(f"all_to_all list {dt}", outs, [data(r, dt, RANK + 1, salt=7) for r in range(N)])


def test_p2p(gloo):
    nxt, prv = (RANK + 1) % N, (RANK - 1) % N
    for dt in [torch.float32, torch.float16, torch.int64, torch.bool]:
        for count in (1, 100000):
            t = torch.empty(count, dtype=dt)
            if RANK % 2 == 0:
                dist.send(data(RANK, dt, count), nxt)
                dist.recv(t, prv)
            else:
                dist.recv(t, prv)
                dist.send(data(RANK, dt, count), nxt)
            check(f"send/recv ring {dt} n={count}", t, data(prv, dt, count))
    reqs = [dist.irecv(torch.empty(5), src=prv), dist.isend(data(RANK, torch.float32, 5), nxt)]
    reqs[1].wait()
    reqs[0].wait()
    # any-source: every rank but 0 sends to rank 0, which receives in any order
    if RANK == 0:
        seen = set()
        for _ in range(N - 1):
            t = torch.empty(7)
            src = dist.recv(t)
            check(f"recv any source from {src}", t, data(src, torch.float32, 7))
            seen.add(src)
        check("recv any source saw every rank", torch.tensor(sorted(seen)), torch.arange(1, N))
    else:
        dist.send(data(RANK, torch.float32, 7), 0)
    CHECKS[0] += 1
    try:
        dist.send(torch.zeros(2), nxt, tag=3)
        FAILS.append("send with tag 3 not refused")
    except RuntimeError as e:
        if "tag" not in str(e):
            FAILS.append(f"tag refusal unclear: {e}")


def test_noncontig_async(gloo):
    base = data(RANK, torch.float32, 60).view(6, 10)
    t = base.t()  # non-contiguous view
    want = reduced(torch.float32, 60, R.SUM, gloo).view(6, 10).t()
    dist.all_reduce(t, op=R.SUM)
    check("all_reduce non-contiguous", t, want)
    check("all_reduce non-contiguous wrote through the view", base, want.t())
    ts = [data(RANK, torch.float32, 1000, salt=i) for i in range(8)]
    works = [dist.all_reduce(x, async_op=True) for x in ts]
    fut = works[-1].get_future()
    chained = fut.then(lambda f: f.value()[0] * 2)
    for w in works:
        w.wait()
        check("work.is_completed after wait", torch.tensor(w.is_completed()), torch.tensor(True))
    want = [reduced(torch.float32, 1000, R.SUM, gloo, salt=i) for i in range(8)]
    check("8 async all_reduce in issue order", ts, want)
    check("future.then chain", chained.wait(), want[-1] * 2)
    dist.barrier()


def test_subgroup(gloo):
    members = [0, N - 1]
    sub = dist.new_group(members, backend="coll")
    if RANK in members:
        t = data(RANK, torch.float32, 50)
        dist.all_reduce(t, group=sub)
        check("new_group [0, N-1] all_reduce", t, data(0, torch.float32, 50) + data(N - 1, torch.float32, 50))
        dist.barrier(group=sub)


def main():
    timeout = datetime.timedelta(seconds=float(os.environ.get("OPS_TIMEOUT", "60")))
    dist.init_process_group("coll", init_method="env://", timeout=timeout)
    gloo = dist.new_group(backend="gloo", timeout=timeout)
    for test in (test_allreduce, test_avg_and_refusals, test_coalesced, test_movement, test_alltoall, test_p2p,
                 test_noncontig_async, test_subgroup):
        test(gloo)
        dist.barrier()
    print(f"rank {RANK}/{N}: {CHECKS[0]} checks, {len(FAILS)} failed"
          + ("".join(f"\n  {f}" for f in FAILS[:20])), flush=True)
    dist.destroy_process_group()
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
