#!/bin/sh
# Runs NVIDIA's cuda-samples as packed by build-cuda-samples.sh: each sample
# natively (the same objects on NVIDIA's cudart) and as a Linux-ABI guest of
# kvmtool-gpu, one after the other, and records for each side the exit code,
# the sample's pass/fail line, its own timing lines and the wall time. POSIX sh.
# Usage: run-nvidia-samples.sh VMM PACK_DIR OUT_DIR [RUN_ARGS...]
#   VMM       the kvmtool-gpu binary
#   PACK_DIR  cuda-samples.tar.xz unpacked (guest/, native/, data/, results.tsv)
#   OUT_DIR   gets runs.tsv (sample, side, exit, seconds, pass line, timing)
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
runs=$out/runs.tsv
printf 'sample\tside\texit\tseconds\tpass line\ttiming\n' >"$runs"
# Appends one row for the log of a finished run.
record() { # sample side rc seconds log
  # The program's own lines only (a guest's carry "guest: "; the VMM's own
  # "kvmtool-gpu:" lines hold times too).
  pass=$(grep -v '^kvmtool-gpu:' "$5" | grep -m1 -iE 'passed|failed|result = |waiv' | tr '\t' ' ' | cut -c1-120)
  timing=$(grep -v '^kvmtool-gpu:' "$5" | grep -E '[Tt]ime[ =:(]|GB/s|GFlop|Throughput|Performance|[0-9] ?(ms|msec|sec|s)\b' | head -3 |
    tr '\t\n' '  ' | cut -c1-200)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$pass" "$timing" >>"$runs"
  echo "run-nvidia-samples: $1 $2: exit $3, ${4}s: $pass"
}
now() { date +%s.%N; }
for s in $samples; do
  work=$out/work/$s
  mkdir -p "$work"
  [ -d "$pack/data/$s" ] && rm -rf "$work/data" && cp -r "$pack/data/$s" "$work/data"
  if [ -x "$pack/native/$s" ]; then
    log=$out/logs/native-$s.log t0=$(now)
    (cd "$work" && timeout "$timeout" "$pack/native/$s") >"$log" 2>&1
    rc=$?
    record "$s" native $rc "$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')" "$log"
  fi
  if [ -f "$pack/guest/$s.elf" ]; then
    log=$out/logs/guest-$s.log t0=$(now)
    (cd "$work" && "$vmm" run --guest "$pack/guest/$s.elf" --mem "$mem" --timeout "$timeout" --share "$work" "$@") \
      >"$log" 2>&1
    rc=$?
    record "$s" guest $rc "$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')" "$log"
  fi
done
both=$(awk -F'\t' 'NR > 1 && $3 == 0 { n[$1]++ } END { c = 0; for (s in n) if (n[s] == 2) c++; print c }' "$runs")
gpass=$(awk -F'\t' 'NR > 1 && $2 == "guest" && $3 == 0' "$runs" | wc -l)
npass=$(awk -F'\t' 'NR > 1 && $2 == "native" && $3 == 0' "$runs" | wc -l)
echo "run-nvidia-samples: exit 0 natively $npass, as guests $gpass, both $both (rows in $runs)"
