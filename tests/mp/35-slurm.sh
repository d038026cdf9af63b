#!/usr/bin/env bash
# timeout: 240
# srun launch: a single-host Slurm cluster (Debian's slurm-wlm 22.05) started by
# this test inside a simulated host (tests/lib/netns.sh, host cbh1, so its ports
# and hostname are private to the test), then
#   srun -n 4 --overcommit all_reduce_test -p 4 -b 8K -e 1M -f 2
# The executables see SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID and take the first
# host of SLURM_JOB_NODELIST (cbh1) as the rendezvous: one result table, every
# row "success", exit 0, 4 ranks on 1 host. Then the same with MASTER_ADDR set
# (it wins over the node list), and srun -n 3 of all_gatherv; then collbench
# assess over srun with three hosts told apart by COLL_HOST_ID.
# Slurm setup (no munge, no cgroups, no root-namespace state): AuthType=auth/none
# + CredType=cred/none (still shipped in 22.05), ProctrackType=proctrack/linuxproc,
# TaskPlugin=task/none, no accounting; slurmctld -D -c and slurmd -D with
# SLURM_CONF pointing into the test's temp dir. --overcommit because the node
# has fewer CPUs than tasks (--oversubscribe only shares CPUs between jobs: a
# 4-task job on 2 CPUs stays queued with it).
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
. "$ROOT/tests/lib/netns.sh"
for c in slurmctld slurmd srun sinfo; do command -v $c >/dev/null || { echo "FAIL: $c not installed (slurm-wlm)"; exit 1; }; done
for t in all_reduce all_gatherv; do [ -x "$B/${t}_test" ] || { echo "FAIL: missing $B/${t}_test"; exit 1; }; done
fail=0

netns_up 1 || { echo "FAIL: netns_up"; exit 1; }
D=$NETNS_DIR/slurm
mkdir -p "$D/state" "$D/spool"
cat >"$D/slurm.conf" <<EOF
ClusterName=collbench
SlurmctldHost=cbh1
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
NodeName=cbh1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF=$D/slurm.conf
unset MASTER_ADDR MASTER_PORT RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE
# the test may itself run under Slurm: do not let the outer job's variables leak in
for v in $(env | grep -o '^SLURM_[A-Z_]*' | grep -v '^SLURM_CONF$'); do unset "$v"; done

netns_exec 1 slurmctld -D -c -f "$D/slurm.conf" >"$D/slurmctld.out" 2>&1 &
netns_exec 1 slurmd -D -f "$D/slurm.conf" >"$D/slurmd.out" 2>&1 &
state=
for _ in $(seq 1 60); do
    state=$(netns_exec 1 sinfo -h -o '%T' 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.5
done
if [ "$state" != idle ]; then
    echo "FAIL: the Slurm node did not become idle (state '$state')"
    tail -n 5 "$D/slurmctld.out" "$D/slurmd.out" "$D/slurmctld.log" "$D/slurmd.log" 2>/dev/null
    exit 1
fi
echo "ok: slurmctld + slurmd up: $(netns_exec 1 sinfo -h -o '%P %a %D %T %N %c cpus')"

out=$(netns_exec 1 timeout 30 srun -n 4 --overcommit hostname 2>&1 | sort | uniq -c | awk '{print $2 ":" $1}')
[ "$out" = cbh1:4 ] || { echo "FAIL: srun -n 4 hostname: $out"; fail=1; }

srun_case() {   # srun_case NAME NTASKS WANT_STORE_ADDR CMD...
    local name=$1 n=$2 addr=$3 rc res
    shift 3
    netns_exec 1 env COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=BOOTSTRAP,INIT timeout -k 5 120 \
        srun -n "$n" --overcommit "$@" >"$D/$name.out" 2>"$D/$name.err"
    rc=$?
    res=$(netns_check_rows "$D/$name.out")
    local bad=0
    [ $rc -eq 0 ] && netns_check_rows "$D/$name.out" >/dev/null || bad=1
    [ "$(grep -c '^data_size' "$D/$name.out")" = 1 ] || bad=1      # one job, not n standalone ones
    grep -q "INIT topology: $n ranks on 1 host(s)" "$D/$name.err" || bad=1
    grep -q "rendezvous store listening on $addr:" "$D/$name.err" || bad=1
    if [ $bad = 0 ]; then
        echo "ok: $name: srun -n $n $*: $res, $(grep -m1 -o 'rendezvous store listening on [^ ]*' "$D/$name.err")"
    else
        echo "FAIL: $name: srun -n $n $*: exit $rc, $res, $(grep -c '^data_size' "$D/$name.out") table(s)"
        grep -E 'topology|rendezvous|error|fail' "$D/$name.err" | head -n 6 | sed 's/^/    /'
        fail=1
    fi
}

srun_case nodelist 4 10.77.0.1 "$B/all_reduce_test" -p 4 -b 8K -e 1M -f 2
srun_case master-addr 4 127.0.0.1 env MASTER_ADDR=127.0.0.1 MASTER_PORT=29911 \
    "$B/all_reduce_test" -p 4 -b 8K -e 1M -f 2 -n 3 -w 1
srun_case odd 3 10.77.0.1 "$B/all_gatherv_test" -p 3 -b 8K -e 1M -f 4 -n 3 -w 1

# collbench assess under srun: the node is one host, so three are told apart
# by COLL_HOST_ID from SLURM_PROCID (s0: ranks 0-1, s1: 2-3, s2: 4); each
# elects one speaker (its local rank 0) and the results name hosts. A launch
# check: --threshold 0.1 (only a gross failure is an outlier; the outlier
# rules are 47's and 49's).
netns_exec 1 timeout -k 5 120 srun -n 5 --overcommit sh -c 'COLL_HOST_ID=s$((SLURM_PROCID / 2)) exec "$0" "$@"' \
    "$B/collbench" assess --tests pairs,bisect,coll -s 256K -et 3 --lat-iters 10 --threshold 0.1 \
    >"$D/assess.out" 2>"$D/assess.err"
rc=$?
bad=0
[ $rc = 0 ] || bad=1
grep -q '^collbench assess: 3 hosts (launch slurm)' "$D/assess.out" || bad=1
for h in "0: s0 (speaker rank 0, 2 ranks)" "1: s1 (speaker rank 2, 2 ranks)" "2: s2 (speaker rank 4, 1 rank)"; do
    grep -qF "Host $h" "$D/assess.out" || bad=1
done
grep -q '^Bisection (3 halvings' "$D/assess.out" && grep -q '^   job all hosts' "$D/assess.out" || bad=1
if [ $bad = 0 ]; then
    echo "ok: srun -n 5 collbench assess: 3 hosts s0 s1 s2 (2+2+1 ranks), one speaker each, exit 0"
else
    echo "FAIL: srun -n 5 collbench assess: exit $rc"
    head -n 8 "$D/assess.out" | sed 's/^/    /'; tail -n 4 "$D/assess.err" | sed 's/^/    /'
    fail=1
fi

netns_exec 1 squeue -h 2>/dev/null | grep -q . && { echo "FAIL: jobs left in the queue: $(netns_exec 1 squeue -h)"; fail=1; }
netns_down
if pgrep -f "$D/slurm.conf" >/dev/null; then
    echo "FAIL: Slurm daemons survived cleanup: $(pgrep -af "$D/slurm.conf")"; fail=1
fi

[ $fail -eq 0 ] && echo "35-slurm: all passed"
exit $fail
