#!/usr/bin/env bash
# timeout: 120
# Bad command lines through the real executables: exit code 2, one message
# naming the flag and the value, nothing forked, no shared memory left.
set -u
B=${CB_O:?}/bin
fail=0
shm_before=$(ls /dev/shm 2>/dev/null | grep '^collbench' | sort)
tok=cb-cli-err-$$

check() {   # check BIN "ARGS" NEEDLE [ENV...]
    local bin=$1 args=$2 needle=$3; shift 3
    local err rc
    err=$(env "$@" "$B/$bin" $args --csv "/tmp/$tok.csv" 2>&1 >/dev/null); rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL: $bin $args: exit $rc (want 2): $err"; fail=1; return; fi
    if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then echo "FAIL: $bin $args: not one line: $err"; fail=1; fi
    case "$err" in *"$needle"*) ;; *) echo "FAIL: $bin $args: message '$err' lacks '$needle'"; fail=1 ;; esac
    [ -e "/tmp/$tok.csv" ] && { echo "FAIL: $bin $args wrote output"; fail=1; rm -f "/tmp/$tok.csv"; }
}

check all_reduce_test "-d fp33" "invalid -d 'fp33': allowed int8 int16 int32 int64 uint8 uint16 uint32 uint64 fp16 fp32 fp64 bfp16"
check all_reduce_test "--datatype float128" "invalid -d 'float128'"
check all_reduce_test "-o average" "invalid -o 'average': allowed sum prod max min"
check all_reduce_test "-b 12Q" "invalid -b '12Q'"
check all_reduce_test "-e 64X" "invalid -e '64X'"
check all_reduce_test "-b 64M -e 8K" "invalid -e '8192'"
check all_reduce_test "-i 1.5K" "invalid -i '1.5K'"
check all_reduce_test "-f 1" "invalid -f '1'"
check all_reduce_test "-f 0" "invalid -f '0'"
check all_reduce_test "-n 0" "invalid -n '0'"
check all_reduce_test "-n abc" "invalid -n 'abc'"
check all_reduce_test "-w -2" "invalid -w '-2'"
check all_reduce_test "-c 3" "invalid -c '3'"
check all_reduce_test "-z 2" "invalid -z '2'"
check all_reduce_test "-p 0" "invalid -p '0'"
check all_reduce_test "-p 5000" "invalid -p '5000'"
check all_reduce_test "-p 1000" "invalid -p '1000'"          # > standalone limit
check broadcast_test "-p 4 -r 4" "invalid -r '4'"
check reduce_test "-p 2 -r -1" "invalid -r '-1'"
# default -p = the online CPUs (sysconf, tools/driver/cli.c), so -r that is out of
# range; not $(nproc), which counts the CPUs this shell may run on (fewer under
# taskset, a cpuset, or OMP_NUM_THREADS), where -r nproc was valid and exit 0
ncpu=$(getconf _NPROCESSORS_ONLN)
check scatter_test "-r $ncpu" "invalid -r '$ncpu'"
check all_reduce_test "--time-agg p99" "invalid --time-agg 'p99'"
check all_reduce_test "--timeout never" "invalid --timeout 'never'"
check all_reduce_test "--algo no_such_algorithm" "invalid --algo 'no_such_algorithm'"
check all_reduce_test "--frobnicate" "unknown option '--frobnicate'"
check all_reduce_test "-q" "unknown option -q"
check all_reduce_test "extra" "unexpected argument 'extra'"
check all_reduce_test "-b" "invalid -b '--csv'"
check all_reduce_test "" "invalid COLL_TEST_OUTPUT 'out.txt'" COLL_TEST_OUTPUT=out.txt
check all_reduce_test "" "invalid COLL_TEST_CPUS 'x-y'" COLL_TEST_CPUS=x-y
check all_reduce_test "" "WORLD_SIZE" RANK=3 WORLD_SIZE=2
check all_reduce_test "" "invalid COLL_SPIN='abc'" COLL_SPIN=abc
for t in all_gather all_gatherv reduce_scatter reduce_scatterv reduce broadcast scatter alltoall alltoallv; do
    check ${t}_test "-d bogus" "invalid -d 'bogus'"
done

# -h: exit 0, documents the exit codes; the v tests document their counts.
out=$("$B/all_reduce_test" -h); rc=$?
[ $rc -eq 0 ] || { echo "FAIL: -h exit $rc"; fail=1; }
for w in "--minbytes" "--zero_copy" "--equal-counts" "Exit codes" "5 a peer aborted"; do
    case "$out" in *"$w"*) ;; *) echo "FAIL: -h lacks '$w'"; fail=1 ;; esac
done
"$B/alltoallv_test" --help | grep -q "Unequal counts" || { echo "FAIL: alltoallv --help lacks the count scheme"; fail=1; }
"$B/all_reduce_test" --version | grep -q "collbench" || { echo "FAIL: --version"; fail=1; }

# -o on a non-reducing test: a warning, and the run goes on.
err=$("$B/broadcast_test" -p 1 -o max -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null); rc=$?
case "$err" in *warning*-o*) ;; *) echo "FAIL: no -o warning on broadcast_test: $err"; fail=1 ;; esac
[ $rc -eq 0 ] || { echo "FAIL: broadcast_test -o max exit $rc"; fail=1; }

sleep 0.2
if pgrep -f "$tok" >/dev/null; then echo "FAIL: processes left: $(pgrep -af "$tok")"; fail=1; fi
shm_after=$(ls /dev/shm 2>/dev/null | grep '^collbench' | sort)
new=$(comm -13 <(echo "$shm_before") <(echo "$shm_after"))
[ -z "$new" ] || { echo "FAIL: /dev/shm left: $new"; fail=1; }
[ $fail -eq 0 ] && echo "10-cli-errors: all passed"
exit $fail
