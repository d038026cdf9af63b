#!/usr/bin/env bash
# timeout: 300
# COLL_ENCRYPT=1 (docs/security.md: AES-256-GCM records on TCP data
# connections) on simulated hosts (tests/lib/netns.sh):
#  1. capture: tcpdump on cbh2's link while tests/lib/plain_pattern.py moves a
#     known plaintext (AllGather + Broadcast of 1 MiB a rank, 2 hosts x 1 rank):
#     the pattern must be in the capture without encryption (so this check can
#     fail) and absent with it, and the data right both times;
#  2. correctness: all_reduce, broadcast, all_gather, reduce_scatter, alltoall
#     and the send/recv-heavy alltoallv with the check on, 8K..4M (raw, striped
#     and capped records), on 2 x 1 ranks with 1 and 2 sockets a direction and
#     on (2, 1) ranks (shm inside a host, tcp across), and zero copy (-z 1);
#  3. open run: COLL_ENCRYPT=1 without COLL_SECRET: every rank exits 2 with a
#     line naming COLL_ENCRYPT and COLL_SECRET;
#  4. tamper: COLL_FAULT_TCP=0:120 (rank 0 flips a byte of the 120th record it seals: in the 1M calls):
#     the receiver reports the authentication failure naming rank 0, every rank
#     exits non-zero within 30 s, no rank is left; COLL_ENCRYPT=1 on one rank only
#     fails on both naming it (the hello's flag); a bad COLL_FAULT_TCP exits 2.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
L=${CB_O}/lib
. "$ROOT/tests/lib/netns.sh"
command -v tcpdump >/dev/null || { echo "tcpdump missing: scripts/install-deps.sh test"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
netns_up 2 || { echo "FAIL: netns_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"
export NETNS_RANK_TIMEOUT=90
port=29700

# ---- 1. capture
capture() {   # capture NAME ENCRYPT: run plain_pattern.py under tcpdump on cbh2; N = pattern lines
    local cap=$W/$1.pcap pid i
    port=$((port + 1))
    (exec nsenter -t "${NETNS_HOLDER[2]}" -n -- tcpdump -i cbeth0 -U -s 0 -w "$cap" tcp >/dev/null 2>"$W/$1.tcpdump") &
    pid=$!
    for i in $(seq 50); do grep -q listening "$W/$1.tcpdump" 2>/dev/null && break; sleep 0.1; done
    NETNS_MASTER_PORT=$port netns_env_launch "$W/$1" "1 1" env COLL_ENCRYPT="$2" \
        /usr/bin/python3 "$ROOT/tests/lib/plain_pattern.py" "$L" || bad "$1: plain_pattern.py failed"
    sleep 0.3
    kill -TERM "$pid"; wait "$pid"
    grep -q "data right" "$W/$1.r0.out" && grep -q "data right" "$W/$1.r1.out" || bad "$1: data not right"
    N=$(grep -c "CB-PLAINTEXT-PROBE-" -a "$cap")
}
capture plain 0
n=$N
sz=$(stat -c %s "$W/plain.pcap")
[ "${n:-0}" -gt 0 ] && echo "ok: without encryption the pattern is in the capture ($n lines of $sz bytes)" ||
    bad "without encryption the pattern is not in the capture ($sz bytes): the capture sees nothing"
capture sealed 1
n=$N
sz=$(stat -c %s "$W/sealed.pcap")
[ "$sz" -gt $((2 << 20)) ] || bad "the encrypted run's capture has only $sz bytes"
[ "${n:-1}" = 0 ] && echo "ok: with COLL_ENCRYPT=1 the pattern is absent from the capture ($sz bytes)" ||
    bad "with COLL_ENCRYPT=1 the pattern appears $n times in the capture"

# ---- 2. correctness
run() {   # run LAYOUT TEST ENV... (extra args in $ARGS)
    local layout=$1 t=$2 out
    shift 2
    port=$((port + 1))
    out=$W/$t-${layout// /_}-$port
    NETNS_MASTER_PORT=$port netns_env_launch "$out" "$layout" env COLL_ENCRYPT=1 "$@" \
        "$B/${t}_test" -b 8K -e 4M -f 8 -c 1 -n 3 -w 1 $ARGS
    local rc=$? res
    res=$(netns_check_rows "$out.r0.out")
    if [ $rc -ne 0 ] || ! netns_check_rows "$out.r0.out" >/dev/null; then
        bad "$t on ($layout) $* $ARGS: $rc rank(s) failed, $res"
        tail -n 3 "$out.r0.err" | sed 's/^/    /'
    else
        echo "ok: $t on ($layout) $* $ARGS, encrypted: $res"
    fi
}
ARGS=""
for t in all_reduce broadcast all_gather reduce_scatter alltoall alltoallv; do
    run "1 1" $t COLL_NSOCKS=2
done
run "1 1" all_reduce COLL_NSOCKS=1
run "1 1" broadcast COLL_NSOCKS=1
run "2 1" all_reduce COLL_NSOCKS=2
run "2 1" all_gather COLL_NSOCKS=1
ARGS="-z 1" run "1 1" all_reduce COLL_NSOCKS=2
ARGS=""

# ---- 3. open run
port=$((port + 1))
NETNS_MASTER_PORT=$port netns_env_launch "$W/open2" "1 1" env -u COLL_SECRET COLL_ENCRYPT=1 \
    sh -c '"$0" -b 8K -e 8K -n 1 -w 0; echo "exit $?" >&2' "$B/all_reduce_test" >/dev/null
for r in 0 1; do
    grep -q "^exit 3$" "$W/open2.r$r.err" && grep -q "COLL_ENCRYPT=1 needs a shared secret.*COLL_SECRET" \
        "$W/open2.r$r.err" && echo "ok: open run with COLL_ENCRYPT=1: rank $r exits 3 naming COLL_SECRET" ||
        bad "open run with COLL_ENCRYPT=1: rank $r: $(tail -n 2 "$W/open2.r$r.err" | tr '\n' ' ') (want exit 3: setup failed, naming COLL_ENCRYPT and COLL_SECRET)"
done

# ---- 4. tamper
port=$((port + 1))
s=$(date +%s)
NETNS_MASTER_PORT=$port netns_env_launch "$W/tamper" "1 1" env COLL_ENCRYPT=1 COLL_FAULT_TCP=0:120 \
    sh -c '"$0" -b 1M -e 1M -n 5 -w 1; echo "exit $?" >&2' "$B/all_reduce_test" >/dev/null
el=$(($(date +%s) - s))
grep -h "authentication failed on data from rank 0" "$W"/tamper.r*.err | head -n 1 | grep . ||
    bad "tamper: no rank reported the authentication failure naming rank 0"
for r in 0 1; do
    c=$(sed -n 's/^exit \([0-9]*\)$/\1/p' "$W/tamper.r$r.err")
    [ -n "$c" ] && [ "$c" != 0 ] || bad "tamper: rank $r exit '${c:-none}' (want non-zero)"
done
[ $el -le 30 ] && echo "ok: tamper: every rank exited non-zero in ${el}s" || bad "tamper: took ${el}s"
left=$(pgrep -f "$B/all_reduce_test" | wc -l)
[ "$left" = 0 ] || bad "tamper: $left all_reduce_test process(es) left"
for h in 1 2; do
    segs=$(netns_exec $h sh -c 'ls /dev/shm | wc -l')
    [ "$segs" = 0 ] || bad "tamper: $segs segment(s) left in cbh$h's /dev/shm"
done
port=$((port + 1))   # rank 0 encrypts, rank 1 does not: both fail naming the setting, none reads garbage
NETNS_MASTER_PORT=$port NETNS_RANK0_ENV="COLL_ENCRYPT=1" netns_env_launch "$W/mixed" "1 1" \
    sh -c '"$0" -b 64K -e 64K -n 2 -w 1; echo "exit $?" >&2' "$B/all_reduce_test" >/dev/null
grep -q "sends with COLL_ENCRYPT=[01], this rank has COLL_ENCRYPT=[01]" "$W"/mixed.r*.err || bad "mixed COLL_ENCRYPT: not named"
for r in 0 1; do
    c=$(sed -n 's/^exit \([0-9]*\)$/\1/p' "$W/mixed.r$r.err")
    [ -n "$c" ] && [ "$c" != 0 ] || bad "mixed COLL_ENCRYPT: rank $r exit '${c:-none}' (want non-zero)"
done
[ $fail = 0 ] && echo "ok: COLL_ENCRYPT=1 on rank 0 only: both ranks fail, naming COLL_ENCRYPT"
port=$((port + 1))
NETNS_MASTER_PORT=$port netns_env_launch "$W/badfault" "1 1" env COLL_ENCRYPT=1 COLL_FAULT_TCP=x1 \
    sh -c '"$0" -b 8K -e 8K -n 1 -w 0; echo "exit $?" >&2' "$B/all_reduce_test" >/dev/null
# parsed at the transport's set-up, like COLL_FAULT_SHM: a failed setup (exit 3) naming it
grep -q "invalid COLL_FAULT_TCP 'x1'" "$W/badfault.r0.err" && grep -q "^exit 3$" "$W/badfault.r0.err" &&
    echo "ok: a bad COLL_FAULT_TCP exits 3 naming it" || bad "bad COLL_FAULT_TCP: $(tail -n 2 "$W/badfault.r0.err")"

[ $fail -eq 0 ] && echo "88-tcp-encrypt: all passed"
exit $fail
