#!/usr/bin/env bash
# timeout: 180
# The benchmark's roofline: bench/roofline -F gives the bytes of every
# "Checked examples" line of docs/performance.md (the formulas in
# bench/roofline.h cannot drift from the docs), every collective has an
# example, bad input exits 2 with one line, and bench/run-bench.sh prints the
# floor and "% fl" columns with measured rates, median and range over rounds,
# and the CPU time per call.
set -u
. "$(dirname "$0")/../lib/common.sh"
ROOT=$CB_ROOT
cd "$ROOT" || exit 1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Ibench -o "$T/roofline" bench/roofline.c -pthread ||
    { echo "FAIL bench/roofline.c does not build"; exit 1; }

# --- 1. the docs' examples against the code
awk '/^## Checked examples/ { on = 1; next } /^## / { on = 0 }
     on && /^\| [a-z_]+ \| [0-9]+ \|/ { gsub(/\|/, " "); print }' docs/performance.md >"$T/examples"
n=$(wc -l <"$T/examples")
[ "$n" -ge 8 ] && pass "docs/performance.md: $n checked examples" || fail "docs/performance.md: only $n checked examples found"
seen=
while read -r coll p s copy rd wr; do
    got=$("$T/roofline" -F -p "$p" -c "$coll" -s "$s") || { fail "$coll p=$p S=$s: roofline -F failed"; continue; }
    # FLOOR coll p bytes copy red_rd red_wr ws
    read -r tag gc gp gb gcopy grd gwr gws <<<"$got"
    if [ "$tag $gc $gp" = "FLOOR $coll $p" ] && [ "$gcopy $grd $gwr" = "$copy $rd $wr" ] && [ "$gws" -gt 0 ]; then
        pass "$coll p=$p S=$s (bytes $gb): copy $copy, reduce $rd read + $wr written"
    else
        fail "$coll p=$p S=$s: code says '$got', docs/performance.md says copy $copy, reduce read $rd, write $wr"
    fi
    seen="$seen $coll"
done <"$T/examples"
for c in allreduce allgather reduce_scatter broadcast reduce alltoall scatter gather; do
    [[ " $seen " == *" $c "* ]] || fail "docs/performance.md has no checked example for $c"
    grep -q "^| $c | " docs/performance.md || fail "docs/performance.md's formula table lacks $c"
done

# --- 2. bad input: one line naming the value, exit 2
chk2() { # chk2 DESCRIPTION WORD CMD...
    local d=$1 w=$2; shift 2
    "$@" >"$T/o" 2>"$T/e"; local rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l <"$T/e")" -eq 1 ] && grep -q -- "$w" "$T/e" && [ ! -s "$T/o" ]; then pass "$d: exit 2, '$(cat "$T/e")'"
    else fail "$d: rc=$rc, stderr '$(cat "$T/e")', stdout '$(head -c 200 "$T/o")'"; fi; }
chk2 "roofline -p 0" "-p 0" "$T/roofline" -F -p 0
chk2 "roofline -c bogus" "bogus" "$T/roofline" -F -c bogus
chk2 "roofline -s 4 -p 2" "size 4" "$T/roofline" -F -p 2 -s 4
chk2 "run-bench -r 0" "-r '0'" bench/run-bench.sh -r 0
chk2 "run-bench -i foo" "'foo'" bench/run-bench.sh -i foo
chk2 "run-bench -p x" "'x'" bench/run-bench.sh -p x
chk2 "run-bench -W x" "-W 'x'" bench/run-bench.sh -W x

# --- 3. measured: the floor is positive and falls within what the rates say
m=$("$T/roofline" -p 2 -c allreduce -s 1M -t 5)
read -r _ _ _ b copy rd wr ws k c1 ck r1 rk us bound <<<"$m"
if awk -v c="$copy" -v rd="$rd" -v wr="$wr" -v k="$k" -v c1="$c1" -v ck="$ck" -v r1="$r1" -v rk="$rk" -v us="$us" -v bd="$bound" 'BEGIN {
        if (ck < c1) ck = c1; if (rk < r1) rk = r1;
        mem = c / ck + (rd + wr) / 3 / rk; core = (c / c1 + (rd + wr) / 3 / r1) / k
        f = (mem > core ? mem : core) / 1e3; want = mem >= core ? "mem" : "core"
        exit !(c1 > 0 && r1 > 0 && us > 0 && (f - us) / us < 0.01 && (us - f) / us < 0.01 && bd == want) }'; then
    pass "measured floor: $m"
else
    fail "measured floor does not follow the model: $m"
fi

# --- 4. run-bench.sh prints the roofline beside the rows (2 rounds, collbench only: no MPI start-up)
bench/run-bench.sh -c allgather,allreduce -p 2 -s 256K -r 2 -i collbench,collbench-z -W 0 -o "$T/r.md" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && pass "run-bench.sh exit 0" || { fail "run-bench.sh exit $rc"; sed 's/^/   | /' "$T/err" | tail -20; }
grep -q '| floor us | collbench us | % fl |' "$T/r.md" && pass "header has floor and % fl" || fail "no roofline header in the table"
for c in allgather allreduce; do
    row=$(grep -m1 "^| $c | 2 | 256K |" "$T/r.md")
    # | coll | 2 | 256K | FLOOR [a-b] mem | T [a-b] | PCT [a-b] | algo | TZ [a-b] | PCTZ [a-b] | ...
    if [[ "$row" =~ ^\|\ $c\ \|\ 2\ \|\ 256K\ \|\ [0-9.e+]+\ \[[0-9.e+]+-[0-9.e+]+\]\ (mem|core)\ \|\ [0-9.]+\ \[[0-9.]+-[0-9.]+\]\ \|\ [0-9.e+]+\ \[[0-9.e+-]+\]\ \|\ [a-z_]+\ \|\ [0-9.]+\ \[[0-9.]+-[0-9.]+\]\ \|\ [0-9.e+]+\ \[ ]]; then
        pass "$c row: $row"
    else
        fail "$c row lacks the floor, % fl or the ranges over 2 rounds: '$row'"
    fi
done
grep -q '^| allreduce | 2 | 256K | 0.25 | 0.75 | ' "$T/r.md" && pass "rates table: allreduce 256K copies 0.25 MiB, reduces 0.75 MiB" ||
    fail "rates table: allreduce 256K row wrong: $(grep '^| allreduce | 2 | 256K | [0-9.]* | [0-9.]* |' "$T/r.md")"

# the CPU time per call of both collbench sides, with the cores they had
for c in allgather allreduce; do
    row=$(grep "^| $c | 2 | 256K | [0-9.]* \[[0-9.]*-[0-9.]*\] ([0-9.]*) | [0-9.]* \[[0-9.]*-[0-9.]*\] ([0-9.]*) | - | - |$" "$T/r.md")
    [ -n "$row" ] && pass "cpu table: $row" || fail "cpu table: no $c 256K row with collbench and -z CPU times: $(grep "^| $c | 2 | 256K |" "$T/r.md" | tail -2)"
done

# the placement: the cross-core round trip (bench/c2c) before / after every run, in ns
for i in collbench collbench-z; do
    row=$(grep -E "^\| 2 \| $i \| [0-9]+ / [0-9]+ \| [0-9]+ / [0-9]+ \|$" "$T/r.md")
    [ -n "$row" ] && pass "placement: $row" || fail "placement table: no row for $i with 2 rounds of before / after: $(grep "| $i |" "$T/r.md" | tail -1)"
done
c=$(build/bench/c2c -n 1000)
if [ "$(nproc)" -ge 2 ]; then want='^c2c_ns [1-9][0-9]*$'; else want='^c2c_ns 0$'; fi
[[ "$c" =~ $want ]] && pass "c2c: $c" || fail "c2c printed '$c'"
chk2 "c2c -n 0" "-n 0" build/bench/c2c -n 0

finish
