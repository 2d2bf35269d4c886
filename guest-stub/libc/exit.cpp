// Process end for guest programs: exit() runs the atexit/__cxa_atexit
// handlers (last registered first), flushes the console and ends the run
// with the program's status as the guest exit code (exit_status_code);
// _Exit skips the handlers; abort() ends with kExitPanic.
#include <stdint.h>
#include <stdlib.h>

#include "guest-stub/libc/exit_status.h"
#include "guest-stub/runtime/console.h"
#include "guest-stub/runtime/exit.h"

namespace {

// C asks for at least 32; nvcc's registration takes one per .cu file.
constexpr int kMaxHandlers = 64;

struct Handler {
    void (*fn)(void*);
    void (*plain)();
    void* arg;
};

// constinit: nvcc's registration constructors call atexit before main, in
// no promised order with other files' initializers.
constinit Handler g_handlers[kMaxHandlers] = {};
constinit int g_count = 0;

int add(Handler h)
{
    if (g_count == kMaxHandlers)
        return -1;
    g_handlers[g_count++] = h;
    return 0;
}

} // namespace

namespace guest::libc {

uint32_t exit_status_code(int status)
{
    if (status == 0)
        return kExitPass;
    const unsigned low = static_cast<unsigned>(status) & 0xffu;
    return low != 0 && low < kExitBadBootInfo ? low : kExitCheckFailed;
}

void run_exit_handlers()
{
    while (g_count > 0) {
        const Handler h = g_handlers[--g_count];
        if (h.plain != nullptr)
            h.plain();
        else
            h.fn(h.arg);
    }
}

} // namespace guest::libc

extern "C" {

void* __dso_handle = &__dso_handle;

int atexit(void (*fn)(void)) noexcept { return add(Handler{nullptr, fn, nullptr}); }

int __cxa_atexit(void (*fn)(void*), void* arg, void*) { return add(Handler{fn, nullptr, arg}); }

void exit(int status)
{
    guest::libc::run_exit_handlers();
    guest::exit(guest::libc::exit_status_code(status));
}

void _Exit(int status) { guest::exit(guest::libc::exit_status_code(status)); }

void abort(void)
{
    guest::printf("abort() called\n");
    guest::exit(guest::kExitPanic);
}

} // extern "C"
