#!/usr/bin/env bash
# timeout: 60
# parallel: yes
# No function over 80 lines (opening brace to closing brace) in the library
# and the tools: scripts/check-func-length.sh on all of src/ (src/coll
# included since its long functions were split) and tools/ (the benchmarks,
# launcher and collbench). The checker itself is tried on made-up files
# first: a function of 81 lines is named with its length, one of 80 is not,
# braces in strings, comments and macros do not count, and bad input gets
# exit 2.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
C=$ROOT/scripts/check-func-length.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok()  { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

body() { # body N: N - 3 statement lines (with a return and its braces, a function of N lines)
    local i; for ((i = 0; i < $1 - 3; i++)); do echo "    x += $i;"; done; }
{
    echo '#define OPEN {'
    echo 'static const char *s = "{ not a function {";'
    echo 'struct pt { int x, y; };'
    echo 'static int tbl[2] = {1, 2};'
    echo 'int long_one(int x)'; echo '{'; body 81; echo '    return x;'; echo '}'
    echo '/* { a comment brace */'
    echo 'int fits(int x)'; echo '{'; body 80; echo '    return x; /* } */'; echo '}'
    echo "int short_one(void) { return '}'; }"
} > "$T/a.c"
out=$("$C" -n 80 "$T/a.c"); rc=$?
[ $rc -eq 1 ] && ok "a function over the limit: exit 1" || bad "exit $rc for a function over the limit, want 1"
[ "$out" = "81 $T/a.c:6 long_one" ] && ok "only long_one named, with its length and the line of its brace: $out" ||
    bad "want '81 $T/a.c:6 long_one', got: $out"
all=$("$C" -a -n 80 "$T/a.c")
n_long=$(echo "$all" | awk '$3 == "long_one" { print $1 }')
n_fits=$(echo "$all" | awk '$3 == "fits" { print $1 }')
[ "$n_long" = 81 ] && ok "long_one counted 81 lines" || bad "long_one counted '$n_long' lines, want 81"
[ "$n_fits" = 80 ] && ok "fits counted 80 lines" || bad "fits counted '$n_fits' lines, want 80"
echo "$all" | grep -q ' short_one$' && ok "one-line function found" || bad "short_one missing: $all"
[ "$(echo "$all" | wc -l)" -eq 3 ] && ok "three functions, no struct, table or macro" ||
    bad "want 3 functions, got: $all"
"$C" -n 81 "$T/a.c" >/dev/null && ok "-n 81: nothing over" || bad "-n 81 still reports"

err=$("$C" -n x "$T/a.c" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$err" | grep -q "'x'" && ok "-n x: exit 2 naming the value" || bad "-n x: exit $rc: $err"
err=$("$C" "$T/none" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$err" | grep -q "none" && ok "missing path: exit 2" || bad "missing path: exit $rc: $err"

for d in src tools; do
    if out=$("$C" -n 80 "$ROOT/$d"); then
        ok "no function over 80 lines in $d/"
    else
        bad "functions over 80 lines in $d/:"; echo "$out"
    fi
done
[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
