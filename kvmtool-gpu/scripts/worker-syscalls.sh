#!/bin/sh
# Merges the GPU workers' system-call records (KVMGPU_WORKER_SYSCALL_LOG=DIR,
# devices/vgpu_worker/syscall_recorder.h) into one table: for each phase
# (before: fork to backend start; after: from then on), each call with its
# count over all workers and what the sandbox's table would do with it. Then
# the rows worker_syscalls.cpp's table lacks for what was seen after the
# start, and the paths opened after the start. POSIX sh + awk.
# Usage: worker-syscalls.sh DIR
dir=$1
[ -d "$dir" ] || { echo "usage: $0 DIR (a KVMGPU_WORKER_SYSCALL_LOG directory)" >&2; exit 2; }
set -- "$dir"/worker-*.txt
[ -f "$1" ] || { echo "worker-syscalls: no worker-*.txt in $dir (no GPU worker ran with the variable set?)" >&2; exit 1; }
echo "worker-syscalls: $# worker(s) recorded in $dir"
cat "$@" | awk '
  /^#/ { next }
  /^path-after / { sub(/^path-after /, ""); paths[$0] = 1; next }
  { key = $1 " " $2 " " $3 " " $4; n[key] += $5; if ($1 == "after") { after[$2] = $3; if ($4 == "DENIED") denied[$2] = 1 } }
  END {
    for (ph = 0; ph < 2; ph++) {
      phase = ph ? "after" : "before"
      printf "\n| %s | nr | call | sandbox | count |\n| --- | --- | --- | --- | --- |\n", phase
      cmd = "sort -t\"|\" -k6,6nr"
      for (k in n) { split(k, f, " "); if (f[1] == phase) printf "| %s | %s | %s | %s | %d |\n", f[1], f[2], f[3], f[4], n[k] | cmd }
      close(cmd)
    }
    print "\nCalls seen after the start that the table lacks: add these rows to worker_syscalls.cpp"
    cmd = "sort -n | cut -f2-"
    none = 1
    for (nr in denied) { printf "%d\t    {SYS_%s, Allow},\n", nr, after[nr] | cmd; none = 0 }
    close(cmd)
    if (none) print "    (none: the table covers every call seen)"
    printf "\nEvery call seen after the start: "
    cmd = "sort -n | cut -f2- | tr \"\\n\" \" \""
    for (nr in after) printf "%d\t%s\n", nr, after[nr] | cmd
    close(cmd)
    print ""
    print "\nPaths opened after the start (openat):"
    cmd = "sort"
    for (p in paths) print "    " p | cmd
    close(cmd)
  }'
