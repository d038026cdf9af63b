#!/usr/bin/env python3
"""parse-hccl-result.py - summarise an hccl_test (or collbench *_test) log.

    ./scripts/parse-hccl-result.py output.log [-f table|markdown] [-s size|bandwidth|time]
    cat output.log | ./scripts/parse-hccl-result.py

Reads the result rows of hccl_test-style logs in any of these layouts:
  whitespace (as in hccl_test's documentation):
      data_size      avg_time(us)    alg_bandwidth(GB/s)    check_result
      8192           125.3           0.065                  success
  hccl_test's real '|' layout:
      data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:
      8192              | 25.07          | 0.32676              | success
  collbench's table (same, plus '| bus_bandwidth(GB/s)' and optional min/avg/max
  time columns): the bus bandwidth is kept and shown.
Other lines (headers, 'the minbytes is ...', 'check buf[...] error', a
non-root rank's 'rank id N, check result failed, ...') are ignored.

Prints the rows (sorted by size ascending, bandwidth descending or time
ascending), then the seed skill's parser's own summary, word for word
("Total: N tests | Avg BW: X.XXXX GB/s | Max: Y.YYYY GB/s"; in markdown
"**Total Tests:** N"), then ours: count, average, max and min algorithm
bandwidth (and bus bandwidth when the log has it), as a plain table (default)
or markdown. The layouts read include --format plain's (the seed's whitespace
table) and the default one with nccl-tests' '#' footer (ignored).
Exit 0 on success, 1 when no result row is found ("No HCCL test results found
in input."), 2 on a bad command line or an unreadable file.
Python 3 standard library only.
"""
import argparse
import re
import sys

CHECKS = ("success", "failed", "null", "fail", "error")
_NUM = r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
# whitespace layout: size time algbw check [busbw]
_WS = re.compile(r"^\s*([0-9]+)\s+(%s)\s+(%s)\s+([A-Za-z]+)(?:\s+(%s))?\s*$" % (_NUM, _NUM, _NUM))
# optional prefixes: Open MPI's --tag-output ("[1,0]<stdout>:"), timestamps are not expected
_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:\s?|^\[\d+,\d+\]:\s?")


def _num(s):
    s = s.strip()
    if not s or not re.fullmatch(_NUM, s):
        return None
    return float(s)


def parse_line(line):
    """One result row as a dict, or None."""
    line = _TAG.sub("", line.rstrip("\r\n"))
    if not re.match(r"^\s*[0-9]", line):
        return None          # headers, 'rank id N, check result failed, ...', '...'
    if "|" in line:
        f = [x.strip() for x in line.split("|")]
        if len(f) < 4 or not re.fullmatch(r"[0-9]+", f[0]):
            return None
        t, a, chk = _num(f[1]), _num(f[2]), f[3]
        if t is None or a is None or chk.lower() not in CHECKS:
            return None
        bus = _num(f[4]) if len(f) >= 5 else None
        return {"size": int(f[0]), "time": t, "algbw": a, "check": chk, "busbw": bus}
    m = _WS.match(line)
    if not m or m.group(4).lower() not in CHECKS:
        return None
    return {"size": int(m.group(1)), "time": float(m.group(2)), "algbw": float(m.group(3)),
            "check": m.group(4), "busbw": float(m.group(5)) if m.group(5) else None}


def parse(text):
    return [r for r in (parse_line(l) for l in text.splitlines()) if r is not None]


def human(b):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= div and b % div == 0:
            return "%d%s" % (b // div, unit)
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= div:
            return "%.2f%s" % (b / div, unit)
    return "%dB" % b


def stats(rows, key):
    vals = [r for r in rows if r[key] is not None]
    if not vals:
        return None
    hi = max(vals, key=lambda r: r[key])
    lo = min(vals, key=lambda r: r[key])
    return {"count": len(vals), "avg": sum(r[key] for r in vals) / len(vals),
            "max": hi[key], "max_size": hi["size"], "min": lo[key], "min_size": lo["size"]}


def sort_rows(rows, key):
    if key == "bandwidth":
        return sorted(rows, key=lambda r: (-r["algbw"], r["size"]))
    if key == "time":
        return sorted(rows, key=lambda r: (r["time"], r["size"]))
    return sorted(rows, key=lambda r: r["size"])      # stable: repeated runs keep their order


def cells(rows, bus):
    head = ["data_size(Bytes)", "size", "avg_time(us)", "alg_bandwidth(GB/s)"]
    if bus:
        head.append("bus_bandwidth(GB/s)")
    head.append("check_result")
    body = []
    for r in rows:
        c = [str(r["size"]), human(r["size"]), "%.2f" % r["time"], "%.5f" % r["algbw"]]
        if bus:
            c.append("" if r["busbw"] is None else "%.5f" % r["busbw"])
        c.append(r["check"])
        body.append(c)
    return head, body


def summary_lines(rows):
    out = []
    failed = sum(1 for r in rows if r["check"].lower() in ("failed", "fail", "error"))
    out.append(("Count", "%d" % len(rows) + (" (%d failed)" % failed if failed else "")))
    for label, key in (("", "algbw"), ("bus ", "busbw")):
        s = stats(rows, key)
        if s is None:
            continue
        out.append(("Average %sbandwidth" % label, "%.5f GB/s" % s["avg"]))
        out.append(("Max %sbandwidth" % label, "%.5f GB/s @ %s (%d bytes)" % (s["max"], human(s["max_size"]), s["max_size"])))
        out.append(("Min %sbandwidth" % label, "%.5f GB/s @ %s (%d bytes)" % (s["min"], human(s["min_size"]), s["min_size"])))
    return out


def seed_total(rows):
    """The seed skill's own summary line (§6.2 of seed 000), word for word."""
    a = [r["algbw"] for r in rows]
    return "Total: %d tests | Avg BW: %.4f GB/s | Max: %.4f GB/s" % (len(a), sum(a) / len(a), max(a))


def render_table(rows, bus):
    head, body = cells(rows, bus)
    w = [max(len(x) for x in col) for col in zip(head, *body)]
    fmt = lambda c: "  ".join(x.ljust(w[i]) if i == len(c) - 1 or i == 1 else x.rjust(w[i])
                              for i, x in enumerate(c)).rstrip()
    lines = [fmt(head), "  ".join("-" * n for n in w)]
    lines += [fmt(c) for c in body]
    lines.append("")
    lines.append(seed_total(rows))
    summ = summary_lines(rows)
    lw = max(len(k) for k, _ in summ)
    lines += ["%s: %s" % (k.ljust(lw), v) for k, v in summ]
    return "\n".join(lines) + "\n"


def render_markdown(rows, bus):
    head, body = cells(rows, bus)
    right = [True, False, True, True] + ([True] if bus else []) + [False]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(c) + " |" for c in body]
    lines += ["", "**Total Tests:** %d" % len(rows)]
    lines += ["", "| Summary | Value |", "|---|---|"]
    lines += ["| %s | %s |" % kv for kv in summary_lines(rows)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="parse-hccl-result.py",
        description="Summarise the result rows of an hccl_test / collbench *_test log "
                    "(a file, or standard input).")
    ap.add_argument("input", nargs="?", default="-", metavar="LOG",
                    help="log file (default: standard input; '-' too)")
    ap.add_argument("-f", "--format", choices=("table", "markdown"), default="table",
                    help="output format (default table)")
    ap.add_argument("-s", "--sort", choices=("size", "bandwidth", "time"), default="size",
                    help="row order: size ascending (default), bandwidth descending, time ascending")
    a = ap.parse_args(argv)
    try:
        if a.input == "-":
            text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        else:
            with open(a.input, "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
    except OSError as e:
        print("parse-hccl-result.py: cannot read %s: %s" % (a.input, e.strerror or e), file=sys.stderr)
        return 2
    rows = parse(text)
    if not rows:
        print("No HCCL test results found in input.", file=sys.stderr)
        return 1
    rows = sort_rows(rows, a.sort)
    bus = any(r["busbw"] is not None for r in rows)
    out = render_markdown(rows, bus) if a.format == "markdown" else render_table(rows, bus)
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
