#!/usr/bin/env bash
# bench/hosts-env-ab.sh - one collective across namespace hosts
# (tests/lib/netns.sh, torchrun-style launch) under several environment
# settings of the library, interleaved round by round (the order rotates), so
# that a knob's effect is a ratio of runs made under the same state of this
# shared machine. Per size: each setting's median [min-max] time (rank 0's
# aveg_time, the slowest rank's average) and, round by round, the first
# setting's time over each other's (> 1: that setting is faster), median
# [min-max]. The table and the command go into a markdown file.
#
#   bench/hosts-env-ab.sh [-c COLL] [-l LAYOUT] [-g GBIT] [-s SIZES] [-R ROUNDS] [-n ITERS] [-o FILE.md]
#                         'LABEL=VAR=V VAR2=V2' ...
#     -c  all_reduce, all_gather, alltoall, ... (the NAME of bin/NAME_test; default alltoall)
#     -l  ranks per host, e.g. "1 1 1 1" (default; 2 to 4 hosts)
#     -g  limit every host's link to GBIT Gbit/s each way (tc tbf, netns_tbf; default 5, 0 = none)
#     -s  sizes, comma-separated (default 1M,64M)
#     -R  rounds (default 5); -n timed iterations per run (default 5, after 1 warm-up)
#   Each trailing argument is one setting: its label, '=', then the environment
#   (space-separated VAR=VALUE, may be empty: 'base=').
# Needs root (namespaces, tc). All traffic stays in 10.77.0.0/24.
set -u
cd "$(dirname "$0")/.."
COLL=alltoall LAYOUT="1 1 1 1" GBIT=5 SIZES=1M,64M ROUNDS=5 NI=5 OUT=
while getopts "c:l:g:s:R:n:o:h" o; do
    case $o in
        c) COLL=$OPTARG ;; l) LAYOUT=$OPTARG ;; g) GBIT=$OPTARG ;; s) SIZES=$OPTARG ;; R) ROUNDS=$OPTARG ;;
        n) NI=$OPTARG ;; o) OUT=$OPTARG ;; *) sed -n '2,20p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
EXE=bin/${COLL}_test
[ -x "$EXE" ] || { echo "hosts-env-ab: invalid -c '$COLL': no $EXE (allowed: the NAME of a bin/NAME_test; run make)" >&2; exit 2; }
[[ $LAYOUT =~ ^[1-8]( [1-8]){1,3}$ ]] ||
    { echo "hosts-env-ab: invalid -l '$LAYOUT' (allowed: 2 to 4 hosts of 1..8 ranks, e.g. '2 2 2')" >&2; exit 2; }
[[ $GBIT =~ ^[0-9]+$ ]] || { echo "hosts-env-ab: invalid -g '$GBIT' (allowed: a whole number of Gbit/s, 0 = no limit)" >&2; exit 2; }
[[ $SIZES =~ ^[0-9]+[KM]?(,[0-9]+[KM]?)*$ ]] ||
    { echo "hosts-env-ab: invalid -s '$SIZES' (allowed: sizes like 1M,64M)" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "hosts-env-ab: invalid -R '$ROUNDS' (allowed: 1 or more)" >&2; exit 2; }
[[ $NI =~ ^[1-9][0-9]*$ ]] || { echo "hosts-env-ab: invalid -n '$NI' (allowed: 1 or more)" >&2; exit 2; }
[ $# -ge 1 ] || { echo "hosts-env-ab: no setting given (allowed: 'LABEL=VAR=VALUE ...' arguments)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "hosts-env-ab: needs root (network namespaces, tc)" >&2; exit 1; }
labels=() envs=()
for a in "$@"; do
    [[ $a == *=* ]] || { echo "hosts-env-ab: invalid setting '$a' (allowed: 'LABEL=VAR=VALUE ...')" >&2; exit 2; }
    labels+=("${a%%=*}") envs+=("${a#*=}")
done
OUT=${OUT:-bench/results/hosts-env-ab-$(date +%Y%m%d).md}
RAW=$(mktemp -d /tmp/hosts-env-ab.XXXXXX)
. tests/lib/netns.sh
nh=$(wc -w <<<"$LAYOUT")
netns_up "$nh" >/dev/null || exit 1
trap 'netns_down >/dev/null 2>&1; rm -rf "$RAW"' EXIT
[ "$GBIT" = 0 ] || netns_tbf "$GBIT" || exit 1
IFS=, read -r -a sz <<<"$SIZES"
export NETNS_RANK_TIMEOUT=300
ns=${#labels[@]} port=29400
for r in $(seq 1 "$ROUNDS"); do
    for k in $(seq 0 $((ns - 1))); do
        i=$(((k + r) % ns)) port=$((port + 1))
        for s in "${sz[@]}"; do
            # shellcheck disable=SC2086
            NETNS_MASTER_PORT=$port netns_env_launch "$RAW/run" "$LAYOUT" env ${envs[$i]} "$EXE" -b "$s" -e "$s" \
                -n "$NI" -w 1 -c 0 >&2 || { echo "hosts-env-ab: ${labels[$i]} $s round $r failed" >&2; exit 1; }
            port=$((port + 1))
            awk -F'|' -v l="${labels[$i]}" -v r="$r" '/^[0-9]+ +\|/ {gsub(/ /, ""); print $1, l, r, $2}' \
                "$RAW/run.r0.out" >>"$RAW/rows"
        done
    done
    echo "round $r of $ROUNDS done" >&2
done
{
    echo "# ${COLL} across namespace hosts under several settings - $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Command: \`bench/hosts-env-ab.sh -c $COLL -l '$LAYOUT' -g $GBIT -s $SIZES -R $ROUNDS -n $NI$(printf " '%s'" "$@")\`"
    echo "Machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; links $([ "$GBIT" = 0 ] && echo unlimited veth || echo "tbf $GBIT Gbit/s each way")."
    echo "Times: rank 0's aveg_time (us), median [min-max] over the rounds; ratio: ${labels[0]}'s time / the setting's, round by round (> 1: faster than ${labels[0]})."
    echo
    python3 - "$RAW/rows" "${labels[@]}" <<'PY'
import statistics as st, sys
rows, labels = sys.argv[1], sys.argv[2:]
t = {}
for line in open(rows):
    b, l, r, us = line.split()
    t.setdefault(int(b), {}).setdefault(l, {})[int(r)] = float(us)
fmt = lambda v: "%.4g [%.4g-%.4g]" % (st.median(v), min(v), max(v))
print("| bytes | setting | time us | ratio |")
print("|---|---|---|---|")
for b in sorted(t):
    base = t[b].get(labels[0], {})
    for l in labels:
        v = t[b].get(l, {})
        if not v:
            continue
        rat = [base[r] / v[r] for r in v if r in base]
        print("| %d | %s | %s | %s |" % (b, l, fmt(list(v.values())), fmt(rat) if rat and l != labels[0] else "-"))
PY
} >"$OUT.tmp" && mv "$OUT.tmp" "$OUT"
cat "$OUT"
