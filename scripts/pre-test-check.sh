#!/usr/bin/env bash
# scripts/pre-test-check.sh - check hosts before a multi-host collbench run.
#
#   scripts/pre-test-check.sh [options] HOST...
#
# For each host: passwordless ssh; the same collbench version and the same MPI
# implementation/version as this host; CPU count and load; free memory; free
# /dev/shm; open-file limit; net.core.somaxconn; the interface towards the
# other hosts up, and its speed. For every ordered pair of hosts: a port of the
# configured range reachable, checked with collbench's own TCP test
# (`collbench net`, a real transfer, not a ping; server on B, client on A, the
# line is B's: "port P  reachable from A" or FAIL "not reachable from A: why").
# One line per check and host:
#   OK | WARN | FAIL  host  check  detail
# then a summary. Exit 0 when nothing failed (warnings allowed), 1 on any
# FAIL, 2 on a bad command line.
#
# Options:
#   --bin DIR        collbench's bin directory on the hosts (default: this one's)
#   --ssh "CMD"      ssh command (default "ssh"; e.g. "ssh -F cluster.cfg")
#   --mpirun CMD     MPI launcher whose version must match (default mpirun)
#   --port P         port to test between hosts (repeatable; default: the first and
#                    last of COLL_IF_BASE_PORT..+COLL_PORT_RANGE-1, or 18515)
#   --min-mem-gb G   WARN below this MemAvailable (default 2)
#   --min-shm-gb G   WARN below this free /dev/shm (default 1)
#   --min-nofile N   WARN below this open-file limit (default 4096; FAIL below 1024)
#   --min-somaxconn N  WARN below (default 1024)
#   --timeout S      seconds for each remote command (default 20)
set -u
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$here/../bin" 2>/dev/null && pwd || echo "$here/../bin")
SSH=ssh MPIRUN=mpirun PORTS=() MIN_MEM=2 MIN_SHM=1 MIN_NOFILE=4096 MIN_SOMAX=1024 TO=20
HOSTS=()
usage() { awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "pre-test-check: $*" >&2; exit 2; }
isnum() { [[ "$1" =~ ^[0-9]+([.][0-9]+)?$ ]]; }
while [ $# -gt 0 ]; do
    case "$1" in
        --bin|--ssh|--mpirun|--port|--min-mem-gb|--min-shm-gb|--min-nofile|--min-somaxconn|--timeout)
            [ $# -ge 2 ] && [ -n "$2" ] || die "option $1 needs a value (see --help)" ;;
    esac
    case "$1" in
        --bin) BIN=$2; shift 2 ;;
        --ssh) SSH=$2; shift 2 ;;
        --mpirun) MPIRUN=$2; shift 2 ;;
        --port) [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] && [ "$2" -le 65535 ] || die "invalid --port '${2:-}': allowed 1..65535"; PORTS+=("$2"); shift 2 ;;
        --min-mem-gb) isnum "${2:-}" || die "invalid --min-mem-gb '${2:-}': a number"; MIN_MEM=$2; shift 2 ;;
        --min-shm-gb) isnum "${2:-}" || die "invalid --min-shm-gb '${2:-}': a number"; MIN_SHM=$2; shift 2 ;;
        --min-nofile) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "invalid --min-nofile '${2:-}': an integer"; MIN_NOFILE=$2; shift 2 ;;
        --min-somaxconn) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "invalid --min-somaxconn '${2:-}': an integer"; MIN_SOMAX=$2; shift 2 ;;
        --timeout) isnum "${2:-}" || die "invalid --timeout '${2:-}': seconds"; TO=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) die "unknown option '$1' (see --help)" ;;
        *) HOSTS+=("$1"); shift ;;
    esac
done
[ ${#HOSTS[@]} -ge 1 ] || die "no host given (usage: pre-test-check.sh [options] HOST...)"
if [ ${#PORTS[@]} -eq 0 ]; then
    base=${COLL_IF_BASE_PORT:-0} range=${COLL_PORT_RANGE:-1000}
    if [ "$base" -gt 0 ] 2>/dev/null; then PORTS=("$base" $((base + range - 1))); else PORTS=(18515); fi
fi

NOK=0 NWARN=0 NFAIL=0
report() { # report STATUS HOST CHECK DETAIL
    printf '%-5s %-16s %-18s %s\n' "$1" "$2" "$3" "$4"
    case $1 in OK) NOK=$((NOK + 1)) ;; WARN) NWARN=$((NWARN + 1)) ;; FAIL) NFAIL=$((NFAIL + 1)) ;; esac
}
rsh() { # rsh HOST CMD: run on HOST through ssh, bounded in time, never interactive
    local h=$1; shift
    timeout -k 2 "$TO" $SSH -o BatchMode=yes -o ConnectTimeout=5 "$h" "$@" </dev/null
}
rscript() { # rscript HOST SCRIPT ARGS...: run a bash script on HOST (fed on stdin)
    local h=$1 script=$2; shift 2
    timeout -k 2 "$TO" $SSH -o BatchMode=yes -o ConnectTimeout=5 "$h" bash -s -- "$@" <<<"$script"
}

# What each host reports about itself (key=value lines).
probe='
echo version=$("$1/all_reduce_test" --version 2>/dev/null | head -1)
echo mpi=$($2 --version 2>&1 | awk "
    !n && /OpenRTE|Open MPI/ { n = \"Open MPI \" \$NF }
    /HYDRA build details/ { hy = 1 }
    !n && hy && /Version:/ { n = \"MPICH (hydra) \" \$2 }
    !n && /Intel\\(R\\) MPI|MVAPICH/ { n = \$0 }
    END { print n }" | tr -s " ")
echo nproc=$(nproc)
echo load=$(cut -d" " -f1 /proc/loadavg)
echo memkb=$(awk "/MemAvailable/ {print \$2}" /proc/meminfo)
echo shmkb=$(df -Pk /dev/shm 2>/dev/null | awk "NR==2 {print \$4}")
echo nofile=$(ulimit -n)
echo somax=$(cat /proc/sys/net/core/somaxconn 2>/dev/null)
echo host=$(hostname)
'
# State from netlink (`ip link`), not /sys/class/net: sysfs shows the network
# namespace of whoever mounted it (a container's or a namespace's own
# interfaces are missing there); the speed only where sysfs's ifindex matches.
ifprobe='
addr=$(getent ahosts "$1" | awk "NR==1 {print \$1}")
[ -n "$addr" ] || exit 0
dev=$(ip -o route get "$addr" 2>/dev/null | sed -n "s/.* dev \([^ ]*\).*/\1/p")
[ -n "$dev" ] || exit 0
l=$(ip -o link show dev "$dev" 2>/dev/null)
state=$(echo "$l" | sed -n "s/.* state \([A-Za-z]*\).*/\1/p" | tr A-Z a-z)
speed=
[ -n "$l" ] && [ "$(cat /sys/class/net/$dev/ifindex 2>/dev/null)" = "${l%%:*}" ] && speed=$(cat /sys/class/net/$dev/speed 2>/dev/null)
echo "$dev ${state:-?} ${speed:-?}"
'
local_info=$(bash -s -- "$BIN" "$MPIRUN" <<<"$probe" 2>/dev/null)
get() { echo "$1" | sed -n "s/^$2=//p" | head -1; }
lver=$(get "$local_info" version); lmpi=$(get "$local_info" mpi)

declare -A INFO UP
printf '%-5s %-16s %-18s %s\n' "#" "host" "check" "detail"
for h in "${HOSTS[@]}"; do
    if out=$(rsh "$h" true 2>&1); then
        report OK "$h" ssh "passwordless ssh works"
        UP[$h]=1
    else
        report FAIL "$h" ssh "cannot ssh without a password: $(echo "$out" | tail -1)"
        continue
    fi
    info=$(rscript "$h" "$probe" "$BIN" "$MPIRUN" 2>/dev/null) || info=""
    INFO[$h]=$info
    v=$(get "$info" version); m=$(get "$info" mpi)
    if [ -z "$v" ]; then report FAIL "$h" version "no collbench at $BIN on $h"
    elif [ "$v" != "$lver" ]; then report FAIL "$h" version "'$v' differs from local '$lver'"
    else report OK "$h" version "$v"; fi
    if [ -z "$m" ]; then report FAIL "$h" mpi "$MPIRUN not found on $h"
    elif [ "$m" != "$lmpi" ]; then report FAIL "$h" mpi "'$m' differs from local '$lmpi'"
    else report OK "$h" mpi "$m"; fi
    np=$(get "$info" nproc); ld=$(get "$info" load)
    if awk -v l="$ld" -v n="$np" 'BEGIN{exit !(l > n)}'; then report WARN "$h" cpu "$np CPUs, load $ld (busy: timings will be noisy)"
    else report OK "$h" cpu "$np CPUs, load $ld"; fi
    mk=$(get "$info" memkb)
    if [ -z "$mk" ]; then report WARN "$h" memory "unknown"
    elif awk -v k="$mk" 'BEGIN{exit !(k < 524288)}'; then report FAIL "$h" memory "$((mk / 1024)) MiB available (< 512 MiB)"
    elif awk -v k="$mk" -v g="$MIN_MEM" 'BEGIN{exit !(k < g * 1048576)}'; then report WARN "$h" memory "$((mk / 1024)) MiB available (< $MIN_MEM GiB)"
    else report OK "$h" memory "$((mk / 1024)) MiB available"; fi
    sk=$(get "$info" shmkb)
    if [ -z "$sk" ]; then report FAIL "$h" dev-shm "/dev/shm missing"
    elif awk -v k="$sk" -v g="$MIN_SHM" 'BEGIN{exit !(k < g * 1048576)}'; then report WARN "$h" dev-shm "$((sk / 1024)) MiB free (< $MIN_SHM GiB; lower COLL_BUFFSIZE or enlarge /dev/shm)"
    else report OK "$h" dev-shm "$((sk / 1024)) MiB free"; fi
    nf=$(get "$info" nofile)
    if [ "$nf" = unlimited ]; then report OK "$h" open-files "unlimited"
    elif [ "${nf:-0}" -lt 1024 ]; then report FAIL "$h" open-files "ulimit -n $nf (< 1024)"
    elif [ "$nf" -lt "$MIN_NOFILE" ]; then report WARN "$h" open-files "ulimit -n $nf (< $MIN_NOFILE)"
    else report OK "$h" open-files "ulimit -n $nf"; fi
    sm=$(get "$info" somax)
    if [ "${sm:-0}" -lt "$MIN_SOMAX" ]; then report WARN "$h" somaxconn "net.core.somaxconn $sm (< $MIN_SOMAX: many ranks connecting at once may be refused)"
    else report OK "$h" somaxconn "net.core.somaxconn $sm"; fi
done

# Interface towards the next host (the one the data will use), and every pair's port.
n=${#HOSTS[@]}
for ((i = 0; i < n; i++)); do
    a=${HOSTS[$i]}; [ -n "${UP[$a]:-}" ] || continue
    # the next host that answered ssh (one that does not resolve is the ssh FAIL already)
    peer=$a
    for ((k = 1; k < n; k++)); do
        c=${HOSTS[$(((i + k) % n))]}
        [ -n "${UP[$c]:-}" ] && { peer=$c; break; }
    done
    ifinfo=$(rscript "$a" "$ifprobe" "$peer" 2>/dev/null)
    read -r dev state speed <<<"$ifinfo"
    if [ -z "$dev" ]; then report FAIL "$a" interface "no route to $peer (or $peer does not resolve on $a)"
    elif [ "$dev" = lo ]; then report OK "$a" interface "lo (towards $peer)"
    elif [ "$state" = "?" ]; then report WARN "$a" interface "$dev: state unknown (towards $peer)"
    elif [ "$state" != up ] && [ "$state" != unknown ]; then report FAIL "$a" interface "$dev is $state (towards $peer)"
    else
        case $speed in ''|'?'|-1) speed="speed ?" ;; *) speed="$speed Mb/s" ;; esac
        report OK "$a" interface "$dev $state, $speed (towards $peer)"
    fi
done
SRVLOG=$(mktemp)
trap 'rm -f "$SRVLOG"' EXIT
for port in "${PORTS[@]}"; do
    for ((i = 0; i < n; i++)); do
        for ((j = 0; j < n; j++)); do
            [ $i -eq $j ] && continue
            a=${HOSTS[$i]} b=${HOSTS[$j]}
            [ -n "${UP[$a]:-}" ] && [ -n "${UP[$b]:-}" ] || continue
            # server on b, client on a; a failure is b's: its port is not
            # reachable (blocked, taken, nothing listening) - reported under b.
            # Wait for the server to end (its --timeout) before the next pair
            # reuses the port on b.
            rsh "$b" "$BIN/collbench" net -p "$port" --timeout 10 >"$SRVLOG" 2>&1 &
            srv=$!
            res=$(rsh "$a" "$BIN/collbench" net "$b" -p "$port" -s 1M -n 20 --connect-timeout 5 --retry 5 2>&1)
            rc=$?
            wait $srv 2>/dev/null
            if [ $rc -eq 0 ]; then
                bw=$(echo "$res" | awk '$1 ~ /^[0-9]+$/ && NF >= 5 {print $4; exit}')
                report OK "$b" "port $port" "reachable from $a, ${bw:-?} GB/s"
            else
                why=$(echo "$res" | grep -v '^ *$' | tail -1)
                srv_why=$(grep -iE 'error|cannot|in use|denied|no client' "$SRVLOG" | tail -1)
                report FAIL "$b" "port $port" "not reachable from $a: $why${srv_why:+ (server on $b: $srv_why)}"
            fi
        done
    done
done
echo "summary: $NOK OK, $NWARN WARN, $NFAIL FAIL (${#HOSTS[@]} host(s))"
[ $NFAIL -eq 0 ]
