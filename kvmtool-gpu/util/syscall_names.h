// x86-64 system-call names, from the build host's <asm/unistd_64.h>, for
// logs and counters (the Linux-ABI server's, the GPU worker's recorder).
#pragma once

#include <cstdint>
#include <string>

namespace kvmgpu {

// "getpid", or nullptr for a number the build's headers do not name.
// Allocates nothing (the worker's recorder calls it while other threads wait).
const char* known_syscall_name(uint64_t nr);
// "getpid", or "syscall 999" for a number the build's headers do not name.
std::string syscall_name(uint64_t nr);

} // namespace kvmgpu
