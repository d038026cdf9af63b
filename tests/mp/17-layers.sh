#!/usr/bin/env bash
# timeout: 30
# parallel: yes
# The include graph of src/ follows the layers (core <- bootstrap <- topo <-
# transport <- coll <- comm) and no algorithm names a transport: scripts/check-layers.sh.
set -u
cd "$CB_ROOT"
scripts/check-layers.sh src
