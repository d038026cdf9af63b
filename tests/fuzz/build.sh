#!/usr/bin/env bash
# tests/fuzz/build.sh - build the libFuzzer targets tests/fuzz/fuzz_*.c with
# clang (-fsanitize=fuzzer,address,undefined) into build/fuzz/.
#
#   tests/fuzz/build.sh [-O OUTDIR] [TARGET...]   (default OUTDIR build/fuzz, all targets)
#
# The library and tool sources a target needs are compiled once with clang and
# the same sanitizers (-fsanitize=fuzzer-no-link: coverage, no main) into
# OUTDIR/obj and archived in OUTDIR/libfuzzdeps.a; a target links only what it
# uses. Objects are rebuilt when their source (or any header of src/ include/
# tools/) is newer, so a second run costs seconds.
# Needs clang and libclang-rt-<ver>-dev (libFuzzer and the sanitizer runtimes).
set -eu
cd "$(dirname "$0")/../.."
OUT=build/fuzz
if [ "${1:-}" = "-O" ]; then OUT=$2; shift 2; fi
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || true)}
[ -n "$CLANG" ] || { echo "build.sh: clang not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 77; }

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CFLAGS="-std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Wno-unused-parameter -pthread -Iinclude -Isrc -Itools"
JOBS=${JOBS:-$(nproc)}
GCC=${GCC:-gcc}

# Library + driver/launcher/collbench helpers (never a file with main()).
SRCS=$(find src -name '*.c' | sort)
SRCS="$SRCS $(ls tools/driver/*.c | grep -v '/main.c$') $(ls tools/launch/launch*.c) $(ls tools/common/*.c 2>/dev/null)"
# collbench: only the plain-C helpers a target uses (the flops kernels need a
# newer clang than 14 for their CPU-feature builtins).
for f in tools/collbench/util.c tools/collbench/out.c tools/collbench/rank.c tools/collbench/dev.c tools/collbench/bw/*.c tools/collbench/net/*.c tools/collbench/topo/*.c tools/collbench/calib.c; do
    [ -f "$f" ] && SRCS="$SRCS $f"
done

isa_flags() {
    case "$1" in
        src/core/reduce_avx2.c) echo "-mavx2 -mfma -mf16c" ;;
        src/core/reduce_avx512.c) echo "-mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mf16c" ;;
    esac
}

mkdir -p "$OUT/obj"
# newest header: any change forces the objects that are older than it to rebuild
newest_hdr=$(find include src tools -name '*.h' -printf '%T@\n' 2>/dev/null | sort -n | tail -1)
stale=()
objs=()
for s in $SRCS; do
    o=$OUT/obj/${s%.c}.o
    objs+=("$o")
    if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || \
       awk -v h="$newest_hdr" -v t="$(stat -c %Y "$o")" 'BEGIN{exit !(h > t)}'; then
        stale+=("$s")
    fi
done
compile() {
    local s=$1 o=$OUT/obj/${1%.c}.o
    mkdir -p "$(dirname "$o")"
    case "$s" in
    src/core/reduce.c|src/core/reduce_avx*.c)
        # Reduce kernels and their CPU dispatch (not under fuzz): clang 14 rejects
        # __builtin_cpu_supports("f16c") and a rounding-mode variable passed to an
        # intrinsic, so gcc compiles these, without instrumentation.
        # shellcheck disable=SC2046
        ${GCC:-gcc} $CFLAGS -O2 $(isa_flags "$s") -c "$s" -o "$o.tmp" && mv "$o.tmp" "$o"
        return ;;
    esac
    # shellcheck disable=SC2046
    "$CLANG" $CFLAGS $SAN -fsanitize=fuzzer-no-link $(isa_flags "$s") -c "$s" -o "$o.tmp" && mv "$o.tmp" "$o"
}
export -f compile isa_flags
export CLANG CFLAGS SAN OUT GCC
if [ ${#stale[@]} -gt 0 ]; then
    echo "build.sh: compiling ${#stale[@]} object(s) with $CLANG"
    printf '%s\n' "${stale[@]}" | xargs -P "$JOBS" -I{} bash -c 'compile "$@"' _ {}
fi
lib=$OUT/libfuzzdeps.a
if [ ${#stale[@]} -gt 0 ] || [ ! -f "$lib" ]; then
    rm -f "$lib"
    ar rcs "$lib" "${objs[@]}"
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in tests/fuzz/fuzz_*.c; do t=${f##*/fuzz_}; targets+=("${t%.c}"); done
fi
for t in "${targets[@]}"; do
    src=tests/fuzz/fuzz_$t.c
    bin=$OUT/fuzz_$t
    [ -f "$src" ] || { echo "build.sh: no $src" >&2; exit 2; }
    if [ -f "$bin" ] && [ ! "$src" -nt "$bin" ] && [ ! "$lib" -nt "$bin" ] && [ ! tests/fuzz/fuzz_common.h -nt "$bin" ]; then
        continue
    fi
    echo "build.sh: linking $bin"
    # shellcheck disable=SC2086
    "$CLANG" $CFLAGS $SAN -fsanitize=fuzzer -o "$bin" "$src" "$lib" -lm -ldl -lcrypto
done
