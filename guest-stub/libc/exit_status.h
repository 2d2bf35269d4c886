// How a C program's exit status becomes the guest's exit code, and the
// atexit handlers, for the C library's exit() and for the code that calls
// a program's main (cudart/main.cpp).
#pragma once

#include <stdint.h>

namespace guest::libc {

// 0 -> kExitPass; 1..223 keep their value (EXIT_FAILURE is 1, a program's own
// check); anything else (negative, 224.., a multiple of 256) ->
// kExitCheckFailed, so it is never read as a runtime code or as a pass.
uint32_t exit_status_code(int status);

// Runs the handlers atexit and __cxa_atexit registered, last first.
void run_exit_handlers();

} // namespace guest::libc
