#!/usr/bin/env bash
# timeout: 60
# /dev/shm too small for the segment: a clear error at init (not a SIGBUS
# later), exit code 3, nothing left behind. A private mount namespace with a
# 1 MiB tmpfs on /dev/shm stands in for a small /dev/shm.
. "$(dirname "$0")/../lib/common.sh"
out=$(mktemp); trap 'rm -f "$out"' EXIT
unshare -m sh -c "mount -t tmpfs -o size=1M tmpfs /dev/shm && '$BIN/all_reduce_test' -p 4 -b 8K -e 8K; echo rc=\$?" >"$out" 2>&1
cat "$out"
check "mount namespace worked" grep -q '^rc=' "$out"
check "exit code 3 (setup failed)" grep -q '^rc=3$' "$out"
check "message says what and how to fix" grep -q 'cannot allocate .* MiB of shared memory for 4 local ranks in /dev/shm' "$out"
check "no process left" no_procs "$BIN/all_reduce_test"
check "no /dev/shm segment left" no_shm_leftovers
finish
