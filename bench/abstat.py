#!/usr/bin/python3
"""bench/abstat.py - the statistics of bench/ab.sh: one table from its raw rows.

    abstat.py [--unit U] RAW SIDE...   (SIDE in the order given; the first is the
                                        reference; U the figures' unit, default us)

RAW holds one line per run: "ROUND SIDE CASE US ALGO", US the time per call in
microseconds (the slowest rank's average; "-" when the run failed), and per
round where the floor was measured "ROUND @floor CASE US -". CASE is one
word ("allreduce/p4/64M"). Per case and side the table gives the times round
by round, their median [min-max], the algorithm(s), the speed-up over the first
side round by round (the first side's time / this side's, > 1: faster; only
rounds where both ran), median [min-max], and, with a floor, the figure as %
of that round's floor (floor time / time), median [min-max]. Any figure where
lower is better works the same (bench/ab.sh -S: a whole sweep's wall seconds
and its summed times, --unit s/us, the unit in the case's name).
"""
import statistics
import sys


def num(x):
    return "%.0f" % x if abs(x) >= 100 else "%.3g" % x


def spread(v):
    """median [min-max] of a list of numbers, "-" when empty."""
    if not v:
        return "-"
    if len(v) == 1:
        return num(v[0])
    return "%s [%s-%s]" % (num(statistics.median(v)), num(min(v)), num(max(v)))


def pct_spread(v):
    """median [min-max] of percentages, whole numbers, "-" when empty."""
    if not v:
        return "-"
    if len(v) == 1:
        return "%.0f%%" % v[0]
    return "%.0f%% [%.0f-%.0f%%]" % (statistics.median(v), min(v), max(v))


def ratio_spread(v):
    if not v:
        return "-"
    return "%.2f [%.2f-%.2f]" % (statistics.median(v), min(v), max(v))


def load(path):
    """{case: {side: {round: (us or None, algo)}}}, cases in first-seen order."""
    t = {}
    for line in open(path):
        f = line.split()
        if len(f) < 4:
            continue
        rnd, side, case, us = int(f[0]), f[1], f[2], f[3]
        algo = f[4] if len(f) > 4 else "-"
        v = None if us == "-" else float(us)
        t.setdefault(case, {}).setdefault(side, {})[rnd] = (v, algo)
    return t


def table(t, sides, unit="us"):
    floors = any("@floor" in d for d in t.values())
    hdr = ["case", "side", "%s per round" % unit, "%s median [min-max]" % unit, "algorithm",
           "speed-up over %s" % sides[0]]
    if floors:
        hdr.append("% of floor")
    out = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for case, d in t.items():
        ref = d.get(sides[0], {})
        fl = d.get("@floor", {})
        for s in sides:
            runs = d.get(s, {})
            if not runs:
                continue
            rounds = sorted(runs)
            per = " ".join(num(runs[r][0]) if runs[r][0] else "-" for r in rounds)
            ok = [runs[r][0] for r in rounds if runs[r][0]]
            algos = "/".join(sorted({runs[r][1] for r in rounds if runs[r][0]})) or "-"
            sp = [ref[r][0] / runs[r][0] for r in rounds if runs[r][0] and r in ref and ref[r][0]]
            row = [case, s, per, spread(ok), algos, "-" if s == sides[0] else ratio_spread(sp)]
            if floors:
                pc = [100 * fl[r][0] / runs[r][0] for r in rounds if runs[r][0] and r in fl and fl[r][0]]
                row.append(pct_spread(pc))
            out.append("| " + " | ".join(row) + " |")
    return out


def main():
    args, unit = sys.argv[1:], "us"
    if len(args) >= 2 and args[0] == "--unit":
        unit, args = args[1], args[2:]
    if len(args) < 2:
        sys.stderr.write("usage: abstat.py [--unit U] RAW SIDE...\n")
        return 2
    print("\n".join(table(load(args[0]), args[1:], unit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
