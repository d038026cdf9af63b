# tests/lib/netns_extra.sh - extra helpers for tests/lib/netns.sh (source after it).
#
#   netns_blackhole I [PORT]   host I silently drops what arrives on cbeth0:
#                              every packet, or only TCP to PORT (IPv4)
#   netns_blackhole_off I      undo
#   netns_sshd_stop I / netns_sshd_start I   stop / restart host I's sshd
#   netns_own_sysfs            a sysfs of its own in every host (UCX, sysfs stats)
#
# Why not netem / iptables: this kernel has no sch_netem and no act_gact
# ("action drop"), and neither iptables nor nft is installed. What it has is
# the ingress qdisc, the u32 classifier and act_mirred, so matching packets
# are redirected to a veth (cbblk0) whose peer (cbblk1) is kept down: veth
# drops every packet it cannot deliver. The effect is a firewall DROP: no RST,
# no ICMP, the sender only sees silence (connect() times out, a running TCP
# stream stalls and retransmits). Everything lives in host I's network
# namespace and disappears with it.

netns_blackhole() {
    local i=$1 port=${2:-}
    netns_exec "$i" sh -c '
        ip link show cbblk0 >/dev/null 2>&1 || {
            ip link add cbblk0 type veth peer name cbblk1 && ip link set cbblk0 up; } || exit 1
        tc qdisc show dev cbeth0 ingress | grep -q ingress || tc qdisc add dev cbeth0 ingress || exit 1
        if [ -n "$1" ]; then
            tc filter add dev cbeth0 parent ffff: protocol ip prio 1 u32 \
                match ip protocol 6 0xff match ip dport "$1" 0xffff \
                action mirred egress redirect dev cbblk0
        else
            tc filter add dev cbeth0 parent ffff: protocol all prio 1 u32 match u32 0 0 \
                action mirred egress redirect dev cbblk0
        fi' netns-blackhole "$port"
}

netns_blackhole_off() {
    netns_exec "$1" tc qdisc del dev cbeth0 ingress 2>/dev/null
    return 0
}

# netns_sshd_stop I / netns_sshd_start I: stop (SIGTERM, waits until the port
# refuses) and start again host I's sshd of netns_sshd_up (same command line
# and files as tests/lib/netns.sh uses; sessions already open are not touched).
netns_sshd_stop() {
    local i=$1 d=$NETNS_DIR/ssh p
    p=$(cat "$d/sshd-$i.pid" 2>/dev/null) || return 1
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
    return 1
}
netns_sshd_start() {
    local i=$1 d=$NETNS_DIR/ssh
    netns_exec "$i" /usr/sbin/sshd -D -f "$d/sshd_config" -o "PidFile=$d/sshd-$i.pid" \
        -E "$d/sshd-$i.log" </dev/null >/dev/null 2>&1 &
    disown $!
    for _ in $(seq 1 100); do
        [ "$(ssh -F "$d/config" "cbh$i" hostname 2>/dev/null)" = "cbh$i" ] && return 0
        sleep 0.1
    done
    return 1
}

# netns_own_sysfs: mount a sysfs of its own in every host (netns_up's hosts
# keep the root namespace's /sys, whose /sys/class/net lists the root
# namespace's interfaces, not cbeth0). Needed by whatever enumerates network
# devices through sysfs: UCX (MPICH ch4:ucx, Open MPI's pml ucx) then sees only
# lo and cannot reach the other host over TCP; `cat /sys/class/net/cbeth0/...`
# (speed, statistics) fails. Mounted in the host's mount namespace while in its
# network namespace, so it shows that namespace's devices; gone with the host.
netns_own_sysfs() {
    local i
    for i in $(seq 1 "$NETNS_N"); do
        netns_exec "$i" mount -t sysfs "cbh$i-sysfs" /sys || return 1
    done
}
