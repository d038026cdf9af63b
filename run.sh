#!/usr/bin/env bash
# run.sh - install what is missing, build, and run the main job: an AllReduce
# sweep (8 KiB .. 64 MiB, factor 2) on local ranks (default 4; ./run.sh 8).
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh build
make -j"$(nproc)" >/dev/null
exec ./bin/all_reduce_test -p "${1:-4}" -b 8K -e 64M -f 2 -d fp32 -o sum
