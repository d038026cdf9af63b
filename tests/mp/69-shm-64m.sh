#!/usr/bin/env bash
# timeout: 120
# Docker's default /dev/shm is 64 MiB. A private mount namespace (unshare -m)
# with a tmpfs on /dev/shm stands in for it:
#   64 MiB, 8 local ranks (standalone -p 8, AllReduce 8K..1M): runs, every row
#     success, exit 0, and a warning on stderr naming /dev/shm that says it is
#     shrinking the buffers to fit (issue 12: the segment is sized to the free
#     space of /dev/shm). Today the segment for 8 ranks needs 97 MiB and setup
#     fails (exit 3): this case fails until the shm rework lands.
#   1 MiB, 8 local ranks: even the smallest buffers cannot fit: a clear error
#     naming /dev/shm, a non-zero exit (3, setup failed), nothing left behind.
# Both cases list /dev/shm inside the namespace after the run (a segment left
# there would vanish with the namespace, unseen from outside).
# Overlaps 63-fault-shm-small (4 ranks, 1 MiB, exact message): kept as is.
set -u
. "$(dirname "$0")/../lib/common.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

run_ns() {   # run_ns SIZE NAME: 8 ranks in a SIZE tmpfs; NAME.out, NAME.err, NAME.left, NAME.rc
    local size=$1 n=$2
    unshare -m sh -c "mount -t tmpfs -o size=$size tmpfs /dev/shm || exit 90
        timeout 100 '$BIN/all_reduce_test' -p 8 -b 8K -e 1M -f 4 >'$tmp/$n.out' 2>'$tmp/$n.err'
        echo \$? >'$tmp/$n.rc'; ls -A /dev/shm >'$tmp/$n.left'"
    echo "== $n: tmpfs $size, exit $(cat "$tmp/$n.rc" 2>/dev/null || echo none)"
    cat "$tmp/$n.out" "$tmp/$n.err" 2>/dev/null | head -n 20
}
rows_ok() {   # rows_ok FILE WANT: WANT result rows, all success
    test "$(grep -cE '^ *[0-9]+ +\|' "$1")" -eq "$2" &&
        test "$(grep -E '^ *[0-9]+ +\|' "$1" | grep -c '| success')" -eq "$2"
}

t0=$(now_ms)
run_ns 64M fit
check "64M: mount namespace worked" test -f "$tmp/fit.rc"
check "64M: exit 0" grep -qx 0 "$tmp/fit.rc"
check "64M: 4 rows (8K 32K 128K 512K), every row success" rows_ok "$tmp/fit.out" 4
check "64M: stderr warns that it is shrinking to fit /dev/shm" \
    grep -qE 'shrinking.*/dev/shm|/dev/shm.*shrinking' "$tmp/fit.err"
check "64M: nothing left in /dev/shm" test ! -s "$tmp/fit.left"
t1=$(now_ms)
run_ns 1M tiny
check "1M: mount namespace worked" test -f "$tmp/tiny.rc"
check "1M: exit 3 (setup failed)" grep -qx 3 "$tmp/tiny.rc"
check "1M: the error names /dev/shm and the 8 local ranks" \
    grep -qE '/dev/shm.*8 local ranks|8 local ranks.*/dev/shm' "$tmp/tiny.err"
check "1M: no result rows" test "$(grep -cE '^ *[0-9]+ +\|' "$tmp/tiny.out")" -eq 0
check "1M: nothing left in /dev/shm" test ! -s "$tmp/tiny.left"
t2=$(now_ms)
echo "times: 64M case $((t1 - t0)) ms, 1M case $((t2 - t1)) ms"
check "no process left" no_procs "$BIN/all_reduce_test"
check "no /dev/shm segment left outside" no_shm_leftovers
finish
