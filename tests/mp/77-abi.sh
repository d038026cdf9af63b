#!/usr/bin/env bash
# timeout: 30
# parallel: yes
# The ABI of libcoll.so is include/coll.h: the dynamic symbols it defines are
# exactly the functions coll.h declares (both ways: nothing internal leaks,
# nothing declared is missing), every declaration carries COLL_API, and the
# library has the SONAME libcoll.so.MAJOR with the versioned file names
# libcoll.so -> libcoll.so.MAJOR -> libcoll.so.MAJOR.MINOR.PATCH.
# The tools (which link libcoll.a) reach internals only through
# tools/common/coll_internal.h, never by including src/ headers themselves.
set -u
source "$CB_ROOT/tests/lib/common.sh"
cd "$CB_ROOT"
so=$CB_O/lib/libcoll.so
[ -e "$so" ] || { echo "FAIL: $so not built (run make)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Declared: the identifier before the first '(' of every COLL_API line.
sed -n 's/^COLL_API [^(]*[^A-Za-z0-9_]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' include/coll.h | sort -u >"$tmp/declared"
# A prototype at column 0 without COLL_API would be declared but hidden.
bare=$(grep -nE '^(const |unsigned |signed )?[a-z_][a-z0-9_]* \**[a-z_][a-z0-9_]*\(' include/coll.h || true)
check "every function declaration in coll.h carries COLL_API" test -z "$bare"
[ -n "$bare" ] && echo "$bare"
nm -D --defined-only "$so" | awk '{print $3}' | grep -vE '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u >"$tmp/exported"
echo "declared: $(wc -l <"$tmp/declared"), exported: $(wc -l <"$tmp/exported")"
check "coll.h declares functions" test -s "$tmp/declared"
leaked=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
check "libcoll.so exports nothing beyond coll.h" test -z "$leaked"
[ -n "$leaked" ] && echo "exported but not in coll.h:" $leaked
check "libcoll.so exports every function of coll.h" test -z "$missing"
[ -n "$missing" ] && echo "declared but not exported:" $missing

v() { sed -n "s/^#define COLL_VERSION_$1 \([0-9]*\).*/\1/p" include/coll.h; }
maj=$(v MAJOR); ver=$maj.$(v MINOR).$(v PATCH)
check "SONAME is libcoll.so.$maj" bash -c "readelf -d '$so' | grep -q 'SONAME.*\[libcoll.so.$maj\]'"
check "libcoll.so -> libcoll.so.$maj" test "$(readlink "$so")" = "libcoll.so.$maj"
check "libcoll.so.$maj -> libcoll.so.$ver" test "$(readlink "$so.$maj")" = "libcoll.so.$ver"
check "libcoll.so.$ver is the library" test -f "$so.$ver" -a ! -L "$so.$ver"

inc=$(grep -rnE '#include "(\.\./)*(src/)?(core|coll|bootstrap|transport|comm)/' tools | grep -v '^tools/common/coll_internal.h:' || true)
check "tools include src/ headers only via tools/common/coll_internal.h" test -z "$inc"
[ -n "$inc" ] && echo "$inc"
finish
