#!/usr/bin/env bash
# timeout: 120
# HCCL_* settings as an HCCL user exports them: each one taken where its COLL_
# knob is unset, in HCCL's units and syntax (--print-config shows the value and
# its source, COLL_DEBUG=INFO says it once), COLL_* winning over HCCL_*,
# unknown HCCL_* names warned once; and every bad COLL_* / HCCL_* value refused
# with exit 2 and one line before any rank starts (nothing forked, no /dev/shm).
set -u
B=${CB_O:?}/bin
fail=0
tok=cb-hccl-env-$$
unset COLL_SOCKET_IFNAME   # tests/run.sh sets it; HCCL_SOCKET_IFNAME must be able to take its place
for v in $(env | sed -n 's/^\(HCCL_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
AR="$B/all_reduce_test"
LO=(COLL_SOCKET_IFNAME==lo)
bad() { echo "FAIL: $*"; fail=1; }
has() { case "$1" in *"$2"*) ;; *) bad "$3: '$2' not in: $1" ;; esac; }

# --- --print-config: the value taken and where from ------------------------
pc() { env "$@" "$AR" --print-config 2>&1; }
row() { printf '%s\n' "$1" | grep "^$2 " || true; }
out=$(pc HCCL_BUFFSIZE=2048)
has "$(row "$out" COLL_BUFFSIZE)" "2048M" "HCCL_BUFFSIZE=2048"
has "$(row "$out" COLL_BUFFSIZE)" "[from HCCL_BUFFSIZE='2048']" "HCCL_BUFFSIZE source"
has "$(row "$out" HCCL_BUFFSIZE)" "[used as COLL_BUFFSIZE='2048M']" "HCCL_BUFFSIZE row"
err=$(COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=ENV HCCL_BUFFSIZE=2048 "$AR" -p 1 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null)
has "$err" "HCCL_BUFFSIZE=2048 MB = 2147483648 bytes" "HCCL_BUFFSIZE is 2 GiB"

out=$(pc HCCL_ALGO='level0:NA;level1:H-D_R')
has "$(row "$out" COLL_ALGO)" "allreduce=hd;" "HCCL_ALGO H-D_R"
has "$(row "$out" COLL_ALGO)" "reduce_scatterv=halving" "HCCL_ALGO H-D_R"
has "$(row "$out" COLL_ALGO)" "[from HCCL_ALGO='level0:NA;level1:H-D_R']" "HCCL_ALGO source"
out=$(pc HCCL_ALGO='allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:NB/alltoall=level0:NA;level1:pairwise')
has "$(row "$out" COLL_ALGO)" "allreduce=ring;allgather=bruck;allgatherv=bruck;alltoall=pairwise;alltoallv=pairwise " \
    "HCCL_ALGO per operator"
out=$(pc HCCL_ALGO='level0:NA;level1:pipeline')
has "$(row "$out" COLL_ALGO)" "allreduce=hier" "HCCL_ALGO pipeline"
out=$(pc HCCL_ALGO='level0:NA;level1:NA')
has "$(row "$out" HCCL_ALGO)" "[COLL_ALGO stays automatic]" "HCCL_ALGO NA"
for kv in HCCL_CONNECT_TIMEOUT=30:COLL_CONNECT_TIMEOUT:30 HCCL_EXEC_TIMEOUT=0:COLL_EXEC_TIMEOUT:0 \
          HCCL_SOCKET_IFNAME==lo:COLL_SOCKET_IFNAME:=lo HCCL_IF_IP=127.0.0.1:COLL_IF_IP:127.0.0.1 \
          HCCL_SOCKET_FAMILY=AF_INET:COLL_SOCKET_FAMILY:AF_INET HCCL_IF_BASE_PORT=61000:COLL_IF_BASE_PORT:61000; do
    set -- ${kv//:/ }
    out=$(pc "$1")
    r=$(row "$out" "$2")
    [ "$(echo "$r" | awk '{print $2}')" = "$3" ] || bad "$1: $2 row: $r"
    has "$r" "[from ${1%%=*}='${1#*=}']" "$1 source"
done
# COLL_* wins over HCCL_*
out=$(pc COLL_BUFFSIZE=16M HCCL_BUFFSIZE=2048 COLL_ALGO=ring HCCL_ALGO='level0:NA;level1:H-D_R')
[ "$(row "$out" COLL_BUFFSIZE | awk '{print $2}')" = 16M ] || bad "COLL_BUFFSIZE does not win: $(row "$out" COLL_BUFFSIZE)"
[ "$(row "$out" COLL_ALGO | awk '{print $2}')" = ring ] || bad "COLL_ALGO does not win: $(row "$out" COLL_ALGO)"
has "$(row "$out" HCCL_BUFFSIZE)" "[not used: COLL_BUFFSIZE is set]" "COLL_BUFFSIZE wins"
# HCCL_DETERMINISTIC: true/false become COLL_DETERMINISTIC 1/0
out=$(pc HCCL_DETERMINISTIC=true)
has "$(row "$out" HCCL_DETERMINISTIC)" "[used as COLL_DETERMINISTIC='1']" "HCCL_DETERMINISTIC row"
has "$(row "$out" COLL_DETERMINISTIC)" "[from HCCL_DETERMINISTIC='true']" "HCCL_DETERMINISTIC source"
out=$(pc HCCL_DETERMINISTIC=false)
[ "$(row "$out" COLL_DETERMINISTIC | awk '{print $2}')" = 0 ] || bad "HCCL_DETERMINISTIC=false: $(row "$out" COLL_DETERMINISTIC)"
out=$(pc COLL_DETERMINISTIC=0 HCCL_DETERMINISTIC=true)
has "$(row "$out" HCCL_DETERMINISTIC)" "[not used: COLL_DETERMINISTIC is set]" "COLL_DETERMINISTIC wins"

# --- a run: INFO says it once (not once per rank), warnings once -------------
err=$(env "${LO[@]}" COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=ENV,TUNING HCCL_BUFFSIZE=16 HCCL_EXEC_TIMEOUT=60 COLL_EXEC_TIMEOUT=30 \
      HCCL_ALGO='allreduce=level0:NA;level1:ring/broadcast=level0:NA;level1:pairwise' HCCL_FOO=1 \
      HCCL_ALGO_X=2 "$AR" -p 4 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] || bad "HCCL run exit $rc: $err"
n() { printf '%s\n' "$err" | grep -cF -- "$1"; }
[ "$(n "COLL_BUFFSIZE='16M' (from HCCL_BUFFSIZE='16')")" = 1 ] || bad "INFO for HCCL_BUFFSIZE not once: $err"
[ "$(n "COLL_ALGO='allreduce=ring' (from HCCL_ALGO=")" = 1 ] || bad "INFO for HCCL_ALGO not once: $err"
[ "$(n "HCCL_EXEC_TIMEOUT='60' not used: COLL_EXEC_TIMEOUT='30' is set and wins")" = 1 ] || bad "COLL_ wins not said: $err"
[ "$(n "HCCL_FOO is not an HCCL setting collbench knows")" = 1 ] || bad "HCCL_FOO not warned once: $err"
[ "$(n "HCCL_ALGO_X is not an HCCL setting collbench knows")" = 1 ] || bad "HCCL_ALGO_X not warned once: $err"
[ "$(n "HCCL_ALGO level1:pairwise for broadcast: collbench has no pairwise there, using the automatic choice")" = 1 ] ||
    bad "pairwise for broadcast not warned once: $err"
[ "$(n "not honoured")" = 0 ] || bad "a setting said not to be honoured: $err"
[ "$(n "allreduce 1024 bytes on 4 ranks: algorithm ring (forced)")" = 4 ] || bad "HCCL_ALGO ring not used by every rank: $err"
err=$(env "${LO[@]}" COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=ENV,TUNING HCCL_DETERMINISTIC=true "$AR" -p 4 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] || bad "HCCL_DETERMINISTIC run exit $rc: $err"
[ "$(n "COLL_DETERMINISTIC='1' (from HCCL_DETERMINISTIC='true')")" = 1 ] || bad "INFO for HCCL_DETERMINISTIC not once: $err"
[ "$(n "not honoured")" = 0 ] || bad "HCCL_DETERMINISTIC said not to be honoured: $err"
err=$(env "${LO[@]}" HCCL_ALGO='level0:NA;level1:NHR' "$AR" -p 2 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null)
has "$err" "HCCL_ALGO level1:NHR for every operator: collbench has no NHR there, using the nearest: allreduce=hd" "NHR"
# effects at run time: staging size, interface, address, port range
err=$(env "${LO[@]}" COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=SHM HCCL_BUFFSIZE=16 "$AR" -p 2 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null)
has "$err" "16384 KiB stage per rank" "HCCL_BUFFSIZE=16 staging"
err=$(COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=BOOTSTRAP COLL_SHM_DISABLE=1 HCCL_SOCKET_IFNAME='=lo' "$AR" -p 2 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null)
has "$err" "using interface lo address 127.0.0.1 (COLL_SOCKET_IFNAME='=lo')" "HCCL_SOCKET_IFNAME"
err=$(COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=BOOTSTRAP COLL_SHM_DISABLE=1 HCCL_IF_IP=127.0.0.1 "$AR" -p 2 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null)
has "$err" "using address 127.0.0.1 of interface lo (COLL_IF_IP)" "HCCL_IF_IP"
base=$((40000 + $$ % 20000))
err=$(env "${LO[@]}" COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=TCP COLL_SHM_DISABLE=1 HCCL_IF_BASE_PORT=$base HCCL_SOCKET_FAMILY=AF_INET \
      "$AR" -p 2 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null); rc=$?
ports=$(printf '%s\n' "$err" | sed -n 's/.*data listener on 127\.0\.0\.1:\([0-9]*\).*/\1/p')
[ $rc -eq 0 ] && [ -n "$ports" ] || bad "HCCL_IF_BASE_PORT run: exit $rc: $err"
for p in $ports; do [ "$p" -ge $base ] && [ "$p" -lt $((base + 1000)) ] || bad "port $p outside HCCL_IF_BASE_PORT=$base..+999"; done

# --- bad values: exit 2, one line, before any rank ---------------------------
check() {   # check NEEDLE VAR=VALUE [BIN ARGS...]
    local needle=$1 kv=$2; shift 2
    local cmd=("$@"); [ ${#cmd[@]} -eq 0 ] && cmd=("$AR" -p 2 -b 1K -e 1K -n 1 -w 0)
    local ef="/tmp/$tok.err" pid rc
    env "${LO[@]}" "$kv" "${cmd[@]}" --csv "/tmp/$tok.csv" >/dev/null 2>"$ef" & pid=$!
    wait $pid; rc=$?
    local e; e=$(cat "$ef"); rm -f "$ef"
    [ $rc -eq 2 ] || { bad "$kv: exit $rc (want 2): $e"; return; }
    [ "$(printf '%s\n' "$e" | wc -l)" -eq 1 ] || bad "$kv: not one line: $e"
    has "$e" "$needle" "$kv"
    [ -e "/tmp/$tok.csv" ] && { bad "$kv wrote output"; rm -f "/tmp/$tok.csv"; }
    ls /dev/shm 2>/dev/null | grep -q -- "-$pid-" && bad "$kv left /dev/shm: $(ls /dev/shm | grep -- "-$pid-")"
    pgrep -P $pid >/dev/null && bad "$kv left children of $pid"
}
check "invalid COLL_ALGO='bogus': unknown algorithm 'bogus' in COLL_ALGO; allowed: direct cma ring hd" COLL_ALGO=bogus
check "invalid COLL_ALGO='allreduce=bruck': unknown algorithm 'bruck' for allreduce in COLL_ALGO; allowed: direct cma ring hd tree hier ordered, hybrid = hier" \
    COLL_ALGO=allreduce=bruck
check "invalid HCCL_ALGO='level0:NA;level1:bogus': unknown algorithm 'bogus'; allowed: ring H-D_R NHR NHR_V1 NB AHC pipeline pairwise NA" \
    'HCCL_ALGO=level0:NA;level1:bogus'
check "invalid HCCL_ALGO='allscatter=level1:ring': unknown operator 'allscatter'; allowed: allreduce allgather reducescatter" \
    HCCL_ALGO=allscatter=level1:ring
check "invalid HCCL_ALGO='level7:ring': unknown level 'level7'; allowed: level0 level1 level2" HCCL_ALGO=level7:ring
check "invalid HCCL_BUFFSIZE='2G': expected a whole number of MB" HCCL_BUFFSIZE=2G
check "invalid HCCL_BUFFSIZE='0': expected a whole number of MB" HCCL_BUFFSIZE=0
check "invalid HCCL_CONNECT_TIMEOUT='-1': expected a number of seconds >= 0" HCCL_CONNECT_TIMEOUT=-1
check "invalid HCCL_EXEC_TIMEOUT='soon': expected a number of seconds >= 0 (0 = never)" HCCL_EXEC_TIMEOUT=soon
check "invalid HCCL_IF_IP='myhost': expected an IPv4 or IPv6 address" HCCL_IF_IP=myhost
check "invalid HCCL_SOCKET_FAMILY='AF_UNIX': expected AF_INET or AF_INET6" HCCL_SOCKET_FAMILY=AF_UNIX
check "invalid HCCL_IF_BASE_PORT='70000': expected a port, 0..65535" HCCL_IF_BASE_PORT=70000
check "invalid HCCL_IF_BASE_PORT='x': expected an integer" HCCL_IF_BASE_PORT=x
check "invalid HCCL_DETERMINISTIC='maybe': expected true or false" HCCL_DETERMINISTIC=maybe
check "invalid COLL_DEBUG='LOUD': expected NONE, ERROR, WARN, INFO, DEBUG or TRACE" COLL_DEBUG=LOUD
check "invalid COLL_DEBUG_SUBSYS='INIT,FOO': unknown subsystem 'FOO'; allowed: ALL INIT" COLL_DEBUG_SUBSYS=INIT,FOO
check "invalid COLL_SOCKET_FAMILY='AF_UNIX': expected AF_INET or AF_INET6" COLL_SOCKET_FAMILY=AF_UNIX
check "invalid COLL_IF_BASE_PORT='-5': expected a port, 0..65535" COLL_IF_BASE_PORT=-5
check "invalid COLL_EXEC_TIMEOUT='x': expected a non-negative number" COLL_EXEC_TIMEOUT=x
check "invalid COLL_ALLTOALL_WINDOW='0': expected 1..16 steps in flight" COLL_ALLTOALL_WINDOW=0
check "invalid COLL_ALLTOALL_WINDOW='17': expected 1..16 steps in flight" COLL_ALLTOALL_WINDOW=17
check "invalid COLL_BUF_HUGE='yes': expected auto, 0 or 1" COLL_BUF_HUGE=yes
check "invalid COLL_TEST_HUGE='2': expected" COLL_TEST_HUGE=2
# a bad HCCL_* value is refused even where a COLL_* knob overrides it
check "invalid HCCL_BUFFSIZE='8M'" HCCL_BUFFSIZE=8M env COLL_BUFFSIZE=8M "$AR" -p 2
for t in broadcast alltoall; do check "invalid COLL_ALGO='bogus'" COLL_ALGO=bogus "$B/${t}_test" -p 2; done
# bin/collbench checks the whole configuration before any subcommand
err=$(COLL_ALGO=bogus "$B/collbench" topo -p 2 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || bad "collbench topo with COLL_ALGO=bogus: exit $rc: $err"
has "$err" "collbench: invalid COLL_ALGO='bogus'" "collbench topo"
err=$(HCCL_ALGO=level1:xx "$B/collbench" bw -t d2d 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || bad "collbench bw with a bad HCCL_ALGO: exit $rc: $err"

sleep 0.2
pgrep -f "$tok" >/dev/null && bad "processes left: $(pgrep -af "$tok")"
[ $fail -eq 0 ] && echo "18-hccl-env: all passed"
exit $fail
