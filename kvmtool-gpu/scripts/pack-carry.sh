#!/usr/bin/env bash
# Packs what the device check needs from a build into <repo>/.carry (git-
# ignored): bin/ (the VMM and test binaries, which need only glibc) and
# guests/. The device tool carries that folder to the GPU machine.
# --slim: only the VMM, vgpu_gpu_tests, the guests and the guest libcuda.so.1
# (56 MB; also written xz-packed to .pack/carry.tar.xz, about 7 MB), for the parts that need no more (guests,
# boot, train, ml, ggml, ordinary, conformance on CUDA).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_BUILD_DIR:-$repo/build}
out=$repo/.carry
rm -rf "$out" && mkdir -p "$out/bin" "$out/guests"
if [ "${1:-}" = --slim ]; then
  cp "$build/kvmtool-gpu/kvmtool-gpu" "$out/bin/"
  gpu_tests=$(find "$build/tests" -name vgpu_gpu_tests -type f -perm -u+x | head -n 1)
  [ -n "$gpu_tests" ] && cp "$gpu_tests" "$out/bin/"
  cp "$build"/guests/*.elf "$out/guests/"
  [ -f "$build/guests/lib/libcuda.so.1" ] && mkdir -p "$out/guests/lib" && cp "$build/guests/lib/libcuda.so.1" "$out/guests/lib/"
  strip --strip-debug "$out"/bin/* "$out"/guests/lib/* 2>/dev/null || true
  # Also xz-packed, to carry beside other packs under the device tool's limit
  # (device-check.sh unpacks it where .carry/ did not travel).
  mkdir -p "$repo/.pack" && tar -C "$out" -cJf "$repo/.pack/carry.tar.xz" .
  du -sh "$out" "$repo/.pack/carry.tar.xz"
  exit 0
fi
for t in kvmtool-gpu/kvmtool-gpu $(cd "$build" && find tests -maxdepth 3 -type f -perm -u+x -name '*_tests'); do
  [ -f "$build/$t" ] && cp "$build/$t" "$out/bin/"
done
cp "$build"/guests/*.elf "$out/guests/"
# The guest libcuda.so.1 the VMM lends Linux-ABI guests (guests/lib, found
# beside the guests: KVMGPU_GUEST_DIR); its libcuda.so link is not needed.
[ -f "$build/guests/lib/libcuda.so.1" ] && mkdir -p "$out/guests/lib" && cp "$build/guests/lib/libcuda.so.1" "$out/guests/lib/"
# The ordinary nvcc builds of tests/kvm/linux-cuda.sh.
[ -d "$build/tests/kvm/linux-cuda" ] && mkdir -p "$out/linux-cuda" && cp "$build"/tests/kvm/linux-cuda/* "$out/linux-cuda/"
# The runtime-API samples built natively (nvcc, NVIDIA's runtime), to run
# beside their guests (device-check.sh runtime); only where nvcc is.
if ninja -C "$build" -t targets all 2>/dev/null | grep -q '^native_samples:'; then
  ninja -C "$build" native_samples >/dev/null && mkdir -p "$out/native-samples" &&
    cp "$build"/native-samples/* "$out/native-samples/"
fi
cp -r "$build/plots" "$out/bin/"
# Static Linux executables for the Linux-ABI guest checks (tests/kvm/linux-guests.sh).
[ -d "$build/tests/kvm/linux-guests" ] && mkdir -p "$out/linux-guests" && cp "$build"/tests/kvm/linux-guests/* "$out/linux-guests/"
# Test data that lives beside its test binary (found from /proc/self/exe).
[ -d "$build/tests/unit/vgpu_attack/fuzz_corpus" ] && cp -r "$build/tests/unit/vgpu_attack/fuzz_corpus" "$out/bin/"
# The GPU probes, where nvcc built them (device-check.sh runs them).
for probe in sysmem_read_probe batch_run_probe host_register_probe; do
  [ -f "$build/kvmtool-gpu/bench/probes/$probe" ] && cp "$build/kvmtool-gpu/bench/probes/$probe" "$out/bin/"
done
# A VMM from another commit to compare against (the `compare` part of
# device-check.sh): KVMGPU_COMPARE_BIN=<its build>/kvmtool-gpu/kvmtool-gpu,
# with that build's guests (the guest ABI may differ between the two).
if [ -n "${KVMGPU_COMPARE_BIN:-}" ]; then
  mkdir -p "$out/compare/guests" && cp "$KVMGPU_COMPARE_BIN" "$out/compare/kvmtool-gpu"
  strip --strip-debug "$out/compare/kvmtool-gpu"
  cp "$(dirname "$KVMGPU_COMPARE_BIN")"/../guests/*.elf "$out/compare/guests/"
fi
strip --strip-debug "$out"/bin/* 2>/dev/null || true
du -sh "$out"; ls "$out/bin" "$out/guests"
