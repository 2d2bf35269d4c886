#!/usr/bin/env bash
# The main job (README's first command): build, then boot a guest with the
# vGPU and run its transfer test on whatever this machine has, saying which
# backends ran. With /dev/kvm the VMM runs here; without, inside a QEMU
# machine whose kernel has KVM (software emulation: slow, but the real path).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_BUILD_DIR:-$repo/build}
bash "$repo/kvmtool-gpu/scripts/build.sh"
vmm=$build/kvmtool-gpu/kvmtool-gpu
guest=${KVMGPU_MAIN_GUEST:-hello}
args=(run --guest "$build/guests/$guest.elf" --mem 256M "$@")
if [ -e /dev/kvm ]; then
  echo "main.sh: /dev/kvm present: running on this host's KVM"
  exec "$vmm" "${args[@]}"
fi
echo "main.sh: no /dev/kvm here: running inside a QEMU machine with nested KVM (software emulation)"
exec bash "$repo/tests/nested/run-nested.sh" --timeout 600 --file "$vmm" --file "$build/guests" -- "$vmm" "${args[@]}"
