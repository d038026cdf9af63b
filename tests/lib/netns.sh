# tests/lib/netns.sh - simulated hosts for multi-host tests (sourced by bash).
#
#   . "$CB_ROOT/tests/lib/netns.sh"
#   netns_up 3 [--ipv6] [--second-if]   # hosts cbh1..cbh3, trap-based cleanup
#   netns_exec 2 CMD...                  # run CMD "on" cbh2 (COLL_HOST_ID=cbh2)
#   netns_sshd_up                        # sshd on port 22 of every host
#   netns_tbf 1 / netns_tbf off          # tc tbf 1 Gbit/s on every host's link, both ways
#   ssh -F "$NETNS_SSH_CONFIG" cbh2 hostname          # from the root namespace
#   netns_exec 1 ssh -F "$NETNS_SSH_CONFIG_IN" cbh2 … # from inside a host
#   netns_down                           # also runs on EXIT/INT/TERM/HUP
#
# Each host i is a process ("holder", `unshare --net --uts --mount sleep`) whose
# namespaces every command of that host enters with nsenter:
#   net   interface cbeth0 = 10.77.0.i/24 (+ fd77::i/64 with --ipv6), lo up;
#         with --second-if also cbib0 = 10.78.0.i/24 on a second bridge;
#   uts   hostname cbh<i>;
#   mount private: /etc/hosts lists cbh1..N (so cbhN resolves inside the hosts,
#         for ssh, Open MPI and MPICH's hydra) and /dev/shm is a tmpfs of its
#         own (hosts share no shared memory, like real machines).
# The hosts' cbeth0 (cbib0) are veth pairs whose other ends sit on bridge br0
# (br1) in a "switch" namespace of its own, which also has 10.77.0.254 (and
# fd77::fe, 10.78.0.254): `ssh cbhN` from the root namespace goes through a
# ProxyCommand that connects from the switch namespace. The root namespace's
# interfaces, routes and mounts are never touched; all addresses exist only
# inside these namespaces, so parallel runs do not collide.
#
# Cleanup: state lives in /run/collbench-netns/<pid of the test>/ (holder pids,
# namespace inodes, ssh keys and configs, logs). netns_down kills every process
# whose network namespace is one of ours (sshd, orted, ranks, holders...), which
# frees the namespaces, veths and bridges and the mounts inside them, then
# removes the state directory. A guardian process (own session) does the same
# if the test dies without running its trap (SIGKILL, timeout -k), and
# netns_up first reaps directories of earlier runs whose owner is gone.
#
# netns_up also unsets launch variables inherited from the suite (tests/run.sh
# exports COLL_SOCKET_IFNAME==lo for single-host tests; an outer srun/mpirun's
# SLURM_*/OMPI_*/PMI_*) and exports COLL_CONNECT_TIMEOUT=20, COLL_EXEC_TIMEOUT=30
# (NETNS_CONNECT_TIMEOUT / NETNS_EXEC_TIMEOUT) so failures end with a message.
#
# Variables after netns_up: NETNS_N, NETNS_DIR, NETNS_HOLDER[i], NETNS_SWITCH,
# NETNS_ADDR[i] (10.77.0.i), NETNS_ADDR6[i] (fd77::i), NETNS_ADDR2[i] (10.78.0.i).
# After netns_sshd_up: NETNS_SSH_CONFIG (root namespace), NETNS_SSH_CONFIG_IN
# (inside the hosts), NETNS_SSH_WRAPPER (an `ssh -F cfg` script for launchers).

NETNS_STATE_ROOT=${NETNS_STATE_ROOT:-/run/collbench-netns}
NETNS_LIB=${BASH_SOURCE[0]}
NETNS_LIB=$(cd "$(dirname "$NETNS_LIB")" && pwd)/$(basename "$NETNS_LIB")

_netns_log() { echo "netns: $*" >&2; }

_netns_starttime() {   # field 22 of /proc/PID/stat (start time in ticks), "" if gone
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    s=${s##*) }
    set -- $s
    echo "${20}"
}

_netns_owner_alive() {   # _netns_owner_alive DIR: is the run that owns DIR still running?
    local pid st
    read -r pid st <"$1/owner" 2>/dev/null || return 1
    [ -n "$pid" ] && [ "$(_netns_starttime "$pid")" = "$st" ]
}

# _netns_scan " net:[a] net:[b] ": pids of the processes in those net namespaces.
_netns_scan() {
    find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/net' -printf '%l %h\n' 2>/dev/null |
        while read -r ns dir; do
            case "$1" in *" $ns "*) dir=${dir#/proc/}; echo "${dir%/ns}" ;; esac
        done
}

# Kill every process whose net namespace is listed in DIR/nsids, the holders
# and the guardian (other than the caller), then remove DIR.
_netns_reap() {
    local dir=$1 round p st found ids=" "
    [ -d "$dir" ] || return 0
    [ -f "$dir/nsids" ] && ids=" $(tr '\n' ' ' <"$dir/nsids")"
    for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        found=0
        for p in $(_netns_scan "$ids"); do
            [ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] && continue
            found=1
            if [ $round -le 3 ]; then kill -TERM "$p" 2>/dev/null; else kill -KILL "$p" 2>/dev/null; fi
        done
        # Holders whose namespaces were not recorded yet (died during netns_up).
        if [ -f "$dir/holders" ]; then
            while read -r p st; do
                [ -n "$p" ] && [ "$(_netns_starttime "$p")" = "$st" ] && { kill -KILL "$p" 2>/dev/null; found=1; }
            done <"$dir/holders"
        fi
        [ $found = 0 ] && break
        sleep 0.2
    done
    if [ -f "$dir/guardian" ]; then
        read -r p st <"$dir/guardian"
        [ "$p" != "$$" ] && [ "$p" != "$BASHPID" ] && [ "$(_netns_starttime "$p")" = "$st" ] && kill -KILL "$p" 2>/dev/null
    fi
    rm -rf "$dir"
}

# Reap the state of earlier runs whose owner process is gone.
netns_stale_cleanup() {
    local d
    for d in "$NETNS_STATE_ROOT"/*/; do
        [ -d "$d" ] || continue
        d=${d%/}
        [ "$d" = "${NETNS_DIR:-}" ] && continue
        _netns_owner_alive "$d" && continue
        _netns_log "reaping stale $d"
        _netns_reap "$d"
    done
}

_netns_wait_unshared() {   # wait until PID has its own net/uts/mnt namespaces
    local pid=$1 i
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 1
        if [ "$(readlink /proc/$pid/ns/net)" != "$(readlink /proc/self/ns/net)" ] &&
           { [ "$2" != full ] || { [ "$(readlink /proc/$pid/ns/uts)" != "$(readlink /proc/self/ns/uts)" ] &&
             [ "$(readlink /proc/$pid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ]; }; }; then
            return 0
        fi
        sleep 0.05
    done
    return 1
}

_netns_holder() {   # _netns_holder full|net: starts a holder; sets REPLY to its pid
    if [ "$1" = full ]; then
        unshare --net --uts --mount --propagation private sleep infinity </dev/null >/dev/null 2>&1 &
    else
        unshare --net sleep infinity </dev/null >/dev/null 2>&1 &
    fi
    REPLY=$!
    disown "$REPLY"   # not a job of the test: a bare `wait` must not wait for it
    echo "$REPLY $(_netns_starttime "$REPLY")" >>"$NETNS_DIR/holders"
    _netns_wait_unshared "$REPLY" "$1" || { _netns_log "holder $REPLY did not start"; return 1; }
    readlink "/proc/$REPLY/ns/net" >>"$NETNS_DIR/nsids"
}

_netns_sw() { nsenter -t "$NETNS_SWITCH" -n -- "$@"; }

netns_up() {
    local n=$1 ipv6=0 second=0 i pid
    shift
    while [ $# -gt 0 ]; do
        case "$1" in
            --ipv6) ipv6=1 ;;
            --second-if) second=1 ;;
            *) _netns_log "netns_up: unknown option $1"; return 2 ;;
        esac
        shift
    done
    [ "$(id -u)" = 0 ] || { _netns_log "needs root"; return 1; }
    for c in unshare nsenter ip; do
        command -v $c >/dev/null || { _netns_log "missing $c"; return 1; }
    done
    mkdir -p "$NETNS_STATE_ROOT"
    netns_stale_cleanup
    NETNS_DIR=$NETNS_STATE_ROOT/$$
    rm -rf "$NETNS_DIR"
    mkdir -p "$NETNS_DIR"
    echo "$$ $(_netns_starttime $$)" >"$NETNS_DIR/owner"
    : >"$NETNS_DIR/holders"
    : >"$NETNS_DIR/nsids"
    NETNS_N=$n
    # tests/run.sh pins single-host tests to loopback (COLL_SOCKET_IFNAME==lo);
    # inside the simulated hosts that is wrong: start from a clean launch
    # environment (also drop an outer launcher's variables, e.g. a suite run
    # under srun or mpirun), and make a failed setup or a stuck collective end
    # with a message well before the per-rank timeout.
    unset COLL_SOCKET_IFNAME COLL_IF_IP COLL_SOCKET_FAMILY COLL_SECRET MASTER_ADDR MASTER_PORT \
        RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE TORCHELASTIC_RUN_ID
    local v
    for v in $(compgen -e | grep -E '^(SLURM_|OMPI_|PMI_|PMIX_|HYDRA_|I_MPI_)'); do unset "$v"; done
    export COLL_CONNECT_TIMEOUT=${NETNS_CONNECT_TIMEOUT:-20} COLL_EXEC_TIMEOUT=${NETNS_EXEC_TIMEOUT:-30}
    # the job's secret, random as docs/security.md asks of a launch across
    # hosts (a test of the open mode unsets it)
    COLL_SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'); export COLL_SECRET
    trap 'netns_down' EXIT
    trap 'netns_down; trap - EXIT; exit 130' INT
    trap 'netns_down; trap - EXIT; exit 143' TERM
    trap 'netns_down; trap - EXIT; exit 129' HUP
    # Guardian: cleans up if this shell dies without running its traps.
    setsid bash -c '. "$1"; while _netns_owner_alive "$2"; do sleep 1; done; _netns_reap "$2"' \
        netns-guard "$NETNS_LIB" "$NETNS_DIR" </dev/null >/dev/null 2>&1 &
    echo "$! $(_netns_starttime $!)" >"$NETNS_DIR/guardian"
    disown $!

    local hosts=$NETNS_DIR/hosts
    {
        echo "127.0.0.1 localhost"
        echo "::1 localhost ip6-localhost ip6-loopback"
        for i in $(seq 1 "$n"); do echo "10.77.0.$i cbh$i"; done
    } >"$hosts"

    _netns_holder net || return 1
    NETNS_SWITCH=$REPLY
    _netns_sw ip link set lo up
    _netns_sw ip link add br0 type bridge forward_delay 0 stp_state 0 mcast_snooping 0 || return 1
    _netns_sw ip addr add 10.77.0.254/24 dev br0
    [ $ipv6 = 1 ] && _netns_sw ip -6 addr add fd77::fe/64 dev br0 nodad
    _netns_sw ip link set br0 up
    if [ $second = 1 ]; then
        _netns_sw ip link add br1 type bridge forward_delay 0 stp_state 0 mcast_snooping 0 || return 1
        _netns_sw ip addr add 10.78.0.254/24 dev br1
        _netns_sw ip link set br1 up
    fi

    NETNS_HOLDER=() NETNS_ADDR=() NETNS_ADDR6=() NETNS_ADDR2=()
    for i in $(seq 1 "$n"); do
        _netns_holder full || return 1
        pid=$REPLY
        NETNS_HOLDER[$i]=$pid
        NETNS_ADDR[$i]=10.77.0.$i
        nsenter -t "$pid" -u hostname "cbh$i" || return 1
        nsenter -t "$pid" -m -- mount --bind "$hosts" /etc/hosts || return 1
        nsenter -t "$pid" -m -- mount -t tmpfs -o mode=1777,size=1G "cbh$i-shm" /dev/shm || return 1
        nsenter -t "$pid" -n ip link set lo up
        _netns_sw ip link add "h${i}e0" type veth peer name cbeth0 netns "$pid" || return 1
        _netns_sw ip link set "h${i}e0" master br0 up
        nsenter -t "$pid" -n ip addr add "10.77.0.$i/24" dev cbeth0
        if [ $ipv6 = 1 ]; then
            NETNS_ADDR6[$i]=fd77::$i
            nsenter -t "$pid" -n ip -6 addr add "fd77::$i/64" dev cbeth0 nodad
        fi
        nsenter -t "$pid" -n ip link set cbeth0 up
        if [ $second = 1 ]; then
            NETNS_ADDR2[$i]=10.78.0.$i
            _netns_sw ip link add "h${i}e1" type veth peer name cbib0 netns "$pid" || return 1
            _netns_sw ip link set "h${i}e1" master br1 up
            nsenter -t "$pid" -n ip addr add "10.78.0.$i/24" dev cbib0
            nsenter -t "$pid" -n ip link set cbib0 up
        fi
    done
    # Wait until every host reaches every other one (links up, bridge forwarding).
    local j ok
    for i in $(seq 1 "$n"); do
        for j in $(seq 1 "$n"); do
            ok=0
            for _ in $(seq 1 50); do
                netns_ping "$i" "10.77.0.$j" && { ok=1; break; }
                sleep 0.1
            done
            [ $ok = 1 ] || { _netns_log "cbh$i cannot reach 10.77.0.$j"; return 1; }
        done
    done
    return 0
}

# netns_ping I ADDR: one ICMP echo (v4 or v6) from host I, 1 s timeout (no
# ping(8) on this image: perl's core Net::Ping).
netns_ping() {
    local proto=icmp
    case "$2" in *:*) proto=icmpv6 ;; esac
    nsenter -t "${NETNS_HOLDER[$1]}" -n -- perl -MNet::Ping -e \
        'exit(Net::Ping->new($ARGV[0], 1)->ping($ARGV[1]) ? 0 : 1)' "$proto" "$2" 2>/dev/null
}

# netns_exec I CMD...: run CMD in host I's namespaces (cwd kept, COLL_HOST_ID=cbhI).
netns_exec() {
    local i=$1
    shift
    [ -n "${NETNS_HOLDER[$i]:-}" ] || { _netns_log "no host $i"; return 127; }
    nsenter -t "${NETNS_HOLDER[$i]}" -n -u -m --wd="$PWD" -- env COLL_HOST_ID="cbh$i" "$@"
}

# netns_sshd_up: sshd (port 22, key login for root only) in every host, plus
# client configs. Waits until `ssh cbhI true` works from the root namespace.
netns_sshd_up() {
    local d=$NETNS_DIR/ssh i
    mkdir -p "$d" /run/sshd
    ssh-keygen -q -t ed25519 -N '' -f "$d/host_key" -C collbench-host || return 1
    ssh-keygen -q -t ed25519 -N '' -f "$d/id_ed25519" -C collbench-test || return 1
    cp "$d/id_ed25519.pub" "$d/authorized_keys"
    cat >"$d/relay.pl" <<'EOF'
# relay.pl HOST PORT: stdin/stdout <-> TCP (ssh ProxyCommand without nc)
use strict; use IO::Socket::IP;
my $s = IO::Socket::IP->new(PeerHost => $ARGV[0], PeerPort => $ARGV[1], Timeout => 10)
    or die "relay: connect $ARGV[0]:$ARGV[1]: $@\n";
sub pump { my ($in, $out) = @_; my $b;
    while (1) { my $n = sysread($in, $b, 65536); last unless $n;
        my $o = 0; while ($o < $n) { my $w = syswrite($out, $b, $n - $o, $o); return unless defined $w; $o += $w } } }
my $pid = fork();
if ($pid == 0) { pump($s, \*STDOUT); exit 0 }
pump(\*STDIN, $s); shutdown($s, 1); waitpid($pid, 0);
EOF
    {
        echo "ListenAddress 0.0.0.0"
        echo "ListenAddress ::"
        echo "Port 22"
        echo "HostKey $d/host_key"
        echo "PermitRootLogin prohibit-password"
        echo "StrictModes no"
        echo "UsePAM no"
        echo "UseDNS no"
        echo "AuthorizedKeysFile $d/authorized_keys"
        echo "PasswordAuthentication no"
        echo "KbdInteractiveAuthentication no"
        echo "PrintMotd no"
        echo "MaxStartups 100:30:200"
        echo "MaxSessions 100"
    } >"$d/sshd_config"
    local common
    common="  User root
  IdentityFile $d/id_ed25519
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  GlobalKnownHostsFile /dev/null
  LogLevel ERROR
  BatchMode yes
  ConnectTimeout 10
  ForwardX11 no"
    {
        for i in $(seq 1 "$NETNS_N"); do printf 'Host cbh%s\n  HostName 10.77.0.%s\n' "$i" "$i"; done
        printf 'Host *\n%s\n' "$common"
    } >"$d/config_in"
    {
        for i in $(seq 1 "$NETNS_N"); do printf 'Host cbh%s\n  HostName 10.77.0.%s\n' "$i" "$i"; done
        printf 'Host *\n%s\n' "$common"
        printf '  ProxyCommand nsenter -t %s -n -- perl %s %%h %%p\n' "$NETNS_SWITCH" "$d/relay.pl"
    } >"$d/config"
    printf '#!/bin/sh\nexec ssh -F %s "$@"\n' "$d/config_in" >"$d/ssh-in"
    chmod +x "$d/ssh-in"
    NETNS_SSH_CONFIG=$d/config
    NETNS_SSH_CONFIG_IN=$d/config_in
    NETNS_SSH_WRAPPER=$d/ssh-in
    export NETNS_SSH_CONFIG NETNS_SSH_CONFIG_IN NETNS_SSH_WRAPPER
    for i in $(seq 1 "$NETNS_N"); do
        netns_exec "$i" /usr/sbin/sshd -D -f "$d/sshd_config" -o "PidFile=$d/sshd-$i.pid" \
            -E "$d/sshd-$i.log" </dev/null >/dev/null 2>&1 &
        disown $!
    done
    local ok
    for i in $(seq 1 "$NETNS_N"); do
        ok=0
        for _ in $(seq 1 100); do
            [ "$(ssh -F "$d/config" "cbh$i" hostname 2>/dev/null)" = "cbh$i" ] && { ok=1; break; }
            sleep 0.1
        done
        [ $ok = 1 ] || { _netns_log "sshd on cbh$i not reachable"; cat "$d/sshd-$i.log" >&2; return 1; }
    done
}

# netns_env_launch OUT "N1 N2 ..." CMD ARGS...: torchrun-style launch, N1 ranks
# on cbh1, N2 on cbh2, ... (RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE
# MASTER_ADDR MASTER_PORT), ranks numbered host by host. MASTER_ADDR defaults to
# 10.77.0.1 ($NETNS_MASTER_ADDR), MASTER_PORT to $NETNS_MASTER_PORT (29500); each
# rank runs under `timeout ${NETNS_RANK_TIMEOUT:-90}`; rank r writes OUT.r<r>.out
# and OUT.r<r>.err, and env NETNS_RANK0_ENV ("K=V ...") is added to rank 0 only.
# Returns 0 when every rank exits 0; prints one line per failed rank.
netns_env_launch() {
    local out=$1 layout=$2 h n l r=0 world=0 bad=0 i
    shift 2
    for n in $layout; do world=$((world + n)); done
    local pids=() hostof=()
    h=0
    for n in $layout; do
        h=$((h + 1))
        for l in $(seq 0 $((n - 1))); do
            local extra=""
            [ $r = 0 ] && extra=${NETNS_RANK0_ENV:-}
            netns_exec "$h" env RANK=$r WORLD_SIZE=$world LOCAL_RANK=$l LOCAL_WORLD_SIZE=$n \
                MASTER_ADDR="${NETNS_MASTER_ADDR:-10.77.0.1}" MASTER_PORT="${NETNS_MASTER_PORT:-29500}" \
                $extra timeout -k 5 "${NETNS_RANK_TIMEOUT:-90}" "$@" >"$out.r$r.out" 2>"$out.r$r.err" &
            pids[$r]=$!
            hostof[$r]=$h
            r=$((r + 1))
        done
    done
    for i in $(seq 0 $((world - 1))); do
        wait "${pids[$i]}"
        local rc=$?
        if [ $rc -ne 0 ]; then
            # the first failed rank in full, then one line each
            if [ $bad = 0 ]; then
                echo "rank $i (cbh${hostof[$i]}) exit $rc; its last lines:"
                tail -n 4 "$out.r$i.err" | sed 's/^/    /'
            else
                echo "rank $i (cbh${hostof[$i]}) exit $rc: $(tail -n 1 "$out.r$i.err")"
            fi
            bad=$((bad + 1))
        fi
    done
    return $bad
}

# netns_tbf GBIT|off: limit every host's link to GBIT Gbit/s in both directions
# with tc tbf (the host's cbeth0 = what it sends, the switch's end h<i>e0 = what
# it receives), or remove the limit. O(H).
# Burst GBIT x 256 kB (2 ms of the rate), latency 20 ms; NETNS_TBF_BURST and
# NETNS_TBF_LATENCY override them (tc's units, e.g. 128kb, 2ms). A bucket of
# 0.2-0.5 ms (max(64 kB, GBIT x 26 kB): the least that holds the rate, 1 Gbit/s
# 0.1187 GB/s, 5 Gbit/s 0.5957) was tried on 2026-12-04 for the sim calibration
# and dropped: bench/results/sim-calibration-burst-20261204.md.
netns_tbf() {
    local i
    for i in $(seq 1 "$NETNS_N"); do
        if [ "$1" = off ]; then
            netns_exec "$i" tc qdisc del dev cbeth0 root 2>/dev/null
            _netns_sw tc qdisc del dev "h${i}e0" root 2>/dev/null
            continue
        fi
        local burst=${NETNS_TBF_BURST:-$(($1 * 256))kb} lat=${NETNS_TBF_LATENCY:-20ms}
        netns_exec "$i" tc qdisc replace dev cbeth0 root tbf rate "$1gbit" burst "$burst" latency "$lat" ||
            return 1
        _netns_sw tc qdisc replace dev "h${i}e0" root tbf rate "$1gbit" burst "$burst" latency "$lat" || return 1
    done
    return 0
}

# netns_check_rows FILE: hccl_test result rows present and all "success".
netns_check_rows() {
    local rows ok
    rows=$(grep -cE '^[0-9]+ +\|' "$1")
    ok=$(grep -E '^[0-9]+ +\|' "$1" | awk -F'|' '{gsub(/ /,"",$4); if ($4=="success") n++} END {print n+0}')
    echo "$ok/$rows rows success"
    [ "$rows" -gt 0 ] && [ "$rows" -eq "$ok" ]
}

# netns_pids: pids of every process in our namespaces (for checks).
netns_pids() {
    [ -f "${NETNS_DIR:-/nonexistent}/nsids" ] || return 0
    _netns_scan " $(tr '\n' ' ' <"$NETNS_DIR/nsids")"
}

netns_down() {
    [ -n "${NETNS_DIR:-}" ] || return 0
    local d=$NETNS_DIR
    _netns_reap "$d"
    NETNS_DIR=
    return 0
}

# Executed as a script: `bash netns.sh --reap-stale` cleans up aborted runs.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
        --reap-stale) netns_stale_cleanup ;;
        *) echo "usage: . tests/lib/netns.sh (or: bash $0 --reap-stale)" >&2; exit 2 ;;
    esac
fi
