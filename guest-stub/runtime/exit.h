// Ending the guest run: flush the console, write the code to the exit port
// (KVMGPU_EXIT_PORT), halt. See exit_codes.h for the codes.
#pragma once

#include <stdint.h>

#include "guest-stub/runtime/exit_codes.h"

extern "C" [[noreturn]] void kvmgpu_exit_with_rbx(uint32_t code, uint64_t rbx); // entry.S

namespace guest {

[[noreturn]] void exit(uint32_t code);
// Leaves rbx = rbx_value at the exit-port write (the hello test checks it).
[[noreturn]] void exit_with_rbx(uint32_t code, uint64_t rbx_value);
// Prints "guest panic: <message>" and exits with code.
[[noreturn]] void panic(uint32_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

} // namespace guest
