#!/bin/sh
# Ordinary nvcc builds as Linux-ABI guests with --root / over the host
# backend (ctest kvm_linux_cuda, nested_linux_cuda): NVIDIA's cudart, static
# inside the program or the shared libcudart.so, dlopens libcuda.so.1 and
# gets the VMM's guest libcuda (the start-up line says which), initialises,
# allocates, copies and sets memory, and launches vectorAdd's kernel (the
# host backend runs its CPU twin). Without the overlay
# (--no-libcuda-overlay) the root's own libcuda is found or none is, and the
# program fails: the check that the overlay is what made it work.
# Usage: linux-cuda.sh KVMTOOL_GPU DIR
#   DIR: vectorAdd, vectorAdd-shared-cudart, cudart_check (tests/kvm/CMakeLists.txt)
set -u
vmm=$1
dir=$2
. "$(dirname "$0")/check-lib.sh"
run() { # name, VMM flags...: the guest's output in $work/<name>.out, its status returned
    name=$1; shift
    "$vmm" run --guest "$dir/${name%%@*}" --root / --vgpu host --mem 1G --timeout 200 "$@" > "$work/$name.out" 2>&1
    rc=$?
    sed "s/^/    /" "$work/$name.out"
    return $rc
}

run vectorAdd; rc=$?
check "vectorAdd (static cudart): exit 0" [ "$rc" -eq 0 ]
check "vectorAdd (static cudart): Test PASSED" grep -q "^guest: Test PASSED" "$work/vectorAdd.out"
check "the start-up line names the VMM's libcuda.so.1" \
    grep -Eq "^kvmtool-gpu: vCPU backend: .*; libcuda: .*/lib/libcuda\.so\.1 \(the VMM's" "$work/vectorAdd.out"

run vectorAdd-shared-cudart; rc=$?
check "vectorAdd (shared libcudart.so): exit 0" [ "$rc" -eq 0 ]
check "vectorAdd (shared libcudart.so): Test PASSED" grep -q "^guest: Test PASSED" "$work/vectorAdd-shared-cudart.out"

run cudart_check; rc=$?
check "cudart_check: exit 0" [ "$rc" -eq 0 ]
check "cudart_check: every step passed" grep -q "^guest: all cudart checks passed" "$work/cudart_check.out"

run vectorAdd@off --no-libcuda-overlay; rc=$?
check "without the overlay vectorAdd fails (no usable libcuda)" [ "$rc" -ne 0 ]
check "without the overlay the start-up line says so" grep -q "libcuda: the root's own (no libcuda overlay)" \
    "$work/vectorAdd@off.out"

checks_done "CUDA guest"
