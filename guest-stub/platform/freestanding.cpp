// The platform seam (platform.h) over the freestanding runtime: each call
// is the runtime's own.
#include "guest-stub/platform/platform.h"

#include <stdarg.h>

#include "guest-stub/runtime/boot.h"
#include "guest-stub/runtime/console.h"
#include "guest-stub/runtime/exit.h"
#include "guest-stub/runtime/heap.h"
#include "guest-stub/runtime/tsc.h"

namespace guest::platform {

size_t printf(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = guest::vprintf(fmt, ap);
    va_end(ap);
    return n;
}

void exit(uint32_t code) { guest::exit(code); }

bool vmm_present() { return true; }
const kvmgpu_boot_info& boot_info() { return guest::boot_info(); }
const Cmdline& options() { return guest::cmdline(); }
uint64_t seconds_to_tsc(uint64_t seconds) { return guest::seconds_to_tsc(seconds); }

void* try_pinned_alloc_permanent(size_t bytes, size_t align)
{
    return guest::try_pinned_alloc_permanent(bytes, align);
}
bool virt_to_phys(const void* p, uint64_t* gpa) { return guest::virt_to_phys(p, gpa); }
int map_alias(uint64_t, const void*, uint64_t) { return 38; /* ENOSYS: no libc headers here */ }
bool is_identity_ram(const void* p, size_t bytes) { return guest::is_identity_ram(p, bytes); }
bool platform_page_locked(const void* p, size_t bytes) { return guest::is_identity_ram(p, bytes); }
bool phys_contiguous(const void* p, size_t bytes, uint64_t* gpa)
{
    return guest::phys_contiguous(p, bytes, gpa);
}
SgResult build_sg(const void* p, size_t bytes, vgpu_sg_entry* out, uint64_t max_entries, uint64_t* count)
{
    return guest::build_sg(p, bytes, out, max_entries, count);
}

FileResult read_file(const char*, void**, size_t*) { return FileResult::kNoFiles; }
void release_file(void*) {}

} // namespace guest::platform

// One thread: nothing to exclude (api_lock.h).
namespace guest::platform {
void api_lock() {}
void api_unlock() {}
unsigned api_release_all() { return 0; }
void api_reacquire(unsigned) {}
} // namespace guest::platform
