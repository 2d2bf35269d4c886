#!/usr/bin/env bash
# The bounded CI fuzz run: configures the clang libFuzzer build (KVMGPU_FUZZ
# and KVMGPU_SANITIZE on: ASan + UBSan + LSan) in <repo>/build-fuzz (or
# $KVMGPU_FUZZ_BUILD_DIR), builds only the fuzz targets, and runs ctest -L
# fuzz: each target from its committed seeds (tests/fuzz/corpus/) for a few
# seconds, about 45 in all. New inputs land in the build tree, never in
# the source tree. A crash, leak, UBSan report or oracle violation fails the
# run and leaves the input as crash-*/leak-*/timeout-* in build-fuzz/tests/fuzz.
# Extra arguments go to ctest.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_FUZZ_BUILD_DIR:-$repo/build-fuzz}

# clang with libFuzzer (Debian: clang + libclang-rt-dev).
can_fuzz() {
  command -v clang++ >/dev/null &&
    echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
      clang++ -x c++ -fsanitize=fuzzer -o /dev/null - 2>/dev/null
}
if ! can_fuzz; then
  if ((EUID != 0)); then echo "run-ci-fuzz: clang with libFuzzer missing (apt-get install clang libclang-rt-dev)" >&2; exit 1; fi
  echo "run-ci-fuzz: installing clang and libFuzzer"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-dev >/dev/null
  can_fuzz || { echo "run-ci-fuzz: clang cannot link -fsanitize=fuzzer" >&2; exit 1; }
fi
bash "$repo/kvmtool-gpu/scripts/install-deps.sh" >/dev/null
source "$repo/kvmtool-gpu/scripts/compiler-cache.sh"

if [[ -f $build/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang' "$build/CMakeCache.txt"; then
  echo "run-ci-fuzz: $build was configured with another compiler; remove it first" >&2
  exit 1
fi
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DKVMGPU_FUZZ=ON -DKVMGPU_SANITIZE=ON -DKVMGPU_NVCC= >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzzers
cd "$build/tests/fuzz"   # artifacts (crash-*) land here
ctest --test-dir "$build" -L fuzz --output-on-failure "$@"
