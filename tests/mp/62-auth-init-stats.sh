#!/usr/bin/env bash
# timeout: 120
# Init's authentication accounting (issue 31; bench/scale-bench.sh's second
# table): at COLL_DEBUG=INFO every rank logs once at the end of init its init
# time, the handshakes it made during init (connector / acceptor), their wall
# time and the CPU time of the HMACs. 8 env-launched ranks over 4 simulated
# hosts (tests/lib/scale.sh): every rank logs the line once, its figures add
# up (two HMACs per handshake and side, no COLL_ENCRYPT; on rank 0, whose store
# thread runs across init's ends, give or take the ones in flight), the
# connector's by role add up, every rank connected
# at least once (the store), and rank 0, the store, accepted every rank's join.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/scale.sh"
T=$(mktemp -d)
trap 'scale_cleanup; rm -rf "$T"' EXIT
export COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=INIT
N=8
scale_launch "$T" "$N" 4 "$BIN/all_reduce_test" -b 8 -e 64K -f 8 -n 2 -w 1 -c 1
scale_wait 90
check "$N ranks over 4 hosts: all exit 0" test "$SCALE_FAILED" -eq 0
re='.* init \([0-9.]*\) ms; auth handshakes \([0-9]*\) (connector \([0-9]*\), acceptor \([0-9]*\)), wall \([0-9.]*\) ms (connector \([0-9.]*\), acceptor \([0-9.]*\)), hmac cpu \([0-9.]*\) ms (\([0-9]*\) HMACs);.*'
for ((r = 0; r < N; r++)); do
    n=$(grep -c "auth handshakes" "$T/rank$r.log")
    check "rank $r: one auth line ($n)" test "$n" -eq 1
    f=$(sed -n "s/$re/\1 \2 \3 \4 \5 \6 \7 \8 \9/p" "$T/rank$r.log")
    roles=$(sed -n 's/.*connector by role: store [0-9.]* ms (\([0-9]*\)), tree [0-9.]* ms (\([0-9]*\)), data [0-9.]* ms (\([0-9]*\))$/\1 + \2 + \3/p' "$T/rank$r.log")
    echo "rank $r: init ms, handshakes, connector, acceptor, wall ms, connector, acceptor, hmac ms, HMACs: $f"
    # shellcheck disable=SC2086 # the fields, split on purpose
    set -- $f
    check "rank $r: nine figures" test $# -eq 9
    [ $# -eq 9 ] || continue
    check "rank $r: handshakes = connector + acceptor" test "$2" -eq $(($3 + $4))
    check "rank $r: at least one as connector (the store)" test "$3" -ge 1
    check "rank $r: the connector's by role add up ($roles = $3)" test "$((${roles:-0 - 1}))" -eq "$3"
    if [ "$r" -eq 0 ]; then # the store's thread runs across init's start and end: its handshakes in
        # flight then have one HMAC outside (before the start) or one not yet made (after the end)
        check "rank 0: two HMACs a handshake, give or take one per store handshake in flight ($9 for $2)" \
            test "$9" -ge $((2 * $2 - N)) -a "$9" -le $((2 * $2 + N))
    else
        check "rank $r: two HMACs a handshake ($9 for $2)" test "$9" -eq $((2 * $2))
    fi
    check "rank $r: init and wall times positive, wall = connector + acceptor" \
        awk -v i="$1" -v w="$5" -v c="$6" -v a="$7" -v h="$8" \
        'BEGIN { exit !(i > 0 && w > 0 && h > 0 && (w - c - a) < 0.01 && (c + a - w) < 0.01) }'
    [ "$r" -eq 0 ] && check "rank 0 (the store) accepted every rank's join ($4 >= $N)" test "$4" -ge "$N"
done
finish
