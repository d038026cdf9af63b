#!/usr/bin/env bash
# timeout: 180
# collbench net on loopback: server + client with the perftest tables, -a sweep,
# -b, -q 2, -D, --lat, JSON, IPv6 (when ::1 works), and the error paths: bad
# values (exit 2), refused connection (exit 3, quickly), server with no client
# (--timeout, exit 4).
set -u
. "$(dirname "$0")/../lib/common.sh"   # free_port (its fail() is redefined below)
CB=${CB_O:-.}/bin/collbench
# both ends share a random secret (tools/collbench/net/auth.c); the open mode is checked below
COLL_SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'); export COLL_SECRET
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CB" ] || fail "no $CB"
TMP=$(mktemp -d); SPID=
trap '[ -n "$SPID" ] && kill $SPID 2>/dev/null; rm -rf "$TMP"' EXIT


# run_pair "server args" "client args": runs both, leaves outputs in $TMP/srv $TMP/cli
run_pair() {
    local sargs=$1 cargs=$2 host=${3:-127.0.0.1}
    PORT=$(free_port)
    "$CB" net -p $PORT --timeout 20 $sargs >"$TMP/srv" 2>"$TMP/srv.err" &
    SPID=$!
    timeout 60 "$CB" net $host -p $PORT --retry 10 $cargs >"$TMP/cli" 2>"$TMP/cli.err"; crc=$?
    wait $SPID; src=$?; SPID=
    [ $crc -eq 0 ] || fail "client '$cargs' exit $crc: $(cat "$TMP/cli.err")"
    [ $src -eq 0 ] || fail "server for '$cargs' exit $src: $(cat "$TMP/srv.err")"
}

# bandwidth rows: " #bytes #iterations peak avg rate", message rate > 0 (tiny messages may round to 0.0000 GB/s), bandwidth > 0 from 64 KiB, peak >= avg
bw_rows() { awk '$1 ~ /^[0-9]+$/ && NF == 5' "$1"; }
check_bw() {
    local f=$1 nrows=$2 what=$3
    grep -q ' #bytes     #iterations    BW peak\[GB/s\]    BW average\[GB/s\]   MsgRate\[Mpps\]' "$f" || fail "$what: no header in $f"
    [ "$(grep -c -- '^-\{80,\}$' "$f")" -ge 3 ] || fail "$what: dashed lines missing"
    n=$(bw_rows "$f" | wc -l)
    [ "$n" -eq "$nrows" ] || fail "$what: $n rows, want $nrows: $(cat "$f")"
    bw_rows "$f" | awk '{ if (!($2 > 0 && $3 >= 0 && $4 >= 0 && $5 > 0 && $3 >= $4 * 0.999 && ($1 < 65536 || $4 > 0))) { print "bad row: " $0; exit 1 } }' \
        || fail "$what: implausible row"
}

run_pair "" "-s 64K -n 200"
cat "$TMP/cli"
check_bw "$TMP/cli" 1 "client 64K"
check_bw "$TMP/srv" 1 "server 64K"
[ "$(bw_rows "$TMP/cli")" = "$(bw_rows "$TMP/srv")" ] || fail "server and client tables differ"
bw_rows "$TMP/cli" | awk '$1 == 65536 && $2 == 200 {f=1} END{exit !f}' || fail "wrong bytes/iterations"

run_pair "" "-a -n 20"
check_bw "$TMP/cli" 23 "-a sweep"
[ "$(bw_rows "$TMP/cli" | awk 'NR==1{print $1}')" = 2 ] && [ "$(bw_rows "$TMP/cli" | awk 'END{print $1}')" = 8388608 ] \
    || fail "-a sweep is not 2..8388608"

run_pair "" "-b -s 256K -n 100"
check_bw "$TMP/cli" 1 "-b"; grep -q bidirectional "$TMP/srv" || fail "server does not say bidirectional"

run_pair "-s 1M -n 5" "-q 2 -s 128K -n 100"   # server flags differ: the client's win
check_bw "$TMP/cli" 1 "-q 2"; check_bw "$TMP/srv" 1 "-q 2 server"
bw_rows "$TMP/srv" | awk '$1 == 131072 {f=1} END{exit !f}' || fail "server did not take the client's -s"

run_pair "" "-D 0.3 -s 32K"
check_bw "$TMP/cli" 1 "-D"

run_pair "" "--lat -n 300"
grep -q ' #bytes #iterations    t_min\[usec\]    t_max\[usec\]  t_typical\[usec\]    t_avg\[usec\]    t_stdev\[usec\]   99% percentile\[usec\]   99.9% percentile\[usec\]' "$TMP/cli" \
    || fail "no latency header: $(cat "$TMP/cli")"
for f in "$TMP/cli" "$TMP/srv"; do
    awk '$1 == 2 && NF == 9 && $2 == 300 && $3 > 0 && $3 <= $5 && $5 <= $4 && $8 <= $9 {f=1} END{exit !f}' "$f" \
        || fail "bad latency row in $f: $(cat "$f")"
done
cat "$TMP/cli"

run_pair "--json" "--json -a -n 5 --lat"
for f in "$TMP/cli" "$TMP/srv"; do
    python3 -m json.tool "$f" >/dev/null || fail "invalid JSON in $f: $(cat "$f")"
done
python3 - "$TMP/cli" <<'PY' || fail "latency JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["test"] == "lat" and len(d["results"]) == 23, d
assert all(r["t_min_us"] > 0 and r["iterations"] == 5 for r in d["results"]), d
PY
run_pair "--json" "--json -b -q 2 -n 50"
python3 - "$TMP/cli" "$TMP/srv" <<'PY' || fail "bandwidth JSON content"
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert d["direction"] == "bi" and d["connections"] == 2, d
    r = d["results"][0]
    assert r["bytes"] == 65536 and r["bw_avg_gbs"] > 0 and r["bw_peak_gbs"] >= r["bw_avg_gbs"] * 0.999, d
PY

# IPv6 loopback, when this host has it
if python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
    run_pair "" "-s 4K -n 50" "::1"
    check_bw "$TMP/cli" 1 "IPv6"
    echo "IPv6 ok"
else
    echo "note: no IPv6 loopback here, IPv6 not exercised"
fi

# errors; EL_MS: how long the last one took (monotonic clock), BASE_MS: the
# longest of the usage errors, the baseline of the refused connection's bound
err() {
    local code=$1 want=$2; shift 2
    local t0; t0=$(now_ms)
    out=$(timeout 20 "$CB" "$@" 2>&1 >/dev/null); rc=$?
    EL_MS=$(( $(now_ms) - t0 ))
    [ $rc -eq "$code" ] || fail "'$*' exit $rc (want $code): $out"
    [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "'$*' message not one line: $out"
    echo "$out" | grep -q -- "$want" || fail "'$*' message lacks '$want': $out"
    echo "ok ($rc, $EL_MS ms): $out"
    [ "$code" != 2 ] || [ "$EL_MS" -le "${BASE_MS:-0}" ] || BASE_MS=$EL_MS
}
err 2 "'12Q'.*allowed" net 127.0.0.1 -s 12Q
err 2 "'0'.*allowed" net 127.0.0.1 -q 0
err 2 "'65'.*allowed" net 127.0.0.1 -q 65
err 2 "'70000'.*allowed" net 127.0.0.1 -p 70000
err 2 "'0'.*allowed" net 127.0.0.1 -n 0
err 2 "'-b'.*allowed\|-b.*allowed" net 127.0.0.1 --lat -b
PORT=$(free_port)
err 3 "cannot connect to 127.0.0.1:$PORT: connection refused" net 127.0.0.1 -p $PORT
# quickly: no retry; 3 s, or 10 times the slowest usage error above, whichever is more
max=$(bound_ms 0 10 "$BASE_MS" 3000)
[ "$EL_MS" -lt "$max" ] || fail "refused connection took $EL_MS ms (bound $max ms, usage errors $BASE_MS ms)"
err 4 "no client.*$PORT.*--timeout" net -p $PORT --timeout 0.5

# M7 / auth: a client with another secret is refused by the server and refuses
# it (neither proves the other's key); a server without a secret warns once
PORT=$(free_port)
timeout 20 "$CB" net -p $PORT --timeout 10 >/dev/null 2>"$TMP/srv-auth.err" & sp=$!
sleep 0.5
COLL_SECRET=another err 3 "did not prove it knows our secret" net 127.0.0.1 -p $PORT -n 10 --retry 5
wait $sp; src=$?
[ $src -ne 0 ] && grep -qE "did not prove it knows our secret|left during the handshake" "$TMP/srv-auth.err" ||
    fail "server did not refuse a client with another secret (exit $src): $(cat "$TMP/srv-auth.err")"
PORT=$(free_port)
out=$(env -u COLL_SECRET timeout 20 "$CB" net -p $PORT --timeout 0.3 2>&1 >/dev/null)
[ "$(printf '%s\n' "$out" | grep -c "warning: COLL_SECRET")" -eq 1 ] || fail "open server: no one-line warning: $out"
echo "ok: wrong secret refused both ways; open server warns"
echo PASS
