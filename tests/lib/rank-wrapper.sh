#!/bin/sh
# tests/lib/rank-wrapper.sh BINARY ARGS...: run a rank launched over ssh (mpirun)
# into a simulated host of tests/lib/netns.sh. sshd runs in the host's UTS
# namespace, so `hostname` is cbh<i>: it becomes COLL_HOST_ID (the hosts share
# the kernel's boot id, so the default host identity would be the same).
# COLL_* settings the test wants on every rank can be passed in CB_RANK_ENV
# ("COLL_DEBUG=INFO COLL_SOCKET_IFNAME=cbib"), for launchers that do not forward
# the environment; with COLL_DEBUG_FILE the log goes to a per-host file.
COLL_HOST_ID=$(hostname)
export COLL_HOST_ID
if [ -n "${CB_RANK_ENV:-}" ]; then
    for kv in $CB_RANK_ENV; do export "$kv"; done
fi
exec "$@"
