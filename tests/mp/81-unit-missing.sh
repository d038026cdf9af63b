#!/usr/bin/env bash
# timeout: 30
# parallel: yes
# A unit test that was not built fails the suite, naming what is missing
# (issue 14: a missing cmocka used to drop the unit binaries silently and the
# suite still passed). tests/run.sh on an empty build directory, once with
# cmocka "absent" (CMOCKA_H pointed at a file that does not exist) and once
# present: each run must fail with "not built", the first naming cmocka and
# libcmocka-dev, the second not blaming cmocka.
set -u
. "${CB_ROOT:?}/tests/lib/common.sh"
cd "$CB_ROOT"
E=$(mktemp -d /tmp/cb-unit-missing.XXXXXX)
logs=$CB_ROOT/build/test-logs/$(echo "$E" | tr / _)
trap 'rm -rf "$E" "$logs"' EXIT
unit=$(ls tests/unit/test_*.c | head -1); unit=$(basename "$unit" .c)

out=$(CMOCKA_H=$E/cmocka.h tests/run.sh -O "$E" -k "$unit" 2>&1); rc=$?
echo "$out"
check "no cmocka: exit non-zero" [ $rc -ne 0 ]
check "no cmocka: $unit FAILs as not built" grep -q "^FAIL  $unit .*not built" <<<"$out"
check "no cmocka: cmocka and the package named" grep -q "cmocka is missing.*libcmocka-dev" <<<"$out"
check "no cmocka: 0 passed, 1 failed" grep -qx "0 passed, 1 failed" <<<"$out"

out=$(CMOCKA_H=/usr/include/cmocka.h tests/run.sh -O "$E" -k "$unit" 2>&1); rc=$?
check "binary missing: exit non-zero" [ $rc -ne 0 ]
check "binary missing: names the binary" grep -q "$E/build/tests/$unit was not built" <<<"$out"
if [ -f /usr/include/cmocka.h ]; then
    check "binary missing, cmocka present: cmocka not blamed" bash -c "! grep -q 'cmocka is missing' <<<\"\$1\"" _ "$out"
else
    fail "/usr/include/cmocka.h is missing on this machine: the unit tests cannot be built (scripts/install-deps.sh build)"
fi
# and the real build directory has every unit test built
for s in tests/unit/test_*.c; do
    n=$(basename "$s" .c)
    check "$n built in $CB_O" [ -x "$CB_O/build/tests/$n" ]
done
finish
