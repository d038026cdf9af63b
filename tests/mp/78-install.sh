#!/usr/bin/env bash
# timeout: 120
# `make install` into a temporary PREFIX gives a usable library: a program that
# includes only <coll.h> (tests/fixtures/install_allreduce.c) builds with
# `pkg-config --cflags --libs libcoll` alone, links the installed libcoll.so.0
# and runs an allreduce over 2 ranks; the installed executables run; then
# `make uninstall` leaves no file behind. A DESTDIR staging install writes the
# final PREFIX (not the staging path) into libcoll.pc and uninstalls cleanly too.
set -u
source "$CB_ROOT/tests/lib/common.sh"
cd "$CB_ROOT"
command -v pkg-config >/dev/null || { echo "pkg-config missing (scripts/install-deps.sh)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pre=$tmp/prefix
mk() { make --no-print-directory -C "$CB_ROOT" O="$CB_O" "$@" >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log"; return 1; }; }
leftovers() { find "$1" \( -type f -o -type l \) 2>/dev/null | grep . && return 1; return 0; }

check "make install PREFIX=$pre" mk install PREFIX="$pre"
for f in include/coll.h lib/libcoll.a lib/libcoll.so lib/libcoll.so.0 lib/pkgconfig/libcoll.pc \
         bin/all_reduce_test bin/alltoallv_test bin/collbench bin/collbench-report share/doc/collbench/README.md; do
    check "installed $f" test -e "$pre/$f"
done
v=$(ls "$pre"/lib/libcoll.so.0.*.* 2>/dev/null)
check "versioned library file $(basename "$v")" test -f "$v" -a ! -L "$v"

export PKG_CONFIG_PATH=$pre/lib/pkgconfig
flags=$(pkg-config --cflags --libs libcoll)
echo "pkg-config --cflags --libs libcoll: $flags"
check "pkg-config points into the prefix" bash -c "[[ '$flags' == *'-I$pre/include'* && '$flags' == *'-L$pre/lib'* ]]"
check "pkg-config --modversion libcoll" test "$(pkg-config --modversion libcoll)" = \
    "$(sed -n 's/^#define COLL_VERSION_STRING "\(.*\)"/\1/p' include/coll.h)"
# shellcheck disable=SC2086
check "user program builds with pkg-config flags only" \
    ${CC:-cc} -std=c11 -D_GNU_SOURCE -Wall -Werror tests/fixtures/install_allreduce.c -o "$tmp/prog" $flags
check "program needs libcoll.so.0" bash -c "readelf -d '$tmp/prog' | grep -q 'NEEDED.*\[libcoll.so.0\]'"
check "program resolves the installed libcoll.so.0" \
    bash -c "LD_LIBRARY_PATH='$pre/lib' ldd '$tmp/prog' | grep -q 'libcoll.so.0 => $pre/lib/libcoll.so.0'"
out=$(LD_LIBRARY_PATH=$pre/lib timeout 60 "$tmp/prog" 2>&1); rc=$?
echo "$out"
check "allreduce over 2 ranks against the installed library" test $rc -eq 0
check "rank 0 found the sum right" grep -q 'allreduce over 2 ranks: ok' <<<"$out"
check "coll_get_version() of the installed library" grep -q "^libcoll $(pkg-config --modversion libcoll) " <<<"$out"
out=$(timeout 60 "$pre/bin/all_reduce_test" -p 2 -b 8K -e 8K -n 2 -w 1 2>&1); rc=$?
check "installed all_reduce_test runs on 2 ranks" test $rc -eq 0
[ $rc -ne 0 ] && echo "$out"
check "installed collbench --version" "$pre/bin/collbench" --version

check "make uninstall PREFIX=$pre" mk uninstall PREFIX="$pre"
check "uninstall leaves no file or link in $pre" leftovers "$pre"

stage=$tmp/stage
check "make install DESTDIR=$stage PREFIX=/opt/collbench" mk install DESTDIR="$stage" PREFIX=/opt/collbench
check "staged libcoll.pc names the final prefix" grep -qx 'prefix=/opt/collbench' "$stage/opt/collbench/lib/pkgconfig/libcoll.pc"
check "nothing written outside DESTDIR" test ! -e /opt/collbench
check "make uninstall DESTDIR=$stage" mk uninstall DESTDIR="$stage" PREFIX=/opt/collbench
check "staged uninstall leaves no file or link" leftovers "$stage"
no_procs "$tmp/prog" || fail "rank processes left"
finish
