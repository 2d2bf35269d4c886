#!/usr/bin/env bash
# Packs what build-ordinary-samples.sh built (OUT/results.tsv) for the GPU
# machine: each program stripped in a work folder of its own with the files
# it reads (what its build folder holds beside it, such as a Driver API
# sample's .fatbin or the data its CMake copied, and its sample's data/),
# and manifest.tsv, one row per run: id, folder, program, arguments
# (cuda-samples' own test_args.json: several runs where it lists several;
# none where it says skip), note. Checks every program's NEEDED libraries
# with ldd (needed.tsv): only libcuda.so.1 may be missing here (no driver).
# Usage: pack-ordinary-samples.sh SAMPLES_DIR|- OUT
# Writes <repo>/.pack/ordinary-samples.tar.xz, or, above PACK_LIMIT_MIB
# (default 48; the device carry holds 64 MiB with the project's binaries),
# ordinary-cuda-samples.tar.xz and ordinary-library-samples.tar.xz.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# = 2 ] && [ -f "$2/results.tsv" ] || { echo "usage: $0 SAMPLES_DIR|- OUT (build-ordinary-samples.sh's)" >&2; exit 2; }
samples_src=$1 out=$(cd "$2" && pwd)
pack=$out/pack dest=${PACK_DIR:-$repo/.pack}
rm -rf "$pack" && mkdir -p "$pack" "$dest"
printf 'id\tfolder\tprogram\targs\tnote\n' >"$pack/manifest.tsv"
printf 'program\tneeded\tmissing here\n' >"$pack/needed.tsv"

# Copies a build folder's own files (programs stripped) into a work folder.
copy_outputs() { # BUILD_DIR WORK_DIR
  (cd "$1" && find . -path '*/CMakeFiles' -prune -o -type f \
    ! -name '*.ninja' ! -name '.ninja_*' ! -name 'cmake_install.cmake' ! -name 'CMakeCache.txt' \
    ! -name 'CTestTestfile.cmake' ! -name '.kvmgpu-rc' ! -name '*.o' ! -name '*.a' ! -name 'Makefile' -print) |
    while read -r f; do
      mkdir -p "$2/$(dirname "$f")"
      if file -b "$1/$f" | grep -q '^ELF'; then strip -o "$2/$f" "$1/$f"; else cp "$1/$f" "$2/$f"; fi
    done
}
needed() { # PROGRAM LABEL
  local libs missing
  libs=$(objdump -p "$1" | awk '$1 == "NEEDED" { print $2 }' | paste -sd' ')
  missing=$(ldd "$1" 2>/dev/null | awk '/not found/ { print $1 }' | paste -sd' ')
  printf '%s\t%s\t%s\n' "$2" "$libs" "$missing" >>"$pack/needed.tsv"
}

args_json=-
[ "$samples_src" != - ] && [ -f "$samples_src/test_args.json" ] && args_json=$samples_src/test_args.json
tail -n +2 "$out/results.tsv" | while IFS=$'\t' read -r suite name status programs why; do
  [ "$status" = built ] || continue
  if [ "$suite" = cuda-samples ]; then
    build=$out/cuda-samples/build/$name work=$pack/$suite/$name
    copy_outputs "$build" "$work"
    src_data=$samples_src/Samples/$name/data
    [ -d "$src_data" ] && [ ! -e "$work/data" ] && cp -r "$src_data" "$work/data"
  else
    build=$out/library-samples/build/$name work=$pack/$suite/$name
    mkdir -p "$work"
    for p in $programs; do strip -o "$work/$(basename "$p")" "$build/$p"; done
  fi
  for p in $programs; do
    [ "$suite" = cuda-samples ] || p=$(basename "$p")
    needed "$work/$p" "$suite/$name/$p"
    # One manifest row per run, its id the sample's folder (and the program
    # where a folder has several); cuda-samples' test_args.json gives
    # arguments, several runs (#1, #2, ...) or skip, by program name.
    python3 - "$args_json" "$name" "$suite/$name" "$p" "$(echo $programs | wc -w)" >>"$pack/manifest.tsv" <<'EOF'
import json, os, sys
config_file, name, folder, program, count = sys.argv[1:]
config = json.load(open(config_file)).get(os.path.basename(program), {}) if config_file != "-" else {}
runs = config.get("runs", [config])
for i, run in enumerate(runs):
    ident = name + ("/" + program if int(count) > 1 else "") + ("#%d" % (i + 1) if len(runs) > 1 else "")
    note = "skip (test_args.json)" if config.get("skip") or run.get("skip") else ""
    if config.get("min_gpus", 1) > 1:
        note = "needs %d GPUs (test_args.json)" % config["min_gpus"]
    print("\t".join([ident, folder, program, " ".join(run.get("args", [])), note]))
EOF
  done
done
cp "$out/results.tsv" "$out/results.md" "$pack/"

missing=$(awk -F'\t' 'NR > 1 && $3 != "" { print $3 }' "$pack/needed.tsv" | tr ' ' '\n' | sort -u | grep -vx 'libcuda.so.1' | paste -sd' ')
echo "libraries the programs need: $(awk -F'\t' 'NR > 1 { print $2 }' "$pack/needed.tsv" | tr ' ' '\n' | sort -u | paste -sd' ')"
[ -z "$missing" ] || echo "WARNING: not found here (ldd), beside libcuda.so.1: $missing"
echo "runs: $(($(wc -l <"$pack/manifest.tsv") - 1)) (programs: $(($(wc -l <"$pack/needed.tsv") - 1))); unpacked $(du -sh "$pack" | cut -f1)"

# One pack, or one per suite where one would pass the limit.
rm -f "$dest"/ordinary-samples.tar.xz "$dest"/ordinary-cuda-samples.tar.xz "$dest"/ordinary-library-samples.tar.xz
export XZ_OPT=${XZ_OPT:--9 -T0}
tar -C "$pack" -cJf "$dest/ordinary-samples.tar.xz" .
size=$(stat -c %s "$dest/ordinary-samples.tar.xz")
limit=$(( ${PACK_LIMIT_MIB:-48} * 1024 * 1024 ))
if [ "$size" -gt "$limit" ]; then
  rm "$dest/ordinary-samples.tar.xz"
  common=(manifest.tsv needed.tsv results.tsv results.md)
  [ -d "$pack/cuda-samples" ] && tar -C "$pack" -cJf "$dest/ordinary-cuda-samples.tar.xz" "${common[@]}" cuda-samples
  [ -d "$pack/CUDALibrarySamples" ] && tar -C "$pack" -cJf "$dest/ordinary-library-samples.tar.xz" "${common[@]}" CUDALibrarySamples
  echo "split: over ${PACK_LIMIT_MIB:-48} MiB in one ($((size / 1048576)) MiB); carry one pack per device call"
fi
ls -l "$dest"/ordinary-*.tar.xz | awk '{ printf "pack: %s %.1f MiB\n", $NF, $5 / 1048576 }'
