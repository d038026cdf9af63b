# tests/lib/scale.sh - many real ranks on one machine (sourced after common.sh).
#
# One process per rank, launched the torchrun way (RANK WORLD_SIZE LOCAL_RANK
# LOCAL_WORLD_SIZE MASTER_ADDR=127.0.0.1 MASTER_PORT) with COLL_HOST_ID naming
# a simulated host. Hosts get blocks of ranks: rank r runs on host
# floor(r * H / N), named "scale<h>" (N=512, H=128: ranks 0-3 on scale0, 4-7 on
# scale1, ...). The ranks are children of tests/lib/spawn_ranks.py, which sets
# `ulimit -n` for them all (SCALE_NOFILE: soft and hard, or SOFT:HARD; every
# rank exit 126 if it cannot); the pid recorded is the rank's own pid (for
# /proc/PID/fd).
#
#   scale_launch DIR N H TOOL ARGS...   start N ranks; logs DIR/rank<r>.log
#   scale_wait TIMEOUT                  wait for all; kills everything on timeout
#                                       and SCALE_GRACE s after a first failure;
#                                       sets SCALE_RC[r], SCALE_FAILED, SCALE_WALL_MS
#   scale_wait_log PATTERN TIMEOUT      wait until every rank's log has PATTERN
#                                       (or one rank exited); status 0 if all have it
#   scale_sample FILE                   one line per rank: "rank pid fds sockets
#                                       vmrss_kb vmhwm_kb" from /proc (absent: -)
#   scale_stats FILE COL                "max M median D" of a column of FILE
#   scale_cleanup                       kill what is left, remove our /dev/shm
#                                       segments (prefix SCALE_SHM_PREFIX only)
#
# Small buffers so that hundreds of ranks fit in memory (SCALE_ENV, can be
# overridden per variable by the caller's environment):
#   COLL_BUFFSIZE=256K   shm staging per rank (default 8M)
#   COLL_SHM_SLOT=16K    shm FIFO slot (default 128K; 4 slots per directed pair)
#   COLL_SOCK_BUF=128K   SO_SNDBUF/SO_RCVBUF of data sockets (default 4M)
#   COLL_SPIN=0 COLL_YIELD=0 COLL_TCP_SPIN_US=0   waiting ranks block at once:
#                        hundreds of ranks on 2 cores must not spin
#   COLL_CONNECT_TIMEOUT=SCALE_CONNECT_TIMEOUT (default 240 s)
# With these a rank holds 5-6 MiB RSS at 64-256 ranks over up to 128 hosts
# (measured: see bench/results/scale-before-20261203.md for today's figures).
# /dev/shm segments are named with COLL_SHM_PREFIX=SCALE_SHM_PREFIX so the
# clean-up removes ours only (other people's runs share the machine).
# Needs bash >= 4.3 (arrays, wait PID); python3 for the /proc sampling.

SCALE_NOFILE=${SCALE_NOFILE:-1024}
SCALE_GRACE=${SCALE_GRACE:-20}
SCALE_CONNECT_TIMEOUT=${SCALE_CONNECT_TIMEOUT:-240}
SCALE_SHM_PREFIX=${SCALE_SHM_PREFIX:-scale$$-}
SCALE_PIDS=()
SCALE_RC=()
SCALE_FAILED=0
SCALE_WALL_MS=0
SCALE_N=0
SCALE_NREAPED=0
SCALE_SPAWNER=
SCALE_DIR=

scale_common() {   # the environment every rank shares, as K=V words
    echo "MASTER_ADDR=127.0.0.1 MASTER_PORT=$SCALE_PORT COLL_SHM_PREFIX=$SCALE_SHM_PREFIX" \
         "COLL_BUFFSIZE=${COLL_BUFFSIZE:-256K} COLL_SHM_SLOT=${COLL_SHM_SLOT:-16K}" \
         "COLL_SOCK_BUF=${COLL_SOCK_BUF:-128K} COLL_SPIN=${COLL_SPIN:-0} COLL_YIELD=${COLL_YIELD:-0}" \
         "COLL_TCP_SPIN_US=${COLL_TCP_SPIN_US:-0} COLL_CONNECT_TIMEOUT=$SCALE_CONNECT_TIMEOUT"
}

# The ranks are started and reaped by tests/lib/spawn_ranks.py (posix_spawn:
# a bash subshell per rank cost ~14 ms of fork a rank on this VM, 18 s for
# 512), which writes DIR/pids and a line "RANK RC" to DIR/rcs as each exits.
# Everything below reads those files with bash builtins only: a poll that
# forked a grep per rank cost more CPU than the ranks it watched at N=512.
scale_launch() {   # scale_launch DIR N H TOOL ARGS...
    SCALE_DIR=$1 SCALE_N=$2
    local h=$3 tool=$4
    shift 4
    mkdir -p "$SCALE_DIR"
    rm -f "$SCALE_DIR/pids" "$SCALE_DIR/rcs"
    SCALE_PORT=$(free_port)
    SCALE_PIDS=() SCALE_RC=() SCALE_FAILED=0 SCALE_NREAPED=0 SCALE_FIRST_FAIL_MS=
    SCALE_T0=$(now_ms)
    /usr/bin/python3 "$CB_ROOT/tests/lib/spawn_ranks.py" "$SCALE_DIR" "$SCALE_N" "$h" "$SCALE_NOFILE" \
        "$(scale_common)" -- "$tool" "$@" </dev/null &
    SCALE_SPAWNER=$!
    while [ ! -f "$SCALE_DIR/pids" ] && [ -d "/proc/$SCALE_SPAWNER" ]; do sleep 0.05; done
    if [ -f "$SCALE_DIR/pids" ]; then
        mapfile -t SCALE_PIDS <"$SCALE_DIR/pids"
    else   # the spawner failed before starting anyone (e.g. the fd limit): every rank fails
        wait "$SCALE_SPAWNER"; local rc=$? r
        for ((r = 0; r < SCALE_N; r++)); do SCALE_PIDS[r]=0; SCALE_RC[r]=$rc; done
        SCALE_NREAPED=$SCALE_N
    fi
    SCALE_LAUNCH_MS=$(( $(now_ms) - SCALE_T0 ))
}

# _scale_reaped: reads the new lines of DIR/rcs into SCALE_RC (builtins only)
_scale_reaped() {
    [ -f "$SCALE_DIR/rcs" ] || return 0
    local lines i r rc
    mapfile -t -s "$SCALE_NREAPED" lines <"$SCALE_DIR/rcs"
    for ((i = 0; i < ${#lines[@]}; i++)); do
        [[ "${lines[i]}" =~ ^([0-9]+)\ ([0-9]+)$ ]] || continue   # a line still being written
        r=${BASH_REMATCH[1]} rc=${BASH_REMATCH[2]}
        SCALE_RC[r]=$rc SCALE_NREAPED=$((SCALE_NREAPED + 1))
        if [ "$rc" -ne 0 ] && [ -z "${SCALE_FIRST_FAIL_MS:-}" ]; then
            SCALE_FIRST_FAIL="rank $r exit $rc after $(( $(now_ms) - SCALE_T0 )) ms"
            SCALE_FIRST_FAIL_MS=$(now_ms)
        fi
    done
}

# _scale_alive PID: a running (not zombie) process, without a fork
_scale_alive() {
    local st
    [ "${1:-0}" -gt 1 ] 2>/dev/null && [ -r "/proc/$1/stat" ] || return 1
    read -r st <"/proc/$1/stat" 2>/dev/null || return 1
    [[ "${st##*) }" != Z* ]]
}

scale_wait() {   # scale_wait TIMEOUT_S
    local end=$(( $(now_ms) + $1 * 1000 )) r
    while :; do
        _scale_reaped
        [ "$SCALE_NREAPED" -ge "$SCALE_N" ] && break
        if [ "$(now_ms)" -ge $end ] ||
           { [ -n "$SCALE_FIRST_FAIL_MS" ] && [ "$(now_ms)" -ge $((SCALE_FIRST_FAIL_MS + SCALE_GRACE * 1000)) ]; }; then
            echo "scale_wait: $((SCALE_N - SCALE_NREAPED)) rank(s) still running after $(( $(now_ms) - SCALE_T0 )) ms: killing them" >&2
            local before=("${SCALE_RC[@]}")
            scale_cleanup
            _scale_reaped
            for ((r = 0; r < SCALE_N; r++)); do
                [ -n "${SCALE_RC[r]:-}" ] || SCALE_RC[r]=137
                [ -n "${before[r]:-}" ] || echo "killed" >>"$SCALE_DIR/rank$r.log"
            done
            break
        fi
        sleep 0.2
    done
    [ -n "${SCALE_SPAWNER:-}" ] && { wait "$SCALE_SPAWNER" 2>/dev/null; SCALE_SPAWNER=; }
    SCALE_WALL_MS=$(( $(now_ms) - SCALE_T0 ))
    SCALE_FAILED=0
    for ((r = 0; r < SCALE_N; r++)); do [ "${SCALE_RC[r]}" -ne 0 ] && SCALE_FAILED=$((SCALE_FAILED + 1)); done
    return $(( SCALE_FAILED > 0 ))
}

# Exit codes as "code:count" pairs, e.g. "0:510 3:1 143:1".
scale_rc_summary() { printf '%s\n' "${SCALE_RC[@]}" | sort -n | uniq -c | awk '{printf "%s%s:%s", (NR>1 ? " " : ""), $2, $1}'; echo; }

scale_wait_log() {   # scale_wait_log PATTERN TIMEOUT_S
    local pat=$1 end=$(( $(now_ms) + $2 * 1000 )) n r
    while [ "$(now_ms)" -lt $end ]; do
        n=$(grep -l -- "$pat" "$SCALE_DIR"/rank*.log 2>/dev/null | wc -l)
        [ "$n" -ge "$SCALE_N" ] && return 0
        _scale_reaped   # a rank gone without the pattern: no point waiting
        for ((r = 0; r < SCALE_N; r++)); do
            [ -n "${SCALE_RC[r]:-}" ] && ! grep -q -- "$pat" "$SCALE_DIR/rank$r.log" && return 1
        done
        sleep 0.2
    done
    return 1
}

scale_sample() {   # scale_sample FILE: rank pid fds sockets vmrss_kb vmhwm_kb
    /usr/bin/python3 - "$SCALE_DIR/pids" >"$1" <<'PY'
import os, sys
pids = open(sys.argv[1]).read().split()
for r, pid in enumerate(pids):
    fds = socks = 0
    rss = hwm = "-"
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            fds += 1
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:["):
                    socks += 1
            except OSError:
                pass
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"): rss = line.split()[1]
            elif line.startswith("VmHWM:"): hwm = line.split()[1]
    except OSError:
        print(r, pid, "-", "-", "-", "-"); continue
    print(r, pid, fds, socks, rss, hwm)
PY
}

scale_stats() {   # scale_stats FILE COL: "max M median D" over numeric values
    awk -v c="$2" '$c ~ /^[0-9]+$/ {print $c}' "$1" | sort -n |
        awk '{v[NR]=$1} END {if (!NR) {print "max - median -"; exit}
             printf "max %d median %d\n", v[NR], v[int((NR+1)/2)]}'
}

scale_cleanup() {   # kill what is left (TERM, then KILL), remove our segments
    local pid live=() i
    for pid in "${SCALE_PIDS[@]}"; do _scale_alive "$pid" && live+=("$pid"); done
    if [ ${#live[@]} -gt 0 ]; then
        kill -TERM "${live[@]}" 2>/dev/null
        for i in 1 2 3 4 5 6 7 8 9 10; do
            local still=()
            for pid in "${live[@]}"; do _scale_alive "$pid" && still+=("$pid"); done
            [ ${#still[@]} -eq 0 ] && break
            sleep 0.3
        done
        for pid in "${live[@]}"; do _scale_alive "$pid" && kill -KILL "$pid" 2>/dev/null; done
    fi
    # the spawner leaves once it has reaped them all
    if [ -n "${SCALE_SPAWNER:-}" ]; then
        for i in 1 2 3 4 5 6 7 8 9 10; do [ -d "/proc/$SCALE_SPAWNER" ] || break; _scale_alive "$SCALE_SPAWNER" || break; sleep 0.2; done
        wait "$SCALE_SPAWNER" 2>/dev/null
        SCALE_SPAWNER=
    fi
    rm -f /dev/shm/"$SCALE_SHM_PREFIX"* 2>/dev/null
    return 0
}

# Result rows of a tool's table (rank 0's log): "rows N success M".
scale_rows() {
    local f=$SCALE_DIR/rank0.log
    echo "rows $(grep -cE '^ *[0-9]+ +\|' "$f") success $(grep -E '^ *[0-9]+ +\|' "$f" | grep -c '| success')"
}
