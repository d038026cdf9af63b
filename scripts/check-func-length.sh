#!/usr/bin/env bash
# check-func-length.sh - list the C functions longer than N lines, counted from
# the line of the opening brace to the line of the closing one (both included).
#
#   scripts/check-func-length.sh [-n N] [-a] DIR|FILE...   (default N: 80; default: src of this checkout)
#
# Prints "LINES path:line function" (line: that of the opening brace) for each
# function over N lines, longest first, and exits 1 when there is one (0 when
# none, 2 on bad usage). With -a every function is listed (the exit status
# still says whether one is over N). Tested by tests/mp/17-func-length.sh.
#
# How a function is found: a brace that opens at file scope (depth 0) after a
# header that holds a '(' and no '=' (so not an initializer, struct, enum or
# union body). Comments, string and character literals and preprocessor lines
# (continuations included) are skipped, so a brace inside them does not count.
# The name is the identifier before the header's first '('. Cost: one pass
# over each file, O(bytes).
set -u
max=80
all=0
usage() { echo "usage: $0 [-n N] [-a] DIR|FILE..." >&2; exit 2; }
while getopts "n:a" o; do
    case $o in
    n) case $OPTARG in
       ''|*[!0-9]*) echo "check-func-length: -n '$OPTARG': need a whole number of lines >= 1" >&2; exit 2 ;;
       esac
       [ "$OPTARG" -ge 1 ] || { echo "check-func-length: -n '$OPTARG': need a whole number of lines >= 1" >&2; exit 2; }
       max=$OPTARG ;;
    a) all=1 ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- "$(cd "$(dirname "$0")/.." && pwd)/src"
for p in "$@"; do
    [ -e "$p" ] || { echo "check-func-length: '$p': no such file or directory (need C sources or folders)" >&2; exit 2; }
done

list=$(find "$@" -type f \( -name '*.c' -o -name '*.h' \) | sort)
[ -n "$list" ] || exit 0
# shellcheck disable=SC2086
out=$(printf '%s\n' "$list" | while IFS= read -r f; do
awk -v file="$f" '
function flush_header() { hdr = "" }
{
    line = $0
    # preprocessor lines and their continuations
    if (!incomment && (cont || line ~ /^[ \t]*#/)) {
        cont = (line ~ /\\$/)
        next
    }
    n = length(line)
    for (i = 1; i <= n; i++) {
        c = substr(line, i, 1)
        if (incomment) {
            if (c == "*" && substr(line, i + 1, 1) == "/") { incomment = 0; i++ }
            continue
        }
        if (instr) {
            if (c == "\\") { i++; continue }
            if (c == quote) instr = 0
            continue
        }
        if (c == "/" && substr(line, i + 1, 1) == "/") break
        if (c == "/" && substr(line, i + 1, 1) == "*") { incomment = 1; i++; continue }
        if (c == "\"" || c == "\047") { instr = 1; quote = c; continue }
        if (c == "{") {
            if (depth == 0) {
                isfn = (hdr ~ /\(/ && hdr !~ /=/)
                if (isfn) {
                    name = hdr
                    sub(/\(.*/, "", name)
                    sub(/[ \t*]+$/, "", name)
                    gsub(/.*[^A-Za-z0-9_]/, "", name)
                    start = NR
                }
            }
            depth++
            continue
        }
        if (c == "}") {
            depth--
            if (depth == 0) {
                if (isfn)
                    printf "%d %s:%d %s\n", NR - start + 1, file, start, name
                isfn = 0
                hdr = ""
            }
            continue
        }
        if (depth == 0) {
            if (c == ";") hdr = ""
            else hdr = hdr c
        }
    }
    if (depth == 0) hdr = hdr " "
}' "$f"
done)
over=$(printf '%s\n' "$out" | awk -v m="$max" 'NF && $1 > m' | sort -k1,1nr -k2)
if [ $all -eq 1 ]; then
    printf '%s\n' "$out" | awk 'NF' | sort -k1,1nr -k2
else
    [ -n "$over" ] && printf '%s\n' "$over"
fi
[ -z "$over" ]
