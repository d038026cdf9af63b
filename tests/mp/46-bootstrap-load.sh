#!/usr/bin/env bash
# timeout: 120
# The rendezvous store under the init exchange of 4,096 ranks on 512 hosts
# (build/tests/bootstrap_load: one short connection per rank to GATHER its
# 296-byte record, one failure probe per rank, the root reads the table once):
# the one output line has its format, the run takes under 30 s and the process
# peaks under 512 MiB; a bad argument fails with exit 2 and says why.
set -u
. "$(dirname "$0")/../lib/common.sh"
LOAD=$CB_O/build/tests/bootstrap_load
[ -x "$LOAD" ] || { echo "no $LOAD (run make)"; exit 1; }
out=$(mktemp); trap 'rm -f "$out"' EXIT

"$LOAD" -n 4096 -H 512 >"$out" 2>&1
rc=$?
cat "$out"
check "bootstrap_load -n 4096 -H 512: exit 0 (rc=$rc)" test $rc -eq 0
re='^bootstrap_load N=4096 hosts=512 time_s=[0-9]+\.[0-9]+ store_peak_rss_mib=[0-9]+\.[0-9]+ store_bytes=[0-9]+$'
check "one line in the documented format" test "$(grep -cE "$re" "$out")" -eq 1 -a "$(wc -l <"$out")" -eq 1
line=$(grep -E "$re" "$out" || true)
t=$(sed -n 's/.*time_s=\([0-9.]*\).*/\1/p' <<<"$line")
m=$(sed -n 's/.*store_peak_rss_mib=\([0-9.]*\).*/\1/p' <<<"$line")
b=$(sed -n 's/.*store_bytes=\([0-9]*\).*/\1/p' <<<"$line")
check "time_s ${t:-?} < 30" awk -v t="${t:-999}" 'BEGIN { exit !(t < 30) }'
check "store_peak_rss_mib ${m:-?} < 512" awk -v m="${m:-9999}" 'BEGIN { exit !(m < 512) }'
# every rank sent at least its record (296 B) and the root read the table back
check "store_bytes ${b:-?} >= 2 x 4096 x 296" test "${b:-0}" -ge $((2 * 4096 * 296))

"$LOAD" -n 0 -H 1 >"$out" 2>&1
rc=$?
check "-n 0: exit 2 (rc=$rc)" test $rc -eq 2
check "-n 0: names the value and the range" grep -q "^bootstrap_load: -n '0': must be an integer in 1\.\.[0-9]*" "$out"
"$LOAD" -n 8 -H 9 >"$out" 2>&1
rc=$?
check "-H 9 of 8 ranks: exit 2 (rc=$rc)" test $rc -eq 2
check "-H 9: names the value and the range" grep -q "^bootstrap_load: -H '9': must be an integer in 1\.\.8" "$out"
finish
