#!/bin/sh
# Runs NVIDIA's cuda-samples as packed by build-cuda-samples.sh: each sample
# natively (the same objects on NVIDIA's cudart) and as a Linux-ABI guest of
# kvmtool-gpu, one after the other, and records for each side the exit code,
# the sample's pass/fail line, its own timing lines and the wall time. POSIX sh.
# Usage: run-nvidia-samples.sh VMM PACK_DIR OUT_DIR [RUN_ARGS...]
#   VMM       the kvmtool-gpu binary
#   PACK_DIR  cuda-samples.tar.xz unpacked (guest/, native/, data/, results.tsv)
#   OUT_DIR   gets runs.tsv (sample, side, exit, seconds, pass line, timing,
#             first error line: sample-runs.sh)
#             and logs/<side>-<sample>.log
#   RUN_ARGS  more `kvmtool-gpu run` options (default: --vgpu cuda)
# Each sample runs in its own work folder holding its data files under data/
# (where the samples' sdkFindFilePath looks); the guest gets that folder as
# its --share. Environment: SAMPLES (default: every packed sample),
# TIMEOUT (seconds per run, default 300), MEM (guest RAM, default 4G).
vmm=$1 pack=$2 out=$3
[ -n "$vmm" ] && [ -d "$pack" ] && [ -n "$out" ] || {
  echo "usage: $0 VMM PACK_DIR OUT_DIR [RUN_ARGS...]" >&2; exit 2; }
shift 3
[ $# = 0 ] && set -- --vgpu cuda
timeout=${TIMEOUT:-300} mem=${MEM:-4G}
samples=${SAMPLES:-$(ls "$pack/guest" "$pack/native" 2>/dev/null | grep -v ':$' | sed 's/\.elf$//' | sort -u)}
mkdir -p "$out/logs" "$out/work"
. "$(dirname "$0")/sample-runs.sh"
runs=$out/runs.tsv
sample_runs_header "$runs"
for s in $samples; do
  work=$out/work/$s
  mkdir -p "$work"
  [ -d "$pack/data/$s" ] && rm -rf "$work/data" && cp -r "$pack/data/$s" "$work/data"
  if [ -x "$pack/native/$s" ]; then
    log=$out/logs/native-$s.log
    sample_run_timed "$log" "$work" timeout "$timeout" "$pack/native/$s"
    sample_record "$runs" "$s" native $run_rc $run_seconds "$log" run-nvidia-samples
  fi
  if [ -f "$pack/guest/$s.elf" ]; then
    log=$out/logs/guest-$s.log
    sample_run_timed "$log" "$work" "$vmm" run --guest "$pack/guest/$s.elf" --mem "$mem" --timeout "$timeout" --share "$work" "$@"
    sample_record "$runs" "$s" guest $run_rc $run_seconds "$log" run-nvidia-samples
  fi
done
both=$(awk -F'\t' 'NR > 1 && $3 == 0 { n[$1]++ } END { c = 0; for (s in n) if (n[s] == 2) c++; print c }' "$runs")
gpass=$(awk -F'\t' 'NR > 1 && $2 == "guest" && $3 == 0' "$runs" | wc -l)
npass=$(awk -F'\t' 'NR > 1 && $2 == "native" && $3 == 0' "$runs" | wc -l)
echo "run-nvidia-samples: exit 0 natively $npass, as guests $gpass, both $both (rows in $runs)"
