#!/bin/sh
# Each GPU worker of a run --vms 3 maps its own VM's guest RAM and no other
# VM's, and no vCPU's kvm_run; the workers are the VMM's children and its
# worker zygote maps no VM (ctest kvm_worker_isolation; on a GPU machine
# device-check.sh passes "cuda"). Three sleeping Linux-ABI guests, each with
# a vGPU whose engine runs in a worker; the test reads every worker's
# /proc/PID/maps from outside while they run.
# Usage: worker-isolation.sh KVMTOOL_GPU GUEST_DIR [host|cuda] [PAGES]
set -u
vmm=$1
dir=$2
vgpu=${3:-host}
pages=${4:-4K}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
worker_flag="--gpu-worker always"
[ "$vgpu" = cuda ] && worker_flag="--gpu-worker process"
# shellcheck disable=SC2086
"$vmm" run --vms 3 --guest "$dir/syscall_loop" --mem 256M --pages "$pages" --vgpu "$vgpu" $worker_flag \
    --timeout 60 -- 10 8000 > "$work/out" 2>&1 &
pid=$!
# The VMM's children named vgpu-worker (from /proc: busybox may lack pgrep).
workers_of() {
    for d in /proc/[0-9]*; do
        [ "$(cat "$d/comm" 2>/dev/null)" = vgpu-worker ] || continue
        [ "$(awk '{print $4}' "$d/stat" 2>/dev/null)" = "$1" ] && echo "${d#/proc/}"
    done | sort
}
workers=""
i=0
while [ $i -lt 200 ]; do # up to 20 s for three workers to be running
    workers=$(workers_of "$pid")
    [ "$(echo "$workers" | grep -c .)" -ge 3 ] && break
    sleep 0.1
    i=$((i + 1))
done
# The zygote the workers start from: the VMM's child, holding no VM. Looked
# for at once, as the workers: it ends with the VMM, and the guests may be
# done before the workers' maps are read below.
zygote=$(for d in /proc/[0-9]*; do
    [ "$(cat "$d/comm" 2>/dev/null)" = vgpu-zygote ] && [ "$(awk '{print $4}' "$d/stat" 2>/dev/null)" = "$pid" ] && echo "${d#/proc/}"
done)
zmaps=$(cat "/proc/$zygote/maps" 2>/dev/null)
zmaps_read=$?
failures=0
if [ "$(echo "$workers" | grep -c .)" -lt 3 ]; then
    echo "FAILED: three GPU workers did not appear (found: $workers)"
    cat "$work/out"
    exit 1
fi
sleep 0.5 # each has mapped its VM's RAM again by now (its Start is long done)
seen=""
outside=0
for w in $workers; do
    # A sandboxed worker is not dumpable: reading its maps needs CAP_SYS_PTRACE.
    maps=$(cat "/proc/$w/maps" 2>/dev/null) || { echo "note: worker $w's maps are not readable from here (no CAP_SYS_PTRACE): its own check below stands"; continue; }
    outside=$((outside + 1))
    ram=$(echo "$maps" | grep -E 'kvmgpu-guest-ram|libhugetlbfs' | awk '{print $5}' | sort -u)
    n=$(echo "$ram" | grep -c .)
    vcpus=$(echo "$maps" | grep -c 'anon_inode:kvm')
    echo "worker $w: guest RAM inodes: $(echo $ram), kvm mappings: $vcpus"
    [ "$n" -eq 1 ] || { echo "FAILED: worker $w maps $n VMs' guest RAM"; failures=$((failures + 1)); }
    [ "$vcpus" -eq 0 ] || { echo "FAILED: worker $w maps $vcpus KVM mappings"; failures=$((failures + 1)); }
    seen="$seen $ram"
done
if [ -z "$zygote" ]; then
    echo "FAILED: no worker zygote among the VMM's children"
    failures=$((failures + 1))
elif [ $zmaps_read -eq 0 ]; then
    zram=$(echo "$zmaps" | grep -cE 'kvmgpu-|libhugetlbfs|anon_inode:kvm')
    echo "zygote $zygote: VM mappings: $zram"
    [ "$zram" -eq 0 ] || { echo "FAILED: the worker zygote maps VM memory"; failures=$((failures + 1)); }
else
    echo "note: the zygote's maps are not readable from here"
fi
if [ $outside -gt 0 ]; then
    distinct=$(echo "$seen" | tr ' ' '\n' | grep . | sort -u | grep -c .)
    [ "$distinct" -eq $outside ] || { echo "FAILED: $outside workers map $distinct distinct RAMs"; failures=$((failures + 1)); }
fi
wait "$pid"
rc=$?
cat "$work/out"
# Each worker's own look at its maps, at the end of its start (gpu_worker.cpp).
# (The start is reported twice, in the log and in the VM's summary: count workers.)
own=$(grep "maps its own VM's memory only" "$work/out" | grep -oE 'GPU worker process [0-9]+' | sort -u | grep -c .)
[ "$own" -eq 3 ] || { echo "FAILED: $own of 3 workers said they map their own VM's memory only"; failures=$((failures + 1)); }
[ "$rc" -eq 0 ] || { echo "FAILED: run --vms 3 ended with status $rc"; failures=$((failures + 1)); }
[ $failures -eq 0 ] && echo "ok: each of three GPU workers maps its own VM's RAM and nothing of the others' (read from outside for $outside, each worker's own check for 3)"
exit $((failures > 0))
