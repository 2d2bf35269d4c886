#!/usr/bin/env bash
# Runs the ordinary builds of NVIDIA's cuda-samples and CUDALibrarySamples
# (build-ordinary-samples.sh's pack, unpacked) natively and as Linux-ABI
# guests: each run of manifest.tsv in a fresh copy of its work folder, first
# natively, then `kvmtool-gpu run --root / --guest PROGRAM --share WORK --
# ARGS` with the same arguments, each side under a time limit; several runs
# at once (a sample's two sides one after the other).
# Usage: run-ordinary-samples.sh VMM PACK_DIR OUT_DIR [RUN_ARGS...]
#   PACK_DIR  one or both packs unpacked there (manifest.tsv lists every run;
#             the runs of a pack not there are counted, not run)
#   OUT_DIR   runs.tsv (sample-runs.sh's columns), table.tsv and table.md
#             (sample, native, guest, wall seconds, the guest's first error
#             line), logs/<side>-<id>.log
#   RUN_ARGS  more `kvmtool-gpu run` options (default: --vgpu cuda)
# Environment: TIMEOUT (seconds per side, default 60), MEM (guest RAM, 4G),
# JOBS (runs at once, default 4), DEADLINE (seconds: no run starts after it,
# default 420; those left are "not run"), ONLY (ids or folder prefixes).
# A guest's working directory is "/", the program's folder its share at the
# same path; a run whose program finds files relative to its working
# directory sees that difference (docs/results/cuda-samples.md).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/sample-runs.sh"

# One manifest row (line LINE), both sides; its rows in OUT/rows/LINE.tsv.
run_row() { # LINE VMM PACK OUT RUN_ARGS...
  local line=$1 vmm=$2 pack=$3 out=$4
  shift 4
  local id folder program args note work log key rows
  # Tab is whitespace to read, which would merge empty fields: split on \037.
  IFS=$'\037' read -r id folder program args note < <(sed -n "${line}p" "$pack/manifest.tsv" | tr '\t' '\037')
  key=$(echo "$id" | tr '/#:' '___') rows=$out/rows/$(printf '%05d' "$line").tsv
  : >"$rows"
  if [ ! -d "$pack/$folder" ]; then
    printf '%s\tnative\tnot packed\t\t\t\t\n%s\tguest\tnot packed\t\t\t\t\n' "$id" "$id" >>"$rows"; return
  fi
  case "$note" in skip*)
    printf '%s\tnative\tskipped\t\t\t\t%s\n%s\tguest\tskipped\t\t\t\t%s\n' "$id" "$note" "$id" "$note" >>"$rows"; return ;;
  esac
  if [ "$(date +%s)" -ge "$DEADLINE_AT" ]; then
    printf '%s\tnative\tnot run\t\t\t\tpast DEADLINE\n%s\tguest\tnot run\t\t\t\tpast DEADLINE\n' "$id" "$id" >>"$rows"; return
  fi
  set -f # the manifest's arguments are words, never patterns
  # shellcheck disable=SC2086
  set -- "$@" -- $args
  set +f
  local run_args=() guest_args=() seen=0 a
  for a in "$@"; do
    if [ $seen = 0 ] && [ "$a" = -- ]; then seen=1; elif [ $seen = 0 ]; then run_args+=("$a"); else guest_args+=("$a"); fi
  done
  for side in native guest; do
    work=$out/work/$key-$side log=$out/logs/$side-$key.log
    rm -rf "$work" && cp -r "$pack/$folder" "$work"
    if [ $side = native ]; then
      sample_run_timed "$log" "$work" timeout "$TIMEOUT" "$work/$program" "${guest_args[@]}"
    else
      # The VMM's own limit first; the outer one only if the VMM itself hangs.
      sample_run_timed "$log" "$work" timeout $((TIMEOUT + 60)) "$vmm" run --root / --guest "$work/$program" \
        --share "$work" --mem "$MEM" --timeout "$TIMEOUT" "${run_args[@]}" -- "${guest_args[@]}"
      # The guest's own exit code, from the VMM's result line (its status is 0 or 1).
      local code
      code=$(sed -n 's/^kvmtool-gpu: result: .*, exit code \([0-9]*\) .*/\1/p' "$log" | tail -1)
      grep -q '^kvmtool-gpu: result: guest-exit,' "$log" && [ -n "$code" ] && run_rc=$code
    fi
    sample_record "$rows" "$id" $side "$run_rc" "$run_seconds" "$log" run-ordinary-samples
  done
  rm -rf "$out/work/$key-native" "$out/work/$key-guest"
}

if [ "${1:-}" = --row ]; then
  shift
  run_row "$@"
  exit 0
fi

vmm=${1:-} pack=${2:-} out=${3:-}
[ -n "$vmm" ] && [ -f "$pack/manifest.tsv" ] && [ -n "$out" ] || {
  echo "usage: $0 VMM PACK_DIR OUT_DIR [RUN_ARGS...] (PACK_DIR holding manifest.tsv)" >&2; exit 2; }
shift 3
[ $# = 0 ] && set -- --vgpu cuda
vmm=$(cd "$(dirname "$vmm")" && pwd)/$(basename "$vmm") pack=$(cd "$pack" && pwd)
rm -rf "$out" && mkdir -p "$out/logs" "$out/work" "$out/rows" && out=$(cd "$out" && pwd)
export TIMEOUT=${TIMEOUT:-60} MEM=${MEM:-4G}
export DEADLINE_AT=$(( $(date +%s) + ${DEADLINE:-420} ))
lines=$(awk -F'\t' -v only=" ${ONLY:-} " 'NR > 1 {
    if (only != "  ") { hit = 0; n = split(only, w, " "); for (i = 1; i <= n; i++) if ($1 == w[i] || index($2, w[i]) == 1) hit = 1; if (!hit) next }
    print NR }' "$pack/manifest.tsv")
echo "run-ordinary-samples: $(echo "$lines" | grep -c .) runs, ${JOBS:-4} at once, ${TIMEOUT}s a side, none started after ${DEADLINE:-420}s"
echo "$lines" | xargs -P "${JOBS:-4}" -I{} bash "$0" --row {} "$vmm" "$pack" "$out" "$@"

runs=$out/runs.tsv
sample_runs_header "$runs"
cat "$out"/rows/*.tsv >>"$runs" 2>/dev/null
rmdir "$out/work" 2>/dev/null
# The table: one row a run, each side's result (pass: exit 0; waived: exit
# 2, the samples' EXIT_WAIVED; timeout: 124), the wall times, the guest's
# first error line where it did not pass.
printf 'sample\tnative\tguest\tnative s\tguest s\tguest error\n' >"$out/table.tsv"
awk -F'\t' '
  function result(rc) { return rc == "0" ? "pass" : rc == "2" ? "waived" : rc == "124" ? "timeout" : rc ~ /^[0-9]+$/ ? "fail (" rc ")" : rc }
  NR > 1 { if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
           r[$1, $2] = result($3); t[$1, $2] = $4; e[$1, $2] = $7 }
  END { for (i = 1; i <= n; i++) { s = order[i]
          printf "%s\t%s\t%s\t%s\t%s\t%s\n", s, r[s, "native"], r[s, "guest"], t[s, "native"], t[s, "guest"],
            (r[s, "guest"] == "pass" ? "" : e[s, "guest"]) } }' "$runs" >>"$out/table.tsv"
{ echo "| sample | native | guest | native s | guest s | guest error |"
  echo "| --- | --- | --- | ---: | ---: | --- |"
  tail -n +2 "$out/table.tsv" | awk -F'\t' '{ for (i = 1; i <= NF; i++) gsub(/\|/, "\\|", $i)
    printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }'; } >"$out/table.md"
awk -F'\t' 'NR > 1 { n[$2]++; g[$3]++; if ($2 == "pass") { np++; if ($3 == "pass") both++; else miss = miss " " $1 } }
  END { printf "run-ordinary-samples: %d runs; natively pass %d, as guests pass %d; of those passing natively, %d pass as guests", NR - 1, n["pass"], g["pass"], both
        if (miss != "") printf "; not as guests:%s", miss
        printf "\n" }' "$out/table.tsv"
