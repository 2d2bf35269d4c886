#!/usr/bin/env bash
# Builds NVIDIA's cuda-samples and CUDALibrarySamples the ordinary way: their
# own CMake files, nvcc and NVIDIA's cudart and libraries (dynamic
# executables, the toolkit's shared libraries), nothing of this project;
# records what builds and why not, and packs the programs with their data
# for the GPU machine, where device-check.sh's `ordinary` part runs each
# natively and as a guest (run-ordinary-samples.sh).
# Usage: build-ordinary-samples.sh SAMPLES_DIR LIBRARY_SAMPLES_DIR OUT
#   SAMPLES_DIR          a tree of NVIDIA/cuda-samples ("-": none)
#   LIBRARY_SAMPLES_DIR  a tree of NVIDIA/CUDALibrarySamples ("-": none)
#   OUT                  a scratch folder outside the repository: build trees,
#                        logs, results.tsv (suite, name, built|fails|skipped,
#                        programs, why not) and results.md
# Never commit either tree here. Environment (not LIBRARIES: nvcc reads that): ORDINARY_CATEGORIES (cuda-samples'
# folders; default every one but 7_libNVVM and 8_Platform_Specific),
# ORDINARY_LIBRARIES (default cuBLAS cuBLASLt cuSPARSE cuSOLVER cuFFT), CUDA_ARCH (90),
# JOBS (2), PACK_LIMIT_MIB (48: above it the pack is split in two, one per
# suite). The pack: <repo>/.pack/ordinary-samples.tar.xz (git-ignored), or
# ordinary-cuda-samples.tar.xz and ordinary-library-samples.tar.xz.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# = 3 ] || { echo "usage: $0 SAMPLES_DIR LIBRARY_SAMPLES_DIR OUT (a dir may be -)" >&2; exit 2; }
samples_src=$1 libs_src=$2
[ "$samples_src" = - ] || [ -f "$samples_src/Common/helper_cuda.h" ] || {
  echo "$samples_src: not a cuda-samples tree (no Common/helper_cuda.h)" >&2; exit 2; }
[ "$libs_src" = - ] || [ -d "$libs_src/cuBLAS" ] || { echo "$libs_src: not a CUDALibrarySamples tree (no cuBLAS/)" >&2; exit 2; }
[ "$samples_src" = - ] || samples_src=$(cd "$samples_src" && pwd)
[ "$libs_src" = - ] || libs_src=$(cd "$libs_src" && pwd)
mkdir -p "$3" && out=$(cd "$3" && pwd)
case "$out/" in "$repo"/*) echo "OUT must be outside the repository" >&2; exit 2 ;; esac
arch=${CUDA_ARCH:-90} jobs=${JOBS:-2}
categories=${ORDINARY_CATEGORIES:-0_Introduction 1_Utilities 2_Concepts_and_Techniques 3_CUDA_Features 4_CUDA_Libraries 5_Domain_Specific 6_Performance}
libraries=${ORDINARY_LIBRARIES:-cuBLAS cuBLASLt cuSPARSE cuSOLVER cuFFT}
export PATH=$PATH:/usr/local/cuda/bin
# cuSPARSE's examples link plain `cudart cusparse` from a C target, which
# gets no CUDA link directory: the linker's search path, as a user's shell has it.
export LIBRARY_PATH=/usr/local/cuda/lib64${LIBRARY_PATH:+:$LIBRARY_PATH}
command -v nvcc >/dev/null || { echo "no nvcc on PATH or in /usr/local/cuda/bin" >&2; exit 2; }

# The samples set CMAKE_CUDA_ARCHITECTURES to nine architectures after their
# project() call, past any -D; this hook (run after every project()) puts the
# one asked for back whenever a sample sets it, before any target or fatbin
# command reads it. Nothing else of theirs is changed.
cat >"$out/force-cuda-arch.cmake" <<'EOF'
macro(kvmgpu_force_cuda_arch variable access value)
  if("${access}" STREQUAL "MODIFIED_ACCESS" AND NOT "${value}" STREQUAL "${KVMGPU_CUDA_ARCH}")
    set(CMAKE_CUDA_ARCHITECTURES ${KVMGPU_CUDA_ARCH})
  endif()
endmacro()
variable_watch(CMAKE_CUDA_ARCHITECTURES kvmgpu_force_cuda_arch)
EOF
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" -DKVMGPU_CUDA_ARCH="$arch"
  -DCMAKE_PROJECT_INCLUDE="$out/force-cuda-arch.cmake")
command -v ccache >/dev/null &&
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)

results=$out/results.tsv
printf 'suite\tname\tstatus\tprograms\twhy not\n' >"$results"
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" | tr -d '\r' >>"$results"; }
# The first line that says why a build failed.
first_error() {
  grep -m1 -E 'error:|error [0-9]+:|undefined reference|CMake Error|No such file' "$1" |
    sed 's/^.*\(error\|undefined reference\)/\1/' | tr '\t' ' ' | cut -c1-160
}
# The ELF executables a build folder made (relative paths), CMake's own files aside.
programs_in() {
  (cd "$1" && find . -path ./CMakeFiles -prune -o -path '*/CMakeFiles' -prune -o -type f -perm -u+x -print 2>/dev/null |
    while read -r f; do file -b "$f" | grep -q '^ELF.*\(executable\|pie executable\)' && echo "${f#./}"; done | sort)
}

# --- cuda-samples: one build tree over every sample's own CMakeLists.txt.
# Their top-level CMakeLists.txt adds every folder, and one sample whose
# package is missing here (nvJPEG, libNVVM) stops the whole configure, so a
# generated top level adds each sample instead and leaves out the ones
# whose configure fails, with the error.
if [ "$samples_src" != - ]; then
  cs=$out/cuda-samples && mkdir -p "$cs/top" "$cs/logs"
  : >"$cs/list"
  for c in $categories; do
    for s in $(sed -n 's/^ *add_subdirectory(\([^)]*\)).*/\1/p' "$samples_src/Samples/$c/CMakeLists.txt"); do
      if grep -qE 'OpenGL|GLUT|Vulkan|EGL' "$samples_src/Samples/$c/$s/CMakeLists.txt"; then
        row cuda-samples "$c/$s" skipped - "graphics: its CMakeLists.txt asks for $(grep -oE 'OpenGL|GLUT|Vulkan|EGL' \
          "$samples_src/Samples/$c/$s/CMakeLists.txt" | sort -u | paste -sd/)"
      else
        echo "$c/$s" >>"$cs/list"
      fi
    done
  done
  : >"$cs/excluded"
  for pass in 1 2 3 4 5 6; do
    { echo "cmake_minimum_required(VERSION 3.20)"
      echo "project(ordinary_cuda_samples LANGUAGES C CXX CUDA)"
      grep -vxF -f <(cut -f1 "$cs/excluded") "$cs/list" | while read -r s; do
        echo "add_subdirectory(\"$samples_src/Samples/$s\" \"$s\")"
      done; } >"$cs/top/CMakeLists.txt"
    rm -f "$cs/build/CMakeCache.txt"
    cmake -S "$cs/top" -B "$cs/build" "${cmake_args[@]}" >"$cs/logs/configure.log" 2>&1 && break
    # The samples the errors name ("CMake Error at .../Samples/C/S/..." or
    # "... in directory .../Samples/C/S"), each with its first error line.
    bad=$(grep -oE "(CMake Error at|in directory) $samples_src/Samples/[^/ ]+/[^/ :]+" "$cs/logs/configure.log" |
      sed "s|.*$samples_src/Samples/||" | sort -u)
    [ -n "$bad" ] || { echo "cuda-samples: configure failed, no sample named (see $cs/logs/configure.log)" >&2; exit 2; }
    for s in $bad; do
      why=$(grep -A3 -E "(CMake Error at|in directory) $samples_src/Samples/$s[/ :]" "$cs/logs/configure.log" |
        grep -vE '^ *$|CMake Error at' | head -2 | sed 's/^ *//' | paste -sd' ' | cut -c1-140)
      printf '%s\t%s\n' "$s" "configure fails: ${why:-see configure.log}" >>"$cs/excluded"
    done
    cp "$cs/logs/configure.log" "$cs/logs/configure-pass$pass.log"
  done
  [ -f "$cs/build/build.ninja" ] || { echo "cuda-samples: no configure passed" >&2; exit 2; }
  sort -u "$cs/excluded" | while IFS=$'\t' read -r s why; do row cuda-samples "$s" fails - "$why"; done
  echo "cuda-samples: configured $(grep -c add_subdirectory "$cs/top/CMakeLists.txt") samples; building (-j$jobs)"
  ninja -C "$cs/build" -k 0 -j "$jobs" >"$cs/logs/build.log" 2>&1
  grep -vxF -f <(cut -f1 "$cs/excluded") "$cs/list" | while read -r s; do
    name=${s#*/}
    # The sample's own CMake may decline it ("... not found - will not build sample 'X'").
    declined=$(grep -m1 -E "(will not build|skipping).*'$name'|'$name'.*(will not build|skipping)" "$cs/logs/configure.log" |
      sed 's/^-- //')
    progs=$(programs_in "$cs/build/$s" | paste -sd' ')
    if [ -n "$progs" ]; then
      row cuda-samples "$s" built "$progs" ""
    elif [ -n "$declined" ]; then
      row cuda-samples "$s" skipped - "its CMake: $declined"
    else
      log=$cs/logs/$(echo "$s" | tr / _).log
      ninja -C "$cs/build" -j 1 "$s/all" >"$log" 2>&1
      row cuda-samples "$s" fails - "$(first_error "$log")"
    fi
  done
fi

# --- CUDALibrarySamples: each example is its own CMake project (their
# paths name ${CMAKE_SOURCE_DIR}/../utils), configured and built alone, as
# their READMEs do, JOBS at a time.
build_example() { # LIBRARY_SAMPLES_DIR OUT EXAMPLE (relative folder)
  local b=$2/library-samples/build/$3 log=$2/library-samples/logs/$(echo "$3" | tr / _).log
  mkdir -p "$b" "$(dirname "$log")"
  { cmake -S "$1/$3" -B "$b" "${cmake_args[@]}" && ninja -C "$b" -j 1; } >"$log" 2>&1
  echo $? >"$b/.kvmgpu-rc"
}
if [ "$libs_src" != - ]; then
  ls_=$out/library-samples && mkdir -p "$ls_"
  # Examples: folders whose CMakeLists.txt makes a project and adds no folders.
  (cd "$libs_src" && for l in $libraries; do
    find "$l" -name CMakeLists.txt | while read -r f; do
      grep -q 'project *(' "$f" && ! grep -q 'add_subdirectory' "$f" && dirname "$f"
    done
  done | sort) >"$ls_/list"
  echo "library samples: $(wc -l <"$ls_/list") examples; configuring and building each ($jobs at a time)"
  # Arrays do not cross into xargs' shells: the arguments go over as one quoted string.
  cmake_args_str=$(printf '%q ' "${cmake_args[@]}")
  export cmake_args_str && export -f build_example
  xargs -a "$ls_/list" -P "$jobs" -I{} bash -c 'eval "cmake_args=($cmake_args_str)"; build_example "$0" "$1" "$2"' \
    "$libs_src" "$out" {}
  while read -r e; do
    b=$ls_/build/$e
    progs=$(programs_in "$b" | paste -sd' ')
    if [ "$(cat "$b/.kvmgpu-rc" 2>/dev/null)" = 0 ] && [ -n "$progs" ]; then
      row CUDALibrarySamples "$e" built "$progs" ""
    else
      row CUDALibrarySamples "$e" fails "${progs:--}" "$(first_error "$ls_/logs/$(echo "$e" | tr / _).log")"
    fi
  done <"$ls_/list"
fi

awk -F'\t' 'NR == 1 { print "| suite | sample | build | programs | why not |"; print "| --- | --- | --- | --- | --- |"; next }
  { r = $5; gsub(/\|/, "\\|", r); printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, r }' "$results" >"$out/results.md"
for suite in cuda-samples CUDALibrarySamples; do
  awk -F'\t' -v s=$suite '$1 == s { n[$3]++; t++ } END { if (t) printf "%s: %d: built %d, fails %d, skipped %d\n", s, t, n["built"], n["fails"], n["skipped"] }' "$results"
done
bash "$repo/kvmtool-gpu/scripts/pack-ordinary-samples.sh" "$samples_src" "$out"
