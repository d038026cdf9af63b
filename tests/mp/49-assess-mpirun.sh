#!/usr/bin/env bash
# timeout: 150
# collbench assess under real mpirun over ssh, Open MPI and MPICH (as in
# 32-multihost-mpirun.sh: simulated hosts with their own sshd, mpirun inside
# cbh1, ranks through tests/lib/rank-wrapper.sh). 4 hosts, 2 + 2 + 1 + 1 ranks
# (4, not 3: with 3 hosts a bad host spoils 2 of the 3 links, and the median):
# each host's ranks elect one speaker and the results name hosts, not ranks.
# cbh3's link is limited by tc tbf both ways; `assess --tests pairs,bisect`
# exits 1 under each MPI, prints the 4 hosts with their rank counts and the
# launch, and the host outliers are exactly cbh3, every link outlier touches it.
# (The unlimited case, exit 0, and ring/coll/node are in 47 under the
# environment launch; srun: 35-slurm.sh's cluster is one host, nothing to
# compare.)
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CB=${CB_O:?}/bin/collbench
WRAP=$ROOT/tests/lib/rank-wrapper.sh
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CB" ] || fail "no $CB"
for m in mpirun.openmpi mpirun.mpich; do command -v $m >/dev/null || fail "$m not installed"; done
. "$ROOT/tests/lib/netns.sh"
command -v tc >/dev/null || fail "no tc"
netns_up 4 || fail "netns_up"
netns_sshd_up || fail "netns_sshd_up"
W=$NETNS_DIR/runs
mkdir -p "$W"
printf 'cbh1 slots=2\ncbh2 slots=2\ncbh3 slots=1\ncbh4 slots=1\n' >"$W/hf.ompi"
printf '10.77.0.1:2\n10.77.0.2:2\n10.77.0.3:1\n10.77.0.4:1\n' >"$W/hf.mpich"

TBF="tbf rate 100mbit burst 32kb latency 100ms"
netns_exec 3 tc qdisc add dev cbeth0 root $TBF || fail "tc on cbh3"
nsenter -t "$NETNS_SWITCH" -n tc qdisc add dev h3e0 root $TBF || fail "tc on the switch side"
ARGS="--tests pairs,bisect -s 512K -et 3 --lat-iters 10 --threshold 0.5 --lat-threshold 0.25"

for mpi in openmpi mpich; do
    out=$W/$mpi
    s=$(date +%s.%N)
    case $mpi in
        openmpi)
            netns_exec 1 timeout -k 5 90 mpirun.openmpi --allow-run-as-root --hostfile "$W/hf.ompi" -n 6 \
                --mca plm_rsh_agent "ssh -F $NETNS_SSH_CONFIG_IN" \
                --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
                -x COLL_CONNECT_TIMEOUT -x COLL_EXEC_TIMEOUT "$WRAP" "$CB" assess $ARGS >"$out.out" 2>"$out.err" ;;
        mpich)
            netns_exec 1 timeout -k 5 90 mpirun.mpich -launcher ssh -launcher-exec "$NETNS_SSH_WRAPPER" \
                -f "$W/hf.mpich" -n 6 "$WRAP" "$CB" assess $ARGS >"$out.out" 2>"$out.err" ;;
    esac
    rc=$?
    el=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    grep '^OUTLIER' "$out.out"
    show() { cat "$out.out"; tail -n 8 "$out.err"; }
    [ $rc = 1 ] || { show; fail "$mpi: exit $rc, want 1 (outliers)"; }
    grep -q "^collbench assess: 4 hosts (launch $mpi)" "$out.out" || { show; fail "$mpi: not 4 hosts launched by $mpi"; }
    for h in "0: cbh1 (speaker rank 0, 2 ranks)" "1: cbh2 (speaker rank 2, 2 ranks)" "2: cbh3 (speaker rank 4, 1 rank)" "3: cbh4 (speaker rank 5, 1 rank)"; do
        grep -qF "Host $h" "$out.out" || { show; fail "$mpi: no line 'Host $h'"; }
    done
    hosts=$(grep '^OUTLIER' "$out.out" | awk '$3 !~ /->/ {sub(":", "", $3); print $3}' | sort -u | tr '\n' ' ')
    [ "$hosts" = "cbh3 " ] || { show; fail "$mpi: host outliers '$hosts', want cbh3"; }
    grep '^OUTLIER' "$out.out" | awk '$3 ~ /->/' | grep -v cbh3 && fail "$mpi: a link outlier not touching cbh3"
    grep -q '^OUTLIER bisect cbh3: ' "$out.out" || { show; fail "$mpi: bisect did not name cbh3"; }
    echo "ok: $mpi: 2+2+1+1 ranks on 4 hosts, one speaker each, cbh3 named by pairs and bisect (${el}s)"
done
echo "49-assess-mpirun: all passed"
