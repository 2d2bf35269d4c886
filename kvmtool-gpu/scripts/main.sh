#!/usr/bin/env bash
# The main job (README's first command): build, then boot each guest program
# with the vGPU (hello, vecadd, matmul, ...) on whatever this machine has,
# saying which backends ran. With /dev/kvm the VMM runs here; without, inside
# a QEMU machine whose kernel has KVM (software emulation: slow, but the real
# KVM path). Extra arguments go to `kvmtool-gpu run` (e.g. --vgpu host).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_BUILD_DIR:-$repo/build}
bash "$repo/kvmtool-gpu/scripts/build.sh"
vmm=$build/kvmtool-gpu/kvmtool-gpu
runner=$repo/kvmtool-gpu/scripts/run-guests.sh
export RUN_ARGS="$*"
if [ -e /dev/kvm ]; then
  echo "main.sh: /dev/kvm present: running on this host's KVM"
  exec sh "$runner" "$vmm" "$build/guests" 4K
fi
echo "main.sh: no /dev/kvm here: running inside a QEMU machine with nested KVM (software emulation)"
exec bash "$repo/tests/nested/run-nested.sh" --timeout 900 --file "$vmm" --file "$build/guests" --file "$runner" \
  -- env RUN_ARGS="$RUN_ARGS" sh "$runner" "$vmm" "$build/guests" 4K
