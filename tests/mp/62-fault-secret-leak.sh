#!/usr/bin/env bash
# timeout: 90
# M1/H2: the secret is never on the wire, in results, in logs or in
# --print-config. A 3-rank env launch over TCP only (COLL_SHM_DISABLE=1) in a
# private network namespace, captured whole with tcpdump on its loopback; with
# COLL_DEBUG=INFO, --json and --csv. Neither the COLL_SECRET string nor the
# 32-byte key made from it (its SHA-256) may appear in the capture, the logs,
# the result files or --print-config (which shows "set").
. "$(dirname "$0")/../lib/common.sh"
command -v tcpdump >/dev/null || { echo "tcpdump missing (scripts/install-deps.sh test)"; exit 77; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
S="leak-test-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export S W BIN
unshare -n bash -c '
    ip link set lo up
    tcpdump -i lo -U -s 0 -w "$W/cap.pcap" >"$W/tcpdump.log" 2>&1 & tp=$!
    for i in $(seq 50); do [ -s "$W/cap.pcap" ] && break; sleep 0.1; done
    pids=()
    for r in 0 1 2; do
        env RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=29611 COLL_SECRET="$S" COLL_SHM_DISABLE=1 \
            COLL_DEBUG=INFO COLL_IF_IP=127.0.0.1 timeout -k 2 60 "$BIN/all_reduce_test" -b 8K -e 1M -f 4 -n 3 -w 1 \
            --json "$W/r$r.json" --csv "$W/r$r.csv" >"$W/r$r.out" 2>&1 & pids+=($!)
    done
    rc=0; for p in "${pids[@]}"; do wait $p || rc=1; done
    echo "ranks rc=$rc"
    sleep 0.3; kill -INT $tp; wait $tp
' >"$W/run.log" 2>&1
cat "$W/run.log"
COLL_SECRET="$S" "$BIN/all_reduce_test" --print-config >"$W/print-config.out" 2>&1
check "the ranks ran" grep -q "ranks rc=0" "$W/run.log"
check "the capture holds the run" test "$(stat -c %s "$W/cap.pcap")" -gt 100000
python3 - "$W" "$S" <<'PY' || fail "secret found (see above)"
import hashlib, os, sys
w, s = sys.argv[1], sys.argv[2].encode()
key = hashlib.sha256(s).digest()
bad = 0
for f in sorted(os.listdir(w)):
    b = open(os.path.join(w, f), "rb").read()
    for what, pat in (("the COLL_SECRET string", s), ("the key (SHA-256 of it)", key), ("half the key", key[:16]),
                      ("the key in hex", key.hex().encode())):
        if pat in b:
            print(f"FAIL: {what} in {f}"); bad = 1
print("searched", len(os.listdir(w)), "files for the secret and its key")
sys.exit(bad)
PY
check "--print-config shows COLL_SECRET as set" grep -qE "^COLL_SECRET +set " "$W/print-config.out"
check "results were written" test -s "$W/r0.json" -a -s "$W/r0.csv"
check "no process left" no_procs "$BIN/all_reduce_test"
finish
