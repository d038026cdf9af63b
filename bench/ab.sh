#!/usr/bin/env bash
# bench/ab.sh - the A/B runner: two or more sides of one measurement (two
# builds, settings of the library, collbench against the MPIs), interleaved
# round by round with the order rotating, so that a change's effect is a ratio
# of runs made under the same state of a shared machine. Local ranks or
# network-namespace hosts. The statistics: bench/abstat.py.
#
#   bench/ab.sh [-c COLLS] [-s SIZES] [-r ROUNDS] [-n ITERS] [-W WARM] [-z] [-o FILE.md]
#               [-p RANKS | -l LAYOUT [-g GBIT] [-F]] SIDE SIDE...
#   bench/ab.sh -S 'ARGS' [-c COLL] [-r ROUNDS] [-o FILE.md] SIDE SIDE...
#   SIDE  LABEL=[@DIR] [VAR=VALUE ...]  collbench, this tree or the tree DIR, under
#                                       that environment: 'base=', 'main=@../main',
#                                       'nt=COLL_COPY_NT_MIN=1M', 'cma=COLL_ALGO=allgather=cma'
#         LABEL=[@DIR] [VAR=VALUE ...] -OPT ...   with -S: these options too, after ARGS
#                                       ('json= --json /tmp/ab.json')
#         openmpi | mpich               the MPI (build/bench/mpi_bench.IMPL, the flags of
#                                       bench/lib-local.sh); across hosts MPICH only
#     -c  collectives, comma-separated (default allreduce): allreduce allgather alltoall
#         reduce_scatter broadcast reduce scatter gather (gather: local only)
#     -s  message sizes, comma-separated (default 8K,1M,64M)
#     -r  rounds (default 5)
#     -n  timed iterations per run (default 20, after -W warm-up ones, default 5)
#     -z  collbench buffers from coll_mem_alloc
#     -o  also write the table with the command and the machine to FILE.md
#     -p  local: rank counts, comma-separated (default 4); collbench runs
#         build/bench/coll_bench (make bench; in DIR too), which forks the ranks;
#         each run waits for near vCPU placement first (bench/lib-local.sh
#         bench_place_wait, BENCH_PLACE_WAIT=0 to skip)
#     -l  hosts: network-namespace hosts with these ranks each, e.g. '1 1' (2 to 4
#         hosts of 1..8 ranks; tests/lib/netns.sh, torchrun-style launch of
#         DIR/bin/<coll>_test; MPICH by ssh into the namespaces). Needs root
#     -g  hosts: limit every host's link to GBIT Gbit/s each way (tc tbf)
#     -F  hosts: each round also measures the floor (bench/hostfloor.sh: the
#         duplex capacity, the better of iperf3 --bidir and collbench bw -t p2p,
#         then bench/roofline -H) and gives each figure as % of it
#     -S  whole sweeps: each side runs its tree's bin/<COLL>_test ARGS (one
#         collective in -c; e.g. -S '-p 4 -b 8K -e 64M -f 2', the default sweep);
#         two figures a run: its wall seconds (sweep/wall_s) and the sum of its
#         table's aveg_time column (sweep/sum_avg_us). The tables' own cost on a
#         whole sweep was measured so (bench/results/tables-overhead-20261206.md)
# Figure: time per call in us, the slowest rank's average. Per case and side:
# the times round by round, their median [min-max], the algorithm, and the
# speed-up over the first side round by round (its time / the side's; > 1:
# faster), median [min-max]. All traffic stays on loopback or in 10.77.0.0/24.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
COLLS=allreduce SIZES=8K,1M,64M ROUNDS=5 NI=20 WARM=5 ZC= OUT= RANKS= LAYOUT= GBIT= FLOOR= SWEEP= SWEEP_SET=
ARGS=("$@")
die() { echo "ab: $*" >&2; exit 2; }
ONLY_CASES= # the options given that -S does not go with
while getopts "c:s:r:n:W:zo:p:l:g:FS:h" o; do
    case $o in
        c) COLLS=$OPTARG ;; s) SIZES=$OPTARG ;; r) ROUNDS=$OPTARG ;; n) NI=$OPTARG ;; W) WARM=$OPTARG ;; z) ZC=1 ;;
        o) OUT=$OPTARG ;; p) RANKS=$OPTARG ;; l) LAYOUT=$OPTARG ;; g) GBIT=$OPTARG ;; F) FLOOR=1 ;;
        S) SWEEP=$OPTARG SWEEP_SET=1 ;;
        *) sed -n '2,43p' "$0" >&2; exit 2 ;;
    esac
    case $o in s|n|W|z|p|l|g|F) ONLY_CASES="$ONLY_CASES -$o" ;; esac
done
shift $((OPTIND - 1))

# ---- the command line
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "invalid -r '$ROUNDS' (allowed: rounds, 1 or more)"
[[ $NI =~ ^[1-9][0-9]*$ ]] || die "invalid -n '$NI' (allowed: 1 or more iterations)"
[[ $WARM =~ ^[0-9]+$ ]] || die "invalid -W '$WARM' (allowed: 0 or more warm-up iterations)"
[[ $SIZES =~ ^[0-9]+[KMG]?(,[0-9]+[KMG]?)*$ ]] || die "invalid -s '$SIZES' (allowed: sizes like 8K,1M,64M)"
for c in ${COLLS//,/ }; do
    case $c in allreduce|allgather|alltoall|reduce_scatter|broadcast|reduce|scatter|gather) ;;
        *) die "invalid collective '$c' in -c (allowed: allreduce allgather alltoall reduce_scatter broadcast reduce scatter gather)" ;;
    esac
done
if [ -n "$SWEEP_SET" ]; then
    [ -z "$ONLY_CASES" ] || die "-S and$ONLY_CASES both given (allowed with -S: -c, -r, -o)"
    [[ $COLLS != *,* ]] || die "invalid -c '$COLLS' with -S (allowed: one collective, its <coll>_test runs the sweep)"
    [[ $COLLS != gather ]] || die "invalid -c 'gather' with -S (allowed: a collective with a bin/<coll>_test)"
    [[ $SWEEP =~ ^[-A-Za-z0-9_.,=:/\ ]*$ ]] || die "invalid -S '$SWEEP' (allowed: <coll>_test options, e.g. '-p 4 -b 8K -e 64M -f 2')"
fi
[ -z "$RANKS" ] || [ -z "$LAYOUT" ] || die "-p '$RANKS' and -l '$LAYOUT' both given (allowed: local ranks or hosts, one of them)"
[ -n "$LAYOUT" ] || [ -n "$SWEEP_SET" ] || RANKS=${RANKS:-4}
[ -z "$RANKS" ] || [[ $RANKS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "invalid -p '$RANKS' (allowed: rank counts like 2,4)"
[ -z "$LAYOUT" ] || [[ $LAYOUT =~ ^[1-8]( [1-8]){1,3}$ ]] || die "invalid -l '$LAYOUT' (allowed: 2 to 4 hosts of 1..8 ranks, e.g. '1 1')"
[ -z "$GBIT" ] || { [[ $GBIT =~ ^[0-9]+$ ]] && [ "$GBIT" -ge 1 ] && [ "$GBIT" -le 100 ]; } ||
    die "invalid -g '$GBIT' (allowed: a whole number of Gbit/s from 1 to 100)"
[ -n "$LAYOUT" ] || [ -z "$GBIT$FLOOR" ] || die "-g and -F go with -l (hosts), not local ranks"
[ -z "$LAYOUT" ] || [[ ",$COLLS," != *,gather,* ]] || die "invalid collective 'gather' with -l (allowed locally only: no gather_test)"
[ $# -ge 2 ] || die "$# side(s) given (allowed: two or more: LABEL=[@DIR] [VAR=VALUE ...], openmpi, mpich)"
labels=() dirs=() envs=() xargs=()
for a in "$@"; do
    case $a in
        openmpi|mpich) [ -z "$SWEEP_SET" ] || die "invalid side '$a' with -S (allowed: LABEL=[@DIR] ...: collbench's sweeps)"
                       labels+=("$a") dirs+=(-) envs+=("") xargs+=("") ;;
        *)  [[ $a =~ ^[A-Za-z0-9_.+-]+= ]] || die "invalid side '$a' (allowed: LABEL=[@DIR] [VAR=VALUE ...], openmpi, mpich)"
            l=${a%%=*} spec=${a#*=} d=$ROOT
            if [[ $spec == @* ]]; then
                d=${spec%% *} d=${d#@}; [[ $spec == *" "* ]] && spec=${spec#* } || spec=
                [ -d "$d" ] || die "invalid side '$a': no directory '$d'"
                d=$(cd "$d" && pwd)
            fi
            x= kvs=
            for w in $spec; do   # with -S, the side's own options from its first -OPT on
                if [ -n "$x" ] || { [ -n "$SWEEP_SET" ] && [[ $w == -* ]]; }; then x="$x $w"; else kvs="$kvs $w"; fi
            done
            spec=${kvs# } x=${x# }
            for kv in $spec; do [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "invalid setting '$kv' in side '$l' (allowed: VAR=VALUE${SWEEP_SET:+, then -OPT ...})"; done
            labels+=("$l") dirs+=("$d") envs+=("$spec") xargs+=("$x") ;;
    esac
done
[ "$(printf '%s\n' "${labels[@]}" | sort | uniq -d)" = "" ] || die "two sides named alike in '${labels[*]}' (allowed: distinct labels)"
if [ -n "$LAYOUT" ]; then
    [[ " ${labels[*]} " != *" openmpi "* ]] || die "invalid side 'openmpi' with -l (allowed across hosts: mpich)"
    [ "$(id -u)" = 0 ] || { echo "ab: -l needs root (network namespaces, tc)" >&2; exit 1; }
fi

B=build/bench RAW=$(mktemp -d /tmp/ab.XXXXXX)
. bench/lib-local.sh
TUN=$BENCH_TUN
bytes() { local s=$1; case $s in *K) echo $((${s%K} << 10)) ;; *M) echo $((${s%M} << 20)) ;; *G) echo $((${s%G} << 30)) ;; *) echo "$s" ;; esac; }
human() { local b=$1; if [ $((b % (1 << 20))) -eq 0 ] && [ "$b" -ge $((1 << 20)) ]; then echo "$((b >> 20))M";
          elif [ $((b % 1024)) -eq 0 ] && [ "$b" -ge 1024 ]; then echo "$((b >> 10))K"; else echo "$b"; fi; }
exe_of() { case $1 in allreduce) echo all_reduce ;; allgather) echo all_gather ;; *) echo "$1" ;; esac; }

# ---- the programs each side runs
[ -n "$SWEEP_SET" ] || make -s bench >&2 || { echo "ab: make bench failed" >&2; exit 1; }
for i in "${!labels[@]}"; do
    d=${dirs[$i]}
    case ${labels[$i]} in openmpi|mpich) [ "${dirs[$i]}" = - ] && { bench_build_mpi "${labels[$i]}" || { echo "ab: no ${labels[$i]} (scripts/install-deps.sh)" >&2; exit 1; }; continue; } ;; esac
    if [ -n "$RANKS" ] && [ "$d" != "$ROOT" ]; then   # its own coll_bench: its make bench, or this Makefile's rules there
        if grep -q '^bench:' "$d/Makefile" 2>/dev/null; then make -s -C "$d" bench >&2
        else make -s -C "$d" -f "$ROOT/Makefile" build/bench/coll_bench >&2; fi || { echo "ab: cannot build $d/build/bench/coll_bench" >&2; exit 1; }
    fi
    if [ -n "$LAYOUT$SWEEP_SET" ]; then
        for c in ${COLLS//,/ }; do
            [ -x "$d/bin/$(exe_of "$c")_test" ] || die "side '${labels[$i]}': $d/bin/$(exe_of "$c")_test missing (make there)"
        done
    fi
done

# ---- hosts
if [ -n "$LAYOUT" ]; then
    . tests/lib/netns.sh
    . tests/lib/netns_extra.sh
    . bench/hostfloor.sh
    nh=$(wc -w <<<"$LAYOUT") nr=$(( $(tr ' ' '+' <<<"$LAYOUT") ))
    netns_up "$nh" >/dev/null || { echo "ab: cannot make the namespace hosts" >&2; exit 1; }
    trap 'netns_down >/dev/null 2>&1; rm -rf "$RAW"' EXIT
    if [ -n "$GBIT" ]; then   # both directions of every link, burst as bench/sim-calibrate.sh
        for i in $(seq 1 "$nh"); do
            netns_exec "$i" tc qdisc replace dev cbeth0 root tbf rate "${GBIT}gbit" burst "$((GBIT * 256))kb" latency 20ms &&
                nsenter -t "$NETNS_SWITCH" -n tc qdisc replace dev "h${i}e0" root tbf rate "${GBIT}gbit" burst "$((GBIT * 256))kb" latency 20ms ||
                { echo "ab: cannot limit the links to $GBIT Gbit/s (tc)" >&2; exit 1; }
        done
    fi
    if [[ " ${labels[*]} " == *" mpich "* ]]; then   # mpirun reaches the hosts by ssh; UCX sees cbeth0 with a sysfs of its own
        netns_own_sysfs >/dev/null && netns_sshd_up >/dev/null || { echo "ab: cannot start sshd in the namespaces" >&2; exit 1; }
        i=0; for l in $LAYOUT; do i=$((i + 1)); echo "10.77.0.$i:$l"; done >"$RAW/hosts.mpich"
    fi
    [ -z "$FLOOR" ] || hostfloor_build || { echo "ab: cannot build build/bench/roofline" >&2; exit 1; }
    export NETNS_RANK_TIMEOUT=300 COLL_EXEC_TIMEOUT=120
else
    trap 'rm -rf "$RAW"' EXIT
    bench_place_init || exit 1
fi
port=29400
CASE_H=${LAYOUT// /+}

# run_local R I P: side I on P local ranks, every collective and size of one launch -> raw rows
run_local() {
    local r=$1 i=$2 p=$3 l=${labels[$2]}
    bench_place_wait >/dev/null
    case $l in
        openmpi|mpich) [ "${dirs[$i]}" = - ] && { bench_run_mpi "$l" "$p" -c "$COLLS" -s "$SIZES" -n "$NI" -w "$WARM" -r 1 -l "$l"; return; } ;;
    esac
    # shellcheck disable=SC2086
    env ${envs[$i]} timeout 600 "${dirs[$i]}/build/bench/coll_bench" -p "$p" -c "$COLLS" -s "$SIZES" -n "$NI" -w "$WARM" -r 1 \
        ${ZC:+-z} -l "$l"
}
# run_sweep R I: side I's whole sweep, bin/<coll>_test -S ARGS -> raw rows (wall s, sum of aveg_time us)
run_sweep() {
    local r=$1 i=$2 l=${labels[$2]} o=$RAW/sweep.out t0 t1 ok=1
    bench_place_wait >/dev/null
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    env ${envs[$i]} timeout 600 "${dirs[$i]}/bin/$(exe_of "$COLLS")_test" $SWEEP ${xargs[$i]} >"$o" 2>&1 || ok=
    t1=$(date +%s.%N)
    [ -n "$ok" ] || { echo "ab: side '$l' round $r: $(exe_of "$COLLS")_test failed: $(tail -n 1 "$o")" >&2; }
    awk -v r="$r" -v l="$l" -v ok="$ok" -v w="$(echo "$t1 - $t0" | bc)" -F'|' '
        /^ *[0-9]+ +\|/ {s += $2; n++}
        END {print r, l, "sweep/wall_s", (ok ? w : "-"), "-"
             print r, l, "sweep/sum_avg_us", (ok && n ? sprintf("%.1f", s) : "-"), "-"}' "$o"
}
# run_hosts R I COLL SIZE: side I across the namespace hosts -> "US ALGO" (US "-" on failure)
run_hosts() {
    local i=$2 c=$3 s=$4 l=${labels[$2]} f=$RAW/run.json
    port=$((port + 1))
    if [ "$l" = mpich ] && [ "${dirs[$i]}" = - ]; then
        netns_exec 1 timeout 300 mpirun.mpich -launcher ssh -launcher-exec "$NETNS_SSH_WRAPPER" -f "$RAW/hosts.mpich" \
            -n "$nr" -genv GLIBC_TUNABLES "$TUN" -genv UCX_TLS tcp,self "$ROOT/$B/mpi_bench.mpich" -c "$c" -s "$s" \
            -n "$NI" -w "$WARM" -r 1 -l mpich >"$RAW/mpich.out" 2>&1
        awk '$1 == "RESULT" {printf "%s -\n", $6; f = 1; exit} END {if (!f) print "- -"}' "$RAW/mpich.out"
        return
    fi
    rm -f "$f"
    # shellcheck disable=SC2086
    NETNS_MASTER_PORT=$port netns_env_launch "$RAW/run" "$LAYOUT" env ${envs[$i]} "${dirs[$i]}/bin/$(exe_of "$c")_test" \
        -b "$s" -e "$s" -n "$NI" -w "$WARM" -c 0 ${ZC:+-z 1} --json "$f" >/dev/null 2>&1
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("%.3f %s" % (r["time_us"]["avg"], r.get("algorithm", "-")))' "$f" 2>/dev/null || echo "- -"
}
# floor_round R: the hosts' floor of every allreduce case this round -> raw rows
floor_round() {
    local r=$1 di dp dx s fl
    port=$((port + 1))
    di=$(hostfloor_iperf3_bidir 3 "$RAW/iperf3.$r.json")
    dp=$(hostfloor_p2p_bidir $port "$RAW/p2p.$r")
    dx=$(printf '%s\n%s\n' "${di:-0}" "${dp:-0}" | sort -g | tail -1)
    echo "round $r: duplex capacity iperf3 ${di:--} / p2p ${dp:--} GB/s" >&2
    echo "$r $di $dp" >>"$RAW/duplex"
    for c in ${COLLS//,/ }; do
        for s in ${SIZES//,/ }; do
            fl=$(hostfloor_floor "$c" "$nr" "$nh" "$(bytes "$s")" "$dx" 2>/dev/null | awk '{print $1}')
            echo "$r @floor $c/$CASE_H/$(human "$(bytes "$s")") ${fl:--} -"
        done
    done >>"$RAW/rows"
}

: >"$RAW/rows"
n=${#labels[@]}
for r in $(seq 1 "$ROUNDS"); do
    for j in $(seq 0 $((n - 1))); do
        i=$(((j + r - 1) % n))
        if [ -n "$SWEEP_SET" ]; then
            run_sweep "$r" "$i" >>"$RAW/rows"
        elif [ -n "$RANKS" ]; then
            for p in ${RANKS//,/ }; do
                run_local "$r" "$i" "$p" 2>&1 | awk -v r="$r" -v l="${labels[$i]}" '$1 == "RESULT" {
                    b = $5; h = b
                    if (b >= 1048576 && b % 1048576 == 0) h = (b / 1048576) "M"
                    else if (b >= 1024 && b % 1024 == 0) h = (b / 1024) "K"
                    algo = "-"; if (NF >= 9) algo = $9
                    print r, l, $3 "/p" $4 "/" h, $6, algo }' >>"$RAW/rows"
            done
        else
            for c in ${COLLS//,/ }; do
                for s in ${SIZES//,/ }; do
                    echo "$r ${labels[$i]} $c/$CASE_H/$(human "$(bytes "$s")") $(run_hosts "$r" "$i" "$c" "$s")" >>"$RAW/rows"
                done
            done
        fi
    done
    [ -z "$FLOOR" ] || floor_round "$r"
    echo "round $r of $ROUNDS done" >&2
done

# where_run: where the sides ran, for the table's Machine line
where_run() {
    if [ -n "$SWEEP_SET" ]; then echo "local ranks (whole sweeps of bin/$(exe_of "$COLLS")_test)"
    elif [ -n "$RANKS" ]; then echo "local ranks (coll_bench / mpi_bench)"
    else echo "namespace hosts '$LAYOUT' ($([ -n "$GBIT" ] && echo "links tbf $GBIT Gbit/s each way" || echo "links not rate-limited"))"; fi
}
# ---- the table: the command as anyone can run it (a tree by its folder name, no machine paths)
cmd=
for a in "${ARGS[@]}"; do
    [[ $a =~ ^([A-Za-z0-9_.+-]+=)@([^ ]+)(.*)$ ]] && a="${BASH_REMATCH[1]}@$(basename "${BASH_REMATCH[2]}")${BASH_REMATCH[3]}"
    [[ -z $a || $a == *[[:space:]=\;]* ]] && a="'$a'"
    cmd="$cmd $a"
done
{
    echo "# A/B: ${labels[*]} - $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Command: \`bench/ab.sh$cmd\`"
    echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end;" \
        "$(where_run)."
    for i in "${!labels[@]}"; do
        d=${dirs[$i]}
        case $d in -) echo "- ${labels[$i]}: the MPI, bench/lib-local.sh's flags" ;;
            *) if git -C "$d" rev-parse --git-dir >/dev/null 2>&1; then
                   what="$(git -C "$d" log -1 --format='%h %s' | cut -c1-60)$(git -C "$d" diff --quiet HEAD || echo ' (+ uncommitted)')"
               else what="the tree $(basename "$d") (not a git checkout)"; fi
               echo "- ${labels[$i]}: $what${envs[$i]:+, ${envs[$i]}}${xargs[$i]:+, options ${xargs[$i]}}" ;;
        esac
    done
    [ ! -s "$RAW/duplex" ] || echo "- floor: duplex capacity GB/s per round (iperf3 / p2p): $(awk '{printf "%s%s %s / %s", (NR > 1 ? "; " : ""), $1, ($2 == "" ? "-" : $2), ($3 == "" ? "-" : $3)}' "$RAW/duplex")"
    echo
    if [ -n "$SWEEP_SET" ]; then
        echo "Whole sweeps \`$(exe_of "$COLLS")_test $SWEEP\` in $ROUNDS rounds, the order rotating by round: wall seconds" \
            "(sweep/wall_s) and the sum of the table's aveg_time column (sweep/sum_avg_us);" \
            "speed-up = ${labels[0]}'s figure / the side's, round by round (> 1: faster)."
    else
        echo "Time per call (us, the slowest rank's average) in $ROUNDS rounds of $NI timed iterations after $WARM warm-up," \
            "the order rotating by round; speed-up = ${labels[0]}'s time / the side's, round by round (> 1: faster)."
    fi
    echo
    /usr/bin/python3 bench/abstat.py ${SWEEP_SET:+--unit s/us} "$RAW/rows" "${labels[@]}"
} >"$RAW/table.md"
cat "$RAW/table.md"
[ -z "$OUT" ] || cp "$RAW/table.md" "$OUT"
