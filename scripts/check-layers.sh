#!/usr/bin/env bash
# check-layers.sh - src/ follows the layers of ARCHITECTURE.md, data flowing
# down only:
#
#     core <- bootstrap <- topo <- transport <- coll <- comm (communicator creation)
#
# topo (which ranks share a host) sits on the records the bootstrap join
# exchanges and under the transports, which choose shm or tcp per peer by it.
# A file of src/<dir>/ may use its own layer and the layers below, never one
# above (so the directory graph has no cycle). "Use" is read two ways:
#   include  every #include, "x.h" or <x.h>, resolved as the compiler does
#            (-Isrc): the including file's folder first, then src/; so
#            "../coll/x.h" and <coll/x.h> count as coll/x.h
#   name     every identifier outside comments and strings (calls, addresses
#            taken, prototypes, macro bodies) that names a function or a
#            table defined non-static in a higher layer's .c file: a call
#            through a local prototype, without the header, is caught too
# Besides, two seams:
#   transport  outside src/transport, no file includes a transport's private
#              headers (shm.h, shm_seg.h, shm_size.h, tcp_internal.h) or names
#              a coll_shm_* / coll_tcp_* function or table: algorithms go
#              through comm->tp / comm->direct (transport/direct.h)
#   sim        outside src/transport/sim*, no file includes transport/sim.h,
#              names a coll_sim_* function, or reads a ->sim / .sim member:
#              the simulator is a transport like the others (its state's
#              struct coll_sim in core/comm.h is opaque, like coll_shm's)
# Known violations not yet fixed are listed, each with its reason, in an
# allow-list (default: scripts/check-layers.allow next to this script), one
# "FILE RULE WHAT LINES  # reason" per line (FILE relative to SRC_DIR, RULE
# and WHAT as printed; LINES: on how many lines at most): they are reported as
# "allowed" and do not fail; more lines than that fail, fewer are reported as
# a stale entry to lower or remove. Any other violation fails.
# Prints the directory graph (includes); exits 1 naming each violation as
# "FAIL: FILE:LINE: RULE WHAT (why)", 2 on bad usage. Self-test: tests/mp/17-layers.sh.
#
#   scripts/check-layers.sh [-a ALLOW_FILE] [SRC_DIR]   (default: src of this checkout)
set -u
here=$(cd "$(dirname "$0")" && pwd)
allow=$here/check-layers.allow
while getopts "a:" o; do
    case $o in
    a) allow=$OPTARG ;;
    *) echo "usage: $0 [-a ALLOW_FILE] [SRC_DIR]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
src=${1:-"$here/../src"}
[ $# -le 1 ] || { echo "check-layers: one SRC_DIR at most, got $#: $*" >&2; exit 2; }
[ -d "$src" ] || { echo "check-layers: '$src': no such directory (need the library's src/)" >&2; exit 2; }
[ -f "$allow" ] || { echo "check-layers: allow-list '$allow': no such file" >&2; exit 2; }
exec python3 - "$src" "$allow" <<'PY'
import os, re, sys

LAYERS = ["core", "bootstrap", "topo", "transport", "coll", "comm"]
RANK = {l: i for i, l in enumerate(LAYERS)}
PRIVATE_TP = {"transport/shm.h", "transport/shm_seg.h", "transport/shm_size.h", "transport/tcp_internal.h"}
src, allow_path = os.path.realpath(sys.argv[1]), sys.argv[2]

TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_]\w*|->|[{}();=\[\].]|\n|.', re.S)
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
INCLUDE = re.compile(r'#\s*include\s*([<"])([^>"]+)[>"]')


def blank_comments(text):
    """Comments become spaces (their newlines kept, so line numbers hold); strings stay."""
    def sub(m):
        s = m.group(0)
        return s if s[0] in "\"'" else re.sub(r"[^\n]", " ", s)
    return COMMENT.sub(sub, text)


def logical_lines(text):
    """(first line number, text) with backslash continuations joined."""
    out, buf, start = [], [], 0
    for i, line in enumerate(text.split("\n"), 1):
        if not buf:
            start = i
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((start, " ".join(buf)))
        buf = []
    if buf:
        out.append((start, " ".join(buf)))
    return out


def tokens(s, line):
    return [(t, line) for t in TOKEN.findall(s) if not t.isspace()]


def resolve(rel, spelling, bracket):
    """The include's path relative to src (a layer's folder first), or None when outside."""
    cands = [] if bracket == "<" else [os.path.normpath(os.path.join(os.path.dirname(rel), spelling))]
    cands.append(os.path.normpath(spelling))
    for c in cands:
        if not c.startswith("..") and os.path.isfile(os.path.join(src, c)):
            return c
    for c in cands:  # a file that does not exist (yet): by its folder
        if not c.startswith("..") and c.split("/")[0] in RANK:
            return c
    return None


class File:
    def __init__(self, rel):
        self.rel, self.layer = rel, rel.split("/")[0]
        text = blank_comments(open(os.path.join(src, rel), encoding="utf-8", errors="replace").read())
        self.includes, self.toks, self.dtoks = [], [], []  # dtoks: directive lines (no braces counted)
        for n, s in logical_lines(text):
            if s.lstrip().startswith("#"):
                m = INCLUDE.match(s.lstrip())
                if m:
                    self.includes.append((n, m.group(2), m.group(1)))
                else:
                    self.dtoks += tokens(s, n)
            else:
                self.toks += tokens(s, n)
        self.globals, self.statics = set(), set()
        self.find_definitions()

    def find_definitions(self):
        """Functions and tables defined at file scope: global or static."""
        depth, stmt = 0, []
        for t, _ in self.toks:
            if t == "{" and depth == 0:
                words = [x for x, _ in stmt]
                if "(" in words and words[-1:] == [")"] and "=" not in words:
                    i = words.index("(")
                    if i > 0 and re.match(r"[A-Za-z_]\w*$", words[i - 1]):
                        self.define(words[i - 1], words)
                stmt = []
            if t == "=" and depth == 0:
                words = [x for x, _ in stmt]
                if "(" not in words:
                    while words and words[-1] == "]":
                        words = words[:words.index("[")] if "[" in words else []
                    if words and re.match(r"[A-Za-z_]\w*$", words[-1]):
                        self.define(words[-1], [x for x, _ in stmt])
            depth += (t == "{") - (t == "}")
            if depth == 0 and t in (";", "}"):
                stmt = []
            elif depth == 0 and t != "{":
                stmt.append((t, 0))

    def define(self, name, words):
        if "typedef" in words or "extern" in words:
            return
        (self.statics if "static" in words else self.globals).add(name)

    def names(self):
        """(identifier, line, member) for every identifier used; member: after -> or ."""
        out = []
        for seq in (self.toks, self.dtoks):
            prev = ""
            for t, n in seq:
                if re.match(r"[A-Za-z_]\w*$", t):
                    out.append((t, n, prev in ("->", ".")))
                prev = t
        return out


def main():
    files = []
    for d, _, fs in os.walk(src):
        for f in fs:
            if f.endswith((".c", ".h")):
                files.append(os.path.relpath(os.path.join(d, f), src))
    files = [File(r) for r in sorted(files)]
    fails, edges = [], {}
    for f in files:
        if f.layer not in RANK:
            fails.append((f.rel, 0, "layer", f.layer, "src/%s is not a known layer (%s)" % (f.layer, " ".join(LAYERS))))
    owner = {}  # global name -> layers defining it (.c files)
    for f in files:
        if f.rel.endswith(".c") and f.layer in RANK:
            for g in f.globals:
                owner.setdefault(g, set()).add(f.layer)
    for f in files:
        if f.layer in RANK:
            check_file(f, owner, edges, fails)
    allowed, seen = read_allow(allow_path), {}
    fails = sorted(set(fails))
    for rel, _, rule, what, _ in fails:
        seen[(rel, rule, what)] = seen.get((rel, rule, what), 0) + 1
    bad = 0
    for rel, line, rule, what, why in fails:
        key = (rel, rule, what)
        if key in allowed and seen[key] <= allowed[key][0]:
            print("allowed: %s:%d: %s %s (%s) -- %s" % (rel, line, rule, what, why, allowed[key][1]))
        else:
            more = " (%d lines, the allow-list has %d)" % (seen[key], allowed[key][0]) if key in allowed else ""
            print("FAIL: %s:%d: %s %s (%s)%s" % (rel, line, rule, what, why, more))
            bad += 1
    for key in sorted(allowed):
        if seen.get(key, 0) < allowed[key][0]:
            print("stale allow-list entry, %d line(s) now (lower it or remove it from %s): %s %s %s %d"
                  % (seen.get(key, 0), allow_path, *key, allowed[key][0]))
    print("directory graph (includes, a -> b: a includes b):")
    for e in sorted(edges):
        print("  %s -> %s (%d)" % (e[0], e[1], edges[e]))
    if bad:
        print("%d layer violation(s)" % bad)
        return 1
    print("layers ok: %s (each uses only itself and those before it; transport and sim seams held)" % " ".join(LAYERS))
    return 0


def is_sim_file(rel):
    return rel.startswith("transport/sim")


def check_file(f, owner, edges, fails):
    rf = RANK[f.layer]
    for n, spelling, br in f.includes:
        inc = resolve(f.rel, spelling, br)
        if inc is None:
            continue
        to = inc.split("/")[0]
        if to not in RANK or inc == to:
            continue  # public headers, system headers
        if to != f.layer:
            edges[(f.layer, to)] = edges.get((f.layer, to), 0) + 1
        shown = inc if inc == spelling and br == '"' else "%s (written %s%s%s)" % (inc, br, spelling, ">" if br == "<" else '"')
        if RANK[to] > rf:
            fails.append((f.rel, n, "include", inc, "%s: layer %s is above %s" % (shown, to, f.layer)))
        if f.layer != "transport" and inc in PRIVATE_TP:
            fails.append((f.rel, n, "include", inc, "%s: private to src/transport" % shown))
        if not is_sim_file(f.rel) and inc == "transport/sim.h":
            fails.append((f.rel, n, "sim", inc, "included: the simulator is private to src/transport/sim*"))
    for name, n, member in f.names():
        if member:
            if name == "sim" and not is_sim_file(f.rel):
                fails.append((f.rel, n, "sim", "->sim", "a member naming the simulator outside src/transport/sim*"))
            continue
        if f.layer != "transport" and re.match(r"coll_(shm|tcp)_\w+$", name):
            fails.append((f.rel, n, "transport", name, "a transport named outside src/transport"))
        if not is_sim_file(f.rel) and re.match(r"coll_sim_\w+$", name):
            fails.append((f.rel, n, "sim", name, "the simulator named outside src/transport/sim*"))
        layers = owner.get(name)
        if layers and name not in f.statics and name not in f.globals and min(RANK[l] for l in layers) > rf:
            up = min(layers, key=RANK.get)
            fails.append((f.rel, n, "name", name, "defined in layer %s, above %s" % (up, f.layer)))


def read_allow(path):
    """{(file, rule, what): (lines, reason)} from lines "FILE RULE WHAT LINES  # reason"."""
    out = {}
    for i, raw in enumerate(open(path, encoding="utf-8"), 1):
        line, _, why = raw.partition("#")
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4 or not parts[3].isdigit() or not why.strip():
            sys.stderr.write("check-layers: %s:%d: want 'FILE RULE WHAT LINES  # reason', got: %s" % (path, i, raw))
            sys.exit(2)
        out[(parts[0], parts[1], parts[2])] = (int(parts[3]), why.strip())
    return out


sys.exit(main())
PY
