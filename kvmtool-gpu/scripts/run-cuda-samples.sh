#!/bin/sh
# Boots each CUDA runtime-API sample (guest-stub/samples/, static Linux
# executables built by kvmgpu_add_cuda_guest) with the vGPU and fails if any
# does not pass its own check. Exits 77 (a ctest skip) with the reason when
# none is built (they need nvcc at build time). POSIX sh.
# Usage: run-cuda-samples.sh VMM GUEST_DIR [RUN_ARGS...]
#   e.g. run-cuda-samples.sh build/kvmtool-gpu/kvmtool-gpu build/guests --vgpu host
# RUN_ARGS go to `kvmtool-gpu run`; a sample's own arguments follow `--`.
# Environment: SAMPLES (default: the five samples and the checks that run on
# either backend: runtimeErrors (sticky errors), memory2D (pitched memory,
# host functions on streams), launchParams (kernel parameters of every
# shape), guestEnv (the guest's clocks, errno, stdio, files in a share),
# peerAccess (waives with one device), arrays (arrays, textures, surfaces,
# entry points, cuModuleLoad from the share), cudaGraphs (capture and
# explicit graphs), guestThreads and launchThreads (streams, contexts and
# kernel launches from 8 threads at once), managedMemory (managed memory on the CPU and in kernels), cublasCheck, cublasChain, cufftCheck and curandCheck (CUDA libraries
# through the vGPU; the checks with `expect-refusal`, the vGPU's own refusals)),
# LOG_DIR (each sample's whole output is also saved as LOG_DIR/<name>.log),
# NO_WAIVE=1 (a waived sample counts as failed).
# A sample waives as CUDA's samples do: it prints "WAIVED: <why>" and exits
# with status 2 (peerAccess on fewer than two devices that share memory);
# that is counted apart, neither passed nor failed.
vmm=$1 dir=$2
shift 2
samples=${SAMPLES:-vectorAdd matrixMul reduction bandwidthTest streamsEvents runtimeErrors memory2D launchParams guestEnv peerAccess arrays cudaGraphs guestThreads launchThreads managedMemory cublasCheck cublasChain cufftCheck curandCheck}
built=0
for name in $samples; do [ -f "$dir/$name.elf" ] && built=$((built + 1)); done
if [ "$built" = 0 ]; then
  echo "SKIP: no runtime-API sample in $dir (built only where nvcc is installed)"
  exit 77
fi
[ -n "${LOG_DIR:-}" ] && mkdir -p "$LOG_DIR"
passed=0 failed=0 waived=0
tmp_log=$(mktemp) || exit 2
share=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp_log" "$share"' EXIT
for name in $samples; do
  echo "run-cuda-samples: == $name $*"
  if [ ! -f "$dir/$name.elf" ]; then
    echo "run-cuda-samples: FAILED: $name: $dir/$name.elf not built"
    failed=$((failed + 1))
    continue
  fi
  log=${LOG_DIR:+$LOG_DIR/$name.log}
  log=${log:-$tmp_log}
  # runtimeErrors judges work after cudaDeviceReset only when told: the vGPU
  # promises it (a new GPU worker), a native driver 580 process cannot.
  # guestEnv works in a share of its own.
  opts= words=
  [ "$name" = runtimeErrors ] && words=expect-recovery
  [ "$name" = guestEnv ] && opts="--share $share" words=share
  [ "$name" = arrays ] && opts="--share $share" # it writes a PTX file and loads it (cuModuleLoad)
  case $name in cublasCheck | cufftCheck | curandCheck) words=expect-refusal ;; esac
  "$vmm" run --guest "$dir/$name.elf" --mem 256M --timeout 240 "$@" $opts -- $words >"$log" 2>&1
  rc=$?
  cat "$log"
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
  elif grep -q 'WAIVED:' "$log" && grep -q 'exit code 2 ' "$log" && [ "${NO_WAIVE:-0}" != 1 ]; then
    echo "run-cuda-samples: WAIVED: $name"
    waived=$((waived + 1))
  else
    echo "run-cuda-samples: FAILED: $name (exit status $rc)"
    failed=$((failed + 1))
  fi
done
echo "run-cuda-samples: $passed passed, $waived waived, $failed failed"
[ "$failed" = 0 ]
