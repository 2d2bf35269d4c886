#!/usr/bin/env bash
# ThreadSanitizer run of the multi-threaded suites: the vGPU's executor and
# doorbells (vgpu_tests), the GPU worker and its channel (vgpu_worker_tests),
# two VMs' devices in one process (vgpu_attack_tests) and VMs on KVM with
# their watchdog threads (kvm_tests; they skip without /dev/kvm), the Ctrl-C
# waiter (cli_tests). Not part
# of test.sh (CI time): run it by hand, in build-tsan/ (or
# $KVMGPU_TSAN_BUILD_DIR). Extra arguments go to ctest.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_TSAN_BUILD_DIR:-$repo/build-tsan}
bash "$repo/kvmtool-gpu/scripts/install-deps.sh" >/dev/null
source "$repo/kvmtool-gpu/scripts/compiler-cache.sh"
cmake -S "$repo" -B "$build" -G Ninja -DKVMGPU_TSAN=ON -DKVMGPU_NVCC= >/dev/null
cmake --build "$build" -j"$(nproc)" --target vgpu_tests vgpu_worker_tests vgpu_attack_tests kvm_tests cli_tests guests
cd "$build"
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0:second_deadlock_stack=1}
# SeccompGuest is left out: under TSan its runtime makes calls the vCPU
# filter forbids (a sanitizer artefact, as with ASan's list in vcpu_seccomp.cpp).
ctest -R '^(StopOnInterrupt|LazyRegistration|Vgpu|Worker|Doorbells/WorkerRing|EventIndex|PollWindow|RawWorker|SharedPieces|Engines|Attack|CrossVm|TinyGuest|Backings|KvmTest|Fuzz|HandleTable|AllocationTable|ParamLayout|LaunchLimits)' \
      --output-on-failure -j2 --timeout 900 "$@"
