#!/usr/bin/env bash
# timeout: 600
# Beyond one host through real mpirun over ssh (tests/lib/netns.sh: simulated
# hosts cbh1..cbh3, each with its own sshd on port 22). mpirun runs inside cbh1,
# like on a login node of the cluster, and reaches the other hosts over ssh:
#   Open MPI  hostfile "cbhN slots=K", --mca plm_rsh_agent "ssh -F cfg",
#             btl/oob restricted to the 10.77.0.0/24 test net;
#   MPICH     hostfile "10.77.0.N:K" with -f, -launcher ssh -launcher-exec
#             (a wrapper running ssh -F cfg).
# Ranks start through tests/lib/rank-wrapper.sh (COLL_HOST_ID=$(hostname), as
# sshd runs in the host's UTS namespace). Layouts 2 hosts x 2 ranks and 3 hosts
# x (2,1,2) ranks; each of the ten test executables once under each MPI and
# on each layout (half of them per MPI and layout, swapped between the MPIs:
# the ten share one driver and launcher, and 31-multihost-env runs all ten on
# both layouts); exit 0 and every row "success", and rank 0's INFO log shows
# the expected hosts. First a plain `mpirun hostname` per MPI and layout, so
# an infrastructure failure is told apart.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CB_O:?}/bin
WRAP=$ROOT/tests/lib/rank-wrapper.sh
. "$ROOT/tests/lib/netns.sh"
HALF_A="all_reduce all_gather all_gatherv reduce_scatter reduce_scatterv"
HALF_B="reduce broadcast scatter alltoall alltoallv"
TESTS="$HALF_A $HALF_B"
for t in $TESTS; do [ -x "$B/${t}_test" ] || { echo "FAIL: missing $B/${t}_test"; exit 1; }; done
for m in mpirun.openmpi mpirun.mpich; do command -v $m >/dev/null || { echo "FAIL: $m not installed"; exit 1; }; done
fail=0

netns_up 3 || { echo "FAIL: netns_up"; exit 1; }
netns_sshd_up || { echo "FAIL: netns_sshd_up"; exit 1; }
W=$NETNS_DIR/runs
mkdir -p "$W"

hostfiles() {   # hostfiles "2 1 2": writes $W/hf.ompi-<tag> and $W/hf.mpich-<tag>
    local h=0 n
    : >"$W/hf.ompi-$tag"; : >"$W/hf.mpich-$tag"
    for n in $1; do
        h=$((h + 1))
        echo "cbh$h slots=$n" >>"$W/hf.ompi-$tag"
        echo "10.77.0.$h:$n" >>"$W/hf.mpich-$tag"
    done
}

mpi_run() {   # mpi_run openmpi|mpich NP OUT CMD...: mpirun inside cbh1
    local mpi=$1 np=$2 out=$3
    shift 3
    case $mpi in
        openmpi)
            netns_exec 1 timeout -k 5 60 mpirun.openmpi --allow-run-as-root --hostfile "$W/hf.ompi-$tag" -n "$np" \
                --mca plm_rsh_agent "ssh -F $NETNS_SSH_CONFIG_IN" \
                --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
                -x COLL_DEBUG=INFO -x COLL_DEBUG_SUBSYS=INIT -x COLL_CONNECT_TIMEOUT -x COLL_EXEC_TIMEOUT "$@" >"$out.out" 2>"$out.err" ;;
        mpich)   # hydra passes mpirun's environment to every rank
            netns_exec 1 env COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=INIT \
                timeout -k 5 60 mpirun.mpich -launcher ssh -launcher-exec "$NETNS_SSH_WRAPPER" \
                -f "$W/hf.mpich-$tag" -n "$np" "$@" >"$out.out" 2>"$out.err" ;;
    esac
}

for layout in "2 2" "2 1 2"; do
    world=0 nhosts=0
    for n in $layout; do world=$((world + n)); nhosts=$((nhosts + 1)); done
    tag=${nhosts}h
    hostfiles "$layout"
    for mpi in openmpi mpich; do
        # plain command first: the launch itself (ssh, hostfile, host identity)
        mpi_run $mpi $world "$W/hostname-$mpi-$tag" "$WRAP" sh -c 'echo $COLL_HOST_ID'
        rc=$?
        got=$(sort "$W/hostname-$mpi-$tag.out" | uniq -c | awk '{printf "%s:%s ", $2, $1}')
        want=$(h=0; for n in $layout; do h=$((h + 1)); printf 'cbh%s:%s ' $h $n; done)
        if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
            echo "FAIL: $mpi hostname on ($layout): exit $rc, got '$got' want '$want'"
            tail -n 5 "$W/hostname-$mpi-$tag.err"
            fail=1
            continue
        fi
        echo "ok: $mpi launches ($layout): $got"
        half=$HALF_A   # openmpi: A on 2 hosts, B on 3; mpich the other way round
        [ "$mpi/$nhosts" = openmpi/3 ] || [ "$mpi/$nhosts" = mpich/2 ] && half=$HALF_B
        for t in $half; do
            args="-b 8K -e 1M -f 4 -c 1 -n 3 -w 1 -p 2"
            case $t in reduce|broadcast|scatter) [ $nhosts = 3 ] && args="$args -r $((world - 1))" ;; esac
            out=$W/$t-$mpi-$tag
            what="$mpi $t on ($layout)"
            s=$(date +%s.%N)
            mpi_run $mpi $world "$out" "$WRAP" "$B/${t}_test" $args
            rc=$?
            el=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
            res=$(netns_check_rows "$out.out")
            rows_ok=$?
            if [ $rc -ne 0 ] || [ $rows_ok -ne 0 ]; then
                echo "FAIL: $what: exit $rc, $res"
                grep -v ' COLL INFO ' "$out.err" | head -n 4 | sed 's/^/    /'
                fail=1
                continue
            fi
            if ! grep -q "\[rank 0\] COLL INFO INIT topology: $world ranks on $nhosts host(s)" "$out.err"; then
                echo "FAIL: $what: rank 0 did not see $world ranks on $nhosts hosts"
                grep -i topology "$out.err" | head -3
                fail=1
                continue
            fi
            echo "ok: $what: $res (${el}s)"
        done
    done
done

[ $fail -eq 0 ] && echo "32-multihost-mpirun: all passed"
exit $fail
