// What C++ code compiled without exceptions still needs at run time:
// operator new/delete on malloc (a failed new ends the run with
// kExitOutOfMemory: there are no exceptions to throw), one-thread guards
// for function-local statics, and the pure-virtual trap.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "guest-stub/runtime/exit.h"

namespace std {
enum class align_val_t : size_t {};
struct nothrow_t;
} // namespace std

namespace {

void* must_allocate(size_t bytes, size_t align)
{
    void* p = align <= 16 ? malloc(bytes) : aligned_alloc(align, bytes);
    if (p == nullptr && bytes != 0)
        guest::panic(guest::kExitOutOfMemory, "operator new(%lu): out of memory", (uint64_t)bytes);
    return p != nullptr ? p : malloc(1);
}

} // namespace

void* operator new(size_t n) { return must_allocate(n, 16); }
void* operator new[](size_t n) { return must_allocate(n, 16); }
void* operator new(size_t n, std::align_val_t a) { return must_allocate(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return must_allocate(n, static_cast<size_t>(a)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return malloc(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return malloc(n); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { free(p); }

extern "C" {

// Function-local statics: the guest runs one thread, so a guard is a flag.
int __cxa_guard_acquire(uint64_t* guard) { return *reinterpret_cast<uint8_t*>(guard) == 0 ? 1 : 0; }
void __cxa_guard_release(uint64_t* guard) { *reinterpret_cast<uint8_t*>(guard) = 1; }
void __cxa_guard_abort(uint64_t*) {}

void __cxa_pure_virtual() { guest::panic(guest::kExitPanic, "pure virtual function called"); }

// Code built with the stack protector (musl's math objects from Debian)
// compares the canary at %fs:0x28 (the VMM points FS at the boot info page).
void __stack_chk_fail() { guest::panic(guest::kExitPanic, "stack smashing detected"); }

} // extern "C"

// libstdc++'s headers report misuse through these (std::vector's length
// check, at(), a failed new of an array); without exceptions each ends the
// run with its message, as an uncaught exception would end a process.
namespace std {
[[noreturn]] void __throw_length_error(const char* what)
{
    guest::panic(guest::kExitPanic, "std::length_error: %s", what);
}
[[noreturn]] void __throw_logic_error(const char* what)
{
    guest::panic(guest::kExitPanic, "std::logic_error: %s", what);
}
[[noreturn]] void __throw_out_of_range(const char* what)
{
    guest::panic(guest::kExitPanic, "std::out_of_range: %s", what);
}
[[noreturn]] void __throw_out_of_range_fmt(const char* fmt, ...)
{
    guest::panic(guest::kExitPanic, "std::out_of_range: %s", fmt);
}
[[noreturn]] void __throw_invalid_argument(const char* what)
{
    guest::panic(guest::kExitPanic, "std::invalid_argument: %s", what);
}
[[noreturn]] void __throw_bad_alloc() { guest::panic(guest::kExitOutOfMemory, "std::bad_alloc"); }
[[noreturn]] void __throw_bad_array_new_length() { guest::panic(guest::kExitPanic, "std::bad_array_new_length"); }
[[noreturn]] void __throw_bad_function_call() { guest::panic(guest::kExitPanic, "std::bad_function_call"); }
// A failed precondition check (-D_GLIBCXX_ASSERTIONS, set for runtime-API programs).
[[noreturn]] void __glibcxx_assert_fail(const char* file, int line, const char* function,
                                        const char* condition) noexcept
{
    guest::panic(guest::kExitPanic, "%s:%d: %s: assertion '%s' failed", file, line, function, condition);
}
} // namespace std
