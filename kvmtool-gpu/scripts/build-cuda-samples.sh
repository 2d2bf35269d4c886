#!/usr/bin/env bash
# Builds NVIDIA's cuda-samples (those of 0_Introduction, 1_Utilities,
# 2_Concepts_and_Techniques, 4_CUDA_Libraries, 5_Domain_Specific and
# 6_Performance in the checkout; of the libraries, cuBLAS, cuRAND's host
# API and cuFFT are forwarded, the others skipped),
# unmodified, as Linux-ABI guests
# and natively from the same objects (tests/cuda_samples/CMakeLists.txt),
# records per sample whether each side links and why not, and packs the
# stripped binaries for the GPU machine.
# Usage: build-cuda-samples.sh SAMPLES_DIR   (a checkout of NVIDIA/cuda-samples;
#        never commit its sources here). ONLY="a b ..." builds, records and
#        packs those samples alone (e.g. the library samples).
# Writes, under ${KVMGPU_BUILD_DIR:-build}/cuda-samples/:
#   results.tsv     sample, category, guest (links|fails|skipped), native, reason
#   results.md      the same as a Markdown table (docs/results/cuda-samples.md)
#   logs/           each sample's build output, per side
#   cuda-samples.tar.xz   guest/<sample>.elf and native/<sample> (stripped),
#                   data/<sample>/ (the sample's data files and the .fatbin a
#                   Driver API sample loads), manifest + results
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_BUILD_DIR:-$repo/build}
[ $# = 1 ] && [ -f "$1/Common/helper_cuda.h" ] || {
  echo "usage: $0 SAMPLES_DIR (a checkout of NVIDIA/cuda-samples, with Common/helper_cuda.h)" >&2; exit 2; }
src=$(cd "$1" && pwd)
source "$repo/kvmtool-gpu/scripts/compiler-cache.sh"
export PATH=$PATH:/usr/local/cuda/bin
cmake -S "$repo" -B "$build" -G Ninja -DKVMGPU_CUDA_SAMPLES_DIR="$src" >/dev/null || exit 2
out=$build/cuda-samples
manifest=$out/manifest.tsv
cmake --build "$build" --target kvmgpu_linux_cudart >/dev/null || { echo "the guest cudart did not build" >&2; exit 2; }

# Every target at once (ninja's parallelism, past failures), then each alone,
# a no-op where it built, for its own log.
if [ -n "${ONLY:-}" ]; then
  awk -F'\t' -v only=" $ONLY " 'index(only, " " $1 " ")' "$manifest" >"$out/manifest.only" && manifest=$out/manifest.only
fi
targets=$(awk -F'\t' '$3 != "-" { print "guest_cs_" $1; print "native_cs_" $1 }' "$manifest")
ninja -C "$build" -k 0 $targets >"$out/build.log" 2>&1
mkdir -p "$out/logs"
results=$out/results.tsv
printf 'sample\tcategory\tguest\tnative\treason\n' >"$results"
# Why a side failed: the symbols the link missed, else the first compiler error.
why() {
  local syms
  syms=$(grep -o "undefined reference to \`[^']*'" "$1" | sed "s/undefined reference to \`//; s/'\$//; s/(.*//" |
    sort -u | head -12 | paste -sd' ')
  if [ -n "$syms" ]; then echo "undefined: $syms"; return; fi
  grep -m1 -E 'error:|error [0-9]+:' "$1" | sed 's/^.*error/error/' | cut -c1-160
}
while IFS=$'\t' read -r sample category sources reason; do
  if [ "$sources" = - ]; then
    printf '%s\t%s\tskipped\tskipped\t%s\n' "$sample" "$category" "$reason" >>"$results"
    continue
  fi
  guest=fails native=fails reason=
  ninja -C "$build" "guest_cs_$sample" >"$out/logs/guest-$sample.log" 2>&1 && guest=links
  ninja -C "$build" "native_cs_$sample" >"$out/logs/native-$sample.log" 2>&1 && native=links
  [ $guest = fails ] && reason="guest: $(why "$out/logs/guest-$sample.log")"
  [ $native = fails ] && reason="${reason:+$reason; }native: $(why "$out/logs/native-$sample.log")"
  printf '%s\t%s\t%s\t%s\t%s\n' "$sample" "$category" $guest $native "$reason" >>"$results"
done <"$manifest"

awk -F'\t' 'NR == 1 { print "| sample | category | guest | native | why not |"; print "| --- | --- | --- | --- | --- |"; next }
  { r = $5; gsub(/\|/, "\\|", r); printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, r }' "$results" >"$out/results.md"

# The pack: stripped binaries and each sample's data files.
pack=$out/pack
rm -rf "$pack" && mkdir -p "$pack/guest" "$pack/native" "$pack/data"
while IFS=$'\t' read -r sample category guest native reason; do
  [ "$guest" = links ] && strip -o "$pack/guest/$sample.elf" "$out/cs_$sample.elf"
  [ "$native" = links ] && strip -o "$pack/native/$sample" "$out/native/cs_$sample"
  if [ "$guest" = links ] || [ "$native" = links ]; then
    for d in "$src/Samples/$category/$sample/data" "$out/fatbin/$sample"; do
      [ -d "$d" ] && mkdir -p "$pack/data/$sample" && cp -r "$d/." "$pack/data/$sample/"
    done
  fi
done < <(tail -n +2 "$results")
cp "$manifest" "$pack/manifest.tsv" && cp "$results" "$pack/"
tar -C "$pack" -cJf "$out/cuda-samples.tar.xz" .
total=$(tail -n +2 "$results" | wc -l)
skipped=$(awk -F'\t' '$3 == "skipped"' "$results" | wc -l)
glinks=$(awk -F'\t' '$3 == "links"' "$results" | wc -l)
nlinks=$(awk -F'\t' '$4 == "links"' "$results" | wc -l)
echo "cuda-samples: $total samples, $skipped skipped (libraries), guest links $glinks, native links $nlinks"
echo "results: $results; pack: $out/cuda-samples.tar.xz ($(du -h "$out/cuda-samples.tar.xz" | cut -f1))"
