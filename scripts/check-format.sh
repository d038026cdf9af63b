#!/usr/bin/env bash
# check-format.sh - the C sources follow .clang-format: lists each file whose
# formatting differs (with its number of differences) and exits 1 if any does.
#
#   scripts/check-format.sh [-v] [FILE...]   (default: every tracked *.c / *.h
#                                            of src tools tests bench examples
#                                            include)
#   -v   also print clang-format's diagnostics (the first 20 lines per file)
#
# Fix a file with `clang-format -i FILE`. Needs clang-format 14 (apt-get install
# clang-format); another version may format differently, so the check refuses
# to run with one (exit 2) rather than report differences that are not ours.
set -u
cd "$(dirname "$0")/.."
verbose=0
[ "${1:-}" = "-v" ] && { verbose=1; shift; }
case "${1:-}" in -*) echo "check-format.sh: unknown option '$1' (allowed: -v, then files)" >&2; exit 2 ;; esac
CF=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
[ -n "$CF" ] || { echo "check-format.sh: clang-format not found (apt-get install clang-format; version 14)" >&2; exit 2; }
ver=$("$CF" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[ "$ver" = 14 ] || { echo "check-format.sh: $CF is version '${ver:-?}', the style is pinned to clang-format 14 (set CLANG_FORMAT)" >&2; exit 2; }
[ -f .clang-format ] || { echo "check-format.sh: no .clang-format at $(pwd)" >&2; exit 2; }

if [ $# -gt 0 ]; then
    files=("$@")
    for f in "${files[@]}"; do [ -f "$f" ] || { echo "check-format.sh: no such file '$f'" >&2; exit 2; }; done
else
    mapfile -t files < <(git ls-files -- src tools tests bench examples include | grep -E '\.(c|h)$')
    [ ${#files[@]} -gt 0 ] || { echo "check-format.sh: no C files found (not a git checkout?)" >&2; exit 2; }
fi

# one clang-format for all the files; its diagnostics start "FILE:LINE:COL: warning:"
out=$(printf '%s\0' "${files[@]}" | xargs -0 "$CF" --style=file:"$PWD/.clang-format" --dry-run 2>&1)
rc=$?
# clang-format exits 0 on differences (no -Werror): anything else is its own failure
[ $rc -eq 0 ] || { grep -v 'warning:' <<<"$out" | head -n 5 >&2; echo "check-format.sh: clang-format failed (exit $rc)" >&2; exit 2; }
counts=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: warning:' <<<"$out" | cut -d: -f1 | uniq -c)
bad=0
while read -r n f; do
    [ -n "$f" ] || continue
    bad=$((bad + 1))
    echo "$f: $n difference(s)"
    [ $verbose = 1 ] && grep -A2 -F "$f:" <<<"$out" | head -n 20 | sed 's/^/    /'
done <<<"$counts"
echo "check-format: ${#files[@]} file(s), $bad formatted differently from .clang-format"
[ $bad -eq 0 ]
