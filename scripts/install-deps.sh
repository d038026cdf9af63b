#!/usr/bin/env bash
# scripts/install-deps.sh - install the Debian packages collbench needs, only
# those missing (one apt-get call). Idempotent; needs root or sudo.
#   scripts/install-deps.sh [build|torch|test]   (default test: everything the suite uses)
# torch: build + what `make torch` (python/torch_coll) and its tests need: Debian's
# python3-torch (1.13, /usr/bin/python3) and libtorch-dev (its C++ headers), g++.
# They are large, so `build` does not install them; `test` does (tests/mp/83..86).
set -euo pipefail
mode=${1:-test}
build_pkgs=(gcc make libc6-dev libcmocka-dev libssl-dev openmpi-bin libopenmpi-dev mpich libmpich-dev
            python3 python3-matplotlib procps)
test_pkgs=(iproute2 nftables tcpdump openssh-server openssh-client iperf3 hwloc libhwloc-dev pkg-config clang clang-format-14
           libclang-rt-14-dev valgrind slurm-wlm util-linux psmisc)
torch_pkgs=(g++ python3-torch libtorch-dev)
case "$mode" in
    build) pkgs=("${build_pkgs[@]}") ;;
    torch) pkgs=("${build_pkgs[@]}" "${torch_pkgs[@]}") ;;
    test) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}" "${torch_pkgs[@]}") ;;
    *) echo "install-deps.sh: unknown mode '$mode' (allowed: build, torch, test)" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps.sh: installing ${missing[*]}"
SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
