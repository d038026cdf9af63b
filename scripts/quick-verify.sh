#!/usr/bin/env bash
# quick-verify.sh - run the collective tests on local ranks and print a summary.
#
#   scripts/quick-verify.sh NPUS [quick|full] [-b SIZE] [-e SIZE] [-n ITERS] [--report DIR]
#
#   NPUS      ranks on this node; each test binary forks them itself
#             (standalone launch: ./bin/<op>_test -p NPUS).
#   quick     (default) the core operators AllReduce, AllGather, Broadcast,
#             AlltoAll, sizes 8K..64M (-f 2)
#   full      all ten operators, sizes 8K..1G (-f 2)
#   -b SIZE   smallest size (default 8K), -e SIZE largest (default 64M quick,
#             1G full): bytes with an optional K/M/G suffix (powers of 1024), as
#             the test binaries take them; -e must be >= -b. Sizes step by -f 2.
#   -n ITERS  timed iterations per size (a positive integer; default the
#             binaries' own, 20)
#   --report DIR  also write report.md, results.csv, plots and index.html
#             there (scripts/collbench-report)
#
# The largest size is capped by the memory available now (MemAvailable in
# /proc/meminfo): each rank needs about 3x the size (alltoall: send, receive
# and check buffers), so NPUS x 3 x maxsize must fit in 80% of MemAvailable;
# the cap is the largest 8K x 2^k under that bound and is printed when used.
#
# Prints one line per operator: PASS/FAIL, peak algbw and peak busbw with the
# size where each was reached. Exit 0 when all pass, 1 on any FAIL (non-zero
# exit of a test binary, a `failed` row, a `check result failed` line, no
# result rows, a timeout), 2 on bad arguments or no test binaries.
# Environment: CB_BIN (binary dir, default the script's ../bin),
# QV_TIMEOUT (seconds per operator, default 300 quick / 1800 full);
# COLL_* settings pass through to the tests.
set -u
ME=quick-verify.sh
HERE=$(cd "$(dirname "$0")" && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die2() { echo "$ME: $*" >&2; echo "usage: $ME NPUS [quick|full] [-b SIZE] [-e SIZE] [-n ITERS] [--report DIR]  (-h for help)" >&2; exit 2; }
size_bytes() { # 8K / 64m / 1G / 8192 -> bytes, or fail
    [[ "$1" =~ ^([0-9]+)([KkMmGg]?)$ ]] || return 1
    local n=$((10#${BASH_REMATCH[1]})) sh=0
    case "${BASH_REMATCH[2]}" in [Kk]) sh=10 ;; [Mm]) sh=20 ;; [Gg]) sh=30 ;; esac
    [ ${#BASH_REMATCH[1]} -le 13 ] && [ "$n" -ge 1 ] && [ "$n" -le $(((1 << 40) >> sh)) ] || return 1   # at most 1T
    echo $((n << sh))
}

NPUS='' MODE='' REPORT='' OPT_B='' OPT_E='' ITERS=''
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        -b|-e|-n)
            [ $# -ge 2 ] && [ -n "$2" ] || die2 "$1 needs a value"
            case "$1" in
                -b) OPT_B=$(size_bytes "$2") || die2 "-b: invalid size '$2' (bytes with an optional K/M/G suffix, 1..1T, e.g. 8K)" ;;
                -e) OPT_E=$(size_bytes "$2") || die2 "-e: invalid size '$2' (bytes with an optional K/M/G suffix, 1..1T, e.g. 64M)" ;;
                -n) [[ "$2" =~ ^[0-9]{1,9}$ ]] && [ "$((10#$2))" -ge 1 ] || die2 "-n: iterations must be a positive integer, got '$2'"
                    ITERS=$((10#$2)) ;;
            esac
            shift 2 ;;
        --report) [ $# -ge 2 ] && [ -n "$2" ] || die2 "--report needs a directory"; REPORT=$2; shift 2 ;;
        --report=*) REPORT=${1#--report=}; [ -n "$REPORT" ] || die2 "--report needs a directory"; shift ;;
        -*) die2 "unknown option '$1'" ;;
        *)
            if [ -z "$NPUS" ]; then NPUS=$1
            elif [ -z "$MODE" ]; then MODE=$1
            else die2 "unexpected argument '$1'"; fi
            shift ;;
    esac
done
[ -n "$NPUS" ] || die2 "missing NPUS (number of local ranks, e.g. 8)"
[[ "$NPUS" =~ ^[0-9]+$ ]] && [ "$((10#$NPUS))" -ge 1 ] 2>/dev/null \
    || die2 "NPUS must be a positive integer, got '$NPUS'"
NPUS=$((10#$NPUS))
MODE=${MODE:-quick}
case "$MODE" in
    quick) OPS="all_reduce all_gather broadcast alltoall"; MAXB=$((64 << 20)); TMO=${QV_TIMEOUT:-300} ;;
    full)  OPS="all_reduce all_gather all_gatherv reduce_scatter reduce_scatterv reduce broadcast scatter alltoall alltoallv"
           MAXB=$((1 << 30)); TMO=${QV_TIMEOUT:-1800} ;;
    *) die2 "unknown mode '$MODE' (allowed: quick, full)" ;;
esac
MINB=8192
[ -n "$OPT_B" ] && MINB=$OPT_B
[ -n "$OPT_E" ] && MAXB=$OPT_E
[ "$MAXB" -ge "$MINB" ] || die2 "-e ($MAXB bytes) must be >= -b ($MINB bytes)"
ITARGS=()
[ -n "$ITERS" ] && ITARGS=(-n "$ITERS")
[[ "$TMO" =~ ^[1-9][0-9]*$ ]] || die2 "QV_TIMEOUT must be a positive integer (seconds), got '$TMO'"

BIN=${CB_BIN:-$HERE/../bin}
[ -d "$BIN" ] || { echo "$ME: no test binaries: directory $BIN not found (run make, or set CB_BIN)" >&2; exit 2; }
BIN=$(cd "$BIN" && pwd)
have=0
for op in $OPS; do [ -x "$BIN/${op}_test" ] && have=1; done
[ $have = 1 ] || { echo "$ME: no test binaries (*_test) in $BIN (run make, or set CB_BIN)" >&2; exit 2; }

human() { # bytes -> 8K / 64M / 1G
    local b=$1
    if [ $((b % (1 << 30))) -eq 0 ]; then echo "$((b >> 30))G"
    elif [ $((b % (1 << 20))) -eq 0 ]; then echo "$((b >> 20))M"
    elif [ $((b % 1024)) -eq 0 ]; then echo "$((b >> 10))K"
    else echo "${b}B"; fi
}

CAPNOTE=
avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null)
if [[ "$avail_kb" =~ ^[0-9]+$ ]]; then
    usable=$((avail_kb * 1024 * 8 / 10))          # 80% of MemAvailable, bytes
    want=$MAXB
    while [ "$MAXB" -gt "$MINB" ] && [ $((NPUS * 3 * MAXB)) -gt "$usable" ]; do MAXB=$((MAXB / 2)); done
    [ "$MAXB" -lt "$MINB" ] && MAXB=$MINB      # -b not 8K x 2^k: never below -b
    if [ "$MAXB" -lt "$want" ]; then
        CAPNOTE="max size capped to $(human $MAXB) (wanted $(human $want)): MemAvailable is $((avail_kb / 1024)) MiB and $NPUS ranks x 3 x size (alltoall: send, receive and check buffers per rank) must fit in 80% of it"
    fi
    if [ $((NPUS * 3 * MAXB)) -gt "$usable" ]; then
        echo "$ME: not enough memory for $NPUS ranks even at $(human $MINB) (MemAvailable $((avail_kb / 1024)) MiB)" >&2
        exit 2
    fi
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/quick-verify.XXXXXX") || { echo "$ME: cannot create a temp dir" >&2; exit 2; }
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

display() {
    case "$1" in
        all_reduce) echo AllReduce ;; all_gather) echo AllGather ;; all_gatherv) echo AllGatherV ;;
        reduce_scatter) echo ReduceScatter ;; reduce_scatterv) echo ReduceScatterV ;;
        reduce) echo Reduce ;; broadcast) echo Broadcast ;; scatter) echo Scatter ;;
        alltoall) echo AlltoAll ;; alltoallv) echo AlltoAllV ;; *) echo "$1" ;;
    esac
}

echo "quick-verify: $NPUS local rank(s), mode $MODE, sizes $(human $MINB)..$(human $MAXB) (-f 2)${ITERS:+, $ITERS iterations}, binaries $BIN"
[ -n "$CAPNOTE" ] && echo "quick-verify: $CAPNOTE"

nfail=0 npass=0
lines=()
inputs=()
for op in $OPS; do
    name=$(display "$op")
    exe=$BIN/${op}_test
    log=$TMP/${op}_test.log
    json=$TMP/${op}_test.json
    if [ ! -x "$exe" ]; then
        lines+=("$(printf '%-15s %-6s %-22s %-22s %s' "$name" FAIL - - "binary $exe missing")")
        nfail=$((nfail + 1)); continue
    fi
    echo "quick-verify: running $name: ${op}_test -p $NPUS -b $(human $MINB) -e $(human $MAXB) -f 2${ITERS:+ -n $ITERS}" >&2
    timeout -k 10 "$TMO" "$exe" -p "$NPUS" -b "$MINB" -e "$MAXB" -f 2 "${ITARGS[@]}" --json "$json" >"$log" 2>&1
    rc=$?
    # rows of the table: size | time | algbw | check | busbw
    read -r nrows nfailed pa pas pb pbs < <(awk -F'|' '
        /^[0-9]+ *\|/ && NF >= 4 {
            n++; s = $1 + 0; c = $4; gsub(/ /, "", c); at = $3; gsub(/ /, "", at); bt = $5; gsub(/ /, "", bt)
            if (c == "failed") f++
            if (at != "" && (pas == "" || at + 0 > pa + 0)) { pa = at; pas = s }
            if (NF >= 5 && bt != "" && (pbs == "" || bt + 0 > pb + 0)) { pb = bt; pbs = s }
        }
        /check result failed/ { f++ }
        END { printf "%d %d %s %s %s %s\n", n, f, (pas == "" ? "-" : pa), (pas == "" ? 0 : pas),
                                                (pbs == "" ? "-" : pb), (pbs == "" ? 0 : pbs) }' "$log")
    why=
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then why="timeout after ${TMO}s"
    elif [ $rc -ne 0 ]; then why="exit code $rc"; fi
    if [ "$nfailed" -gt 0 ]; then why="${why:+$why, }$nfailed failed check(s)"; fi
    if [ "$nrows" -eq 0 ]; then why="${why:+$why, }no result rows"; fi
    if [ -n "$why" ]; then
        res=FAIL; nfail=$((nfail + 1))
        echo "---- $name failed ($why); last lines of its output:" >&2
        tail -n 15 "$log" | sed 's/^/    /' >&2
    else
        res=PASS; npass=$((npass + 1))
    fi
    pa_s=-; pb_s=-
    [ "$pa" != "-" ] && pa_s="$pa @ $(human "$pas")"
    [ "$pb" != "-" ] && pb_s="$pb @ $(human "$pbs")"
    lines+=("$(printf '%-15s %-6s %-22s %-22s %s' "$name" "$res" "$pa_s" "$pb_s" "$why")")
    if [ -s "$json" ]; then inputs+=("$json"); elif [ "$nrows" -gt 0 ]; then inputs+=("$log"); fi
done

echo
printf '%-15s %-6s %-22s %-22s %s\n' "operator" "result" "peak algbw GB/s @ size" "peak busbw GB/s @ size" "note"
for l in "${lines[@]}"; do echo "$l"; done
total=$((npass + nfail))
echo "passed $npass/$total ($NPUS ranks, $MODE)"

rc=0
[ $nfail -gt 0 ] && rc=1
if [ -n "$REPORT" ]; then
    if [ ${#inputs[@]} -eq 0 ]; then
        echo "$ME: no results to report" >&2; rc=1
    elif ! "$HERE/collbench-report" "${inputs[@]}" -o "$REPORT" \
            --title "quick-verify: $NPUS ranks, $MODE" --ranks "$NPUS"; then
        echo "$ME: writing the report to $REPORT failed" >&2; rc=1
    fi
fi
exit $rc
