# tests/lib/common.sh - helpers for the end-to-end test scripts (sourced).
# Scripts run with CB_O (build dir with bin/) and CB_ROOT (repo) exported by tests/run.sh.
CB_O=${CB_O:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CB_ROOT=${CB_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BIN=$CB_O/bin
FAILS=0

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }
check() { # check "description" command...
    local d=$1; shift
    if "$@"; then pass "$d"; else fail "$d"; fi
}
has() { # has FILE FIXED-STRING DESCRIPTION: a check that FILE holds the string (FILE shown if not)
    if grep -qF -- "$2" "$1"; then pass "$3"; else fail "$3: '$2' not in ${1##*/}"; sed 's/^/   | /' "$1"; fi; }
usage_err() { # usage_err WANT CMD ARGS...: CMD must exit 2 with one stderr line holding WANT (sets out, rc)
    local want=$1; shift
    out=$("$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] || fail "'${*:2}' exit $rc (want 2): $out"
    [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "'${*:2}' message not one line: $out"
    echo "$out" | grep -q -- "$want" || fail "'${*:2}' message lacks '$want': $out"
}
finish() { [ "$FAILS" -eq 0 ] && { echo "all checks passed"; exit 0; }; echo "$FAILS check(s) failed"; exit 1; }

# Segments of ours left in /dev/shm (collbench-*) that were not there when the
# test started (CI runs one test at a time; this keeps a developer's other runs
# from failing the check), printed; status 0 if none.
SHM_BASELINE=$(ls /dev/shm 2>/dev/null | grep -E 'collbench' | sort || true)
no_shm_leftovers() {
    local l
    l=$(comm -13 <(echo "$SHM_BASELINE") <(ls /dev/shm 2>/dev/null | grep -E 'collbench' | sort) | grep . || true)
    [ -z "$l" ] && return 0
    echo "leftover shared memory: $l"; return 1
}
# No process of this test's session whose command line contains $1 (other
# than us): leaked ranks keep the session; other people's runs do not count.
CB_SID=$(ps -o sid= -p $$ | tr -d ' ')
no_procs() {
    local l
    l=$(pgrep -s "$CB_SID" -f -- "$1" | grep -v "^$$\$" || true)
    [ -z "$l" ] && return 0
    echo "leftover processes for '$1':"; ps -o pid,stat,args -p $(echo $l | tr ' ' ',') 2>/dev/null; return 1
}
# Wait until command succeeds or timeout (seconds, fractional ok: 0.5 was
# cut to 0 by ${t%.*} until 2026-12, and such a wait gave up at once).
wait_for() {
    local t=$1; shift
    local end=$(( $(now_ms) + $(awk -v t="$t" 'BEGIN { printf "%.0f", t * 1e3 }') ))
    while [ "$(now_ms)" -lt $end ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done
    return 1
}
# Children (ranks) of a standalone launcher pid.
# children_of PID: its children in the order they were forked (pid order, with
# pids that wrapped past pid_max after the others: a launcher's ranks 0..p-1;
# once in CI rank 1 had pid 32767 and ranks 2, 3 small ones)
children_of() {
    pgrep -P "$1" 2>/dev/null | awk -v m="$(cat /proc/sys/kernel/pid_max)" '
        { p[NR] = $1; if ($1 > hi) hi = $1 }
        END { for (i = 1; i <= NR; i++) print (hi - p[i] > m / 2 ? p[i] + m : p[i]), p[i] }' | sort -n | cut -d' ' -f2
}
# now_ms: milliseconds on a monotonic clock (CLOCK_BOOTTIME, /proc/uptime: 10
# ms steps), for durations. It was `date +%s%N`, the wall clock, which NTP or
# a VM's clock sync may step while a test runs (a fresh CI machine often steps
# its clock soon after boot; this VM's wall clock was seen jumping against
# process start times): a 3 s timeout measured as 2 s or 4. No fork either.
now_ms() { local u _r; read -r u _r </proc/uptime; u=${u/./}; echo $(( 10#$u * 10 )); }
wait_rcs() { # wait_rcs PID...: wait for each; their exit codes in rcs (in order), the ms it took in wait_ms
    local p t0; t0=$(now_ms); rcs=()
    for p in "$@"; do wait "$p"; rcs+=($?); done
    wait_ms=$(( $(now_ms) - t0 ))
}
show_ranks() { # show_ranks DIR N: ranks 0..N-1's exit codes (rcs) and outputs (DIR/rR.out)
    local r; for ((r = 0; r < $2; r++)); do echo "--- rank $r exit ${rcs[$r]}"; cat "$1/r$r.out"; done
}
# Time bounds from a measured baseline, not fixed figures (issue 32): a test
# that bounds how long something takes first runs, under the same load, a
# complete short run of the same programs (launcher, ranks, sizes), and allows
# FACTOR times that on top of what its own settings make it wait (a timeout);
# the fixed allowance it had before is the floor and CAP (when given) the
# ceiling (a bound that must stay under a configured timeout to mean anything).
# A loaded or slow machine stretches the baseline and so the bound; a hang or
# a missed timeout still fails.
#   base=$(baseline_ms CMD...)                       ms CMD took here and now
#   max=$(bound_ms WAIT_MS FACTOR BASE_MS FLOOR_MS [CAP_MS])
#                                                    WAIT + max(FLOOR, FACTOR x BASE), at most CAP
baseline_ms() { local t0 t1; t0=$(now_ms); "$@" >/dev/null 2>&1; t1=$(now_ms); echo $(( t1 - t0 )); }
bound_ms() {
    local b=$(( $1 + ($2 * $3 > $4 ? $2 * $3 : $4) ))
    [ -n "${5:-}" ] && [ "$b" -gt "$5" ] && b=$5
    echo $b
}
# free_port: a port nobody listens on, below the kernel's ephemeral range, so
# that no connect() or port-0 listener of another process can take it between
# this check and its use (an ephemeral port could be: a CI failure of 13 showed it).
free_port() {
    /usr/bin/python3 - <<'PY'
import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    p = random.randrange(10000, max(lo, 10002) - 1)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", p)); s.listen(1); s.close(); print(p); break
    except OSError:
        s.close()
else:
    raise SystemExit("free_port: no free port below the ephemeral range")
PY
}

# cpu_cap PERMILLE: a cpu cgroup whose processes get at most PERMILLE/1000 of
# one CPU (CFS bandwidth: quota per 100 ms period; v1 cpu controller or v2
# cpu.max). Sets CPU_CAP_PROCS to the file a process writes its pid into to
# join it; cpu_cap_rm removes it (after its processes have exited). Returns 1
# where neither hierarchy can be written (not root, no cpu controller).
# Unlike nice 19 beside a busy loop on one pinned CPU, the cap does not
# depend on the scheduler's sleeper credit or on where the other ranks run.
CPU_CAP_DIR=
cpu_cap() {
    local q=$(( $1 * 100 )) d
    if [ -w /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
        d=/sys/fs/cgroup/cpu/collbench-test-$$
        mkdir "$d" 2>/dev/null && echo 100000 >"$d/cpu.cfs_period_us" && echo $q >"$d/cpu.cfs_quota_us" || return 1
    elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
        d=/sys/fs/cgroup/collbench-test-$$
        { grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu >/sys/fs/cgroup/cgroup.subtree_control; } 2>/dev/null
        mkdir "$d" 2>/dev/null && echo "$q 100000" >"$d/cpu.max" || { rmdir "$d" 2>/dev/null; return 1; }
    else
        return 1
    fi
    CPU_CAP_DIR=$d CPU_CAP_PROCS=$d/cgroup.procs
}
cpu_cap_rm() {
    [ -n "$CPU_CAP_DIR" ] || return 0
    local i
    for i in 1 2 3 4 5 6 7 8 9 10; do rmdir "$CPU_CAP_DIR" 2>/dev/null && break; sleep 0.2; done
    CPU_CAP_DIR=
}
