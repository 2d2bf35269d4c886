#!/usr/bin/env bash
# The whole check on the GPU machine (device tool), from a bare start:
# reserves huge pages, mounts hugetlbfs, then runs the kvm- and gpu-labelled
# tests and the benchmarks from the carried build (.carry, made by
# pack-carry.sh), and prints a summary. Logs and results are written to a
# work folder, then packed as $OUT/results.tgz beside $OUT/summary.txt (the
# device tool returns only a few files); without $OUT they stay in
# ./device-out. Anyone can rerun it there:
#   bash kvmtool-gpu/scripts/device-check.sh [PART...]
# PARTs (default: all): tests guests linux runtime boot calls tlb bench bench2 multigpu p2p share; `startup`
# and `samples28` (not in the default: issue 28's start-up and short-kernel samples, from
# .carry/cuda-samples); `threads` (not in the default: guestThreads and launchThreads on CUDA, then
# NVIDIA's simpleCallback and threadMigration natively and as guests, from
# .carry/cuda-samples or .carry/cuda-samples.tar.xz); `adaptive`
# (not in the default; one device call, about 4 minutes) runs `bench calls` with the default
# options (GPU worker owning the ring, adaptive doorbell) five times and prints the medians;
# `libraries` (not in the default; one device call) runs the library checks, NVIDIA's library
# samples (from .carry/cuda-samples) and `bench libraries`; `libsamples` the checks and samples alone;
# `managed` (not in the default; one device call) checks issue 29's managed memory and VMM calls;
# `sandbox` and `sandbox2` (not in the default; one device call each) record the GPU worker's
# system calls, then run the GPU tests, guests and samples with the worker sandboxed (issue 30 item 5);
# `mps` (not in the default; one device call, about 6 minutes) runs issue 32's bench share under
# --gpu-share contexts and mps side by side, a faulting VM in both, and prints the table;
# `dynamic` (not in the default): python3 and an ordinary nvcc build with --root /; `trace`: the
# tracing libcuda over an nvcc build, cuBLAS and PyTorch (logs under trace/);
# `ml` (not in the default): PyTorch and CuPy natively and as guests; `train` (not in the default): the
# training loops of tests/ml/train_steps.py natively and as guests with each futex spin (KVMGPU_TRAIN_SPINS);
# `ordinary` (not in the default; one device call, under 8 minutes): NVIDIA's cuda-samples and
# CUDALibrarySamples built the ordinary way, from .pack/ (build-ordinary-samples.sh), natively and as guests;
# `isolation` (not in the default) checks that each GPU worker maps only its VM and compares the
# worker's start and the first-instruction time with .carry/compare's VMM;
# `compare` (not in the default) runs `bench calls` with the polling doorbell five
# times, alternating the VMM from another commit (.carry/compare, see
# pack-carry.sh) with this one, worker process and inline; `runner` (not in
# the default) runs `bench calls` and `bench bandwidth --quick` five times
# each (KVMGPU_RUNNER_RUNS, KVMGPU_RUNNER_BENCHES="calls bandwidth"),
# alternating the VMM from .carry/compare with this one, and says whether
# their result files differ in anything but the numbers (issue 30's one
# bench runner). One device
# call has 10 minutes, so the whole check is run in parts: `tests guests linux boot
# calls`, then `tlb`, then `bench`, then `bench2`.
set -uo pipefail
parts=${*:-tests guests linux runtime boot calls tlb bench bench2 multigpu p2p share}
want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$repo/.carry/bin
# A carry that travelled packed (pack-carry.sh --slim writes .pack/carry.tar.xz).
if [ ! -d "$bin" ] && [ -f "$repo/.pack/carry.tar.xz" ]; then
  mkdir -p "$repo/.carry" && tar -C "$repo/.carry" -xJf "$repo/.pack/carry.tar.xz"
fi
export KVMGPU_GUEST_DIR=$repo/.carry/guests
out=$repo/device-out
rm -rf "$out" && mkdir -p "$out"
pack() { [ -n "${OUT:-}" ] && tar czf "$OUT/results.tgz" -C "$out" . && cp "$out/summary.txt" "$OUT/"; }
trap pack EXIT
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
step() { # step NAME COMMAND...: runs it, logs to $out/NAME.log, records pass/fail
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  note "$(printf '%-28s %s (%ds)' "$name" "$([ $rc = 0 ] && echo ok || echo "FAILED rc=$rc")" $((SECONDS - t0)))"
  return $rc
}

note "== kvmtool-gpu device check, $(date -u +%Y-%m-%dT%H:%MZ)"
note "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
note "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
note "kvm: $(ls -l /dev/kvm 2>&1 | head -1)"
note "libcuda: $(ldconfig -p | grep -m1 'libcuda.so.1' || echo 'not in ldconfig')"
gpu_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
note "gpus: $gpu_count (nvidia-smi -L)"

# Huge pages: 2 MiB pool for guest RAM and the studies; 1 GiB if the host allows.
want2m=${KVMGPU_HUGEPAGES_2M:-4096}
echo "$want2m" >/proc/sys/vm/nr_hugepages
grep -q hugetlbfs /proc/mounts || { mkdir -p /dev/hugepages && mount -t hugetlbfs none /dev/hugepages; }
echo "${KVMGPU_HUGEPAGES_1G:-6}" >/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages 2>/dev/null
note "hugepages: 2M $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)/$want2m, 1G $(cat /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages 2>/dev/null || echo n/a)"

want tests && for t in "$bin"/*_tests; do
  [ "$(basename "$t")" = vgpu_gpu_tests ] && continue
  step "$(basename "$t")" "$t" --gtest_brief=1
  grep -E '^\[  (PASSED|SKIPPED|FAILED) ' "$out/$(basename "$t").log" | sed 's/^/    /' | tee -a "$summary"
done
# GPU tests one process each: after a kernel fault (one test plants one) the
# CUDA driver refuses every later call in that process.
if want tests && [ -x "$bin/vgpu_gpu_tests" ]; then
  gpu_pass=0 gpu_fail=0
  for t in $("$bin/vgpu_gpu_tests" --gtest_list_tests | awk '/^[^ ]/{s=$1} /^  /{print s $1}'); do
    if "$bin/vgpu_gpu_tests" --gtest_filter="$t" >>"$out/vgpu_gpu_tests.log" 2>&1; then gpu_pass=$((gpu_pass + 1))
    else gpu_fail=$((gpu_fail + 1)); note "    FAILED: $t"; fi
  done
  note "$(printf '%-28s %s passed, %s failed (one process each)' vgpu_gpu_tests $gpu_pass $gpu_fail)"
fi
# Every guest program with the vGPU on the real CUDA backend, 4K and 2M.
want guests && RUN_ARGS="--vgpu cuda" step guests-cuda sh "$repo/kvmtool-gpu/scripts/run-guests.sh" "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" 4K 2M
want guests && grep -E '^(run-guests|guest: [a-z_]+: (PASS|FAIL|n=|device))|vGPU backend|vCPU backend|guest code' "$out/guests-cuda.log" | head -60 | sed 's/^/    /' | tee -a "$summary"
want guests && RUN_ARGS="--vgpu cuda --gpu-worker inline" GUESTS="vecadd matmul params conformance" step guests-cuda-inline \
  sh "$repo/kvmtool-gpu/scripts/run-guests.sh" "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" 2M
# The CUDA runtime-API samples (nvcc-built, unmodified runtime-API code) on
# the real CUDA backend, guest RAM on 4 KiB and 2 MiB host pages; each
# one's console output is kept in runtime-api/<pages>/<name>.log
# (docs/results/runtime-api.md).
# Static Linux executables as guests (built by pack-carry's build host with
# g++ -static): the same checks as ctest kvm_linux_guests, and the measured
# system-call round trip.
if want linux && [ -d "$repo/.carry/linux-guests" ]; then
  step linux-guests sh "$repo/tests/kvm/linux-guests.sh" "$bin/kvmtool-gpu" "$repo/.carry/linux-guests"
  grep -E '^(FAILED|all Linux-ABI|guest: getpid round trip|guest: parallel|guest: xsave|.*without XSAVE|xsave_check)' "$out/linux-guests.log" | sed 's/^/    /' | tee -a "$summary"
fi
if want runtime; then
  for p in 4K 2M; do
    SAMPLES="vectorAdd matrixMul reduction bandwidthTest streamsEvents" LOG_DIR=$out/runtime-api/$p \
      step runtime-api-cuda-$p sh "$repo/kvmtool-gpu/scripts/run-cuda-samples.sh" \
      "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" --vgpu cuda --pages $p
    grep -hE '^(run-cuda-samples|guest: .*(PASS|FAIL|Performance=|Throughput|GPU Device|Device 0|Bandwidth,|Memory Transfers|result =|streams,)|guest: +[0-9]+\s)|result:' \
      "$out/runtime-api-cuda-$p.log" | sed 's/^/    /' | tee -a "$summary"
  done
  # The same sources built natively (nvcc, NVIDIA's runtime), in the same
  # check: the baseline for the guests' figures, and the checks' rules held
  # against the real runtime.
  if [ -d "$repo/.carry/native-samples" ]; then
    mkdir -p "$out/runtime-api/native"
    for s in $(ls "$repo/.carry/native-samples"); do # what guest-stub/CMakeLists.txt built natively
      step runtime-api-native-$s "$repo/.carry/native-samples/$s"
      cp "$out/runtime-api-native-$s.log" "$out/runtime-api/native/$s.log"
      grep -hE '(PASS|FAIL|Performance=|Throughput|elements:|^ +[0-9]+\s)' "$out/runtime-api-native-$s.log" | sed 's/^/    /' | tee -a "$summary"
    done
  else
    note "runtime-api-native           skipped: no .carry/native-samples (pack-carry.sh builds them where nvcc is)"
  fi
  # The five with CUDA inside the VMM process (no GPU worker).
  SAMPLES="vectorAdd matrixMul reduction bandwidthTest streamsEvents" LOG_DIR=$out/runtime-api/inline \
    step runtime-api-cuda-inline sh "$repo/kvmtool-gpu/scripts/run-cuda-samples.sh" \
    "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" --vgpu cuda --gpu-worker inline
  grep -hE '^run-cuda-samples' "$out/runtime-api-cuda-inline.log" | sed 's/^/    /' | tee -a "$summary"
  # The other checks, in their own step so the five above report apart:
  # deviceSymbols (__constant__/__device__ variables: the CUDA backend only),
  # runtimeErrors (a kernel fault, then cudaDeviceReset: the VMM replaces
  # the poisoned GPU worker), memory2D, launchParams, guestEnv and arrays
  # (arrays, textures and surfaces sampled by kernels, entry points, cuModuleLoad).
  SAMPLES="deviceSymbols runtimeErrors memory2D launchParams guestEnv arrays" LOG_DIR=$out/runtime-api/checks \
    step runtime-api-checks-cuda sh "$repo/kvmtool-gpu/scripts/run-cuda-samples.sh" \
    "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" --vgpu cuda
  grep -hE '^(run-cuda-samples|guest: )|result:' "$out/runtime-api-checks-cuda.log" | sed 's/^/    /' | tee -a "$summary"
fi
if want boot; then
  step run-hello-4K "$bin/kvmtool-gpu" run --guest hello --mem 512M --pages 4K
  step run-hello-2M "$bin/kvmtool-gpu" run --guest hello --mem 512M --pages 2M
  step bench-boot-2M "$bin/kvmtool-gpu" bench boot --mem 512M --pages 2M --reps 50 --csv "$out/boot-2M.csv"
  step bench-boot-2M-prefault "$bin/kvmtool-gpu" bench boot --mem 512M --pages 2M --reps 20 --prefault
  step bench-boot-4K "$bin/kvmtool-gpu" bench boot --mem 512M --pages 4K --reps 50 --csv "$out/boot-4K.csv"
  for b in bench-boot-2M bench-boot-2M-prefault bench-boot-4K; do sed 's/^/    /' "$out/$b.log" | tee -a "$summary"; done
  # The embedding API against the CLI's path (issue 45): each repetition
  # booted through kvmgpu::Machine, alternated twice with the CLI's.
  for i in 1 2; do
    for via in cli api; do
      step bench-boot-2M-$via-$i "$bin/kvmtool-gpu" bench boot --mem 512M --pages 2M --reps 30 \
        $([ $via = api ] && echo --api)
      sed 's/^/    /' "$out/bench-boot-2M-$via-$i.log" | tee -a "$summary"
    done
  done
fi
# One training step's cost (tests/ml/train_steps.py): natively and as a
# guest, KVMGPU_TRAIN_STEPS timed steps, the guest once per futex spin of
# KVMGPU_TRAIN_SPINS, all alternated KVMGPU_TRAIN_RUNS times.
if want train; then
  py=${KVMGPU_PYTHON:-python3}
  for r in $(seq "${KVMGPU_TRAIN_RUNS:-3}"); do
    for model in mlp cnn; do
      step train-$model-native-$r "$py" "$repo/tests/ml/train_steps.py" $model "${KVMGPU_TRAIN_STEPS:-300}"
      note "    $(tail -n 1 "$out/train-$model-native-$r.log")"
      for spin in ${KVMGPU_TRAIN_SPINS:-0 50}; do
        step train-$model-spin$spin-$r "$bin/kvmtool-gpu" run --guest "$py" --root / --mem 8G --vgpu cuda \
          --futex-spin-us "$spin" -- "$repo/tests/ml/train_steps.py" $model "${KVMGPU_TRAIN_STEPS:-300}"
        grep -E ' rate |commands \(' "$out/train-$model-spin$spin-$r.log" | cut -c1-200 | sed 's/^/    /' | tee -a "$summary"
      done
    done
  done
fi
# Translation cost: native chase on 4K/2M/1G up to 4 GiB, VMM work, and the
# guest chase (ring 3: native guest code, measured per run) for guest 4K/2M
# x host 4K/2M/1G up to 4 GiB, with KVM's statistics per run.
if want tlb; then
  step bench-tlb timeout 540 "$bin/kvmtool-gpu" bench tlb --max-ws 4G --guest-max-ws 4G --reps 3 \
    --csv "$out/tlb.csv" --json "$out/tlb.json" --plot "$out/tlb.png"
  sed -n '/^|/p;/^#/p;/^- /p' "$out/bench-tlb.log" | head -90 | sed 's/^/    /' | tee -a "$summary"
fi
# The cost of a virtual call: every doorbell, batching off and on, native first.
if want calls; then
  step bench-calls timeout 420 "$bin/kvmtool-gpu" bench calls --vgpu cuda --poll-spin-us 2000 \
    --plot-script "$repo/kvmtool-gpu/bench/plot_bench.py" --out "$out/calls"
  step bench-calls-inline timeout 150 "$bin/kvmtool-gpu" bench calls --vgpu cuda --poll-spin-us 2000 \
    --gpu-worker inline --doorbells poll --plot-script "$repo/kvmtool-gpu/bench/plot_bench.py" --out "$out/calls-inline"
  for d in calls calls-inline; do
    md=$(ls "$out/$d"/*.md 2>/dev/null | head -1)
    [ -n "$md" ] && { note ""; note "--- $d"; tee -a "$summary" <"$md"; }
  done
fi
# The multi-GPU transfer study, native beside guest, 3 runs per mode. On 2+
# GPUs three layouts of the four devices: 0,1,1,1 (every remote partial
# product crosses the GPU link: the seed's case), 0,1,0,1 and 0,0,1,1 (two
# of three cross); on one GPU all four on GPU 0 (nothing crosses). The bench
# prints per pair of devices where they live and which products cross.
# KVMGPU_MULTIGPU_GPUS names one layout instead.
if want multigpu; then
  if [ -n "${KVMGPU_MULTIGPU_GPUS:-}" ]; then layouts=$KVMGPU_MULTIGPU_GPUS
  elif [ "$gpu_count" -ge 2 ]; then layouts="0,1,1,1 0,1,0,1 0,0,1,1"
  else layouts=0,0,0,0; fi
  for l in $layouts; do
    tag=multigpu-${l//,/}
    step bench-$tag timeout 240 "$bin/kvmtool-gpu" bench multigpu --vgpu cuda --gpus "$l" \
      --orders "${KVMGPU_MULTIGPU_ORDERS:-1024,2048,4096,8192,16384}" --reps 3 \
      --plot-script "$repo/kvmtool-gpu/bench/plot_bench.py" --out "$out/$tag"
    grep -E '^bench multigpu: (the seed|NOT the seed|unknown|role|devices)' "$out/bench-$tag.log" | sed 's/^/    /' | tee -a "$summary"
    md=$(ls "$out/$tag"/*.md 2>/dev/null | head -1)
    [ -n "$md" ] && { note ""; note "--- $tag"; tee -a "$summary" <"$md"; }
  done
fi
# Peer to peer: the GPUs' topology, bench p2p (every ordered pair of devices,
# uni/bidirectional copies 4 KiB..1 GiB and one-word latency, peer access
# off and on, native beside guest; polling doorbell, as the latency target
# says), and the peerAccess sample as a guest and natively. Two devices on
# two GPUs where there are two, else both on GPU 0 (the sample then waives).
if want p2p; then
  nvidia-smi topo -m >"$out/nvidia-smi-topo.txt" 2>&1
  note "nvidia-smi topo -m:"; sed 's/^/    /' "$out/nvidia-smi-topo.txt" | tee -a "$summary"
  pair=0,0; [ "$gpu_count" -ge 2 ] && pair=0,1
  step bench-p2p timeout 240 "$bin/kvmtool-gpu" bench p2p --vgpu cuda --gpus $pair --trials 3 \
    --doorbell poll --poll-spin-us 2000 --out "$out/p2p"
  grep -E '^bench p2p: ' "$out/bench-p2p.log" | sed 's/^/    /' | tee -a "$summary"
  md=$(ls "$out/p2p"/*.md 2>/dev/null | head -1)
  [ -n "$md" ] && { note ""; note "--- p2p"; tee -a "$summary" <"$md"; }
  SAMPLES=peerAccess LOG_DIR=$out/runtime-api/p2p step peer-access-guest sh "$repo/kvmtool-gpu/scripts/run-cuda-samples.sh" \
    "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" --vgpu cuda --gpus $pair
  grep -hE '^(run-cuda-samples|guest: peerAccess|kvmtool-gpu: vGPU: devices)' "$out/peer-access-guest.log" | sed 's/^/    /' | tee -a "$summary"
  if [ "$gpu_count" -ge 2 ] && [ -x "$repo/.carry/native-samples/peerAccess" ]; then
    step peer-access-native "$repo/.carry/native-samples/peerAccess"
    sed 's/^/    /' "$out/peer-access-native.log" | tee -a "$summary"
  else
    note "peer-access-native           skipped: one GPU (it waives) or no .carry/native-samples/peerAccess"
  fi
fi
# Several VMs on one GPU: N = 1, 2, 4, 8 (bandwidth and compute mixes)
# against one and N native processes; then four VMs of which one
# misbehaves (fault, quota, storm) while the other three are measured.
if want share; then
  share=(bench share --vgpu cuda --gpu-mem-quota 4G --plot-script "$repo/kvmtool-gpu/bench/plot_bench.py")
  step bench-share timeout 480 "$bin/kvmtool-gpu" "${share[@]}" --out "$out/share"
  for r in fault quota storm; do
    step bench-share-$r timeout 240 "$bin/kvmtool-gpu" "${share[@]}" --vms 4 --intruder $r --no-native --out "$out/share-$r"
  done
  for d in share share-fault share-quota share-storm; do
    md=$(ls "$out/$d"/*.md 2>/dev/null | head -1)
    [ -n "$md" ] && { note ""; note "--- $d"; tee -a "$summary" <"$md"; }
  done
fi
# Issue 28: the default options (the GPU worker owns the ring; adaptive
# doorbell with the event index). Five runs of bench calls, each native
# first (sync round trips, deferred launch rate, the round trip after a
# 10 ms pause, the VMM's and worker's CPU while the guest idles 10 s), and
# their medians; then one run of every doorbell, and one inline.
if want adaptive; then
  plot=(--plot-script "$repo/kvmtool-gpu/bench/plot_bench.py")
  for i in 1 2 3 4 5; do
    step adaptive-calls-$i timeout 80 "$bin/kvmtool-gpu" bench calls --vgpu cuda --doorbells adaptive "${plot[@]}" \
      --out "$out/adaptive/run$i"
  done
  step adaptive-medians python3 "$repo/kvmtool-gpu/bench/calls_medians.py" "$out"/adaptive/run*
  note ""; note "--- adaptive: medians of five runs"; tee -a "$summary" <"$out/adaptive-medians.log"
  step adaptive-calls-every-doorbell timeout 110 "$bin/kvmtool-gpu" bench calls --vgpu cuda --idle-s 3 "${plot[@]}" \
    --out "$out/adaptive/every-doorbell"
  [ "${KVMGPU_ADAPTIVE_INLINE:-1}" = 1 ] && step adaptive-calls-inline timeout 60 "$bin/kvmtool-gpu" bench calls \
    --vgpu cuda --doorbells adaptive --gpu-worker inline "${plot[@]}" --out "$out/adaptive/inline"
  for d in every-doorbell inline; do
    md=$(ls "$out/adaptive/$d"/*.md 2>/dev/null | head -1)
    [ -n "$md" ] && { note ""; note "--- adaptive/$d"; tee -a "$summary" <"$md"; }
  done
fi
# Issue 28, item 7: the guest does not wait for CUDA to start. The first
# guest instruction after VM creation (boot_exit: no runtime, no vGPU call)
# with the CUDA vGPU against none, five runs each; then whole programs
# (NVIDIA samples, default options) timed around the process, native and
# guest alternating, three passes; `run`'s own account of one guest.
# Needs .carry/cuda-samples (the pack, unpacked).
if want startup; then
  for v in none cuda; do
    for i in 1 2 3 4 5; do
      "$bin/kvmtool-gpu" run --guest boot_exit --vgpu "$v" --mem 2G --pages 2M >>"$out/startup-boot-$v.log" 2>&1
    done
    note "startup: boot_exit --vgpu $v --mem 2G --pages 2M, first instruction (ms): $(sed -n 's/.*first instruction \([0-9.]*\) ms.*/\1/p' "$out/startup-boot-$v.log" | tr '\n' ' ')"
  done
  pack=$repo/.carry/cuda-samples
  if [ -d "$pack/guest" ]; then
    wall=${KVMGPU_WALL_SAMPLES:-"matrixMul vectorAdd simpleStreams asyncAPI mergeSort convolutionSeparable"}
    for pass in 1 2 3; do
      SAMPLES="$wall" TIMEOUT=60 step startup-wall-$pass sh "$repo/kvmtool-gpu/scripts/run-nvidia-samples.sh" \
        "$bin/kvmtool-gpu" "$pack" "$out/startup/wall$pass" --vgpu cuda
    done
    step startup-wall-table python3 "$repo/kvmtool-gpu/scripts/samples_compare.py" "$out"/startup/wall*/runs.tsv
    note ""; note "--- whole programs, wall time, --mem 4G (three passes, medians)"; tee -a "$summary" <"$out/startup-wall-table.log"
    # Registering guest RAM (pinning and first-touch zeroing of every page)
    # grows with --mem: the same with 1 GiB.
    MEM=1G SAMPLES="$wall" TIMEOUT=60 step startup-wall-1g sh "$repo/kvmtool-gpu/scripts/run-nvidia-samples.sh" \
      "$bin/kvmtool-gpu" "$pack" "$out/startup/mem1g" --vgpu cuda
    step startup-wall-1g-table python3 "$repo/kvmtool-gpu/scripts/samples_compare.py" "$out"/startup/mem1g/runs.tsv
    note ""; note "--- whole programs, wall time, --mem 1G (one pass)"; tee -a "$summary" <"$out/startup-wall-1g-table.log"
    grep -h '^kvmtool-gpu: \(timing\|vGPU\)' "$out"/startup/mem1g/logs/guest-matrixMul.log | tee -a "$summary"
    grep -h '^kvmtool-gpu: \(timing\|vGPU\)' "$out"/startup/wall1/logs/guest-matrixMul.log | tee -a "$summary"
    # The old way, for comparison: all guest RAM registered when the vGPU starts.
    SAMPLES="$wall" TIMEOUT=60 step startup-wall-eager sh "$repo/kvmtool-gpu/scripts/run-nvidia-samples.sh" \
      "$bin/kvmtool-gpu" "$pack" "$out/startup/eager" --vgpu cuda --ram-registration eager
    step startup-wall-eager-table python3 "$repo/kvmtool-gpu/scripts/samples_compare.py" "$out"/startup/eager/runs.tsv
    note ""; note "--- whole programs, wall time, --mem 4G, --ram-registration eager (one pass)"; tee -a "$summary" <"$out/startup-wall-eager-table.log"
    grep -h '^kvmtool-gpu: \(timing\|vGPU\)' "$out"/startup/eager/logs/guest-matrixMul.log | tee -a "$summary"
  fi
fi
# Issue 28: the short-kernel samples on their own timing, guest (default
# options) against native, both with eager module loading (CUDA_MODULE_LOADING=EAGER,
# which the guest's cudart honours too: no module load in a timed region),
# two passes; then both lazy (CUDA's default) and the guest with --no-vdso, one pass each.
if want samples28; then
  pack=$repo/.carry/cuda-samples
  short=${KVMGPU_SHORT_SAMPLES:-"transpose reduction scalarProd shfl_scan sortingNetworks threadFenceReduction fastWalshTransform histogram mergeSort matrixMul MC_EstimatePiInlineP MC_SingleAsianOptionP"}
  samples28() { # name passes RUN_ARGS...
    local name=$1 passes=$2; shift 2
    for pass in $(seq "$passes"); do
      SAMPLES="$short" TIMEOUT=60 step samples28-$name-$pass sh "$repo/kvmtool-gpu/scripts/run-nvidia-samples.sh" \
        "$bin/kvmtool-gpu" "$pack" "$out/samples28/$name$pass" --vgpu cuda "$@"
    done
    step samples28-$name-table python3 "$repo/kvmtool-gpu/scripts/samples_compare.py" "$out"/samples28/$name*/runs.tsv
    note ""; note "--- short-kernel samples: $name ($passes passes, medians)"; tee -a "$summary" <"$out/samples28-$name-table.log"
  }
  modes=${KVMGPU_SAMPLES28_MODES:-"eager lazy eager-novdso"}
  case " $modes " in *" eager "*) CUDA_MODULE_LOADING=EAGER samples28 eager 2 --env CUDA_MODULE_LOADING=EAGER ;; esac
  case " $modes " in *" lazy "*) samples28 lazy 1 ;; esac
  case " $modes " in *" eager-novdso "*)
    CUDA_MODULE_LOADING=EAGER samples28 eager-novdso 1 --env CUDA_MODULE_LOADING=EAGER --no-vdso ;; esac
fi
# Threads in Linux-ABI guests: the project's guestThreads (8 threads with
# streams and callbacks that start threads, 4 pushing contexts of their own)
# and launchThreads (8 threads launching kernels at once, each with its own
# configuration and stream), then the two NVIDIA samples that start
# threads, each native and guest.
if want threads; then
  if [ -x "$repo/.carry/linux-guests/thread_check" ]; then # vCPUs in parallel, and a thread's cost, on this machine
    for i in 1 2 3; do "$bin/kvmtool-gpu" run --guest "$repo/.carry/linux-guests/thread_check" --mem 128M --vgpu none -- parallel; done \
      >"$out/threads-parallel.log" 2>&1
    grep -h '^guest: parallel' "$out/threads-parallel.log" | sed 's/^/    /' | tee -a "$summary"
  fi
  SAMPLES="guestThreads launchThreads" LOG_DIR=$out/threads/checks \
    step threads-guest-cuda sh "$repo/kvmtool-gpu/scripts/run-cuda-samples.sh" "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" --vgpu cuda
  grep -hE '^(run-cuda-samples|guest: )|result:|system calls:' "$out/threads-guest-cuda.log" | sed 's/^/    /' | tee -a "$summary"
  pack=$repo/.carry/cuda-samples
  if [ ! -d "$pack/guest" ] && [ -f "$repo/.carry/cuda-samples.tar.xz" ]; then
    pack=$out/cuda-samples-pack && mkdir -p "$pack" && tar -C "$pack" -xJf "$repo/.carry/cuda-samples.tar.xz"
  fi
  if [ -d "$pack/guest" ]; then
    SAMPLES="simpleCallback threadMigration" TIMEOUT=120 step threads-nvidia sh "$repo/kvmtool-gpu/scripts/run-nvidia-samples.sh" \
      "$bin/kvmtool-gpu" "$pack" "$out/threads/nvidia" --vgpu cuda
    grep -h '^run-nvidia-samples' "$out/threads-nvidia.log" | sed 's/^/    /' | tee -a "$summary"
    grep -h 'system calls:' "$out"/threads/nvidia/logs/guest-*.log | sed 's/^/    /' | tee -a "$summary"
  else
    note "threads: no .carry/cuda-samples(.tar.xz): NVIDIA's samples not run"
  fi
fi
# Issue 31: CUDA libraries forwarded as calls. cublasCheck, cufftCheck and
# curandCheck (against the CPU, the vGPU's refusals) and cublasChain
# (cuRAND, kernels, cuBLAS on one stream) as guests on CUDA, natively too;
# NVIDIA's cuBLAS, cuRAND and cuFFT samples from .carry/cuda-samples
# (build-cuda-samples.sh's pack) natively and as guests; then bench
# libraries (native first, then the guest; about 4 minutes).
# `libsamples` runs only the checks and the NVIDIA samples (about 2 minutes).
if want libraries || want libsamples; then
  SAMPLES="cublasCheck cublasChain cufftCheck curandCheck" LOG_DIR=$out/libraries/checks \
    step libraries-checks-cuda sh "$repo/kvmtool-gpu/scripts/run-cuda-samples.sh" "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" --vgpu cuda
  grep -hE '^(run-cuda-samples|guest: cu(blas|fft|rand))|cu(BLAS|RAND|FFT): ' "$out/libraries-checks-cuda.log" | sed 's/^/    /' | tee -a "$summary"
  for c in curandCheck cufftCheck cublasCheck; do
    [ -x "$repo/.carry/native-samples/$c" ] && step libraries-native-$c "$repo/.carry/native-samples/$c"
  done
  # What the Monte Carlo samples time: the first cudaSetDevice (the primary
  # context's creation natively), natively and as a guest.
  for i in 1 2 3; do
    [ -x "$repo/.carry/native-samples/firstSetDevice" ] &&
      step libraries-first-set-device-native-$i "$repo/.carry/native-samples/firstSetDevice"
    step libraries-first-set-device-guest-$i "$bin/kvmtool-gpu" run --guest "$KVMGPU_GUEST_DIR/firstSetDevice.elf" --vgpu cuda --mem 1G
  done
  grep -h 'firstSetDevice:' "$out"/libraries-first-set-device-*.log | sed 's/^/    /' | tee -a "$summary"
  pack=$repo/.carry/cuda-samples
  if [ -d "$pack/guest" ]; then
    libs=${KVMGPU_LIBRARY_SAMPLES:-"simpleCUBLAS matrixMulCUBLAS batchCUBLAS MersenneTwisterGP11213 simpleCUFFT simpleCUFFT_MGPU simpleCUFFT_2d_MGPU simpleCUFFT_callback convolutionFFT2D MC_EstimatePiP MC_EstimatePiQ MC_EstimatePiInlineP MC_EstimatePiInlineQ MC_SingleAsianOptionP MonteCarloMultiGPU"}
    SAMPLES="$libs" TIMEOUT=60 step libraries-samples sh "$repo/kvmtool-gpu/scripts/run-nvidia-samples.sh" \
      "$bin/kvmtool-gpu" "$pack" "$out/libraries/samples" --vgpu cuda
    step libraries-samples-table python3 "$repo/kvmtool-gpu/scripts/samples_compare.py" "$out"/libraries/samples/runs.tsv
    note ""; note "--- NVIDIA's library samples, native and guest"; tee -a "$summary" <"$out/libraries-samples-table.log"
  else
    note "libraries: no .carry/cuda-samples (build-cuda-samples.sh's pack, unpacked): NVIDIA's samples not run"
  fi
fi
if want libraries; then
  step libraries-bench timeout 540 "$bin/kvmtool-gpu" bench libraries --vgpu cuda --out "$out/libraries/bench"
  md=$(ls "$out/libraries/bench"/libraries.md 2>/dev/null | head -1)
  [ -n "$md" ] && { note ""; note "--- bench libraries"; tee -a "$summary" <"$md"; }
fi
if want compare; then
  old=$repo/.carry/compare/kvmtool-gpu
  [ -x "$old" ] || note "compare: no .carry/compare/kvmtool-gpu: this commit only"
  calls=(bench calls --vgpu cuda --poll-spin-us 2000 --doorbells poll)
  for i in 1 2 3 4 5; do
    [ -x "$old" ] && KVMGPU_GUEST_DIR=$repo/.carry/compare/guests step compare-before-process-$i "$old" "${calls[@]}"
    step compare-after-process-$i "$bin/kvmtool-gpu" "${calls[@]}"
    step compare-after-inline-$i "$bin/kvmtool-gpu" "${calls[@]}" --gpu-worker inline
  done
  for f in "$out"/compare-*.log; do
    echo "--- $(basename "$f" .log)" >>"$summary"
    grep -E '^\| (native|guest poll)' "$f" >>"$summary"
  done
fi
# Issue 29, managed memory and the VMM API (not in the default; one device
# call, about 5 minutes): the conformance guest on CUDA (its VMM and managed
# checks among the rest), managedMemory as a guest and natively, the three samples that need them as guests from
# .carry/cuda-samples, and bench calls' alloc_async and managed_launch rows
# beside native (adaptive doorbell, batching off).
# Issue 30's bench runner against the commit before it: the same benches,
# the same flags, five runs each; the tables' rows for the spread, and the
# files' shape (numbers masked) for "nothing but the numbers changed".
if want runner; then
  old=$repo/.carry/compare/kvmtool-gpu
  [ -x "$old" ] || note "runner: no .carry/compare/kvmtool-gpu: this commit only"
  shape() { sed -E 's/-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?/N/g' "$1"; }
  for i in $(seq "${KVMGPU_RUNNER_RUNS:-5}"); do
    for b in ${KVMGPU_RUNNER_BENCHES:-calls bandwidth}; do
      args=(bench $b --vgpu cuda --out $b) # the same words both times: the files carry the command line
      [ $b = calls ] && args+=(--doorbells adaptive,poll --idle-s 0)
      [ $b = bandwidth ] && args+=(--quick)
      mkdir -p "$out/runner/before-$i" "$out/runner/after-$i"
      [ -x "$old" ] && (cd "$out/runner/before-$i" && KVMGPU_GUEST_DIR=$repo/.carry/compare/guests \
        step runner-before-$b-$i timeout 90 "$old" "${args[@]}")
      (cd "$out/runner/after-$i" && step runner-after-$b-$i timeout 90 "$bin/kvmtool-gpu" "${args[@]}")
      if [ -x "$old" ]; then
        for f in $b/$b.csv $b/$b.md; do
          if diff <(shape "$out/runner/before-$i/$f") <(shape "$out/runner/after-$i/$f") >"$out/runner-$i-${f#*/}.diff"; then
            note "    run $i: $f differs in numbers only"
          else
            note "    run $i: $f DIFFERS in shape (runner-$i-${f#*/}.diff)"
          fi
        done
      fi
    done
  done
  for f in "$out"/runner/*/calls/calls.md "$out"/runner/*/bandwidth/bandwidth.md; do
    echo "--- ${f#"$out"/runner/}" >>"$summary"
    grep -E '^\| (native|guest)' "$f" | head -24 >>"$summary"
  done
fi

# Issue 40: each GPU worker of a run --vms 3 maps only its own VM (CUDA
# workers, 4K and 2M pages); then the VMM from .carry/compare beside this
# one: first-instruction time (bench boot) and the worker's start (the
# "ready N ms after the device started" of three vecadd runs each).
if want isolation; then
  lg=$repo/.carry/linux-guests
  for p in 4K 2M; do
    step isolation-$p sh "$repo/tests/kvm/worker-isolation.sh" "$bin/kvmtool-gpu" "$lg" cuda $p
    grep -E '^(ok|FAILED|worker)' "$out/isolation-$p.log" | sed 's/^/    /' | tee -a "$summary"
  done
  old=$repo/.carry/compare/kvmtool-gpu
  for i in 1 2 3; do
    for side in before after; do
      vmm=$bin/kvmtool-gpu gdir=$KVMGPU_GUEST_DIR
      [ $side = before ] && { [ -x "$old" ] || continue; vmm=$old gdir=$repo/.carry/compare/guests; }
      KVMGPU_GUEST_DIR=$gdir step start-$side-$i "$vmm" run --guest vecadd --mem 4G --pages 2M --vgpu cuda
      note "    $side $i: $(grep -oE 'ready [0-9.]+ ms after the device started' "$out/start-$side-$i.log")"
      KVMGPU_GUEST_DIR=$gdir step boot-$side-$i "$vmm" bench boot --mem 512M --pages 2M --reps 30
      grep -iE 'first|median' "$out/boot-$side-$i.log" | head -4 | sed "s/^/    $side $i: /" | tee -a "$summary"
    done
  done
fi

# Ordinary dynamic programs with --root / (issue 41): the machine's own
# python3 (start-up beside native, CPython's test modules as a guest and
# natively) and an ordinary nvcc build (NVIDIA's static cudart, dlopen of
# libcuda.so.1 from the root).
if want dynamic; then
  py=$(command -v python3)
  step linux-python sh "$repo/tests/kvm/linux-python.sh" "$bin/kvmtool-gpu" "$py"
  grep -E '^(ok|FAILED|SKIP|python3|start-up|native|guest)' "$out/linux-python.log" | head -20 | sed 's/^/    /' | tee -a "$summary"
  for i in 1 2 3 4 5; do
    t0=$(date +%s%N); "$py" -c pass; t1=$(date +%s%N)
    "$bin/kvmtool-gpu" run --guest "$py" --root / --vgpu none --mem 1G --quiet -- -c pass >/dev/null 2>&1; rc=$?; t2=$(date +%s%N)
    note "    python3 -c pass run $i: native $(( (t1 - t0) / 1000000 )) ms, guest $(( (t2 - t1) / 1000000 )) ms (rc $rc)"
  done
  mods="test_json test_re test_math test_struct test_threading"
  if "$py" -c 'import test.test_json' >/dev/null 2>&1; then
    step pytest-native timeout 120 "$py" -m test $mods
    step pytest-guest timeout 240 "$bin/kvmtool-gpu" run --guest "$py" --root / --vgpu none --mem 4G --timeout 230 -- -m test $mods
    for l in pytest-native pytest-guest; do grep -E '^(Result|Total tests|.*(passed|failed|skipped)|All [0-9]+ tests)' "$out/$l.log" | tail -6 | sed "s/^/    $l: /" | tee -a "$summary"; done
    tail -5 "$out/pytest-guest.log" | sed 's/^/    guest tail: /' | tee -a "$summary"
  else
    note "    CPython's test modules: not run ($py has no test.test_json here)"
  fi
  nvcc -O2 -I "$repo/guest-stub/samples" -o /tmp/vectorAdd-dyn "$repo/guest-stub/samples/vectorAdd.cu" >"$out/nvcc-vectorAdd.log" 2>&1
  step vectorAdd-native /tmp/vectorAdd-dyn
  step vectorAdd-guest timeout 120 "$bin/kvmtool-gpu" run --guest /tmp/vectorAdd-dyn --root / --vgpu cuda --mem 2G
  tail -4 "$out/vectorAdd-guest.log" | sed 's/^/    /' | tee -a "$summary"
  # The guest libcuda.so.1 over the host driver's (issue 42): the start-up
  # line names it; the ordinary builds of tests/kvm/linux-cuda.sh on both
  # backends (the host backend's script, then each program on the GPU).
  grep -E '^kvmtool-gpu: vCPU backend' "$out/vectorAdd-guest.log" | sed 's/.*; libcuda:/    libcuda:/' | tee -a "$summary"
  if [ -d "$repo/.carry/linux-cuda" ]; then
    lc=$repo/.carry/linux-cuda
    step linux-cuda-host sh "$repo/tests/kvm/linux-cuda.sh" "$bin/kvmtool-gpu" "$lc"
    grep -E '^(ok|FAILED|all)' "$out/linux-cuda-host.log" | sed 's/^/    /' | tee -a "$summary"
    for p in vectorAdd vectorAdd-shared-cudart cudart_check; do
      step "$p-native" "$lc/$p"
      step "$p-guest-cuda" timeout 120 "$bin/kvmtool-gpu" run --guest "$lc/$p" --root / --vgpu cuda --mem 2G
      tail -3 "$out/$p-guest-cuda.log" | sed 's/^/    /' | tee -a "$summary"
    done
  fi
fi
# Issue 42's conformance tables: NVIDIA's cuda-samples and CUDALibrarySamples
# built the ordinary way (build-ordinary-samples.sh; the pack under .pack/,
# carried beside .carry), each run natively and as a guest with --root / on
# CUDA, same arguments, in one call (run-ordinary-samples.sh: 4 at once, 60 s
# a side, none started after 7 minutes). Where the pack was split in two,
# whichever half is carried runs (one device call each).
if want ordinary; then
  ord=/tmp/kvmgpu-ordinary && rm -rf "$ord" && mkdir -p "$ord"
  for p in ordinary-samples ordinary-cuda-samples ordinary-library-samples; do
    [ -f "$repo/.pack/$p.tar.xz" ] && tar -C "$ord" -xJf "$repo/.pack/$p.tar.xz" && note "ordinary: unpacked .pack/$p.tar.xz"
  done
  if [ -f "$ord/manifest.tsv" ]; then
    step ordinary-samples bash "$repo/kvmtool-gpu/scripts/run-ordinary-samples.sh" "$bin/kvmtool-gpu" "$ord" \
      "$out/ordinary" --vgpu cuda
    grep -E '^run-ordinary-samples: [0-9]+ runs' "$out/ordinary-samples.log" | sed 's/^/    /' | tee -a "$summary"
    note ""; note "--- ordinary builds, native and guest"; tee -a "$summary" <"$out/ordinary/table.md"
  else
    note "ordinary: no .pack/ordinary-*.tar.xz (build-ordinary-samples.sh): nothing run"
  fi
fi
# The programs of trace's PyTorch and CuPy runs.
torch_prog='import torch; print("available", torch.cuda.is_available()); x = torch.ones(256, 256, device="cuda"); print("sum", (x @ x).sum().item())'
cupy_prog='import cupy as cp; a = cp.arange(1 << 20, dtype=cp.float32); print("sum", float((a * 2).sum()))'
# Issue 43: PyTorch eager and CuPy, natively and as guests (tests/ml/run-ml.sh).
if want ml; then
  MEM=${KVMGPU_ML_MEM:-32G} RUNS=${KVMGPU_ML_RUNS:-3} step ml timeout 560 sh "$repo/tests/ml/run-ml.sh" "$bin/kvmtool-gpu" "$out/ml"
  grep -E '^\|.*(FAILED|NO|missing)|differs|: [0-9.]+ /|rate' "$out/ml.log" | cut -c1-220 | sed 's/^/    /' | tee -a "$summary"
fi
# ggml's CUDA backend (issue 43): test-backend-ops natively and as a guest,
# built here from the ggml source tree at $KVMGPU_GGML_SRC (default
# .pack/ggml-src, unpacked from .pack/ggml-src.tar.xz) into build-ggml/,
# which later calls on a warm machine reuse.
if want ggml; then
  src=${KVMGPU_GGML_SRC:-$repo/.pack/ggml-src}
  [ -d "$src" ] || [ ! -f "$src.tar.xz" ] || tar -C "$(dirname "$src")" -xJf "$src.tar.xz"
  BUILD_DIR=$repo/build-ggml step ggml timeout 580 sh "$repo/tests/ml/run-ggml.sh" "$bin/kvmtool-gpu" "$src" "$out/ggml"
  grep -E '^(native|guest) |^\| (native|guest) |^Passing|^- |^\| [A-Z]|run-ggml' "$out/ggml.log" | cut -c1-220 |
    sed 's/^/    /' | tee -a "$summary"
fi
# What NVIDIA's cudart and libraries ask of libcuda.so.1 (issue 42): the
# tracing libcuda (scripts/cuda-trace) over an nvcc build, PyTorch (cuBLAS) and CuPy.
if want trace; then
  tr=$repo/kvmtool-gpu/scripts/cuda-trace/cuda-trace.sh
  mkdir -p "$out/trace"
  nvcc -O2 -I "$repo/guest-stub/samples" -o /tmp/vectorAdd-dyn "$repo/guest-stub/samples/vectorAdd.cu" >/dev/null 2>&1
  step trace-vectorAdd timeout 60 bash "$tr" --calls --log "$out/trace/vectorAdd.log" -- /tmp/vectorAdd-dyn
  # The tables no description covers yet, with the memory their arguments point at.
  unknown_tables=${KVMGPU_TRACE_DUMP:-69a28e9f,da9151d3,21318c60}
  step trace-torch timeout 120 bash "$tr" --calls --dump "$unknown_tables" --log "$out/trace/torch.log" -- python3 -c "$torch_prog"
  step trace-cupy timeout 120 bash "$tr" --calls --dump "$unknown_tables" --log "$out/trace/cupy.log" -- python3 -c "$cupy_prog"
  for f in "$out"/trace/*.log; do note "    $(basename "$f"): $(grep -c . "$f") lines, $(grep -c 'cuGetExportTable' "$f") export-table requests"; done
fi

if want managed; then
  RUN_ARGS="--vgpu cuda" GUESTS="conformance" step managed-conformance \
    sh "$repo/kvmtool-gpu/scripts/run-guests.sh" "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" 4K
  grep -E 'FAIL|checks|cuMemAllocManaged' "$out/managed-conformance.log" | head -20 | sed 's/^/    /' | tee -a "$summary"
  # The samples pack: .carry/cuda-samples, or .carry/cuda-samples.tar.xz unpacked here.
  pack=$repo/.carry/cuda-samples
  if [ ! -d "$pack" ] && [ -f "$repo/.carry/cuda-samples.tar.xz" ]; then
    pack=/tmp/kvmgpu-managed-pack && rm -rf "$pack" && mkdir -p "$pack" && tar -C "$pack" -xJf "$repo/.carry/cuda-samples.tar.xz"
  fi
  SAMPLES="systemWideAtomics vectorAddMMAP UnifiedMemoryPerf" TIMEOUT=240 step managed-samples \
    sh "$repo/kvmtool-gpu/scripts/run-nvidia-samples.sh" "$bin/kvmtool-gpu" "$pack" "$out/managed/samples" --vgpu cuda
  tail -n 20 "$out/managed-samples.log" | sed 's/^/    /' | tee -a "$summary"
  # managedMemory (guest-stub/samples/): managed memory through aliases in a Linux-ABI guest, beside its native twin.
  SAMPLES=managedMemory NO_WAIVE=1 LOG_DIR=$out/managed/checks step managed-sample \
    sh "$repo/kvmtool-gpu/scripts/run-cuda-samples.sh" "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" --vgpu cuda
  [ -x "$repo/.carry/native-samples/managedMemory" ] &&
    step managed-sample-native "$repo/.carry/native-samples/managedMemory"
  grep -h 'managedMemory:' "$out"/managed-sample*.log | sed 's/^/    /' | tee -a "$summary"
  step managed-calls timeout 300 "$bin/kvmtool-gpu" bench calls --vgpu cuda --doorbells adaptive --batching off \
    --idle-s 0 --out "$out/managed/calls"
  grep -E '^\| (mode|native|guest)' "$out/managed-calls.log" | sed 's/^/    /' | tee -a "$summary"
fi
# Issue 30 item 5, the GPU worker's sandbox (not in the default; two parts,
# one device call each, a few minutes). `sandbox` records every worker's system calls
# (KVMGPU_WORKER_SYSCALL_LOG: syscall_recorder.h; the namespaces on, the
# recorder in place of the filter and the read-only mounts) through guests, the
# runtime-API and library checks, NVIDIA's samples from .carry/cuda-samples
# and bench calls/bandwidth --quick, and prints the merged table and the rows
# worker_syscalls.cpp lacks. `sandbox2`, with the sandbox on: the GPU worker
# tests (one process each), guests and samples; any SIGSYS is listed.
sb=(--vgpu cuda --worker-sandbox on)
nv="vectorAdd matrixMul simpleCUBLAS simpleCUFFT MersenneTwisterGP11213 simpleCallback"
pack=$repo/.carry/cuda-samples
if want sandbox; then
  rec=$out/sandbox/syscalls && mkdir -p "$rec"
  export KVMGPU_WORKER_SYSCALL_LOG=$rec
  RUN_ARGS="${sb[*]}" GUESTS="vecadd matmul params conformance attack" step sandbox-record-guests \
    sh "$repo/kvmtool-gpu/scripts/run-guests.sh" "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" 2M
  SAMPLES="vectorAdd matrixMul reduction streamsEvents deviceSymbols runtimeErrors arrays cublasCheck cufftCheck curandCheck" \
    LOG_DIR=$out/sandbox/record-runtime step sandbox-record-runtime sh "$repo/kvmtool-gpu/scripts/run-cuda-samples.sh" \
    "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" "${sb[@]}"
  if [ -d "$pack/guest" ]; then
    SAMPLES="$nv" TIMEOUT=60 step sandbox-record-nvidia sh "$repo/kvmtool-gpu/scripts/run-nvidia-samples.sh" \
      "$bin/kvmtool-gpu" "$pack" "$out/sandbox/record-nvidia" "${sb[@]}"
  else
    note "sandbox: no .carry/cuda-samples: NVIDIA's samples not recorded"
  fi
  step sandbox-record-calls timeout 150 "$bin/kvmtool-gpu" bench calls --quick "${sb[@]}" --out "$out/sandbox/calls"
  step sandbox-record-bandwidth timeout 150 "$bin/kvmtool-gpu" bench bandwidth --quick "${sb[@]}" --out "$out/sandbox/bandwidth"
  unset KVMGPU_WORKER_SYSCALL_LOG
  step sandbox-syscalls sh "$repo/kvmtool-gpu/scripts/worker-syscalls.sh" "$rec"
  note ""; note "--- GPU worker system calls (recorded)"; tee -a "$summary" <"$out/sandbox-syscalls.log"
fi
if want sandbox2; then
  pass=0 fail=0
  # WorkerCuda.* live in vgpu_worker_gpu_tests.
  for t in $("$bin/vgpu_worker_gpu_tests" --gtest_list_tests | awk '/^[^ ]/{s=$1} /^  /{print s $1}' | grep -E '^WorkerCuda\.'); do
    if KVMGPU_TEST_WORKER_SANDBOX=on "$bin/vgpu_worker_gpu_tests" --gtest_filter="$t" >>"$out/sandbox-gpu-tests.log" 2>&1; then pass=$((pass + 1))
    else fail=$((fail + 1)); note "    FAILED (sandbox on): $t"; fi
  done
  note "$(printf '%-28s %s passed, %s failed (sandbox on, one process each)' sandbox-gpu-tests $pass $fail)"
  [ -x "$bin/vgpu_attack_gpu_tests" ] && KVMGPU_TEST_WORKER_SANDBOX=on step sandbox-cross-vm \
    "$bin/vgpu_attack_gpu_tests" --gtest_filter='CrossVmGpu.Worker*'
  RUN_ARGS="${sb[*]}" GUESTS="vecadd matmul params conformance attack multigpu" step sandbox-guests \
    sh "$repo/kvmtool-gpu/scripts/run-guests.sh" "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" 4K 2M
  SAMPLES="vectorAdd matrixMul reduction bandwidthTest streamsEvents runtimeErrors cublasCheck cufftCheck curandCheck" \
    LOG_DIR=$out/sandbox/runtime step sandbox-runtime sh "$repo/kvmtool-gpu/scripts/run-cuda-samples.sh" \
    "$bin/kvmtool-gpu" "$KVMGPU_GUEST_DIR" "${sb[@]}"
  [ -d "$pack/guest" ] && SAMPLES="$nv" TIMEOUT=60 step sandbox-nvidia sh "$repo/kvmtool-gpu/scripts/run-nvidia-samples.sh" \
    "$bin/kvmtool-gpu" "$pack" "$out/sandbox/nvidia" "${sb[@]}"
  grep -hE '^(run-guests|run-cuda-samples|run-nvidia-samples)' "$out"/sandbox-{guests,runtime,nvidia}.log 2>/dev/null | sed 's/^/    /' | tee -a "$summary"
  grep -rh 'sandboxed:' "$out"/sandbox-guests.log | head -1 | sed 's/^/    /' | tee -a "$summary"
  note "    SIGSYS lines: $(grep -rh 'killed by SIGSYS' "$out"/sandbox-*.log "$out/sandbox" 2>/dev/null | wc -l)"
  grep -rh 'killed by SIGSYS' "$out"/sandbox-*.log "$out/sandbox" 2>/dev/null | sort | uniq -c | head -5 | sed 's/^/    /' | tee -a "$summary"
fi
# Issue 32, CUDA MPS behind the VMs (not in the default; one device call,
# about 6 minutes, as root): bench share with N = 1, 2, 4, 8 VMs and native
# processes, the bandwidth, compute and small-kernel mixes, once with a
# context per worker and once with every worker (and native process) a
# client of one MPS server, which the VMM starts for the run in a private
# directory and stops at its end; then four VMs of which one faults, in
# both modes; then the MPS GPU test; then the two side by side
# (bench/share_modes.py). Any daemon a VMM started and left (it should not:
# the VMM and its guard stop it) is told to quit at the end.
if want mps; then
  mps_quit_left() {
    for d in /tmp/kvmgpu-mps-*/pipe; do
      [ -e "$d/control" ] || continue
      note "mps: a daemon was left at $d: telling it to quit"
      echo quit | CUDA_MPS_PIPE_DIRECTORY=$d nvidia-cuda-mps-control
    done
    note "mps: MPS processes left: $(pgrep -a nvidia-cuda-mps | tr '\n' ' ' || true)"
  }
  trap 'mps_quit_left; pack' EXIT
  note "mps: nvidia-cuda-mps-control: $(command -v nvidia-cuda-mps-control || echo 'not on PATH')"
  [ -S /tmp/nvidia-mps/control ] && note "mps: WARNING: a system MPS daemon listens at /tmp/nvidia-mps: the contexts run would use it"
  m=(bench share --vgpu cuda --gpu-mem-quota 4G --window 1.5 --settle 0.3 --slack 5 --work bandwidth,compute,small
     --plot-script "$repo/kvmtool-gpu/bench/plot_bench.py")
  step mps-share-contexts timeout 240 "$bin/kvmtool-gpu" "${m[@]}" --gpu-share contexts --out "$out/mps/contexts"
  step mps-share-mps timeout 240 "$bin/kvmtool-gpu" "${m[@]}" --gpu-share mps --out "$out/mps/mps"
  f=(bench share --vgpu cuda --gpu-mem-quota 4G --vms 4 --work compute --intruder fault --no-native --window 2 --slack 20)
  step mps-fault-contexts timeout 90 "$bin/kvmtool-gpu" "${f[@]}" --gpu-share contexts --out "$out/mps/fault-contexts"
  step mps-fault-mps timeout 120 "$bin/kvmtool-gpu" "${f[@]}" --gpu-share mps --out "$out/mps/fault-mps"
  grep -hE 'others of the faulting VM|MPS|mps' "$out"/mps-fault-*.log | sed 's/^/    /' | tee -a "$summary"
  [ -x "$bin/vgpu_mps_gpu_tests" ] && step mps-gpu-test timeout 150 "$bin/vgpu_mps_gpu_tests"
  grep -E '^MPS|^\[  (PASSED|SKIPPED|FAILED) ' "$out/mps-gpu-test.log" 2>/dev/null | sed 's/^/    /' | tee -a "$summary"
  note ""
  python3 "$repo/kvmtool-gpu/bench/share_modes.py" "$out/mps/contexts" "$out/mps/mps" "$out/mps/fault-contexts" \
    "$out/mps/fault-mps" 2>&1 | tee -a "$summary"
fi
# Later checks (bandwidth, calls) append themselves here.
{ want bench || want bench2; } && [ -f "$repo/kvmtool-gpu/scripts/device-check.d.sh" ] && source "$repo/kvmtool-gpu/scripts/device-check.d.sh"
note "== done"
