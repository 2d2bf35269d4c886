#!/usr/bin/env bash
# The main job (README's first command): build, then boot each guest program
# with the vGPU (hello, vecadd, matmul, ...) and run the quick bandwidth
# study (guest against native where there is a GPU), on whatever this
# machine has, saying which backends ran (main-job.sh). With /dev/kvm the
# VMM runs here; without, inside a QEMU machine whose kernel has KVM
# (software emulation: slow, but the real KVM path). Extra arguments go to
# `kvmtool-gpu run` and `bench bandwidth` (e.g. --vgpu host).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_BUILD_DIR:-$repo/build}
bash "$repo/kvmtool-gpu/scripts/build.sh"
vmm=$build/kvmtool-gpu/kvmtool-gpu
scripts=$repo/kvmtool-gpu/scripts
export RUN_ARGS="$*"
if [ -e /dev/kvm ]; then
  echo "main.sh: /dev/kvm present: running on this host's KVM"
  exec sh "$scripts/main-job.sh" "$vmm" "$build/guests" "$build/main-bandwidth"
fi
echo "main.sh: no /dev/kvm here: running inside a QEMU machine with nested KVM (software emulation)"
exec bash "$repo/tests/nested/run-nested.sh" --timeout 900 --file "$vmm" --file "$build/guests" \
  --file "$scripts/run-guests.sh" --file "$scripts/main-job.sh" \
  -- env RUN_ARGS="$RUN_ARGS" sh "$scripts/main-job.sh" "$vmm" "$build/guests" /tmp/main-bandwidth
