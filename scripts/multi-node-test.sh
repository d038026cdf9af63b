#!/usr/bin/env bash
# scripts/multi-node-test.sh - the full multi-host run of seed 000's workflow:
# pre-test check, hostfile for the MPI found, the operators over all hosts with
# mpirun, JSON results and a report.
#
#   scripts/multi-node-test.sh --nodes A,B[,C...] --npus N [--mode quick|full] [options]
#
#   --nodes LIST     hosts (names or addresses reachable by ssh and by each other)
#   --npus N         ranks per host (hccl_test's -p)
#   --mode M         quick: AllReduce, AllGather, Broadcast, AlltoAll, 8K..64M;
#                    full: all ten operators, 8K..1G (default quick)
#   --ops LIST       operators to run instead (e.g. all_reduce,reduce_scatter)
#   --mpi IMPL       openmpi or mpich (default: what `mpirun --version` says)
#   --mpirun CMD     launcher command (default mpirun, or mpirun.openmpi/.mpich with --mpi)
#   --ssh "CMD"      ssh command for the checks and for mpirun's remote starts
#   --bin DIR        collbench bin directory on every host (default: this one's)
#   -o DIR           output directory (default results/multinode-<date>)
#   --skip-check     do not run pre-test-check.sh first
#   --extra "ARGS"   extra arguments for every test binary (e.g. "-d fp16 -n 50")
# Every COLL_* variable set here is forwarded to all ranks, except the per-host
# ones (COLL_HOST_ID, COLL_IF_IP, COLL_SHM_PREFIX: dropped, with a note).
# Every process of this run's launches (mpirun and the ranks) carries
# CB_MNT_JOB=<job id> in its environment (id printed and written to OUT/job-id).
# When an operator fails, and on INT/TERM/HUP, the script kills the processes
# of its own job that are left, on this host and on every --nodes host (by that
# environment entry, never by name: other users' and other runs' ranks of the
# same binaries are untouched). Exit 0 when every
# operator passed, 1 when one failed (check or run), 2 on a bad command line,
# 3 when the pre-test check failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$here/../bin" 2>/dev/null && pwd || echo "$here/../bin")
NODES= NPUS= MODE=quick OPS= MPI= MPIRUN= SSH=ssh OUT= SKIP=0 EXTRA=
die() { echo "multi-node-test: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    # an option that takes a value must have one (else `shift 2` fails and loops forever)
    case "$1" in
        --nodes|--npus|--mode|--ops|--mpi|--mpirun|--ssh|--bin|-o|--extra)
            [ $# -ge 2 ] || die "option $1 needs a value (see --help)" ;;
    esac
    case "$1" in
        --nodes) NODES=${2:-}; shift 2 ;;
        --npus) NPUS=${2:-}; shift 2 ;;
        --mode) MODE=${2:-}; shift 2 ;;
        --ops) OPS=${2:-}; shift 2 ;;
        --mpi) MPI=${2:-}; shift 2 ;;
        --mpirun) MPIRUN=${2:-}; shift 2 ;;
        --ssh) SSH=${2:-}; shift 2 ;;
        --bin) BIN=${2:-}; shift 2 ;;
        -o) OUT=${2:-}; shift 2 ;;
        --skip-check) SKIP=1; shift ;;
        --extra) EXTRA=${2:-}; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[ -n "$NODES" ] || die "--nodes is required (e.g. --nodes node1,node2)"
[[ "$NPUS" =~ ^[1-9][0-9]*$ ]] || die "invalid --npus '$NPUS': a positive integer (ranks per host)"
case "$MODE" in quick) SIZES="-b 8K -e 64M -f 2" ;; full) SIZES="-b 8K -e 1G -f 2" ;; *) die "invalid --mode '$MODE': allowed quick, full" ;; esac
IFS=, read -r -a HOSTS <<<"$NODES"
[ -z "$OPS" ] && { [ "$MODE" = quick ] && OPS=all_reduce,all_gather,broadcast,alltoall || OPS=all_reduce,all_gather,all_gatherv,reduce_scatter,reduce_scatterv,reduce,broadcast,scatter,alltoall,alltoallv; }
IFS=, read -r -a OPLIST <<<"$OPS"
for op in "${OPLIST[@]}"; do [ -x "$BIN/${op}_test" ] || die "unknown operator '$op': no $BIN/${op}_test"; done
if [ -z "$MPIRUN" ]; then
    case "$MPI" in openmpi) MPIRUN=mpirun.openmpi ;; mpich) MPIRUN=mpirun.mpich ;; "") MPIRUN=mpirun ;; *) die "invalid --mpi '$MPI': allowed openmpi, mpich" ;; esac
fi
command -v "$MPIRUN" >/dev/null || die "launcher '$MPIRUN' not found"
if [ -z "$MPI" ]; then
    v=$("$MPIRUN" --version 2>&1)
    case "$v" in *"Open MPI"*|*OpenRTE*) MPI=openmpi ;; *HYDRA*|*MPICH*|*mpich*) MPI=mpich ;; *) die "cannot tell which MPI '$MPIRUN' is; use --mpi" ;; esac
fi
[ -n "$OUT" ] || OUT=results/multinode-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)   # absolute: rank 0 may start in another directory (mpirun's -wdir rules)
NR=$(( ${#HOSTS[@]} * NPUS ))
echo "multi-node-test: ${#HOSTS[@]} hosts x $NPUS ranks = $NR ranks, $MPI ($MPIRUN), mode $MODE, output $OUT"
JOB=mnt-$(hostname 2>/dev/null | tr -c 'A-Za-z0-9\n' - | head -c 40)-$$-$(date +%s%N)
echo "$JOB" >"$OUT/job-id"
echo "multi-node-test: job id $JOB (its processes carry CB_MNT_JOB=$JOB)"

if [ $SKIP -eq 0 ]; then
    "$here/pre-test-check.sh" --bin "$BIN" --ssh "$SSH" --mpirun "$MPIRUN" "${HOSTS[@]}" | tee "$OUT/pre-test-check.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "multi-node-test: pre-test check failed (see $OUT/pre-test-check.log)"; exit 3; }
fi

# Hostfile in the detected implementation's format; environment forwarding.
HF=$OUT/hostfile
: >"$HF"
# Not forwarded, and removed from the launcher's environment (MPICH's hydra
# passes its whole environment on): settings that describe one host or one
# process, wrong on every other host (COLL_HOST_ID copied from here would put
# all ranks "on this host": shared memory across hosts fails).
PERHOST="COLL_HOST_ID COLL_IF_IP COLL_SHM_PREFIX"
for v in $PERHOST; do
    [ -n "${!v+x}" ] && echo "multi-node-test: $v is set here ('${!v}'): not passed to the ranks (it is per host)"
done
envs="CB_MNT_JOB $(env | sed -n 's/^\(COLL_[A-Z_0-9]*\)=.*/\1/p' | grep -vxE "$(echo $PERHOST | tr ' ' '|')" | tr '\n' ' ')"
sshw=$OUT/ssh-wrapper.sh
printf '#!/bin/sh\nexec %s "$@"\n' "$SSH" >"$sshw"; chmod +x "$sshw"

# Leftovers of this job: processes whose environment holds CB_MNT_JOB=$JOB
# (TERM, then KILL a second later); prints how many it found.
KILLJOB="ps=; for d in /proc/[0-9]*; do tr '\\0' '\\n' 2>/dev/null <\$d/environ | grep -qx 'CB_MNT_JOB=$JOB' && ps=\"\$ps \${d#/proc/}\"; done
[ -n \"\$ps\" ] && { kill \$ps 2>/dev/null; sleep 1; kill -9 \$ps 2>/dev/null; }; echo \$ps | wc -w"
cleanup_job() {
    local h n
    n=$(sh -c "$KILLJOB" 2>/dev/null)
    [ "${n:-0}" -gt 0 ] 2>/dev/null && echo "multi-node-test: cleanup: stopped $n process(es) of job $JOB here"
    for h in "${HOSTS[@]}"; do
        n=$(timeout -k 2 20 "$sshw" "$h" "$KILLJOB" </dev/null 2>/dev/null)
        if [ -z "$n" ]; then echo "multi-node-test: cleanup: could not reach $h to stop job $JOB's processes"
        elif [ "$n" -gt 0 ] 2>/dev/null; then echo "multi-node-test: cleanup: stopped $n process(es) of job $JOB on $h"; fi
    done
}
trap 'trap "" INT TERM HUP; echo "multi-node-test: interrupted: cleaning up job $JOB"; cleanup_job; exit 130' INT TERM HUP
if [ "$MPI" = openmpi ]; then
    for h in "${HOSTS[@]}"; do echo "$h slots=$NPUS" >>"$HF"; done
    LAUNCH=(env $(printf -- '-u %s ' $PERHOST) CB_MNT_JOB="$JOB" "$MPIRUN" --hostfile "$HF" -n "$NR" --mca plm_rsh_agent "$sshw")
    [ "$(id -u)" -eq 0 ] && LAUNCH+=(--allow-run-as-root)
    for e in $envs; do LAUNCH+=(-x "$e"); done
else
    for h in "${HOSTS[@]}"; do echo "$h:$NPUS" >>"$HF"; done
    LAUNCH=(env $(printf -- '-u %s ' $PERHOST) CB_MNT_JOB="$JOB" "$MPIRUN" -f "$HF" -n "$NR" -launcher ssh -launcher-exec "$sshw")
    LAUNCH+=(-genvlist "$(echo $envs | tr ' ' ',')")
fi

fails=0 inputs=()
for op in "${OPLIST[@]}"; do
    echo "== $op"
    "${LAUNCH[@]}" "$BIN/${op}_test" -p "$NPUS" $SIZES $EXTRA --json "$OUT/$op.json" 2>&1 | tee "$OUT/$op.log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ]; then
        echo "multi-node-test: $op FAILED (exit $rc)"; fails=$((fails + 1))
        cleanup_job     # ranks a dead launcher left behind, on every host
    fi
    # rank 0 writes the JSON on its host: the first of --nodes. Run from a host
    # outside the list without a shared $OUT, it is not here: report from the log.
    if [ -s "$OUT/$op.json" ]; then inputs+=("$OUT/$op.json")
    elif [ "$rc" -eq 0 ]; then
        echo "multi-node-test: no $OUT/$op.json here (written on ${HOSTS[0]}?): the report uses $op.log"
        inputs+=("$OUT/$op.log")
    fi
done
if [ ${#inputs[@]} -eq 0 ]; then echo "multi-node-test: no results, no report"
elif "$here/collbench-report" "${inputs[@]}" -o "$OUT/report" >/dev/null 2>"$OUT/report.err"; then
    echo "report: $OUT/report/index.html"
else echo "multi-node-test: report failed:"; cat "$OUT/report.err"; fi
echo "multi-node-test: $(( ${#OPLIST[@]} - fails )) of ${#OPLIST[@]} operators passed"
[ $fails -eq 0 ]
