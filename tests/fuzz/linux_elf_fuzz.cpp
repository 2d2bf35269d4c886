// libFuzzer target (KVMGPU_FUZZ=ON, clang): hostile executables and
// interpreters into the Linux-ABI ELF loader (linux_elf_fuzz_body.h).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/linux_elf_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kvmgpu::fuzz::run_linux_elf_input(data, size);
    return 0;
}
