#!/usr/bin/env bash
# timeout: 600
# parallel: yes
# valgrind memcheck on one small run of each of the ten test executables
# (-p 2 -b 8K -e 8K -n 2 -w 1: the forked ranks run under valgrind too) and of
# the bin/collbench subcommands (flops, bw -t d2d, net server + client on
# loopback): no invalid access, no use of uninitialised values, no definite or
# indirect leak (--error-exitcode=99). Uses the plain (unsanitized) build of
# $CB_O, or of the repository when $CB_O is a sanitizer build.
set -u
cd "${CB_ROOT:-$(dirname "$0")/../..}"
ROOT=$PWD
command -v valgrind >/dev/null || { echo "valgrind not installed (apt-get install valgrind)"; exit 77; }
B=${CB_O:-$ROOT}/bin
if nm "$B/all_reduce_test" 2>/dev/null | grep -qE '__(asan|tsan)_init'; then B=$ROOT/bin; fi
[ -x "$B/all_reduce_test" ] || { echo "FAIL: no $B/all_reduce_test (run make)"; exit 1; }
LOG=$ROOT/build/test-logs/valgrind
mkdir -p "$LOG"
export COLL_SOCKET_IFNAME="${COLL_SOCKET_IFNAME-=lo}"
VG=(valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect --error-exitcode=99 --trace-children=yes
    --child-silent-after-fork=no --track-fds=no --num-callers=30 -q)
fails=0
s=$(date +%s)
check_log() { # name log rc
    local name=$1 f=$2 rc=$3 el=$4
    if [ "$rc" -ne 0 ] || grep -qE '==[0-9]+== (Invalid|Conditional|Use of uninit|Syscall param|Mismatched|.*definitely lost|.*indirectly lost|Source and destination overlap|Process terminating)' "$f"; then
        fails=$((fails + 1))
        echo "FAIL: $name (exit $rc, ${el}s, log ${f#$ROOT/})"
        grep -E -A14 '==[0-9]+== [A-Z]' "$f" | head -n 40
        [ "$rc" -ne 0 ] && tail -n 5 "$f"
    else
        echo "ok: $name (${el}s)"
    fi
}
run() {
    local name=$1 to=$2; shift 2
    local f=$LOG/$name.log t0; t0=$(date +%s)
    timeout -k 5 "$to" "${VG[@]}" "$@" >"$f" 2>&1
    check_log "$name" "$f" $? $(( $(date +%s) - t0 ))
}
for c in all_reduce all_gather all_gatherv reduce_scatter reduce_scatterv reduce broadcast scatter alltoall alltoallv; do
    run "$c" 120 "$B/${c}_test" -p 2 -b 8K -e 8K -n 2 -w 1
done
# the table's extras (issue 29): per-iteration gathers and the stall watcher,
# in-place calls, buffer sets from the --off-cache pool, dtype/op tables, passes
run tables-extras 180 "$B/all_reduce_test" -p 2 -b 1K -e 8K -f 8 -n 2 -w 1 --stats --in-place both \
    --off-cache -d int8,fp32 -o sum,max --cycles 2 --json "$LOG/tables-extras.json"
run collbench-flops 120 "$B/collbench" flops -t fp32 -et 0.02 -c 1
run collbench-d2d 120 "$B/collbench" bw -t d2d -s 64K -et 2
# net: server and client, both under valgrind, on a free loopback port
. "$ROOT/tests/lib/common.sh"   # free_port: below the ephemeral range (a port-0 pick could be taken again)
port=$(free_port)
t0=$(date +%s)
timeout -k 5 120 "${VG[@]}" "$B/collbench" net -p "$port" --bind 127.0.0.1 --timeout 60 >"$LOG/net-server.log" 2>&1 &
spid=$!
timeout -k 5 120 "${VG[@]}" "$B/collbench" net 127.0.0.1 -p "$port" -s 4K -n 20 --retry 30 >"$LOG/net-client.log" 2>&1
crc=$?
wait $spid
src=$?
check_log collbench-net-client "$LOG/net-client.log" $crc $(( $(date +%s) - t0 ))
check_log collbench-net-server "$LOG/net-server.log" $src $(( $(date +%s) - t0 ))
echo "total: $(( $(date +%s) - s )) s"
[ $fails -eq 0 ] || { echo "$fails valgrind run(s) failed"; exit 1; }
echo "valgrind: no error, no leak"
