#!/usr/bin/env bash
# timeout: 120
# Automatic selection follows the measured rules (src/coll/tuning_rules.c) as
# logged under COLL_DEBUG=INFO, with the host's CPU count deciding which rows
# apply: with more than two ranks per core ("crowded", COLL_RULE_CROWDED) 8
# ranks use the staged AllReduce and the trees for small rooted calls; 4 ranks
# (never crowded rows: those start at 5) keep the single-copy cma AllReduce;
# gather uses linear at 3-4 ranks and up to 8M on crowded hosts; a forced
# algorithm and COLL_TUNING_RULES_OFF still win over the rules.
set -u
. "$(dirname "$0")/../lib/common.sh"
ncpu=$(getconf _NPROCESSORS_ONLN)
crowded=0; [ $((8 * 10 / ncpu)) -gt 20 ] && crowded=1   # 8 ranks / ncpu > 2.0
echo "online CPUs: $ncpu; 8 ranks crowded: $crowded"

# chosen EXE P SIZE [ENV...]: the algorithm rank 0 logs for the collective of EXE
chosen() {
    local exe=$1 p=$2 size=$3; shift 3
    env COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=TUNING "$@" timeout 60 "$BIN/${exe}_test" -p "$p" -b "$size" -e "$size" \
        -n 2 -w 1 2>&1 | grep '\[rank 0\] COLL INFO TUNING' | grep -v -E 'TUNING (barrier|allreduce 16 bytes)' |
        head -n 1 | sed -n 's/.*algorithm \([a-z_]*\).*/\1/p'
}
expect() { # expect WANT EXE P SIZE [ENV...]
    local want=$1 got; shift
    got=$(chosen "$@")
    [ "$got" = "$want" ] && pass "$* -> $got" || fail "$* -> '$got', expected $want"
}

expect cma all_reduce 4 128K
if [ $crowded -eq 1 ]; then
    expect direct all_reduce 8 128K
    expect direct all_reduce 8 16M
    expect binomial broadcast 8 8K
    expect binomial reduce 8 32K
    expect binomial scatter 8 8K
    expect linear scatter 8 1M
else
    expect cma all_reduce 8 128K
fi
expect cma all_reduce 8 128K COLL_ALGO=allreduce=cma
expect ring all_reduce 8 128K COLL_ALGO=allreduce=ring
# gather has no hccl_test executable: collbench topo prints what selection
# would choose (columns 1K 64K 1M 16M 256M)
topo_row() { timeout 60 "$BIN/collbench" topo -p "$1" 2>&1 | awk -v c="$2" '$1 == c {$1 = ""; print}' | xargs; }
row=$(topo_row 4 gather)
[ "$row" = "linear linear linear linear linear" ] && pass "gather on 4 ranks: $row" ||
    fail "gather on 4 ranks: '$row', expected linear at every size"
if [ $crowded -eq 1 ]; then
    row=$(topo_row 8 gather)
    case "$row" in "linear linear linear "*) pass "gather on 8 ranks: $row" ;;
        *) fail "gather on 8 ranks: '$row', expected linear up to 1M" ;; esac
fi
got=$(chosen all_reduce 8 8K COLL_TUNING_RULES_OFF=1)
[ -n "$got" ] && pass "rules off: cost model chose $got" || fail "rules off: no algorithm logged"
check "no leftover shared memory" no_shm_leftovers
finish
