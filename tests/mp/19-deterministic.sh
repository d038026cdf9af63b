#!/usr/bin/env bash
# timeout: 600
# parallel: yes
# COLL_DETERMINISTIC=1: fp32 and bf16 sums of values of mixed magnitudes
# (build/tests/determ, tests/determ/determ.c) give the same bits with every
# allowed algorithm of allreduce, reduce, reduce_scatter and reduce_scatterv,
# on every rank, in every repetition and with every host layout (simulated
# hosts: COLL_HOST_ID per rank; -z: zero-copy buffers), for 2..8 ranks; and those bits are the
# rank-order sum ((x0 + x1) + x2) + ... . Without it, at least two
# configurations differ (so this test can fail). Forcing an excluded
# algorithm is an error naming the deterministic ones; HCCL_DETERMINISTIC=true
# sets COLL_DETERMINISTIC=1.
set -u
D=$CB_O/build/tests/determ
B=$CB_O/bin
[ -x "$D" ] || { echo "missing $D (run make)"; exit 1; }
for v in $(env | sed -n 's/^\(\(HCCL\|COLL\)_\(ALGO\|DETERMINISTIC\)\)=.*/\1/p'); do unset "$v"; done
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d /tmp/cb-determ.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# --- deterministic: one hash per (p, dtype, n), everywhere -------------------
layouts=("-n 2" "-H 1,1" "-n 3" "-H 2,1 -I" "-H 1,1,1" "-n 4" "-n 4 -z" "-H 2,2 -I" "-H 1,3" "-H 2,1,2 -I" "-n 5"
         "-H 3,3" "-H 1,2,1,2 -I" "-n 7" "-n 7 -z" "-H 1,2,1,3 -I" "-n 8" "-H 4,4 -I" "-H 1,1,1,1,1,1,1,1")
i=0
for l in "${layouts[@]}"; do
    i=$((i + 1))
    COLL_DETERMINISTIC=1 timeout 200 "$D" $l -r 2 >"$tmp/d$i.out" 2>"$tmp/d$i.err" ||
        bad "determ $l (COLL_DETERMINISTIC=1) exit $?: $(tail -3 "$tmp/d$i.err")"
    grep -q '^R ' "$tmp/d$i.out" || bad "determ $l printed no result"
done
cat "$tmp"/d*.out >"$tmp/det.all"
awk '$1 == "R" && $10 != "ordered=1" {print}' "$tmp/det.all" | head -5 | while read -r line; do
    echo "FAIL: not the rank-order sum: $line"; done
[ -z "$(awk '$1 == "R" && $10 != "ordered=1"' "$tmp/det.all")" ] || fail=1
groups=$(awk '$1 == "R" {print $2, $3, $4}' "$tmp/det.all" | sort -u | wc -l)
distinct=$(awk '$1 == "R" {print $2, $3, $4, $9}' "$tmp/det.all" | sort -u | wc -l)
[ "$groups" -eq 28 ] || bad "expected 28 (p, dtype, n) groups (7 rank counts x 2 x 2), got $groups"
[ "$distinct" -eq "$groups" ] || {
    bad "COLL_DETERMINISTIC=1: $distinct hashes for $groups (p, dtype, n) groups"
    awk '$1 == "R" {print $2, $3, $4, $5, $6, $9}' "$tmp/det.all" | sort | uniq -c | head -20; }
# every reducing collective ran its deterministic algorithms: direct/cma on one host, ordered across hosts
for k in allreduce reduce reduce_scatter reduce_scatterv; do
    for a in direct ordered; do
        grep -q "^R .* kind=$k algo=$a " "$tmp/det.all" || bad "$k: algorithm $a never ran under COLL_DETERMINISTIC=1"
    done
    n=$(grep -c "^R p=[0-9] dt=.* kind=$k algo=" "$tmp/det.all")
    [ "$n" -gt 0 ] || bad "$k: no results"
done
used=$(awk '$1 == "R" {print $6}' "$tmp/det.all" | sort -u | tr '\n' ' ')
case "$used" in *algo=ring*|*algo=hd*|*algo=tree*|*algo=hier*|*algo=binomial*|*algo=pipeline*|*algo=halving*|*algo=rs_gather*)
    bad "COLL_DETERMINISTIC=1 used a non-deterministic algorithm: $used" ;; esac
grep -q "^X kind=allreduce algo=ring excluded: .*deterministic allreduce algorithms: direct cma ordered" "$tmp/d1.out" ||
    bad "forcing allreduce=ring under COLL_DETERMINISTIC=1 not refused: $(grep '^X' "$tmp/d1.out" | head -3)"
echo "deterministic: $(grep -c '^R' "$tmp/det.all") results, $groups groups, one hash each; algorithms: $used"

# --- without it the order shows: at least two configurations differ ----------
for l in "-n 3" "-H 2,1 -I" "-n 5"; do
    timeout 200 "$D" $l -r 1 >>"$tmp/free.all" 2>>"$tmp/free.err" || bad "determ $l exit $?: $(tail -3 "$tmp/free.err")"
done
free_groups=$(awk '$1 == "R" {print $2, $3, $4}' "$tmp/free.all" | sort -u | wc -l)
free_distinct=$(awk '$1 == "R" {print $2, $3, $4, $9}' "$tmp/free.all" | sort -u | wc -l)
[ "$free_distinct" -gt "$free_groups" ] || bad "without COLL_DETERMINISTIC no two configurations differ: the data do not show the order"
grep -q "ordered=0" "$tmp/free.all" || bad "without COLL_DETERMINISTIC every algorithm summed in rank order"
echo "free: $free_distinct hashes for $free_groups groups (e.g. $(awk '$1 == "R" && $10 == "ordered=0" {print $5, $6; exit}' "$tmp/free.all") differs)"

# --- forcing, the HCCL name ---------------------------------------------------
err=$(COLL_DETERMINISTIC=1 COLL_ALGO=allreduce=ring "$B/all_reduce_test" -p 2 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || bad "COLL_ALGO=allreduce=ring with COLL_DETERMINISTIC=1: exit $rc (want 2): $err"
case "$err" in *"invalid COLL_ALGO='allreduce=ring': allreduce algorithm 'ring' in COLL_ALGO is not deterministic and COLL_DETERMINISTIC=1 is set; deterministic allreduce algorithms: direct cma ordered"*) ;;
    *) bad "forced ring message: $err" ;; esac
err=$(HCCL_DETERMINISTIC=true COLL_ALGO=ring "$B/reduce_scatter_test" -p 2 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || bad "COLL_ALGO=ring with HCCL_DETERMINISTIC=true: exit $rc (want 2): $err"
case "$err" in *"deterministic allreduce algorithms: direct cma ordered"*) ;; *) bad "HCCL_DETERMINISTIC=true, ring: $err" ;; esac
err=$(COLL_DETERMINISTIC=1 "$B/reduce_test" --algo pipeline -p 2 -b 1K -e 1K -n 1 -w 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || bad "--algo pipeline with COLL_DETERMINISTIC=1: exit $rc (want 2): $err"
case "$err" in *"invalid --algo 'pipeline': reduce algorithm 'pipeline'"*"deterministic reduce algorithms: direct ordered"*) ;;
    *) bad "--algo pipeline message: $err" ;; esac
"$B/all_reduce_test" --list-algos | grep -q '^reduce_scatterv  *ordered .*\[allowed with COLL_DETERMINISTIC=1\]$' ||
    bad "--list-algos does not mark the deterministic algorithms"
out=$(HCCL_DETERMINISTIC=true "$B/all_reduce_test" --print-config 2>&1)
echo "$out" | grep -q "^COLL_DETERMINISTIC  *1 .*\[from HCCL_DETERMINISTIC='true'\]" || bad "HCCL_DETERMINISTIC=true: $(echo "$out" | grep DETERMINISTIC)"
err=$(COLL_DETERMINISTIC=1 COLL_DEBUG=INFO COLL_DEBUG_SUBSYS=TUNING "$B/all_reduce_test" -p 3 -b 64K -e 64K -n 1 -w 0 -c 1 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] || bad "all_reduce_test with COLL_DETERMINISTIC=1: exit $rc: $err"
case "$err" in *"algorithm direct"*|*"algorithm cma"*) ;; *) bad "COLL_DETERMINISTIC=1 on one host did not choose direct/cma: $err" ;; esac

[ $fail -eq 0 ] && echo "19-deterministic: all passed"
exit $fail
