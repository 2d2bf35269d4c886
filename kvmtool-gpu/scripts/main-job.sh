#!/bin/sh
# What main.sh runs, here or inside its QEMU machine (POSIX sh: the QEMU
# machine has busybox): every guest program with the vGPU (run-guests.sh),
# then the quick bandwidth study (`bench bandwidth --quick`: pinned,
# pageable and twocopy (GViM's 2-copy) copies of 4K..1M, guest against
# native where there is a GPU),
# printing its table. Usage: main-job.sh VMM GUEST_DIR OUT_DIR; RUN_ARGS
# (e.g. --vgpu host) go to both.
set -eu
vmm=$1 guests=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/run-guests.sh" "$vmm" "$guests" 4K
# 2 MiB host pages only where the pool has room for the bench's guest RAM.
free2m=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
if [ "$free2m" -ge 64 ]; then
  hp=4K,2M
else
  hp=4K
  echo "main-job: $free2m free 2 MiB huge pages: guest RAM on 4 KiB pages only (reserve: echo 256 > /proc/sys/vm/nr_hugepages)"
fi
# shellcheck disable=SC2086 # RUN_ARGS is a list of flags
KVMGPU_GUEST_DIR=$guests "$vmm" bench bandwidth --quick --host-pages "$hp" ${RUN_ARGS:-} --out "$out"
cat "$out/bandwidth.md"
