// Exit codes a guest writes to the exit port (KVMGPU_EXIT_PORT). The VMM
// reports the code; the host tests assert it. Ranges:
//   0          every check passed (KVMGPU_EXIT_PASS)
//   1..63      a program's own failed checks (each program numbers its own)
//   64..95     shared program-level failures
//   224..239   the runtime gave up before or outside guest_main
// All codes fit in 8 bits, so a process exit status can carry them unchanged.
#pragma once

#include <stdint.h>

namespace guest {

enum ExitCode : uint32_t {
    kExitPass = 0,
    kExitCheckFailed = 1,       // generic program check (programs use 1..63)
    kExitCudaError = 64,        // a guest CUDA API call returned an error
    kExitResultMismatch = 65,   // GPU result differs from the guest's CPU result
    kExitBadBootInfo = 224,     // boot info magic/version/sizes are wrong
    kExitOutOfMemory = 225,     // frame allocator or heap exhausted
    kExitPagingFailed = 226,    // could not build or load the guest page tables
    kExitPanic = 227,           // guest::panic(): an internal invariant broke
    kExitBadCmdline = 228,      // a cmdline value could not be used
};

} // namespace guest
