#!/usr/bin/env bash
# The unit suites under AddressSanitizer + UndefinedBehaviorSanitizer: builds
# the host code with KVMGPU_SANITIZE=ON into <repo>/build-asan (or
# $KVMGPU_ASAN_BUILD_DIR) and runs every unit-labelled ctest test there. Any
# ASan/LSan/UBSan report fails its test (UBSan does not recover). Guest images
# are freestanding and built as usual, without sanitizers. nvcc is left out
# (-DKVMGPU_NVCC=): no fatbins to build, and the GPU tests do not run here.
# Extra arguments go to ctest, e.g. -R vgpu.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_ASAN_BUILD_DIR:-$repo/build-asan}
bash "$repo/kvmtool-gpu/scripts/install-deps.sh" >/dev/null
source "$repo/kvmtool-gpu/scripts/compiler-cache.sh"
cmake -S "$repo" -B "$build" -G Ninja -DKVMGPU_SANITIZE=ON -DKVMGPU_NVCC= >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest -L unit --output-on-failure -j2 --timeout 900 "$@"
