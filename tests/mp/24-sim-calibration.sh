#!/usr/bin/env bash
# timeout: 60
# parallel: yes
# collbench sim --calibration FILE, written by measuring runs on loopback:
# collbench net (bandwidth, --lat, -b --calibration-cpu), collbench bw -t d2d and
# bw -t hosts (2 hosts x 2 ranks by COLL_HOST_ID)
# each set their keys with --calibration-out (bw d2d: cache_bytes too, the LLC from sysfs) (keeping the others and the user's lines); the
# sim reads them (its JSON "link" shows the file's values), its prediction
# follows the file's bandwidth (half the net_gbps: a 2-host allreduce takes
# about twice as long; so does a CPU limit below the link; net_step_us adds
# to every ring step), explicit flags win over single keys; bad files and
# misplaced --calibration-out exit 2 with one line naming the line and value.
set -u
. "$(dirname "$0")/../lib/common.sh"   # free_port (its fail() is redefined below)
CB=${CB_O:-.}/bin/collbench
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CB" ] || fail "no $CB"
TMP=$(mktemp -d); SPID=
trap '[ -n "$SPID" ] && kill $SPID 2>/dev/null; rm -rf "$TMP"' EXIT
F=$TMP/calib.txt

net_pair() {   # net_pair "client args": a server and a client on loopback
    local port
    port=$(free_port)
    "$CB" net -p "$port" --timeout 20 >"$TMP/srv" 2>&1 &
    SPID=$!
    timeout 60 "$CB" net 127.0.0.1 -p "$port" --retry 10 $1 >"$TMP/cli" 2>"$TMP/cli.err" ||
        fail "collbench net $1: exit $?: $(cat "$TMP/cli.err")"
    wait $SPID || fail "net server for '$1' failed: $(tail -1 "$TMP/srv")"
    SPID=
}
key() { awk -v k="$1" -F' *= *' '$1 == k {print $2}' "$F"; }
# a value of the sim's JSON ("link": {"net_gbps": 0.9, ...}; one row: "time_us": 123.4)
link() { grep -o "\"$2\": [0-9.e+-]*" "$1" | head -1 | sed 's/.*: //'; }
t_us() { grep -o '"time_us": [0-9.e+-]*' "$1" | tail -1 | sed 's/.*: //'; }

# 1. the measuring runs write the file; a user's line survives the rewrites
echo "# measured on loopback by tests/mp/24-sim-calibration.sh" >"$F"
net_pair "-s 256K -n 300 --calibration-out $F"
gbps=$(key net_gbps)
avg=$(awk '$1 == 262144 && NF == 5 {print $4}' "$TMP/cli")
[ -n "$gbps" ] && [ -n "$avg" ] || fail "net --calibration-out: no net_gbps ($gbps) or row ($avg): $(cat "$F")"
awk -v g="$gbps" -v a="$avg" 'BEGIN { exit !(g > 0 && (g - a * 8) ^ 2 < (0.01 * g + 0.001) ^ 2) }' ||
    fail "net_gbps $gbps is not the client's average $avg GB/s x 8"
net_pair "--lat -n 300 --calibration-out $F"
lat=$(key net_us)
typ=$(awk '$1 == 2 && NF == 9 {print $5}' "$TMP/cli")
[ -n "$lat" ] && awk -v l="$lat" -v t="$typ" 'BEGIN { exit !(l > 0 && (l - t) ^ 2 < 0.01) }' ||
    fail "net --lat --calibration-out: net_us '$lat', typical '$typ'"
[ "$(key net_gbps)" = "$gbps" ] || fail "the latency run changed net_gbps: $(cat "$F")"
"$CB" bw -t d2d -s 4M -et 3 --method memcpy --calibration-out "$F" >"$TMP/d2d" 2>&1 || fail "bw d2d: $(tail -2 "$TMP/d2d")"
net_pair "-s 256K -n 200 -b --calibration-out $F --calibration-cpu"   # loopback: the CPUs are the limit
[ "$(key net_gbps)" = "$gbps" ] || fail "--calibration-cpu changed net_gbps: $(cat "$F")"
for k in shm_gbps reduce_gbps cores_per_host copy_core_gbps cache_bytes net_overhead_us net_cpu_gbps; do
    [ -n "$(key $k)" ] || fail "no $k in the calibration file: $(cat "$F")"
done
grep -q '^# measured on loopback by' "$F" || fail "the writers dropped the user's comment line"
[ "$(grep -c '^net_gbps' "$F")" = 1 ] || fail "net_gbps twice: $(cat "$F")"
echo "ok: net, net --lat and bw d2d wrote $(grep -c '=' "$F") keys"

# 1b. bw -t hosts: every rank of 2 hosts (COLL_HOST_ID on loopback) x 2 ranks streams to the other
# host at once; net_cpu_gbps = what all hosts sent / the machine's cores, as its table says
hosts_run() {   # hosts_run "HOST-OF-RANK-0 HOST-OF-RANK-1 ..." ARGS...: the first nonzero exit code of the ranks
    local hl=($1) port r=0 rc=0 pids=() ws l
    shift
    port=$(free_port); ws=${#hl[@]}
    for r in "${!hl[@]}"; do
        l=$(for q in $(seq 0 $((r - 1))); do [ "${hl[$q]}" = "${hl[$r]}" ] && echo; done | wc -l)
        COLL_HOST_ID=${hl[$r]} COLL_SOCKET_IFNAME=lo RANK=$r WORLD_SIZE=$ws LOCAL_RANK=$l \
            MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 30 "$CB" bw -t hosts "$@" >"$TMP/h.r$r" 2>&1 &
        pids+=($!)
    done
    for r in "${!pids[@]}"; do
        wait "${pids[$r]}"
        l=$?
        [ $rc = 0 ] && rc=$l
    done
    return $rc
}
before=$(grep -v '^#' "$F" | grep -v '^net_cpu_gbps')
hosts_run "ha ha hb hb" -s 1M -et 4 --calibration-out "$F" || fail "bw -t hosts: exit $?: $(cat "$TMP"/h.r*)"
grep -q "^2 hosts x 2 ranks" "$TMP/h.r0" || fail "bw -t hosts did not see 2 hosts x 2 ranks: $(cat "$TMP/h.r0")"
per=$(sed -n 's/.*sent (\([0-9.]*\) Gbit\/s per core.*/\1/p' "$TMP/h.r0")
awk -v a="$(key net_cpu_gbps)" -v b="$per" 'BEGIN { exit !(a > 0 && (a - b) ^ 2 < (0.001 * b + 0.001) ^ 2) }' ||
    fail "bw -t hosts: net_cpu_gbps '$(key net_cpu_gbps)' is not its table's $per Gbit/s per core"
grep -q "^# .*collbench bw -t hosts -s 1048576: 2 hosts x 2 ranks" "$F" || fail "bw -t hosts: no comment: $(cat "$F")"
[ "$(grep -v '^#' "$F" | grep -v '^net_cpu_gbps')" = "$before" ] || fail "bw -t hosts changed other keys: $(cat "$F")"
cp "$F" "$TMP/keep.txt"
hosts_run "ha ha hb" -s 64K -et 2 --calibration-out "$F"; st=$?
[ $st = 2 ] && [ "$(wc -l <"$TMP/h.r0")" = 1 ] && grep -q "same ranks on each (this run: 2 host(s), 1 to 2" "$TMP/h.r0" ||
    fail "bw -t hosts with 2 + 1 ranks: exit $st, '$(cat "$TMP/h.r0")'"
cmp -s "$F" "$TMP/keep.txt" || fail "a refused bw -t hosts changed $F"
msg=$("$CB" bw -t hosts -s 1K 2>&1 >/dev/null); st=$?
[ $st = 2 ] && echo "$msg" | grep -q "needs ranks on 2 or more hosts" || fail "bw -t hosts standalone: exit $st, '$msg'"
msg=$("$CB" bw -t hosts -p 4 2>&1 >/dev/null); st=$?
[ $st = 2 ] && echo "$msg" | grep -q "unknown option '-p' for -t hosts" || fail "bw -t hosts -p: exit $st, '$msg'"
echo "ok: bw -t hosts wrote net_cpu_gbps = $per; uneven hosts, standalone and -p exit 2"

# 1c. bw -t p2p between 2 hosts: net_step_us from the exchange, and what the init probe measured
# (probe_us, probe_gbps: the selection's view); without the probe those two are not written
cp "$F" "$TMP/p2p.txt"
hosts_run "ha hb" -t p2p -s 256K -et 4 --calibration-out "$TMP/p2p.txt" 2>/dev/null ||
    fail "bw -t p2p --calibration-out: exit $?: $(cat "$TMP"/h.r*)"
F0=$F F=$TMP/p2p.txt
for k in net_step_us net_step_bytes probe_us probe_gbps; do [ -n "$(key $k)" ] || fail "bw -t p2p wrote no $k: $(cat "$F")"; done
awk -v u="$(key probe_us)" -v g="$(key probe_gbps)" 'BEGIN { exit !(u > 0 && g > 0) }' ||
    fail "probe_us '$(key probe_us)', probe_gbps '$(key probe_gbps)' not positive"
grep -q "^# .*collbench bw -t p2p -s 262144: .*init probe [0-9.]* us" "$F" || fail "bw -t p2p: no comment: $(cat "$F")"
cp "$F0" "$TMP/np.txt"; F=$TMP/np.txt
COLL_NET_PROBE=0 hosts_run "ha hb" -t p2p -s 256K -et 4 --calibration-out "$F" 2>/dev/null || fail "p2p without probe: exit $?"
[ -n "$(key net_step_us)" ] && [ -z "$(key probe_us)" ] || fail "COLL_NET_PROBE=0: probe_us written: $(cat "$F")"
F=$F0
echo "ok: bw -t p2p wrote net_step_us and the init probe's probe_us / probe_gbps"

# 2. the sim uses the file's figures
"$CB" sim -H 2,2 -c allreduce -b 4M -e 4M --calibration "$F" --json >"$TMP/a.json" || fail "sim --calibration: exit $?"
for k in net_gbps net_us shm_gbps reduce_gbps cores_per_host copy_core_gbps cache_bytes; do
    awk -v a="$(link "$TMP/a.json" $k)" -v b="$(key $k)" 'BEGIN { exit !((a - b) ^ 2 <= (1e-5 * b) ^ 2) }' ||
        fail "sim's $k $(link "$TMP/a.json" $k) is not the file's $(key $k)"
done
# the same file at 1 and at 0.5 Gbit/s: the network dominates, the time about doubles
# (no CPU limit in these two: the measured one may be anything on a loaded machine)
sed -e "s/^net_gbps = .*/net_gbps = 1/" -e "s/^net_cpu_gbps = .*/net_cpu_gbps = 0/" "$F" >"$TMP/one.txt"
sed -e "s/^net_gbps = .*/net_gbps = 0.5/" -e "s/^net_cpu_gbps = .*/net_cpu_gbps = 0/" "$F" >"$TMP/half.txt"
half=0.5
"$CB" sim -H 2,2 -c allreduce -b 4M -e 4M --calibration "$TMP/one.txt" --json >"$TMP/a1.json" || fail "sim 1: exit $?"
"$CB" sim -H 2,2 -c allreduce -b 4M -e 4M --calibration "$TMP/half.txt" --json >"$TMP/b.json" || fail "sim half: exit $?"
ta=$(t_us "$TMP/a1.json") tb=$(t_us "$TMP/b.json")
awk -v a="$ta" -v b="$tb" 'BEGIN { exit !(b > 1.5 * a) }' || fail "half the net_gbps: $tb us, not slower than $ta us"
"$CB" sim -H 2,2 -c allreduce -b 4M -e 4M --calibration "$F" --net-gbps "$half" --json >"$TMP/c.json" || fail "sim flag"
[ "$(t_us "$TMP/c.json")" = "$tb" ] || fail "--net-gbps $half over the file: $(t_us "$TMP/c.json") us, want $tb"
"$CB" sim -H 2,2 -c allreduce -b 4M -e 4M --net-gbps "$half" --calibration "$F" | grep -q "net $half Gbit/s" ||
    fail "--net-gbps before --calibration did not win"
# the CPU limit and the step term of the file slow the prediction down
sed "s/^net_cpu_gbps = .*/net_cpu_gbps = 0.125/" "$TMP/one.txt" >"$TMP/cpu.txt"
"$CB" sim -H 2,2 -c allreduce -b 4M -e 4M --calibration "$TMP/cpu.txt" --cores-per-host 2 --json >"$TMP/cpu.json" || fail "sim cpu"
awk -v a="$ta" -v b="$(t_us "$TMP/cpu.json")" 'BEGIN { exit !(b > 1.5 * a) }' ||
    fail "net_cpu_gbps 0.125 x 2 cores (0.25 Gbit/s) did not slow 1 Gbit/s down: $(t_us "$TMP/cpu.json") us vs $ta us"
"$CB" sim -H 1,1 -c allgather -b 1M -e 1M --calibration "$TMP/half.txt" --algo ring --json >"$TMP/s0.json" || fail "sim s0"
"$CB" sim -H 1,1 -c allgather -b 1M -e 1M --calibration "$TMP/half.txt" --algo ring --net-step-us 1000 --json >"$TMP/s1.json" ||
    fail "sim s1"
# 512K each way in 2 chunks of 256K: two steps of 1000 us more
awk -v a="$(t_us "$TMP/s0.json")" -v b="$(t_us "$TMP/s1.json")" 'BEGIN { exit !(b - a > 1999 && b - a < 2001) }' ||
    fail "--net-step-us 1000: $(t_us "$TMP/s1.json") us, want $(t_us "$TMP/s0.json") + 2000"
# probe_us / probe_gbps: the selection sees them, the link model does not (4 hosts x 1 rank,
# AllGather 1M: a selection told of 40 us picks the log-step Bruck, told of 7 us the ring)
printf 'net_gbps = 4.8\nnet_us = 40\n' >"$TMP/sel.txt"
alg() { "$CB" sim -H 1,1,1,1 -c allgather -b 1M -e 1M --calibration "$1" ${2:-} --json | grep -o '"algorithm": "[a-z]*"' | head -1; }
[ "$(alg "$TMP/sel.txt")" = '"algorithm": "bruck"' ] || fail "net_us 40: $(alg "$TMP/sel.txt"), want bruck"
printf 'probe_us = 7\nprobe_gbps = 19\n' >>"$TMP/sel.txt"
[ "$(alg "$TMP/sel.txt")" = '"algorithm": "ring"' ] || fail "probe_us 7: $(alg "$TMP/sel.txt"), want ring"
[ "$(alg "$TMP/sel.txt" "--probe-us 40")" = '"algorithm": "bruck"' ] || fail "--probe-us 40 over the file did not win"
echo "ok: sim --calibration: $(t_us "$TMP/a.json") us as measured, $ta us at net_gbps = 1, $tb us at 0.5; --net-gbps wins"

# 3. bad files: exit 2, one line naming the file's line and the value
printf 'net_gbps = 1\n' >"$TMP/ok.txt"
bad() {   # bad CONTENT EXPECTED-TEXT
    printf "$1" >"$TMP/bad.txt"
    msg=$("$CB" sim -n 4 -H 2 -c allreduce --calibration "$TMP/bad.txt" 2>&1 >/dev/null)
    st=$?
    [ $st = 2 ] && [ "$(echo "$msg" | wc -l)" = 1 ] && echo "$msg" | grep -qF -- "$2" ||
        fail "bad file '$1': exit $st, message '$msg' (want exit 2, one line with '$2')"
}
bad '# c\nnet_gbps = 1\nnet_gbsp = 2\n' "bad.txt:3: unknown key 'net_gbsp'"
bad 'net_gbps = fast\n' "bad.txt:1: invalid net_gbps 'fast'"
bad 'net_gbps = 0\n' "bad.txt:1: invalid net_gbps '0'"
bad 'shm_us = -1\n' "bad.txt:1: invalid shm_us '-1'"
bad 'net_gbps 1\n' "bad.txt:1: invalid line 'net_gbps 1'"
bad 'net_gbps = 1\nnet_gbps = 2\n' "bad.txt:2: net_gbps given twice"
bad 'reduce_gbps =\n' "bad.txt:1: invalid reduce_gbps ''"
bad '# nothing\n\n' "no parameters"
msg=$("$CB" sim -n 4 -c allreduce --calibration "$TMP/none.txt" 2>&1 >/dev/null); st=$?
[ $st = 2 ] && echo "$msg" | grep -q "none.txt" || fail "missing file: exit $st, '$msg'"
msg=$("$CB" net --calibration-out "$TMP/x" --timeout 1 2>&1 >/dev/null); st=$?
[ $st = 2 ] && echo "$msg" | grep -q "client option" || fail "net server --calibration-out: exit $st, '$msg'"
msg=$("$CB" net 127.0.0.1 --calibration-cpu 2>&1 >/dev/null); st=$?
[ $st = 2 ] && echo "$msg" | grep -q "needs --calibration-out FILE and -b" || fail "net --calibration-cpu alone: exit $st, '$msg'"
msg=$("$CB" bw -t p2p --calibration-out "$TMP/x" 2>&1 >/dev/null); st=$?
[ $st = 2 ] && echo "$msg" | grep -q "standalone ranks" || fail "bw p2p --calibration-out: exit $st, '$msg'"
[ ! -e "$TMP/x" ] || fail "a refused --calibration-out left $TMP/x"
echo "ok: bad files and options exit 2 with one line"
echo "24-sim-calibration: all passed"
