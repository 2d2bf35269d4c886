#!/bin/sh
# bench share's VMs (built one after another in one process) each get a GPU
# worker that maps its own VM's memory only: three VMs on the host backend in
# workers, and each worker's own check of its maps counted (ctest
# kvm_bench_share_workers_own_vm).
# Usage: share-workers.sh KVMTOOL_GPU
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$1" bench share --quick --vms 3 --vgpu host --gpu-worker always --out "$work/share" >"$work/out" 2>&1
rc=$?
n=$(grep "maps its own VM's memory only" "$work/out" | grep -oE 'GPU worker process [0-9]+' | sort -u | grep -c .)
echo "bench share --vms 3: $n workers said they map their own VM's memory only (status $rc)"
if [ "$rc" -ne 0 ] || [ "$n" -lt 3 ]; then
    cat "$work/out"
    echo "FAILED"
    exit 1
fi
echo "ok"
