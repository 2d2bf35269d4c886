#!/usr/bin/env bash
# installed_package.sh build|run <build dir> <source dir>
# build: installs the build into <build>/embed/prefix and builds
# kvmtool-gpu/examples/ against it in <build>/embed/project, as any outside
# project would (find_package(kvmgpu); pkg-config kvmgpu).
# run: boots a guest through each example program (exit 77: no /dev/kvm).
set -euo pipefail
mode=$1 build=$2 src=$3
prefix=$build/embed/prefix project=$build/embed/project
if [ "$mode" = run ]; then
  if [ ! -e /dev/kvm ]; then echo "SKIP: no /dev/kvm here (the nested suites boot guests under QEMU)"; exit 77; fi
  # The outside project's own CUDA guest where it built one, else the tree's hello.
  guest=$project/guests/vecadd.elf
  [ -f "$guest" ] || guest=$build/guests/hello.elf
  "$project/hello_vgpu" "$guest" | tee "$project/hello_vgpu.out"
  grep -q "result: guest-exit, exit code 0; vGPU .*: [1-9][0-9]* commands, 0 errors" "$project/hello_vgpu.out"
  "$project/hello_vgpu_c" "$guest" | tee "$project/hello_vgpu_c.out"
  grep -q "result: guest-exit, exit code 0; vGPU: [1-9][0-9]* commands, 0 errors" "$project/hello_vgpu_c.out"
  "$project/page_sweep" "$build/guests/boot_exit.elf" 1
  exit 0
fi
rm -rf "$prefix" "$project"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name libkvmgpu.so -print -quit)")
for f in "$libdir/libkvmgpu.so" "$libdir/libkvmgpu.a" "$libdir/pkgconfig/kvmgpu.pc" \
         "$libdir/cmake/kvmgpu/kvmgpuConfig.cmake" "$prefix/include/kvmgpu/kvmgpu.hpp" "$prefix/include/kvmgpu/kvmgpu.h"; do
  [ -f "$f" ] || { echo "FAIL: not installed: $f"; exit 1; }
done
# The public headers include standard headers and each other only.
if grep -h '^#include' "$prefix"/include/kvmgpu/* | grep -vE '^#include <([a-z_]+(\.h)?|kvmgpu/kvmgpu\.h(pp)?)>$'; then
  echo "FAIL: a public header includes something else (above)"; exit 1
fi
# The shared object exports the API (its version script), not the VMM's
# insides: every defined dynamic symbol is the C API's or a public C++
# type's. The list is read whole first: a grep -q that stops early would
# make nm fail under pipefail.
exported=$(nm -DC --defined-only "$libdir/libkvmgpu.so" | cut -d' ' -f3- | sed 's/@@KVMGPU_1$//')
inside=$(echo "$exported" | grep -vE '^(kvmgpu_[a-z_]+|KVMGPU_1|(typeinfo|typeinfo name|vtable) for kvmgpu::Error|kvmgpu::(Error|GpuSharing|Machine|MachineSummary|VgpuSpec|VmConfig)::~?[A-Za-z_]+(\[abi:cxx11\])?\(.*|kvmgpu::(prepare_process|set_vms_in_process|to_string)\(.*)$' || true)
if [ -n "$inside" ]; then
  echo "FAIL: libkvmgpu.so exports symbols outside its API:"; echo "$inside" | head -20; exit 1
fi
if ! echo "$exported" | grep -qx 'kvmgpu_vm_create'; then echo "FAIL: libkvmgpu.so does not export the C API"; exit 1; fi
export PATH=$PATH:/usr/local/cuda/bin
cmake -S "$src/kvmtool-gpu/examples" -B "$project" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-}" -DCMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-}"
cmake --build "$project"
if grep -q "KVMGPU_PACKAGE_HAS_CUDA_GUESTS ON" "$libdir/cmake/kvmgpu/kvmgpuConfig.cmake" && command -v nvcc >/dev/null; then
  [ -f "$project/guests/vecadd.elf" ] || { echo "FAIL: kvmgpu_add_cuda_guest built no guest"; exit 1; }
fi
# pkg-config, relocated with the prefix: its flags name the installed files.
flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs kvmgpu)
echo "pkg-config kvmgpu: $flags"
[ -f "$(echo "$flags" | sed -n 's/.*-I\([^ ]*\).*/\1/p')/kvmgpu/kvmgpu.h" ] || { echo "FAIL: pkg-config's -I"; exit 1; }
echo "installed package: found, examples built against $prefix"
