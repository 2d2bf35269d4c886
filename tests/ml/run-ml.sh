#!/bin/sh
# The machine-learning checks, natively and as a Linux-ABI guest of
# kvmtool-gpu in the same run: torch_eager_check.py and cupy_check.py (each
# compared by compare_ml.py), and the start-up of `python3 -c pass` (the
# guest without a vGPU: no GPU worker to start) and of `import torch` with a
# first CUDA use (wall times, RUNS each side). POSIX sh.
# Usage: run-ml.sh VMM OUT_DIR [PYTHON]
#   OUT_DIR gets <check>-native.log, <check>-guest.log, <check>.md and
#   startup.tsv; a summary goes to stdout. Environment: RUNS (default 3),
#   MEM (guest RAM, default 32G), CHECKS (default "torch cupy"), RUN_ARGS
#   (more `kvmtool-gpu run` options, default --vgpu cuda).
vmm=$1 out=$2 py=${3:-$(command -v python3)}
[ -x "$vmm" ] && [ -n "$out" ] && [ -n "$py" ] || { echo "usage: $0 VMM OUT_DIR [PYTHON]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-3} mem=${MEM:-32G} checks=${CHECKS:-torch cupy} run_args=${RUN_ARGS:---vgpu cuda}
mkdir -p "$out"
guest() { # a guest run of $py with the given arguments (the scripts: read through --root /)
  # shellcheck disable=SC2086
  "$vmm" run --guest "$py" --root / --mem "$mem" --timeout 600 $run_args -- "$@"
}
guest_no_gpu() { "$vmm" run --guest "$py" --root / --mem "$mem" --timeout 600 --vgpu none -- "$@"; }
now() { date +%s.%N; }
status=0
for c in $checks; do
  script=$here/${c}_eager_check.py
  [ -f "$script" ] || script=$here/${c}_check.py
  "$py" "$script" >"$out/$c-native.log" 2>&1
  guest "$script" >"$out/$c-guest.log" 2>&1
  if python3 "$here/compare_ml.py" "$out/$c-native.log" "$out/$c-guest.log" >"$out/$c.md"; then :; else status=1; fi
  echo "== $c"; cat "$out/$c.md"
done
printf 'program\tside\trun\tseconds\texit\n' >"$out/startup.tsv"
for prog in pass torch; do
  code='pass'; [ $prog = torch ] && code='import torch; torch.zeros(1).cuda()'
  for side in native guest; do
    i=1
    while [ $i -le "$runs" ]; do
      t0=$(now)
      if [ $side = native ]; then "$py" -c "$code" >/dev/null 2>&1
      elif [ $prog = pass ]; then guest_no_gpu -c "$code" >/dev/null 2>&1
      else guest -c "$code" >/dev/null 2>&1; fi
      rc=$?
      printf '%s\t%s\t%s\t%s\t%s\n' "$prog" "$side" "$i" "$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')" "$rc" >>"$out/startup.tsv"
      i=$((i + 1))
    done
  done
done
echo "== start-up (wall seconds: min / median / max over $runs runs)"
awk -F'\t' 'NR > 1 { k = $1 " " $2; v[k] = v[k] " " $4 } END { for (k in v) print k ":" v[k] }' "$out/startup.tsv" |
  sort | while IFS=: read -r k vals; do
    echo "$vals" | tr ' ' '\n' | grep . | sort -n | awk -v k="$k" '{ a[NR] = $1 } END { printf "%s: %.3f / %.3f / %.3f\n", k, a[1], a[int((NR + 1) / 2)], a[NR] }'
  done
exit $status
