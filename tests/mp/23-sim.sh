#!/usr/bin/env bash
# timeout: 300
# collbench sim: the real algorithms on the simulated transport (one process,
# virtual time). Every usable algorithm of every collective (--compare-algos
# forces each in turn) with real data checked element by element (--verify),
# at p = 1..16 on one host, one rank per host, two hosts and uneven layouts,
# sizes 0, 1, odd and up to ~100 KB, rotating dtypes and ops, two roots; every
# algorithm that is not shared-memory-only must run somewhere. Then 1,000 ranks
# on 125 hosts, and the command-line errors.
set -u
CB=$CB_O/bin/collbench
[ -x "$CB" ] || { echo "missing $CB (run make)"; exit 1; }
rc=0
colls="allreduce allgather allgatherv reduce_scatter reduce_scatterv reduce broadcast scatter gather alltoall alltoallv"
dtypes=(fp32 int8 fp16 bf16 int32 fp64 uint8 int64 uint16 fp32 int16 uint32 fp16 bf16 fp64 int8)
ops=(sum max min prod)
declare -A listed ran
runs=0
for p in $(seq 1 16); do
    layouts="1 $p"                                      # -H: hosts, or ranks per host
    [ "$p" -ge 2 ] && layouts="$layouts 2"
    [ "$p" -ge 3 ] && layouts="$layouts 1,$((p - 1))"
    [ "$p" -ge 6 ] && layouts="$layouts 3,1,$((p - 4))"
    dt=${dtypes[$((p - 1))]}
    for lay in $layouts; do
        for c in $colls; do
            op=${ops[$(((p + ${#c}) % 4))]}
            roots=0
            case $c in reduce|broadcast|scatter|gather) roots="$((p - 1)) $((p / 2))" ;; esac
            [ "$op" = prod ] && case $dt in fp16|bf16|int8|uint8) op=sum ;; esac
            for r in $roots; do
                out=$("$CB" sim -n "$p" -H "$lay" -c "$c" -d "$dt" -o "$op" -r "$r" -b 0 -e 100000 -f 7 \
                      --verify --compare-algos 2>&1)
                st=$?
                runs=$((runs + 1))
                if [ $st -ne 0 ] || echo "$out" | grep -qE '\| (failed|error) |  (failed|error)'; then
                    echo "== sim -n $p -H $lay -c $c -d $dt -o $op -r $r: exit $st"
                    echo "$out" | grep -vE 'success|not usable|^#|^data_size' | head -10
                    rc=1
                fi
                for a in $(echo "$out" | awk '/^#   / {print $2}' | sort -u); do listed[$c/$a]=1; done
                for a in $(echo "$out" | awk '/^#   / && / success/ {print $2}' | sort -u); do ran[$c/$a]=1; done
            done
        done
    done
done
echo "$runs sim runs"
# shared-memory-only algorithms cannot run in the simulation (sim.h)
for k in "${!listed[@]}"; do
    case ${k#*/} in direct|cma|shm) continue ;; esac
    [ -n "${ran[$k]:-}" ] || { echo "== $k never ran in the simulation"; rc=1; }
done
echo "algorithms verified: $(echo "${!ran[@]}" | tr ' ' '\n' | sort | tr '\n' ' ')"

# scale: 1,000 ranks on 125 hosts, every row checked
out=$("$CB" sim -n 1000 -H 125 -c allreduce --verify 2>&1)
st=$?
echo "$out" | tail -3
rows=$(echo "$out" | grep -c '| success ')
if [ $st -ne 0 ] || [ "$rows" -lt 5 ] || echo "$out" | grep -qE '\| (failed|error) '; then
    echo "== sim -n 1000 -H 125 allreduce --verify: exit $st, $rows success rows"; rc=1
fi
# deterministic: the same prediction twice
a=$("$CB" sim -n 64 -H 8 -c alltoall -b 1M -e 1M --json | grep -o '"time_us": [0-9.]*')
b=$("$CB" sim -n 64 -H 8 -c alltoall -b 1M -e 1M --json | grep -o '"time_us": [0-9.]*')
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "== sim not deterministic: '$a' vs '$b'"; rc=1; }

# bad input: exit 2, one line naming the value
for bad in "-n 0 -c allreduce" "-n 4 -c allreduc" "-n 4 -H 5 -c allreduce" "-n 4 -H 2,x -c allreduce" \
           "-n 5 -H 2,2 -c allreduce" "-n 4 -c reduce -r 4" "-n 4 -c allreduce --algo nope" \
           "-n 4 -c allreduce -d fp33" "-n 4 -c allreduce --net-gbps 0" "-n 4 -c allreduce --bogus"; do
    msg=$("$CB" sim $bad 2>&1 >/dev/null)
    st=$?
    if [ $st -ne 2 ] || [ "$(echo "$msg" | wc -l)" -ne 1 ]; then
        echo "== collbench sim $bad: exit $st (want 2), message: $msg"; rc=1
    fi
done
exit $rc
