#!/usr/bin/env bash
# Configures and builds kvmtool-gpu into <repo>/build (or $KVMGPU_BUILD_DIR),
# after installing any missing Debian packages. Extra arguments go to cmake.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_BUILD_DIR:-$repo/build}
bash "$repo/kvmtool-gpu/scripts/install-deps.sh"
source "$repo/kvmtool-gpu/scripts/compiler-cache.sh"
export PATH=$PATH:/usr/local/cuda/bin
cmake -S "$repo" -B "$build" -G Ninja "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
