#!/bin/sh
# --gpu-share mps end to end without a GPU or MPS (label kvm): the VMM with
# a fake nvidia-cuda-mps-control (tests/support/fake_mps_control.py) on a
# PATH of its own, the host backend in GPU worker processes.
#   1. bench share --gpu-share mps with a faulting VM: the daemon is started
#      with its own pipe and log directories, the run passes, the results'
#      metadata say mps, the daemon is told to quit and its directory goes.
#   2. No MPS on PATH: one line and exit 2; with --mps-fallback contexts a
#      warning and a run that passes.
# Usage: mps_fake_daemon.sh VMM FAKE_SCRIPT
set -u
vmm=$1 fake=$2
python=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || { echo "SKIP: no python3 for the fake daemon"; exit 77; }
work=$(mktemp -d /tmp/kvmgpu-mps-ci-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin" "$work/nobin"
{ echo "#!$python"; cat "$fake"; } >"$work/bin/nvidia-cuda-mps-control"
chmod +x "$work/bin/nvidia-cuda-mps-control"
fail() { echo "FAIL: $*"; exit 1; }

# 1. Started, used, stopped.
FAKE_MPS_RECORD=$work/record PATH=$work/bin:/usr/bin:/bin \
  "$vmm" bench share --quick --slack 6 --vgpu host --gpu-worker always --gpu-share mps --mps-thread-percentage 50 \
  --gpu-mem-quota 256M --work compute --vms 3 --intruder fault --out "$work/share" >"$work/share.log" 2>&1 ||
  { cat "$work/share.log"; fail "bench share --gpu-share mps"; }
grep -q '"gpu_share": "mps, control daemon started for the run' "$work/share/share.json" || fail "metadata without gpu_share mps"
grep -q '^start pipe=/.*/pipe log=/.*/log$' "$work/record" || { cat "$work/record"; fail "the daemon did not get its own pipe and log directories"; }
grep -q '^daemon quit$' "$work/record" || { cat "$work/record"; fail "the daemon was not told to quit"; }
root=$(sed -n 's/^start pipe=\(.*\)\/pipe log=.*/\1/p' "$work/record")
[ -e "$root" ] && fail "$root was left behind"
grep -q 'the others: none lost its work; checks passed 2 of 2' "$work/share/share.md" || fail "no fault impact in share.md"

# 2. No MPS on the machine.
run() { PATH=$work/nobin "$vmm" run --guest share --cmdline "work=compute seconds=1 n=64" --vgpu host --gpu-worker always "$@"; }
run --gpu-share mps >"$work/absent.log" 2>&1
rc=$?
[ $rc = 2 ] || { cat "$work/absent.log"; fail "no MPS: exit $rc, expected 2"; }
grep -q 'nvidia-cuda-mps-control is not on PATH' "$work/absent.log" || { cat "$work/absent.log"; fail "no MPS: no clear line"; }
run --gpu-share mps --mps-fallback contexts >"$work/fallback.log" 2>&1 ||
  { cat "$work/fallback.log"; fail "--mps-fallback contexts did not run"; }
grep -q 'warning: --gpu-share mps: nvidia-cuda-mps-control is not on PATH.*; falling back to contexts' "$work/fallback.log" ||
  { cat "$work/fallback.log"; fail "no fall-back warning"; }
grep -q 'GPU sharing: contexts (fallback from mps' "$work/fallback.log" || fail "run did not say it shares by contexts"
echo "mps plumbing: started, used, stopped; absent: refused or fell back"
