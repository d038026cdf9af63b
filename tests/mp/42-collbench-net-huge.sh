#!/usr/bin/env bash
# timeout: 120
# M7 (issue 31): a `collbench net` client that knows the secret but asks the
# server for huge buffers (64 connections x 1 GiB both ways, a size past 1 GiB,
# 2^62 iterations, a duration of a year, 0 or 65 connections) is refused with
# one line and the server's memory stays bounded (its peak RSS well under the
# smallest of those requests; the same as a server that served nothing). The
# client is tests/lib/net_hostile.py: the real handshake (HMAC challenge-response
# of src/core/auth.h with the shared secret), then whatever parameters it is
# told, bypassing the real client's own checks. A stranger without the secret
# is refused at the handshake. A normal small test still runs.
. "$(dirname "$0")/../lib/common.sh"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
CB="$BIN/collbench"
export COLL_SECRET=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
H="$(dirname "$0")/../lib/net_hostile.py"
GIB=$((1 << 30))

# case NAME EXPECT(refused|stranger) nconn size iters duration bidir [key]
hostile() {
    local name=$1 want=$2; shift 2
    local port; port=$(free_port)
    /usr/bin/python3 "$H" "$CB" "$port" "$@" >"$T/$name" 2>&1
    local rc=$?
    echo "$name: $(tr '\n' ' ' <"$T/$name")"
    check "$name: client saw the expected answer ($want)" test $rc -eq 0 -a "$(sed -n 's/^answer //p' "$T/$name")" = "$want"
    check "$name: the server said why in one line" grep -Eq "^server: collbench net: .*(sent invalid parameters|did not prove it knows our secret)" "$T/$name"
    local kib; kib=$(sed -n 's/^server_maxrss_kib //p' "$T/$name")
    check "$name: server peak RSS ${kib:-?} KiB < 64 MiB" test "${kib:-999999999}" -lt 65536
}
hostile q64_1g_bidir refused 64 $GIB 1000 0 1
hostile q4_1g_bidir refused 4 $GIB 1000 0 1
hostile size_1t refused 1 $((1 << 40)) 1000 0 0
hostile iters_2e62 refused 1 65536 $((1 << 62)) 0 0
hostile year refused 1 65536 0 31536000 0
hostile q0 refused 0 65536 1000 0 0
hostile q65 refused 65 65536 1000 0 0
hostile stranger stranger 64 $GIB 1000 0 1 wrong-secret

# a normal test still runs under the same secret
port=$(free_port)
"$CB" net -p $port --timeout 20 >"$T/srv" 2>&1 &
srv=$!
timeout 60 "$CB" net 127.0.0.1 -p $port --retry 10 -s 64K -n 200 >"$T/cli" 2>&1
crc=$?
wait $srv; src=$?
check "a normal 64 KiB test: client exit $crc, server exit $src" test $crc -eq 0 -a $src -eq 0
check "no process left" no_procs "$CB net"
finish
