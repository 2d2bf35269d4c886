// The platform seam (platform.h) for a static Linux executable run by
// kvmtool-gpu as a ring-3 guest (the VMM serves its system calls). The VMM
// maps all of guest RAM at its own address (virtual == physical, U=1) and
// brk/mmap hand out guest RAM, so every pointer the program holds into RAM
// is its guest-physical address and a contiguous virtual range is one
// contiguous physical range: pageable buffers need no page walk, and
// page-locked memory is plain anonymous mmap.
#include "guest-stub/platform/platform.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest-stub/runtime/tsc.h"
#include "kvmtool-gpu/abi/linux_abi.h"

// The auxiliary-vector tag whose value is the boot info's address.
#ifndef AT_KVMGPU_BOOT_INFO
#define AT_KVMGPU_BOOT_INFO 0x4B47
#endif

namespace guest::platform {
namespace {

constexpr uint64_t kLowestRam = 4096; // page 0 is never a program's memory
constexpr size_t kPageSize = 4096;

const kvmgpu_boot_info* g_info;
Cmdline g_options;

// _exit, not exit: platform_init runs before crtstuff's frame_dummy, so
// exit's destructors would deregister unwind frames never registered (glibc
// aborts).
[[noreturn]] void refuse_to_start()
{
    fflush(stderr);
    _exit(kExitBadBootInfo);
}

// Before main and before nvcc's registration constructors (priority 101
// runs ahead of the default): a program started anywhere but under
// kvmtool-gpu ends here with one line. The shared libcuda.so.1 instead
// loads anywhere (a host process may dlopen it) and has no device there.
__attribute__((constructor(101))) void platform_init()
{
    const unsigned long at = getauxval(AT_KVMGPU_BOOT_INFO);
#ifdef KVMGPU_PLATFORM_SHARED_LIBRARY
    if (at == 0)
        return;
#endif
    if (at == 0) {
        fprintf(stderr, "%s: not running under kvmtool-gpu (no boot info in the auxiliary vector); "
                        "run it with: kvmtool-gpu run --guest %s\n",
                program_invocation_short_name, program_invocation_name);
        refuse_to_start();
    }
    const auto* info = reinterpret_cast<const kvmgpu_boot_info*>(at);
    if (info->magic != KVMGPU_BOOT_MAGIC || info->abi_version != KVMGPU_PLATFORM_ABI_VERSION ||
        info->ram_size > KVMGPU_MAX_RAM) {
        fprintf(stderr, "%s: boot info at 0x%lx: magic 0x%x version %u ram_size 0x%llx, expected magic 0x%x "
                        "version %u\n",
                program_invocation_short_name, at, info->magic, info->abi_version,
                static_cast<unsigned long long>(info->ram_size), KVMGPU_BOOT_MAGIC, KVMGPU_PLATFORM_ABI_VERSION);
        refuse_to_start();
    }
    g_info = info;
    tsc_init(info->tsc_khz);
    if (const char* opts = getenv("KVMGPU_OPTIONS"))
        g_options = Cmdline(opts, static_cast<size_t>(-1));
}

// The aliases this program made (map_alias): added under the guest API
// lock, never removed, as the VMM keeps them.
struct Alias {
    uint64_t va, gpa, bytes;
};
constexpr int kMaxAliases = 256;
Alias g_aliases[kMaxAliases];
int g_alias_count = 0;

const Alias* alias_of(uint64_t va)
{
    for (int i = 0; i < g_alias_count; ++i)
        if (va >= g_aliases[i].va && va - g_aliases[i].va < g_aliases[i].bytes)
            return &g_aliases[i];
    return nullptr;
}

uint64_t identity_piece(void*, uint64_t va, uint64_t bytes, SgWriter* sg)
{
    if (const Alias* a = alias_of(va))
        return sg_add_piece(sg, a->gpa + (va - a->va), a->bytes - (va - a->va), bytes);
    if (va < kLowestRam || va >= g_info->ram_size)
        return 0;
    return sg_add_piece(sg, va, g_info->ram_size - va, bytes);
}

} // namespace

size_t printf(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stderr, fmt, ap);
    va_end(ap);
    return n < 0 ? 0 : static_cast<size_t>(n);
}

void exit(uint32_t code)
{
    fflush(stdout);
    ::exit(static_cast<int>(code));
}

bool vmm_present() { return g_info != nullptr; }
const kvmgpu_boot_info& boot_info() { return *g_info; }
const Cmdline& options() { return g_options; }
uint64_t seconds_to_tsc(uint64_t seconds) { return guest::seconds_to_tsc(seconds); }

void* try_pinned_alloc_permanent(size_t bytes, size_t align)
{
    if (align == 0)
        align = bytes >= (2u << 20) ? (2u << 20) : kPageSize;
    if (g_info == nullptr || bytes == 0 || (align & (align - 1)) != 0 || bytes > SIZE_MAX - align)
        return nullptr;
    const size_t slack = align > kPageSize ? align - kPageSize : 0;
    void* m = mmap(nullptr, bytes + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return nullptr;
    // The slack before and after stays mapped: the memory lives as long as
    // the program, and this needs no munmap from the VMM.
    const uintptr_t p = (reinterpret_cast<uintptr_t>(m) + align - 1) & ~(uintptr_t{align} - 1);
    void* q = reinterpret_cast<void*>(p);
    if (!is_identity_ram(q, bytes)) {
        printf("kvmgpu: mmap gave 0x%lx, outside guest RAM [0x%lx, 0x%llx)\n", p, kLowestRam,
               static_cast<unsigned long long>(g_info->ram_size));
        return nullptr;
    }
    return q;
}

bool virt_to_phys(const void* p, uint64_t* gpa)
{
    return phys_contiguous(p, 1, gpa);
}

int map_alias(uint64_t va, const void* ram, uint64_t bytes)
{
    if (bytes == 0)
        return 0;
    if (g_alias_count == kMaxAliases)
        return ENOMEM;
    const uint64_t gpa = reinterpret_cast<uintptr_t>(ram);
    if (!is_identity_ram(ram, bytes))
        return EFAULT;
    const long r = syscall(static_cast<long>(KVMGPU_LINUX_SYS_ALIAS), va, gpa, bytes);
    if (r != 0)
        return errno;
    g_aliases[g_alias_count++] = Alias{va, gpa, bytes};
    return 0;
}

bool is_identity_ram(const void* p, size_t bytes)
{
    const uint64_t va = reinterpret_cast<uintptr_t>(p);
    return g_info != nullptr && va >= kLowestRam && va < g_info->ram_size && bytes <= g_info->ram_size - va;
}

bool platform_page_locked(const void*, size_t) { return false; }

bool phys_contiguous(const void* p, size_t bytes, uint64_t* gpa)
{
    const uint64_t va = reinterpret_cast<uintptr_t>(p);
    if (const Alias* a = alias_of(va); a != nullptr && bytes <= a->bytes - (va - a->va)) {
        *gpa = a->gpa + (va - a->va);
        return true;
    }
    if (!is_identity_ram(p, bytes))
        return false;
    *gpa = reinterpret_cast<uintptr_t>(p);
    return true;
}

SgResult build_sg(const void* p, size_t bytes, vgpu_sg_entry* out, uint64_t max_entries, uint64_t* count)
{
    return build_sg_list(reinterpret_cast<uintptr_t>(p), bytes, identity_piece, nullptr, out, max_entries,
                         count);
}

FileResult read_file(const char* path, void** data, size_t* bytes)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? FileResult::kNotFound : FileResult::kReadError;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {
        close(fd);
        return FileResult::kReadError;
    }
    const size_t size = static_cast<size_t>(st.st_size);
    auto* buf = static_cast<char*>(malloc(size + 1));
    if (buf == nullptr) {
        close(fd);
        return FileResult::kNoMemory;
    }
    size_t got = 0;
    while (got < size) {
        const ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += static_cast<size_t>(n);
    }
    close(fd);
    if (got != size) {
        free(buf);
        return FileResult::kReadError;
    }
    buf[size] = '\0';
    *data = buf;
    *bytes = size;
    return FileResult::kOk;
}

void release_file(void* data) { free(data); }

} // namespace guest::platform

// The API lock (api_lock.h): a mutex and this thread's depth in it, so
// that a thread can hand back all its levels around a host function.
namespace guest::platform {
namespace {
pthread_mutex_t g_api_mu = PTHREAD_MUTEX_INITIALIZER;
thread_local unsigned t_api_depth = 0;
} // namespace

void api_lock()
{
    if (t_api_depth++ == 0)
        pthread_mutex_lock(&g_api_mu);
}

void api_unlock()
{
    if (--t_api_depth == 0)
        pthread_mutex_unlock(&g_api_mu);
}

unsigned api_release_all()
{
    const unsigned depth = t_api_depth;
    if (depth != 0) {
        t_api_depth = 0;
        pthread_mutex_unlock(&g_api_mu);
    }
    return depth;
}

void api_reacquire(unsigned depth)
{
    if (depth == 0)
        return;
    pthread_mutex_lock(&g_api_mu);
    t_api_depth = depth;
}
} // namespace guest::platform
