#!/usr/bin/env bash
# test.sh - install what is missing, build (release and sanitizer variants are
# built by the tests that need them), and run the whole suite. The last line
# is "N passed, N failed"; the exit code is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh test
make -j"$(nproc)" >/dev/null
exec tests/run.sh "$@"
