#!/bin/sh
# ggml's CUDA backend (ggml-org/ggml's test-backend-ops) natively and as a
# Linux-ABI guest of kvmtool-gpu in the same run, compared by
# compare_ggml.py: test mode (each case's result against ggml's CPU
# backend) and perf mode (microseconds per run). POSIX sh.
# Usage: run-ggml.sh VMM GGML OUT_DIR
#   GGML: a built test-backend-ops, or a ggml source tree, which is then
#   built the ordinary way (dynamic cudart and cuBLAS, sm_90) into
#   $BUILD_DIR (default OUT_DIR/build) first, unless built there already. The CPU backend is built without AVX: kvm-pvm
#   gives guests no XSAVE, so AVX code would fault there.
# Environment: TEST_OPS, PERF_OPS (comma-separated op names for -o; empty
# TEST_OPS = every op), RUN_ARGS (more `kvmtool-gpu run` options, default
# --vgpu cuda), MEM (guest RAM, default 16G), JOBS (build jobs), MODES (default
# "test perf").
vmm=$1 ggml=$2 out=$3
[ -x "$vmm" ] && [ -n "$ggml" ] && [ -n "$out" ] || { echo "usage: $0 VMM GGML OUT_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mem=${MEM:-16G} run_args=${RUN_ARGS:---vgpu cuda}
test_ops=${TEST_OPS-MUL_MAT,MUL_MAT_ID,ADD,MUL,RMS_NORM,ROPE,SOFT_MAX,FLASH_ATTN_EXT,CPY,GET_ROWS,GLU,SCALE}
perf_ops=${PERF_OPS:-MUL_MAT,FLASH_ATTN_EXT,SOFT_MAX,RMS_NORM,ROPE,ADD,CPY}
mkdir -p "$out"
tbo=$ggml
if [ -d "$ggml" ]; then
  build=${BUILD_DIR:-$out/build}
  tbo=$build/bin/test-backend-ops
  if [ ! -x "$tbo" ]; then
    cmake -S "$ggml" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
      -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_NCCL=OFF -DGGML_BUILD_TESTS=ON \
      -DGGML_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF \
      -DGGML_F16C=OFF -DGGML_BMI2=OFF >"$build.configure.log" 2>&1 &&
      cmake --build "$build" -j"${JOBS:-$(nproc)}" --target test-backend-ops >"$build.log" 2>&1 ||
      { echo "run-ggml: building test-backend-ops failed (see $build.log)"; tail -n 20 "$build.log"; exit 1; }
  fi
fi
ops() { [ -n "$1" ] && echo "-o $1"; }
status=0
for mode in ${MODES:-test perf}; do
  o=$test_ops; [ $mode = perf ] && o=$perf_ops
  # shellcheck disable=SC2046
  "$tbo" $mode -b CUDA0 $(ops "$o") >"$out/$mode-native.log" 2>&1
  echo "native $mode: exit $?"
  # shellcheck disable=SC2046,SC2086
  "$vmm" run --guest "$tbo" --root / --mem "$mem" --timeout 900 $run_args -- $mode -b CUDA0 $(ops "$o") \
    >"$out/$mode-guest.log" 2>&1
  echo "guest $mode: exit $?"
  python3 "$here/compare_ggml.py" $mode "$out/$mode-native.log" "$out/$mode-guest.log" >"$out/$mode.md" || status=1
  echo "== $mode"; cat "$out/$mode.md"
done
exit $status
