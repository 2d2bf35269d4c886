// Boot info validation and access (see boot.h).
#include "guest-stub/runtime/boot.h"

#include "guest-stub/runtime/console.h"

namespace guest {
namespace {
kvmgpu_boot_info* g_info;
Cmdline g_cmdline;
} // namespace

bool boot_init(const kvmgpu_boot_info* info, uint64_t image_end_linked)
{
    if (reinterpret_cast<uintptr_t>(info) != KVMGPU_BOOT_INFO_GPA) {
        printf("guest: boot info pointer %p, expected 0x%llx\n", (const void*)info,
               (unsigned long long)KVMGPU_BOOT_INFO_GPA);
        return false;
    }
    if (info->magic != KVMGPU_BOOT_MAGIC || info->abi_version != KVMGPU_PLATFORM_ABI_VERSION) {
        printf("guest: boot info magic 0x%x version %u, expected 0x%x version %u\n", info->magic,
               info->abi_version, KVMGPU_BOOT_MAGIC, KVMGPU_PLATFORM_ABI_VERSION);
        return false;
    }
    if (info->ram_size > KVMGPU_MAX_RAM || info->image_end > info->ram_size ||
        info->image_end < image_end_linked || (info->image_end & ((2ull << 20) - 1)) != 0) {
        printf("guest: boot info ram_size 0x%lx image_end 0x%lx unusable (image ends at 0x%lx)\n",
               info->ram_size, info->image_end, image_end_linked);
        return false;
    }
    uint32_t len = info->cmdline_len;
    if (info->cmdline_gpa != KVMGPU_CMDLINE_GPA || len >= KVMGPU_CMDLINE_MAX) {
        printf("guest: cmdline at 0x%lx length %u unusable; ignoring it\n", info->cmdline_gpa, len);
        len = 0;
    }
    g_info = const_cast<kvmgpu_boot_info*>(info);
    g_cmdline = Cmdline(reinterpret_cast<const char*>(KVMGPU_CMDLINE_GPA), len);
    return true;
}

const kvmgpu_boot_info& boot_info() { return *g_info; }
const Cmdline& cmdline() { return g_cmdline; }
uint64_t ram_size() { return g_info->ram_size; }

void set_guest_result(uint64_t value)
{
    *const_cast<volatile uint64_t*>(&g_info->guest_result) = value;
}

} // namespace guest
