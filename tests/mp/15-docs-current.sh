#!/usr/bin/env bash
# timeout: 30
# parallel: yes
# docs/config.md and docs/algorithms.md are generated from the config table and
# the algorithm registry: they must match what the binaries print now.
set -u
cd "$CB_ROOT"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp docs/config.md docs/algorithms.md "$tmp/"
(unset $(env | sed -n 's/^\(\(COLL\|HCCL\)_[A-Z0-9_]*\)=.*/\1/p'); scripts/gen-docs.sh "$CB_O/bin")
rc=0
for f in config.md algorithms.md; do
    if ! diff -u "$tmp/$f" "docs/$f"; then echo "FAIL: docs/$f is stale: run scripts/gen-docs.sh and commit"; rc=1; fi
    cp "$tmp/$f" "docs/$f"   # leave the tree as it was
done
[ $rc -eq 0 ] && echo "docs are current"
exit $rc
