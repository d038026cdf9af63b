#!/usr/bin/env bash
# timeout: 120
# parallel: yes
# The C sources follow .clang-format (scripts/check-format.sh: every tracked
# *.c / *.h of src tools tests bench examples include; clang-format 14).
# NOT EXECUTABLE YET, so tests/run.sh does not run it: the tree is reformatted
# once by the integrator after the branches of issue 14 are merged (a reformat
# now would collide with every branch in flight); then `chmod +x` this file.
set -u
cd "${CB_ROOT:?}"
scripts/check-format.sh
