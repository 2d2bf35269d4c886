// Guest exit paths (see exit.h).
#include "guest-stub/runtime/exit.h"

#include <stdarg.h>

#include "guest-stub/runtime/console.h"

namespace guest {

void exit(uint32_t code)
{
    console_flush();
    kvmgpu_exit_with_rbx(code, 0);
}

void exit_with_rbx(uint32_t code, uint64_t rbx_value)
{
    console_flush();
    kvmgpu_exit_with_rbx(code, rbx_value);
}

void panic(uint32_t code, const char* fmt, ...)
{
    console_flush();
    printf("guest panic (exit %u): ", code);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    exit(code);
}

} // namespace guest
