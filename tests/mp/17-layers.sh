#!/usr/bin/env bash
# timeout: 180
# parallel: yes
# src/ follows the layers (core <- bootstrap <- topo <- transport <- coll <-
# comm), by its includes and by the names it uses, no algorithm names a
# transport and nothing outside src/transport/sim* names the simulator:
# scripts/check-layers.sh, with its allow-list of known violations
# (scripts/check-layers.allow). The checker itself is tried first on copies of
# src/ with one violation planted in each: an upward include written
# "coll/x.h", "../coll/x.h" and <coll/x.h>, a call through a local prototype
# to a function of a higher layer, a table of a higher layer named, a
# transport's private header and its table named from coll, the simulator
# named by a call, a member and an include; each must fail naming the file,
# line and what; comments and strings must not count; an allow-list entry
# lets its count of lines pass, one more fails and an entry for a violation
# gone is reported stale; bad input gets exit 2.
set -u
ROOT=${CB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
C=$ROOT/scripts/check-layers.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$ROOT/tests/lib/common.sh"

cp -r "$ROOT/src" "$T/pristine"
fresh() { rm -rf "$T/$1"; cp -r "$T/pristine" "$T/$1"; }
# plant NAME FILE TEXT: TEXT appended to FILE of the copy $T/NAME; prints the
# number of the first line appended (one violation per file of a copy)
plant() {
    wc -l <"$T/$1/$2" | awk '{print $1 + 1}'
    printf '%b\n' "$3" >>"$T/$1/$2"
}
# want_fail NAME PATTERN: the checker on $T/NAME (run once per copy) exits 1
# with a line "FAIL: PATTERN"
want_fail() {
    [ -f "$T/$1.rc" ] || { "$C" "$T/$1" >"$T/$1.out" 2>&1; echo $? >"$T/$1.rc"; }
    local out rc; out=$(cat "$T/$1.out"); rc=$(cat "$T/$1.rc")
    if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q -- "^FAIL: $2"; then
        pass "$1: exit 1, $(printf '%s\n' "$out" | grep -m1 -- "^FAIL: $2")"
    else
        fail "$1: exit $rc (want 1) or no line 'FAIL: $2' in: $out"
    fi
}

out=$("$C" "$T/pristine" 2>&1) && pass "an untouched copy passes" || fail "an untouched copy fails: $out"

# upward includes, each spelling
fresh up
l1=$(plant up core/log.c '#include "coll/util/coll_util.h"')
l2=$(plant up bootstrap/id.c '#include "../coll/util/coll_util.h"')
l3=$(plant up topo/topo.c '#include <coll/util/coll_util.h>')
l4=$(plant up transport/tcp.c '#include "../comm/not_yet.h"')
want_fail up "core/log.c:$l1: include coll/util/coll_util.h (coll/util/coll_util.h: layer coll is above core)"
want_fail up "bootstrap/id.c:$l2: include coll/util/coll_util.h (coll/util/coll_util.h (written \"../coll/util/coll_util.h\"): layer coll is above bootstrap)"
want_fail up "topo/topo.c:$l3: include coll/util/coll_util.h (coll/util/coll_util.h (written <coll/util/coll_util.h>): layer coll is above topo)"
want_fail up "transport/tcp.c:$l4: include comm/not_yet.h (comm/not_yet.h (written \"../comm/not_yet.h\"): layer comm is above transport)"

# names of a higher layer: a call through a local prototype, a macro, a table
fresh names
l1=$(plant names bootstrap/id.c 'const void *coll_algo_find(int kind, const char *name);\nstatic const void *planted(void)\n{\n    return coll_algo_find(0, "ring");\n}')
l2=$(plant names core/log.h '#define PLANTED_FIND(k) coll_algo_find((k), "ring")')
l3=$(plant names topo/topo.c 'static const void *planted_t(void) { return coll_algo_table[0]; }')
want_fail names "bootstrap/id.c:$l1: name coll_algo_find (defined in layer coll, above bootstrap)"
want_fail names "bootstrap/id.c:$((l1 + 3)): name coll_algo_find "
want_fail names "core/log.h:$l2: name coll_algo_find (defined in layer coll, above core)"
want_fail names "topo/topo.c:$l3: name coll_algo_table (defined in layer coll, above topo)"

# the transport seam: a private header and a table named from coll
fresh tp
l1=$(plant tp coll/api.c '#include "../transport/shm.h"')
l2=$(plant tp coll/util/args.c 'static const void *planted_tp = &coll_tcp_ops;')
want_fail tp "coll/api.c:$l1: include transport/shm.h (transport/shm.h (written \"../transport/shm.h\"): private to src/transport)"
want_fail tp "coll/util/args.c:$l2: transport coll_tcp_ops (a transport named outside src/transport)"

# the simulator's seam: files naming it (a call, a member, an include)
fresh sim
l1=$(plant sim coll/api.c 'static int planted_s(coll_comm *c) { return coll_sim_wait(c, 0, 0) == 0 && c->sim; }')
l2=$(plant sim transport/wait.c 'static int planted_w(const coll_comm *c) { return c->sim != 0; }')
l3=$(plant sim comm/split.c '#include <transport/sim.h>')
want_fail sim "coll/api.c:$l1: sim coll_sim_wait "
want_fail sim "coll/api.c:$l1: sim ->sim "
want_fail sim "transport/wait.c:$l2: sim ->sim "
want_fail sim "comm/split.c:$l3: sim transport/sim.h "

# the allow-list: a known violation on as many lines as its entry says is
# allowed (exit 0), one line more fails, an entry above what is found is stale
fresh allow
printf '%s\n' 'coll/api.c sim ->sim 1  # planted' 'transport/wait.c sim coll_sim_wait 1  # planted, fixed' >"$T/planted.allow"
l1=$(plant allow coll/api.c 'static int planted_a(const coll_comm *c) { return c->sim != 0; }')
out=$("$C" -a "$T/planted.allow" "$T/allow" 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "^allowed: coll/api.c:$l1: sim ->sim .* -- planted$" &&
    echo "$out" | grep -q "^stale allow-list entry, 0 line(s) now .*: transport/wait.c sim coll_sim_wait 1$" &&
    pass "an allowed violation: exit 0; a fixed one's entry reported stale" || fail "allowed: exit $rc: $out"
l2=$(plant allow coll/api.c 'static int planted_b(const coll_comm *c) { return c->sim == 0; }')
out=$("$C" -a "$T/planted.allow" "$T/allow" 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "^FAIL: coll/api.c:[0-9]*: sim ->sim .* (2 lines, the allow-list has 1)$" &&
    pass "one line more than allowed: exit 1" || fail "more than allowed: exit $rc: $out"

# not violations: comments, strings, a member of that name, a static of this file's own
fresh quiet
plant quiet core/log.c '/* #include "../coll/coll_util.h" calls coll_algo_find() */\n// coll_sim_wait(comm) and comm->sim\nstatic const char *planted_q = "coll_algo_find(0) <coll/x.h> coll_tcp_ops";\nstatic int coll_algo_find(void) { return planted_q[0]; }' >/dev/null
out=$("$C" "$T/quiet" 2>&1) && pass "comments, strings and a static of the same name pass" || fail "quiet: $out"

# bad input: exit 2, one line naming the value
printf 'coll/api.c sim ->sim 5\n' >"$T/noreason.allow"
out=$("$C" -a "$T/noreason.allow" "$T/pristine" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "noreason.allow:1: want 'FILE RULE WHAT LINES  # reason'" &&
    pass "an allow-list entry without its reason: exit 2" || fail "entry without reason: exit $rc: $out"
out=$("$C" "$T/none" 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "'$T/none': no such directory" &&
    pass "a missing folder: exit 2" || fail "missing folder: exit $rc: $out"

# the real tree
if out=$("$C" "$ROOT/src"); then
    pass "src/ holds the layers:"; echo "$out" | grep -v "^allowed: "
    echo "($(echo "$out" | grep -c "^allowed: ") known violation line(s) allowed by scripts/check-layers.allow)"
else
    fail "src/ breaks the layers:"; echo "$out"
fi
finish
echo "all checks passed"
