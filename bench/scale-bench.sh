#!/usr/bin/env bash
# bench/scale-bench.sh - set-up cost per rank as the rank count grows (issue 12).
#
#   bench/scale-bench.sh [-u NOFILE|SOFT:HARD] [-H HOSTS] [-t SEC] [-c SEC] [N...]
#
# For each N (default 64 128 256 512 1024): N real ranks, one process each,
# over min(N, 128) simulated hosts (-H: that many), block distribution, env
# launch on loopback (tests/lib/scale.sh: small buffers, ulimit per rank), run
#   all_reduce_test -b 8K -e 1M -f 2 -n 2 -w 1 --hold-after 4+N/100
# and, once every rank has finished the sweep, read /proc of every rank.
# Per N one markdown row: status, init time (coll_comm_init_rank, printed by
# each rank: max and median), sockets and all fds per rank after the sweep
# (max / median), VmRSS (median / max) and VmHWM (max) in MiB, time from the
# launch until every rank finished the sweep, and until every rank exited (the
# latter includes the hold). A second table bounds authentication's share of
# init: each rank logs (COLL_DEBUG=INFO, subsystem INIT) its init time and the
# wall time of the handshakes it made during init, from the first byte sent to
# the peer's proof checked, both sides (core/auth.c); per N: init ms, handshakes,
# handshake wall ms (both sides; of it the connector side, where the rank
# waits, and of that its tree and data handshakes, whose round trip
# authentication added: the store's hello had an answer before) and HMAC CPU
# ms (max / median over ranks), and each as a share of init in % (per rank,
# max / median). The store's acceptor serves its clients
# concurrently, so rank 0's summed wall can exceed its init. The
# hello would exist without authentication, so the whole handshake bounds what
# it adds. A failed N gives the exit codes, the first
# failure and when it came, and a distinct error line (fds are then sampled at
# the moment the first rank stopped, from the ranks still alive).
#   -u  open-file limit of every rank, soft and hard (default 1024) or SOFT:HARD
#   -t  give up on one N after SEC (default 300); -c COLL_CONNECT_TIMEOUT (120)
# Prints the table and the command on stdout; logs under $SCALE_BENCH_DIR
# (default a temporary directory, removed at the end unless -k).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CB_O=${CB_O:-$ROOT} CB_ROOT=${CB_ROOT:-$ROOT}
export COLL_SOCKET_IFNAME="${COLL_SOCKET_IFNAME-=lo}"
. "$ROOT/tests/lib/common.sh"
. "$ROOT/tests/lib/scale.sh"
NOFILE=1024 HOSTS= TO=300 CT=120 KEEP=0
cmdline="bench/scale-bench.sh $*"
while getopts "u:H:t:c:kh" o; do
    case $o in
        u) NOFILE=$OPTARG ;; H) HOSTS=$OPTARG ;; t) TO=$OPTARG ;; c) CT=$OPTARG ;; k) KEEP=1 ;;
        *) sed -n '2,23p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
NS=${*:-64 128 256 512 1024}
export COLL_DEBUG=${COLL_DEBUG:-INFO} COLL_DEBUG_SUBSYS=${COLL_DEBUG_SUBSYS:-INIT} # the auth line (auth_rows)
export SCALE_NOFILE=$NOFILE SCALE_CONNECT_TIMEOUT=$CT SCALE_GRACE=${SCALE_GRACE:-20}
dir=${SCALE_BENCH_DIR:-$(mktemp -d /tmp/scale-bench.XXXXXX)}
trap 'scale_cleanup; [ $KEEP = 1 ] || [ -n "${SCALE_BENCH_DIR:-}" ] || rm -rf "$dir"' EXIT

mib() { awk '{printf "%.1f", $1 / 1024}'; }
stat2() {   # stat2 FILE COL [FORMAT]: "max / median"
    awk -v c="$2" '$c ~ /^[0-9.]+$/ {print $c}' "$1" | sort -g |
        awk -v f="${3:-%d / %d}" '{v[NR]=$1} END {if (!NR) {print "-"; exit}
            printf f, v[NR], v[int((NR+1)/2)]}'
}

echo "# command: $cmdline"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git -C "$ROOT" log -1 --format='%h %s' | cut -c1-70), $(nproc) cores," \
     "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), ulimit -n $NOFILE per rank," \
     "COLL_CONNECT_TIMEOUT=$CT; scale.sh buffers: COLL_BUFFSIZE=${COLL_BUFFSIZE:-256K}" \
     "COLL_SHM_SLOT=${COLL_SHM_SLOT:-16K} COLL_SOCK_BUF=${COLL_SOCK_BUF:-128K}"
# auth_rows DIR: per rank "init_ms handshakes wall_ms connector_ms hmac_ms
# tree_data_ms", then the shares wall, connector, hmac and tree_data / init in %,
# from its INFO line (tree_data: the connector's tree and data handshakes)
auth_rows() {
    sed -n 's/.* init \([0-9.]*\) ms; auth handshakes \([0-9]*\) .*, wall \([0-9.]*\) ms (connector \([0-9.]*\), .*, hmac cpu \([0-9.]*\) ms.*, tree \([0-9.]*\) ms .*, data \([0-9.]*\) ms .*/\1 \2 \3 \4 \5 \6 \7/p' \
        "$1"/rank*.log |
        awk '$1 > 0 {t = $6 + $7; printf "%s %s %s %s %s %.3f %.4f %.4f %.4f %.4f\n", $1, $2, $3, $4, $5, t,
                     100 * $3 / $1, 100 * $4 / $1, 100 * $5 / $1, 100 * t / $1}'
}
auth_table=()
echo
echo "| N | hosts | status | init s max / med | sockets max / med | fds max / med | VmRSS MiB med / max | VmHWM MiB max | sweep done s | wall s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
notes=()
for n in $NS; do
    h=${HOSTS:-$(( n < 128 ? n : 128 ))}
    d=$dir/n$n
    SCALE_FIRST_FAIL=
    scale_launch "$d" "$n" "$h" "$BIN/all_reduce_test" -b 8K -e 1M -f 2 -n 2 -w 1 --hold-after $((4 + n / 100))
    swept=-
    if scale_wait_log 'sweep done, holding' "$TO"; then
        swept=$(awk -v t=$(( $(now_ms) - SCALE_T0 )) 'BEGIN {printf "%.1f", t / 1000}')
    fi
    scale_sample "$d/fds"
    grep -h 'sweep done, holding' "$d"/rank*.log | awk '{sub(/,/, "", $7); print 0, 0, $7}' >"$d/init"
    scale_wait "$TO"
    wall=$(awk -v t="$SCALE_WALL_MS" 'BEGIN {printf "%.1f", t / 1000}')
    rows=$(scale_rows)
    if [ "$SCALE_FAILED" -eq 0 ] && [ "$rows" = "rows 8 success 8" ]; then
        status=ok
    else
        status="FAILED: exit $(scale_rc_summary), $rows"
        msg=$(for ((r = 0; r < n; r++)); do [ "${SCALE_RC[r]}" -ne 0 ] && head -n 1 "$d/rank$r.log"; done |
              awk '{k = $0; gsub(/[0-9]+/, "#", k); c[k]++; if (!(k in f)) {f[k] = $0; o[++m] = k}}
                   END {for (i = 1; i <= m && i <= 3; i++) printf "%s(%d ranks) %s", (i > 1 ? "; " : ""), c[o[i]], f[o[i]]}')
        notes+=("N=$n: first failure ${SCALE_FIRST_FAIL:-none (timeout)}; $msg")
    fi
    rss_med=$(awk '$5 ~ /^[0-9]+$/ {print $5}' "$d/fds" | sort -n | awk '{v[NR]=$1} END {if (NR) printf "%.1f", v[int((NR+1)/2)]/1024; else printf "-"}')
    rss_max=$(awk '$5 ~ /^[0-9]+$/ {print $5}' "$d/fds" | sort -n | tail -1 | mib)
    hwm_max=$(awk '$6 ~ /^[0-9]+$/ {print $6}' "$d/fds" | sort -n | tail -1 | mib)
    auth_rows "$d" >"$d/auth"
    auth_table+=("| $n | $h | $(wc -l <"$d/auth") | $(stat2 "$d/auth" 1 "%.1f / %.1f") | $(stat2 "$d/auth" 2) | $(stat2 "$d/auth" 3 "%.2f / %.2f") | $(stat2 "$d/auth" 4 "%.2f / %.2f") | $(stat2 "$d/auth" 6 "%.2f / %.2f") | $(stat2 "$d/auth" 5 "%.3f / %.3f") | $(stat2 "$d/auth" 7 "%.2f%% / %.2f%%") | $(stat2 "$d/auth" 8 "%.2f%% / %.2f%%") | $(stat2 "$d/auth" 10 "%.2f%% / %.2f%%") | $(stat2 "$d/auth" 9 "%.3f%% / %.3f%%") |")
    echo "| $n | $h | $status | $(stat2 "$d/init" 3 "%.2f / %.2f") | $(stat2 "$d/fds" 4) | $(stat2 "$d/fds" 3) | $rss_med / ${rss_max:--} | ${hwm_max:--} | $swept | $wall |"
    scale_cleanup
done
echo
echo "| N | hosts | ranks logged | init ms max / med | handshakes max / med | handshake wall ms max / med | connector side ms max / med | connector tree + data ms max / med | HMAC CPU ms max / med | wall / init max / med | connector / init max / med | tree + data / init max / med | HMAC CPU / init max / med |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for x in "${auth_table[@]}"; do echo "$x"; done
for x in "${notes[@]}"; do echo; echo "- $x"; done
no_shm_leftovers >/dev/null || echo "- warning: $(no_shm_leftovers)"
