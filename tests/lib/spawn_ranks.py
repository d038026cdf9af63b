#!/usr/bin/env python3
"""tests/lib/spawn_ranks.py - start many ranks cheaply and reap them (for scale.sh).

    spawn_ranks.py DIR N H NOFILE COMMON -- TOOL ARGS...

Starts N processes of TOOL with posix_spawn (vfork + exec: ~1 ms a rank on
this VM, against ~14 ms for each fork of a bash subshell, which made the
launch of 512 ranks take 18 s of a 30 s test), each with the caller's
environment plus the torchrun variables of its rank and the words of COMMON
("K=V K=V ..."), stdin /dev/null, stdout and stderr DIR/rank<r>.log. Rank r
runs on simulated host floor(r * H / N) (scale.sh's block distribution).
NOFILE ("S" or "S:H") is set as this process's RLIMIT_NOFILE first, so every
rank inherits it; if it cannot be set: one line on stderr, exit 126.
Writes DIR/pids (one pid a line, rank order) once all are started, then
appends "RANK RC" to DIR/rcs as each rank is reaped (RC as bash's wait gives
it: the exit code, or 128 + the signal), and exits 0 when all are reaped.
Cost: O(N) spawns; one wait() a rank; nothing polls.
"""
import os
import resource
import sys


def main():
    if len(sys.argv) < 8 or sys.argv[6] != "--":
        sys.exit("usage: spawn_ranks.py DIR N H NOFILE COMMON -- TOOL ARGS...")
    d, n, h, nofile, common = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    argv = sys.argv[7:]
    soft, _, hard = nofile.partition(":")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (int(soft), int(hard or soft)))
    except (ValueError, OSError) as e:
        sys.stderr.write(f"spawn_ranks.py: cannot set RLIMIT_NOFILE to {nofile}: {e}\n")
        sys.exit(126)
    base = dict(os.environ)
    for kv in common.split():
        k, _, v = kv.partition("=")
        base[k] = v
    pids = {}
    for r in range(n):
        host = r * h // n
        first, nxt = (host * n + h - 1) // h, ((host + 1) * n + h - 1) // h
        env = dict(base, RANK=str(r), WORLD_SIZE=str(n), LOCAL_RANK=str(r - first),
                   LOCAL_WORLD_SIZE=str(nxt - first), COLL_HOST_ID=f"scale{host}")
        log = os.path.join(d, f"rank{r}.log")
        acts = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
                (os.POSIX_SPAWN_DUP2, 1, 2)]
        try:
            pid = os.posix_spawn(argv[0], argv, env, file_actions=acts)
        except OSError as e:
            with open(log, "w") as f:
                f.write(f"spawn_ranks.py: cannot start {argv[0]}: {e}\n")
            with open(os.path.join(d, "rcs"), "a") as f:
                f.write(f"{r} 127\n")
            continue
        pids[pid] = r
    with open(os.path.join(d, "pids.tmp"), "w") as f:
        byrank = {r: p for p, r in pids.items()}
        f.write("".join(f"{byrank.get(r, 0)}\n" for r in range(n)))
    os.rename(os.path.join(d, "pids.tmp"), os.path.join(d, "pids"))
    with open(os.path.join(d, "rcs"), "a", buffering=1) as out:
        while pids:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            r = pids.pop(pid, None)
            if r is None:
                continue
            rc = os.waitstatus_to_exitcode(status)
            out.write(f"{r} {rc if rc >= 0 else 128 - rc}\n")


if __name__ == "__main__":
    main()
