#!/usr/bin/env bash
# timeout: 60
# parallel: yes
# A full disk when the results are written (--json / --csv, and collbench's
# --calibration-out): one clear error naming the file and the cause, a
# non-zero exit, and no partial file (neither the target nor a temporary)
# while an older file of the same name is left as it was. A private mount
# namespace with a full 8 KiB tmpfs stands in for the disk. Results are
# created 0644 on purpose, not by the umask.
. "$(dirname "$0")/../lib/common.sh"
d=$(mktemp -d); out=$(mktemp); trap 'rm -rf "$d" "$out"' EXIT
unshare -m sh -c "
    mount -t tmpfs -o size=8k tmpfs '$d' || exit 9
    echo old >'$d/keep.json'
    head -c 8192 /dev/zero >'$d/fill' 2>/dev/null
    '$BIN/all_reduce_test' -p 2 -b 8K -e 64K -n 2 -w 1 --json '$d/out.json' --csv '$d/out.csv' >/dev/null
    echo rc=\$?
    '$BIN/all_reduce_test' -p 2 -b 8K -e 64K -n 2 -w 1 --json '$d/keep.json' >/dev/null
    echo rc2=\$?
    cat '$d/keep.json'
    ls '$d'" >"$out" 2>&1
cat "$out"
check "mount namespace worked" grep -q '^rc=' "$out"
check "exit code non-zero" grep -q '^rc=1$' "$out"
check "error names the file and the cause" grep -q "cannot write $d/out.json: No space left on device" "$out"
check "no result file and no temporary left" bash -c "! grep -qE '^out\\.(json|csv)' '$out'"
check "an older file of that name is left as it was" grep -qx "old" "$out"
check "a second failure exits non-zero too" grep -q '^rc2=1$' "$out"
# mode by intent: 0644 whatever the umask
(umask 077; "$BIN/all_reduce_test" -p 2 -b 8K -e 8K -n 1 -w 0 --json "$d/m.json" >/dev/null)
check "result file mode 0644 under umask 077" test "$(stat -c %a "$d/m.json")" = 644
check "no process left" no_procs "$BIN/all_reduce_test"
finish
