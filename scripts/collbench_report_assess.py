"""collbench-report assess DIR [-o OUTDIR]: heat maps of `collbench assess --json DIR`.

Reads DIR/{pairs,ring,bisect,node,coll}.json (schema collbench-assess/1) and
DIR/outliers.json, writes one PNG heat map per matrix into OUTDIR (default DIR):
  pairs_uni.png, pairs_bidi.png, pairs_lat.png   host x host (row: source)
  ring.png                                       ring x host (to its successor)
  bisect.png                                     host x host (the pair's GB/s)
  node.png                                       figure x host (d2d, GFLOPS, shm GB/s)
  coll.png                                       group (and job) x size
and prints the outliers as assess printed them:
  OUTLIER <test> <subject>: <value> (median <m>, <pct>%)
Exit 0 no outlier, 1 outliers, 2 bad input (a missing or malformed file).

Plots use matplotlib when it is installed (labels, colour bar); without it a
small PNG writer here draws the same matrix as coloured cells (zlib, no
labels), so the report works on a bare cluster node. Cells not measured are
grey. Colours: dark = low, light = high, each map on its own scale (latency:
high is bad).
"""

import argparse
import json
import os
import struct
import sys
import zlib

PROG = "collbench-report assess"
SCHEMA = "collbench-assess/1"


def fail(msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg))
    sys.exit(2)


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail("cannot read %s: %s (allowed: a JSON file written by collbench assess --json)" % (path, e))
    if not isinstance(d, dict) or d.get("schema") != SCHEMA:
        fail("%s: schema %r (allowed: %s)" % (path, d.get("schema") if isinstance(d, dict) else None, SCHEMA))
    return d


# ------------------------------------------------------------ PNG without matplotlib

def _ramp(t):
    """0..1 -> RGB, dark blue to yellow (viridis-like, 5 stops)."""
    stops = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
    t = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    i = min(int(t), len(stops) - 2)
    f = t - i
    a, b = stops[i], stops[i + 1]
    return tuple(int(a[k] + (b[k] - a[k]) * f) for k in range(3))


def png_bytes(width, height, rows):
    """rows: height lists of width (r, g, b) tuples -> PNG file bytes."""
    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def heat_plain(path, m, cell=24):
    vals = [v for row in m for v in row if v is not None]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    nr, nc = len(m), max((len(r) for r in m), default=0)
    rows = []
    for i in range(nr):
        line = []
        for j in range(nc):
            v = m[i][j] if j < len(m[i]) else None
            px = (160, 160, 160) if v is None else _ramp((v - lo) / (hi - lo) if hi > lo else 0.5)
            line.extend([px] * cell)
        rows.extend([line] * cell)
    with open(path, "wb") as f:
        f.write(png_bytes(nc * cell, nr * cell, rows))


def heat(path, m, title, xlabels, ylabels, unit):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        heat_plain(path, m)
        return
    import math
    data = [[math.nan if v is None else v for v in row] for row in m]
    fig, ax = plt.subplots(figsize=(1.2 + 0.6 * max(len(xlabels), 4), 1.2 + 0.5 * max(len(ylabels), 3)))
    im = ax.imshow(data, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(xlabels)))
    ax.set_xticklabels(xlabels, rotation=45, ha="right")
    ax.set_yticks(range(len(ylabels)))
    ax.set_yticklabels(ylabels)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label=unit)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# ------------------------------------------------------------ the maps

def maps(d, test):
    """(file stem, title, matrix, x labels, y labels, unit) of one test's JSON."""
    hosts = [h["host"] for h in d["hosts"]]
    out = []
    if test == "pairs":
        for key, stem, unit in (("uni_gbs", "pairs_uni", "GB/s"), ("bidi_gbs", "pairs_bidi", "GB/s"),
                                ("latency_us", "pairs_lat", "us")):
            out.append((stem, "pairs %s (row: source)" % key, d[key], hosts, hosts, unit))
    elif test == "ring":
        m = [r["gbs"] for r in d["rings"]]
        out.append(("ring", "ring GB/s to the successor", m, hosts,
                    ["%d %s" % (i, r["kind"]) for i, r in enumerate(d["rings"])], "GB/s"))
    elif test == "bisect":
        out.append(("bisect", "bisect pair GB/s (seed %s)" % d.get("seed"), d["pair_gbs"], hosts, hosts, "GB/s"))
    elif test == "node":
        rows, ylab = [d["d2d_gbs"], d["gflops_fp64"]], ["d2d GB/s", "GFLOPS"]
        if "shm_gbs" in d:  # node-shm (files written before it lack the row)
            rows.append(d["shm_gbs"]), ylab.append("shm GB/s")
        out.append(("node", "node d2d GB/s / FP64 GFLOPS / shm GB/s", rows, hosts, ylab, "per row"))
    elif test == "coll":
        groups = {}
        for h, g in enumerate(d["group_of_host"]):
            groups.setdefault(g, []).append(hosts[h])
        ylab = [",".join(groups[g]) for g in sorted(groups)] + ["job"]
        out.append(("coll", "coll AllReduce bus GB/s", d["busbw_gbs"], [str(s) for s in d["sizes"]], ylab, "GB/s"))
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description="Heat maps and outliers of collbench assess --json DIR")
    ap.add_argument("dir", help="the directory given to collbench assess --json")
    ap.add_argument("-o", "--out", help="where the PNG files go (default: DIR)")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.dir):
        fail("%s: not a directory (allowed: a directory written by collbench assess --json)" % a.dir)
    out = a.out or a.dir
    if not os.path.isdir(out):
        fail("-o %s: not a directory (allowed: an existing directory)" % out)
    opath = os.path.join(a.dir, "outliers.json")
    if not os.path.exists(opath):
        fail("%s: missing (allowed: a directory written by collbench assess --json)" % opath)
    outliers = load(opath).get("outliers", [])
    written = []
    for test in ("pairs", "ring", "bisect", "node", "coll"):
        p = os.path.join(a.dir, test + ".json")
        if not os.path.exists(p):
            continue
        d = load(p)
        try:
            ms = maps(d, test)
        except (KeyError, TypeError, IndexError) as e:
            fail("%s: missing or malformed field %s" % (p, e))
        for stem, title, m, xl, yl, unit in ms:
            f = os.path.join(out, stem + ".png")
            heat(f, m, title, xl, yl, unit)
            written.append(f)
    if not written:
        fail("%s: no test file (allowed: pairs, ring, bisect, node, coll .json)" % a.dir)
    for f in written:
        print("wrote %s" % f)
    for o in outliers:
        med = o.get("median") or 0
        pct = 100.0 * o["value"] / med if med > 0 else 0
        print("OUTLIER %s %s: %.6f (median %.6f, %.0f%%)" % (o["test"], o["subject"], o["value"], med, pct))
    print("%d outlier%s" % (len(outliers), "" if len(outliers) == 1 else "s"))
    return 1 if outliers else 0
