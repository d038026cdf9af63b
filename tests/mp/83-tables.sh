#!/usr/bin/env bash
# timeout: 600
# The tables tell the whole truth (issue 29), under the standalone, mpirun
# (Open MPI or MPICH, whichever is built) and environment (RANK/WORLD_SIZE)
# launches, with real ranks:
#  - nccl-tests' footer under the default table (its exact words; the average
#    is the mean of the rows' bus bandwidth, in-place rows included) and the
#    '# Run cost' line; nothing under --format hccl;
#  - --min-bw / COLL_TEST_MIN_BW: exit 6 and one line naming figure and limit;
#  - --format plain: the seed skill's regex finds every row, and
#    parse-hccl-result.py prints the seed parser's summary lines word for word;
#  - --stats columns and JSON iter_us {min,p50,p99,max}, straggler, cost,
#    in_place rows (--in-place both: two column groups);
#  - -d/-o lists (one table each), --sizes, --cycles, --off-cache;
#  - a burn-in stopped by SIGINT/SIGTERM: footer, result file, no leftovers;
#  - the straggler: one rank of four stopped and continued in a duty cycle
#    (SIGSTOP/SIGCONT) under the environment launch is named for most rows; a
#    run without it names no rank for most rows.
# Bad values exit 2 with one line.
set -u
. "$(dirname "$0")/../lib/common.sh"
B=${CB_O:?}/bin
P=${CB_ROOT:?}/scripts/parse-hccl-result.py
T=$(mktemp -d)
ENV_PIDS=()
cleanup() { for p in "${ENV_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT

MPI=
if command -v mpirun.openmpi >/dev/null && [ -f "$CB_O/lib/collbench-mpi-openmpi.so" ]; then
    MPI="mpirun.openmpi --allow-run-as-root --oversubscribe"
elif command -v mpirun.mpich >/dev/null && [ -f "$CB_O/lib/collbench-mpi-mpich.so" ]; then
    MPI="mpirun.mpich"
fi
[ -n "$MPI" ] || fail "no MPI launcher with its plugin built (scripts/install-deps.sh build): mpirun checks not run"

# launch KIND N TEST ARGS...: rank 0's stdout in $T/out, stderr in $T/err,
# RC = exit code (env: the worst of the ranks').
launch() {
    local kind=$1 n=$2 t=$3; shift 3
    case $kind in
    standalone) timeout 120 "$B/${t}_test" -p "$n" "$@" >"$T/out" 2>"$T/err"; RC=$? ;;
    mpirun) timeout 120 $MPI -n "$n" "$B/${t}_test" -p "$n" "$@" >"$T/out" 2>"$T/err"; RC=$? ;;
    env)
        local port r rc pids=()
        port=$(free_port)
        for r in $(seq 0 $((n - 1))); do
            RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                timeout 120 "$B/${t}_test" "$@" >"$T/out.$r" 2>"$T/err.$r" &
            pids+=($!)
        done
        RC=0
        for r in $(seq 0 $((n - 1))); do
            wait "${pids[$r]}"; rc=$?
            [ $rc -gt $RC ] && RC=$rc
        done
        cp "$T/out.0" "$T/out"; cat "$T"/err.* >"$T/err" ;;
    esac
}

# footer_ok LABEL: the footer's words and figures match the table above it
footer_ok() {
    python3 - "$T/out" "$1" <<'PY' && pass "$1: footer" || fail "$1: footer"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
rows = [l for l in lines if re.match(r"^\d+ +\|", l)]
bus = []
for l in rows:
    f = [x.strip() for x in l.split("|")]
    bus.append(float(f[4]))
    if len(f) >= 9 and f[-2] in ("success", "failed", "NULL"):   # --in-place both: the last group
        bus.append(float(f[-1]))
foot = [l for l in lines if l.startswith("#")]
assert "# Out of bounds values : 0 OK" in foot, foot
m = [re.match(r"^# Avg bus bandwidth    : ([0-9.e+-]+)$", l) for l in foot]
m = [x for x in m if x]
assert m, foot
avg = float(m[0].group(1))
assert abs(avg - sum(bus) / len(bus)) <= 1e-4 * max(1.0, avg) + 1e-5, (avg, bus)
cost = [l for l in foot if l.startswith("# Run cost             : init_time_s ")]
assert cost and re.search(r"peak_rss_mib [0-9.]+ shm_bytes \d+ sockets \d+$", cost[0]), foot
assert foot[-1] == "#", foot
PY
}

json_ok() {   # json_ok LABEL FILE NROWS NRANKS
    python3 - "$2" "$3" "$4" <<'PY' && pass "$1: JSON iter_us, straggler, cost, in_place" || fail "$1: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
rows, n = d["results"], int(sys.argv[3])
assert len(rows) == int(sys.argv[2]), len(rows)
assert sorted(r["in_place"] for r in rows) == [False] * (len(rows) // 2) + [True] * (len(rows) // 2), rows
for r in rows:
    it = r["iter_us"]
    assert 0 < it["min"] <= it["p50"] <= it["p99"] <= it["max"], it
    assert it["max"] >= r["time_us"]["max"] * 0.999 or it["max"] >= r["time_us"]["avg"], (it, r["time_us"])
    s = r["straggler"]
    assert s is None or (0 <= s["rank"] < n and s["host"]), s
    assert r["check_result"] == "success", r
c = d["cost"]
assert c["init_time_s"] > 0 and c["peak_rss_mib"] > 1 and c["sockets"] >= 0 and c["shm_bytes"] >= 0, c
assert d["header"]["in_place"] == "both"
PY
}

for kind in standalone mpirun env; do
    [ $kind = mpirun ] && [ -z "$MPI" ] && continue
    L="[$kind]"
    # 1, 2, 4, 6: default table + --stats + --in-place both + JSON
    launch $kind 3 all_reduce -b 8K -e 32K -f 2 -n 4 -w 1 --stats --in-place both --json "$T/r.json"
    [ $RC -eq 0 ] || fail "$L run exit $RC: $(tail -3 "$T/err")"
    footer_ok "$L default"
    grep -q '^data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result: | bus_bandwidth(GB/s): | iter_min(us): | iter_p50(us): | iter_p99(us): | iter_max(us): | straggler: | in_place_time(us): | in_place_alg_bandwidth(GB/s): | in_place_check_result: | in_place_bus_bandwidth(GB/s):$' "$T/out" \
        && pass "$L --stats and in-place header" || fail "$L header: $(sed -n 2p "$T/out")"
    n=$(awk -F' [|] ' '/^[0-9]+ +\|/ && NF == 14 && $4 ~ /^success/ && $13 ~ /^success/' "$T/out" | wc -l)
    [ "$n" -eq 3 ] && pass "$L 3 rows of 14 columns" || fail "$L rows: $(cat "$T/out")"
    json_ok "$L" "$T/r.json" 6 3
    # 2: nothing under --format hccl
    launch $kind 2 all_reduce -b 8K -e 8K -n 2 -w 1 --format hccl
    [ $RC -eq 0 ] && ! grep -q '^#' "$T/out" && [ "$(wc -l <"$T/out")" -eq 3 ] \
        && pass "$L --format hccl: no footer" || fail "$L hccl: $(cat "$T/out")"
    # 3: the gate, flag and environment
    launch $kind 2 all_reduce -b 8K -e 16K -f 2 -n 2 -w 1 --min-bw 1000000
    [ $RC -eq 6 ] && grep -q 'average bus bandwidth .* GB/s is below the limit 1e+06 GB/s (--min-bw): exit 6' "$T/err" \
        && grep -q '^# Avg bus bandwidth    : .* FAILED$' "$T/out" \
        && pass "$L --min-bw: exit 6" || fail "$L --min-bw: exit $RC: $(cat "$T/err")"
    COLL_TEST_MIN_BW=1000000 launch $kind 2 all_reduce -b 8K -e 8K -n 2 -w 1
    [ $RC -eq 6 ] && grep -q 'below the limit 1e+06 GB/s (COLL_TEST_MIN_BW)' "$T/err" \
        && pass "$L COLL_TEST_MIN_BW: exit 6" || fail "$L COLL_TEST_MIN_BW: exit $RC"
    launch $kind 2 all_reduce -b 8K -e 8K -n 2 -w 1 --min-bw 0
    [ $RC -eq 0 ] && grep -q '^# Avg bus bandwidth    : .* OK$' "$T/out" && pass "$L --min-bw 0: exit 0" \
        || fail "$L --min-bw 0: exit $RC"
    # 7: --format plain and the seed's parser lines
    launch $kind 2 reduce_scatter -b 8K -e 64K -f 2 -n 2 -w 1 --format plain
    [ $RC -eq 0 ] || fail "$L plain exit $RC"
    python3 - "$T/out" <<'PY' && pass "$L --format plain: the seed's regex finds every row" || fail "$L plain: $(cat "$T/out")"
import re, sys
text = open(sys.argv[1]).read()
rows = re.findall(r"^\s*(\d+)\s+(\d+\.?\d*)\s+(\d+\.?\d*)\s+(\w+)", text, re.M)   # the seed skill's parser
assert [int(r[0]) for r in rows] == [8192, 16384, 32768, 65536], rows
assert all(r[3] == "success" for r in rows), rows
assert text.split("\n")[1] == "data_size      avg_time(us)    alg_bandwidth(GB/s)    check_result", text
assert "|" not in text and "#" not in text
PY
    "$P" "$T/out" >"$T/p1" && "$P" "$T/out" -f markdown >"$T/p2" || fail "$L parser exit"
    python3 - "$T/out" "$T/p1" "$T/p2" <<'PY' && pass "$L parser: seed's Total and **Total Tests:** lines" || fail "$L parser lines: $(cat "$T/p1")"
import re, sys
rows = re.findall(r"^\s*(\d+)\s+(\d+\.?\d*)\s+(\d+\.?\d*)\s+(\w+)", open(sys.argv[1]).read(), re.M)
bw = [float(r[2]) for r in rows]
want = "Total: %d tests | Avg BW: %.4f GB/s | Max: %.4f GB/s" % (len(bw), sum(bw) / len(bw), max(bw))
assert want in open(sys.argv[2]).read().split("\n"), want
assert "**Total Tests:** %d" % len(bw) in open(sys.argv[3]).read().split("\n")
PY
    # 5: -d/-o lists, --sizes, --cycles, --off-cache
    launch $kind 2 all_reduce --sizes 1K,3K -d int8,fp32 -o sum,max -n 2 -w 1 --cycles 2 --off-cache --json "$T/d.json"
    [ $RC -eq 0 ] && [ "$(grep -c '^# datatype' "$T/out")" -eq 8 ] && [ "$(grep -c '^# pass' "$T/out")" -eq 2 ] \
        && [ "$(grep -cE '^(1024|3072) +\| .*success' "$T/out")" -eq 16 ] \
        && python3 -c "
import json,sys; r=json.load(open('$T/d.json'))['results']
assert sorted(set((x['dtype'],x['op']) for x in r))==[('fp32','max'),('fp32','sum'),('int8','max'),('int8','sum')] and len(r)==16, r" \
        && pass "$L -d/-o lists, --sizes, --cycles 2, --off-cache" || fail "$L lists: exit $RC: $(head -20 "$T/out")"
done

# Burn-in stopped by a signal: footer, result file, nothing left behind.
timeout 60 "$B/all_reduce_test" -p 3 -b 8K -e 64K -f 2 -n 5 -w 1 --cycles 0 --json "$T/b.json" >"$T/out" 2>"$T/err" &
pid=$!
sleep 3
kill -INT $pid; wait $pid; rc=$?
[ $rc -eq 130 ] && grep -q '^# Out of bounds values : 0 OK' "$T/out" && grep -q '(stopped)$' "$T/out" \
    && python3 -c "import json; d=json.load(open('$T/b.json')); assert d['results'] and d['status']['exit_code']==0" \
    && pass "[standalone] burn-in SIGINT: footer and JSON" || fail "[standalone] burn-in SIGINT: exit $rc: $(tail -5 "$T/out") $(cat "$T/err")"
no_shm_leftovers && pass "[standalone] burn-in: no /dev/shm leftovers" || fail "shm leftovers"
port=$(free_port); ENV_PIDS=()
for r in 0 1 2; do
    RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 60 "$B/all_reduce_test" -b 8K -e 64K -f 2 -n 5 \
        -w 1 --duration 100 >"$T/out.$r" 2>"$T/err.$r" &
    ENV_PIDS+=($!)
done
sleep 4
for p in "${ENV_PIDS[@]}"; do kill -TERM "$(pgrep -P "$p")" 2>/dev/null; done
rcs=""; for p in "${ENV_PIDS[@]}"; do wait "$p"; rcs="$rcs$?"; done
ENV_PIDS=()
[ "$rcs" = 000 ] && grep -q '^# Avg bus bandwidth' "$T/out.0" && grep -q 'Terminated: burn-in stopped' "$T/err.0" \
    && pass "[env] burn-in SIGTERM: every rank exits 0 after the footer" || fail "[env] burn-in SIGTERM: exits $rcs: $(tail -3 "$T/out.0") $(cat "$T/err.0")"
if [ -n "$MPI" ]; then
    # SIGTERM to every rank, as a batch system's scancel does (mpirun's own
    # handling of a signal is its business)
    timeout 60 $MPI -n 3 "$B/all_reduce_test" -p 3 -b 8K -e 64K -f 2 -n 5 -w 1 --cycles 0 >"$T/out" 2>"$T/err" &
    pid=$!
    sleep 5
    ranks=$(pgrep -f -s "$CB_SID" -- "$B/all_reduce_test -p 3 -b 8K -e 64K -f 2 -n 5 -w 1 --cycles 0" | grep -v "^$pid$")
    for p in $ranks; do [ "$(ps -o comm= -p "$p")" = all_reduce_test ] && kill -TERM "$p"; done
    wait $pid; rc=$?
    [ $rc -eq 0 ] && grep -q '^# Avg bus bandwidth' "$T/out" && grep -q 'burn-in stopped' "$T/err" \
        && pass "[mpirun] burn-in SIGTERM to the ranks: footer, exit 0" || fail "[mpirun] burn-in SIGTERM: exit $rc: $(tail -3 "$T/out") $(tail -3 "$T/err")"
fi

# The straggler: rank 2 of 4 stopped 20 ms in every 50 ms (env launch).
straggler_run() {   # straggler_run STOPPED(-1 none): straggler column of each row in $T/strag
    local port r p dc=
    port=$(free_port); ENV_PIDS=()
    for r in 0 1 2 3; do
        RANK=$r WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 150 "$B/all_reduce_test" \
            -b 4K -e 64K -f 2 -n 2000 -w 5 --stats >"$T/s.$r" 2>&1 &
        ENV_PIDS+=($!)
    done
    if [ "$1" -ge 0 ]; then
        sleep 0.2
        p=$(pgrep -P "${ENV_PIDS[$1]}")
        ( while kill -STOP "$p" 2>/dev/null; do sleep 0.02; kill -CONT "$p" 2>/dev/null; sleep 0.03; done ) &
        dc=$!
    fi
    for p in "${ENV_PIDS[@]}"; do wait "$p" || fail "straggler run ($1): a rank failed: $(tail -3 "$T/s.0")"; done
    ENV_PIDS=()
    [ -n "$dc" ] && { kill $dc 2>/dev/null; wait $dc 2>/dev/null; }
    awk -F' [|] ' '/^[0-9]+ +\|/ { print $NF }' "$T/s.0" >"$T/strag"
    cat "$T/s.0" | cut -c1-40,150-
}
straggler_run 2
rows=$(wc -l <"$T/strag"); named=$(grep -c '^2@' "$T/strag")
[ "$rows" -eq 5 ] && [ $((2 * named)) -gt "$rows" ] && pass "SIGSTOP duty cycle: rank 2 named for $named of $rows rows" \
    || fail "SIGSTOP duty cycle: rank 2 named for $named of $rows rows: $(tr '\n' ' ' <"$T/strag")"
straggler_run -1
rows=$(wc -l <"$T/strag")
top=$(grep -v '^-$' "$T/strag" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $1 + 0}')
# Without a duty cycle a row may still name a rank that one scheduling stall held
# (4 ranks on 2 cores; the time-weighted charge of stats.c names it, rightly): the
# same rank in 3 of 5 rows was seen once in a clean CI-like run. A rank stopped
# 40% of the time is named in most rows (above); by chance, 4 of 5 is rare.
[ "$rows" -eq 5 ] && [ "${top:-0}" -le 3 ] && pass "no duty cycle: no rank named for 4 or more rows ($(tr '\n' ' ' <"$T/strag"))" \
    || fail "no duty cycle: a rank named for 4 or more rows: $(tr '\n' ' ' <"$T/strag")"

# Bad values: exit 2, one line, before any rank starts.
bad() {   # bad WANT TEST ARGS...
    local want=$1 t=$2; shift 2
    out=$("$B/${t}_test" -p 2 "$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -qF -- "$want" \
        && echo "$out" | grep -q allowed && pass "bad: $t $*" || fail "bad: $t $*: exit $rc: $out"
}
bad "invalid -d 'bogus' in 'fp32,bogus'" all_reduce -d fp32,bogus
bad "invalid -o 'all': broadcast_test does not reduce" broadcast -o all
bad "invalid -o 'sum,foo'" all_reduce -o sum,foo
bad "invalid --duration '-1'" all_reduce --duration -1
bad "invalid --cycles '-1'" all_reduce --cycles -1
bad "invalid --min-bw 'fast'" all_reduce --min-bw fast
bad "invalid --in-place '2'" all_reduce --in-place 2
bad "scatter_test has no in-place form" scatter --in-place 1
bad "invalid --sizes '4Q'" all_reduce --sizes 1K,4Q
bad "invalid --stats with the hccl format" all_reduce --stats --format hccl
bad "invalid --in-place 'both' with the plain format" all_reduce --in-place both --format plain
bad "invalid --off-cache with -z 1" all_reduce --off-cache -z 1
out=$(COLL_TEST_MIN_BW=x "$B/all_reduce_test" -p 2 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "invalid COLL_TEST_MIN_BW 'x'" && pass "bad: COLL_TEST_MIN_BW=x" || fail "COLL_TEST_MIN_BW=x: $rc $out"
finish
