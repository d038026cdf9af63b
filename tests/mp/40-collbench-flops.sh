#!/usr/bin/env bash
# timeout: 120
# collbench flops (-f): every type with the best kernel, every kernel this CPU
# runs (--isa), JSON, and the command-line errors (one line, exit 2).
set -u
. "$(dirname "$0")/../lib/common.sh" # usage_err
CB=${CB_O:-.}/bin/collbench
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CB" ] || fail "no $CB"

# $1 = output of a table run: the Total row must be > 0 and validated.
check_total() {
    local out=$1 what=$2
    local row; row=$(printf '%s\n' "$out" | awk '$1 == "Total"')
    [ -n "$row" ] || fail "$what: no Total row in: $out"
    local v; v=$(echo "$row" | awk '{print $(NF-1)}'); local ok; ok=$(echo "$row" | awk '{print $NF}')
    awk -v v="$v" 'BEGIN{exit !(v + 0 > 0)}' || fail "$what: total '$v' not > 0"
    [ "$ok" = yes ] || fail "$what: not validated: $row"
}

for t in fp64 fp32 fp16 bf16 int8; do
    out=$("$CB" flops -t $t -et 0.05 -c 1) || fail "flops -t $t exit $?"
    check_total "$out" "flops -t $t"
    u=GFLOPS; [ $t = int8 ] && u=TOPS
    T=$(echo $t | tr a-z A-Z)
    echo "$out" | grep -q "$u@$T" || fail "-t $t: no $u@$T column"
    echo "$out" | grep -q '^Kernel' || fail "-t $t: no Kernel line"
    echo "$out" | awk '$1=="Total"{print "  '$t': " $(NF-1) " '$u'"}'
done

# ascend-dmi spelling, quiet, all cores
out=$("$CB" -f -t fp32 -et 0.05 -q) || fail "-f exit $?"
check_total "$out" "-f -q"
echo "$out" | grep -q '^Kernel' && fail "-q still prints the Kernel line"

# every kernel this CPU runs
list=$("$CB" flops --list) || fail "--list exit $?"
n=0
while read -r type isa runs _; do
    [ "$runs" = yes ] || continue
    out=$("$CB" flops -t "$type" --isa "$isa" -et 0.02 -c 1 -q) || fail "-t $type --isa $isa exit $?"
    check_total "$out" "-t $type --isa $isa"
    n=$((n + 1))
done < <(echo "$list" | tail -n +2)
[ $n -ge 5 ] || fail "only $n kernels ran"
echo "ran $n kernels"

# JSON
for t in fp32 int8; do
    js=$("$CB" flops -t $t -et 0.03 -c 1 -fmt json) || fail "json -t $t exit $?"
    echo "$js" | python3 -m json.tool >/dev/null || fail "invalid JSON: $js"
    echo "$js" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["validated"] is True and d["total"] > 0 and d["per_core"][0]["ops"] > 0, d' \
        || fail "JSON content -t $t"
done

# errors: exit 2, one line naming the value and what is allowed
err() { # usage_err (common.sh), and the message names what is allowed
    usage_err "$1" "$CB" "${@:2}"
    echo "$out" | grep -q "allowed" || fail "'${*:2}' message lacks the allowed values: $out"
}
err "'0'" flops -et 0
err "'3601'" flops -et 3601
err "'fp8'" flops -t fp8
err "'0'" flops -c 0
err "'bogus'" flops --isa bogus
err "'5'" flops --fma-units 5

# the peak: nominal clock and the clock measured by a dependent add chain, both
# printed; the efficiency is taken against the measured one and never printed
# over 100 % (every type, 1 and 2 FMA units; JSON fraction <= 1 or null)
for t in fp64 fp32 int8; do
    for u in 1 2; do
        out=$("$CB" flops -t $t -et 0.05 --fma-units $u) || fail "peak -t $t --fma-units $u exit $?"
        echo "$out" | grep -q '^Theoretical peak (nominal clock' || fail "-t $t: no nominal peak line: $out"
        echo "$out" | grep -q '^Peak at the measured clock (dependent add chain per thread) = ' \
            || fail "-t $t: no measured peak line: $out"
        eff=$(echo "$out" | sed -n 's/^Efficiency: \([0-9.]*\) %.*/\1/p')
        if [ -n "$eff" ]; then
            awk -v e="$eff" 'BEGIN{exit !(e > 0 && e <= 100)}' || fail "-t $t: efficiency $eff % printed"
        else
            echo "$out" | grep -q '^Efficiency: not reported' || fail "-t $t: no efficiency line: $out"
        fi
        echo "$out" | awk '/GHz|measured clock/' | grep -q ' x [0-9.]* x ' || fail "-t $t: no clock in the formula"
    done
    js=$("$CB" flops -t $t -et 0.03 -c 1 -fmt json) || fail "json peak -t $t exit $?"
    echo "$js" | python3 -c '
import json, sys
p = json.load(sys.stdin)["peak"]
assert p["measured_ghz"] > 0.2 and p["measured_value"] > 0, p
assert p["fraction"] is None or 0 < p["fraction"] <= 1, p
assert p["fraction_of"] in ("measured", None), p
print("  %s: nominal %.3f GHz, measured %.3f GHz, fraction %s" % (sys.argv[1], p["ghz"], p["measured_ghz"], p["fraction"]))
' $t || fail "JSON peak -t $t: $js"
done
echo PASS
