// libFuzzer target (KVMGPU_FUZZ=ON, clang): guest-controlled system calls
// straight into the Linux-ABI server, no VM entry (linux_syscall_fuzz_body.h).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/linux_syscall_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kvmgpu::fuzz::run_linux_syscall_input(data, size);
    return 0;
}
