#!/usr/bin/env bash
# timeout: 180
# parallel: yes
# --json / --csv / COLL_TEST_OUTPUT: valid JSON (python3 -m json.tool), the
# documented keys, CSV header and columns, rows matching the table, atomic
# write (no FILE.tmp.* left).
set -u
B=${CB_O:?}/bin
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$(timeout 60 "$B/all_reduce_test" -p 3 -b 8K -e 32K -f 2 -n 2 -w 1 --json "$tmp/r.json" --csv "$tmp/r.csv" --time-agg all 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "FAIL: run exit $rc: $out"; fail=1; }
python3 -m json.tool "$tmp/r.json" >/dev/null || { echo "FAIL: invalid JSON"; cat "$tmp/r.json"; fail=1; }
python3 - "$tmp/r.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
h = d["header"]
need = ["version", "tool", "command", "start_time", "hosts", "nhosts", "ranks", "ranks_per_host",
        "cpu_model", "launcher", "config", "collective", "dtype", "op", "root", "iters",
        "warmup_iters", "check", "zero_copy"]
miss = [k for k in need if k not in h]
assert not miss, "header lacks %s" % miss
assert d["schema"] == "collbench-result/1"
assert h["tool"] == "all_reduce_test" and h["ranks"] == 3 and h["launcher"] == "standalone", h
assert h["collective"] == "allreduce" and h["op"] == "sum" and h["root"] is None, h
assert len(h["hosts"]) == h["nhosts"] >= 1 and sum(h["ranks_per_host"]) == 3, h
r = d["results"]
assert [x["bytes"] for x in r] == [8192, 16384, 32768], r
for x in r:
    for k in ["collective", "dtype", "op", "root", "ranks", "hosts", "ranks_per_host", "algorithm",
              "bytes", "count", "time_us", "algbw_gbs", "busbw_gbs", "wrong", "check_result"]:
        assert k in x, "row lacks " + k
    t = x["time_us"]
    assert t["min"] <= t["avg"] <= t["max"], t
    assert abs(x["algbw_gbs"] - x["bytes"] / t["max"] / 1e3) < 1e-3 * max(1, x["algbw_gbs"]), x
    assert abs(x["busbw_gbs"] - x["algbw_gbs"] * 4 / 3) < 1e-3 * max(1, x["busbw_gbs"]), x
    assert x["check_result"] == "success" and x["wrong"] == 0 and x["count"] == x["bytes"] // 4
    assert x["algorithm"], "empty algorithm"
assert d["status"]["exit_code"] == 0
PY
hdr='collective,dtype,op,root,ranks,hosts,ranks_per_host,algorithm,bytes,count,time_avg_us,time_min_us,time_max_us,algbw_gbs,busbw_gbs,wrong,check_result'
[ "$(grep -v '^#' "$tmp/r.csv" | head -1)" = "$hdr" ] || { echo "FAIL: CSV header"; cat "$tmp/r.csv"; fail=1; }
n=$(grep -v '^#' "$tmp/r.csv" | tail -n +2 | awk -F, 'NF == 17' | wc -l)
[ "$n" -eq 3 ] || { echo "FAIL: CSV: $n rows of 17 columns"; cat "$tmp/r.csv"; fail=1; }
grep -q '^# launcher=standalone' "$tmp/r.csv" || { echo "FAIL: CSV header comments"; fail=1; }
# table and files agree on sizes
tbl=$(echo "$out" | grep -E '^[0-9]+ +\|' | awk '{print $1}' | tr '\n' ' ')
csvs=$(grep -v '^#' "$tmp/r.csv" | tail -n +2 | cut -d, -f9 | tr '\n' ' ')
[ "$tbl" = "$csvs" ] || { echo "FAIL: table sizes '$tbl' vs CSV '$csvs'"; fail=1; }

# COLL_TEST_OUTPUT by extension, non-default config recorded
COLL_TEST_OUTPUT="$tmp/e.json" COLL_CHUNK=128K timeout 60 "$B/all_reduce_test" -p 2 -b 1K -e 1K -n 1 -w 0 >/dev/null 2>&1 \
    || { echo "FAIL: COLL_TEST_OUTPUT run"; fail=1; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["header"]["config"].get("COLL_CHUNK") == "128K", d["header"]["config"]' "$tmp/e.json" \
    || { echo "FAIL: COLL_TEST_OUTPUT json"; fail=1; }
COLL_TEST_OUTPUT="$tmp/e.csv" timeout 60 "$B/all_reduce_test" -p 2 -b 1K -e 1K -n 1 -w 0 >/dev/null 2>&1
[ -s "$tmp/e.csv" ] || { echo "FAIL: COLL_TEST_OUTPUT csv"; fail=1; }

# non-reducing, rooted test: op null, root set
timeout 60 "$B/scatter_test" -p 2 -r 1 -b 2K -e 2K -n 1 -w 0 --json "$tmp/s.json" >/dev/null 2>&1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); h=d["header"]; assert h["op"] is None and h["root"] == 1, h' "$tmp/s.json" \
    || { echo "FAIL: scatter json op/root"; fail=1; }

ls "$tmp" | grep -q '\.tmp\.' && { echo "FAIL: temporary files left: $(ls "$tmp")"; fail=1; }
[ $fail -eq 0 ] && echo "14-output-json: all passed"
exit $fail
