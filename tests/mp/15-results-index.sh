#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2317 # backquotes are markdown, not expansions; check() runs the helpers
# timeout: 60
# parallel: yes
# Every note in bench/results has its row in bench/results/README.md's index
# (scripts/check-results-index.sh): a new note without one fails here, and the
# failure prints the rows to add. The checker is tried first on copies of the
# folder with one fault planted in each: a note without a row (its row printed
# with the note's date, command and citing file), a row without a note, a row
# twice, a TODO left; a bad folder is exit 2.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/lib/common.sh
. "$ROOT/tests/lib/common.sh"
C=$ROOT/scripts/check-results-index.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fresh() { # a copy of the results folder at $T/r/bench/results (its repo root: $T/r)
    rm -rf "$T/r"; mkdir -p "$T/r/bench"
    cp -r "$ROOT/bench/results" "$T/r/bench/results"
}
run() { "$C" "$T/r/bench/results" > "$T/out" 2>&1; echo $? > "$T/rc"; }
rc_is() { [ "$(cat "$T/rc")" = "$1" ] || { echo "exit $(cat "$T/rc"), wanted $1:"; cat "$T/out"; return 1; }; }
says() { grep -qF -- "$1" "$T/out" || { echo "output lacks '$1':"; cat "$T/out"; return 1; }; }

fresh; run
check "the copy as it is passes" rc_is 0

fresh
printf '# New - 2026-12-06\n\nCommand: `bench/run-bench.sh -c gather -p 2 -s 1M -R 3`\n' \
    > "$T/r/bench/results/new-thing-20261206.md"
mkdir -p "$T/r/docs"; echo "see bench/results/new-thing-20261206.md" > "$T/r/docs/perf.md"
run
check "a note without a row fails" rc_is 1
check "... and prints its row, date, command and citing file" \
    says '| [new-thing-20261206.md](new-thing-20261206.md) | 2026-12-06 | `bench/run-bench.sh -c gather -p 2 -s 1M -R 3` | TODO | TODO | docs/perf.md |'

fresh; rm "$T/r/bench/results/tree-20261203.md"; run
check "a row without its note fails" rc_is 1
check "... naming it" says "tree-20261203.md"

fresh; grep -m1 '^| \[tune-20261202.md\]' "$ROOT/bench/results/README.md" >> "$T/r/bench/results/README.md"; run
check "a row twice fails" rc_is 1
check "... naming it" says "more than one row for"

fresh; sed -i 's/^\(| \[tree-20261203.md\](tree-20261203.md) | [^|]* | [^|]* | \)[^|]*|/\1TODO |/' \
    "$T/r/bench/results/README.md"; run
check "a TODO left in a row fails" rc_is 1
check "... naming the note" says ": tree-20261203.md"

"$C" "$T/none" > "$T/out" 2>&1; echo $? > "$T/rc"
check "a folder that is not there is exit 2" rc_is 2

# The real thing.
"$C" "$ROOT/bench/results" > "$T/out" 2>&1; echo $? > "$T/rc"
cat "$T/out"
check "every note of bench/results has its row in bench/results/README.md" rc_is 0
finish
