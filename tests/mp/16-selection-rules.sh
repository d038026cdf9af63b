#!/usr/bin/env bash
# timeout: 120
# The real executables log (COLL_DEBUG=INFO) and use the algorithm selection
# picks, end to end: 4 ranks take the staged direct AllReduce (the HOST rule
# of 2-4 ranks); the CMA probe at init makes 8 uncrowded ranks take the cma
# one; the host's real CPU count decides whether 8 ranks are crowded
# (staged direct AllReduce); COLL_ALGO from the environment and
# COLL_TUNING_RULES_OFF reach the selection. The rules themselves, per layout,
# collective and size, are asserted by build/tests/test_select on synthetic
# communicators.
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

expect direct all_reduce 4 128K
if [ $crowded -eq 1 ]; then
    expect direct all_reduce 8 128K
    expect binomial broadcast 8 8K
else
    expect cma all_reduce 8 128K
fi
expect ring all_reduce 8 128K COLL_ALGO=allreduce=ring
got=$(chosen all_reduce 8 8K COLL_TUNING_RULES_OFF=1)
[ -n "$got" ] && pass "rules off: cost model chose $got" || fail "rules off: no algorithm logged"
check "no leftover shared memory" no_shm_leftovers
finish
