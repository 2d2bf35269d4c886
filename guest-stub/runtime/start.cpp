// C++ side of guest start-up, called by entry.S with the boot info: checks
// the boot info, runs static constructors, reads the cmdline, runs the
// calibration loop that tells the VMM how guest code executes, takes over
// paging (heap_init), marks stage MAIN and calls the program's guest_main.
#include "guest-stub/runtime/boot.h"
#include "guest-stub/runtime/console.h"
#include "guest-stub/runtime/entry_defs.h"
#include "guest-stub/runtime/exit.h"
#include "guest-stub/runtime/heap.h"
#include "guest-stub/runtime/mmio.h"
#include "guest-stub/runtime/tsc.h"
#include "kvmtool-gpu/abi/platform_abi.h"

static_assert(GUEST_ENTRY_MARKER_GPA == KVMGPU_MARKER_GPA, "entry_defs.h out of date");
static_assert(GUEST_ENTRY_MARKER_STAGE == KVMGPU_MARKER_STAGE_ENTRY, "entry_defs.h out of date");
static_assert(GUEST_ENTRY_EXIT_PORT == KVMGPU_EXIT_PORT, "entry_defs.h out of date");

int guest_main(const kvmgpu_boot_info* info); // each guest program defines it

extern "C" {
extern char __image_start[];
extern char __image_end[];
extern char guest_stack_bottom[];
extern char guest_stack_top[];
using InitFn = void (*)();
extern InitFn __init_array_start[];
extern InitFn __init_array_end[];

uint32_t kvmgpu_runtime_start(const kvmgpu_boot_info* info);
}

namespace {

// KVMGPU_CALIBRATION_LOOPS dec/jnz iterations inside the VMM's calibration
// window: it counts what KVM emulated meanwhile (vmm/execution_mode.h).
void run_calibration_loop()
{
    constexpr uint64_t reg = KVMGPU_CPU_CONTROL_GPA + KVMGPU_CPU_CONTROL_REG_CALIBRATE;
    uint64_t n = KVMGPU_CALIBRATION_LOOPS;
    guest::mmio_write64(reg, n);
    asm volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
    guest::mmio_write64(reg, 0);
}

} // namespace

uint32_t kvmgpu_runtime_start(const kvmgpu_boot_info* info)
{
    using namespace guest;
    for (InitFn* f = __init_array_start; f != __init_array_end; ++f)
        (*f)(); // static constructors first: they must not see a parsed cmdline yet
    if (!boot_init(info, reinterpret_cast<uintptr_t>(__image_end)))
        return kExitBadBootInfo;
    tsc_init(info->tsc_khz);
    run_calibration_loop();
    heap_init(*info, cmdline());
    if (cmdline().get_bool("rt_verbose", false)) {
        HeapStats hs = heap_stats();
        printf("runtime: image [0x%lx, 0x%lx) stack [0x%lx, 0x%lx) ram %lu MiB, frames from 0x%lx, "
               "guest pages %s, shuffle %d, %lu table pages, tsc %lu kHz (%s)\n",
               (uint64_t)reinterpret_cast<uintptr_t>(__image_start),
               (uint64_t)reinterpret_cast<uintptr_t>(__image_end),
               (uint64_t)reinterpret_cast<uintptr_t>(guest_stack_bottom),
               (uint64_t)reinterpret_cast<uintptr_t>(guest_stack_top), hs.ram_size >> 20,
               hs.frames_base, hs.page_size == (2u << 20) ? "2M" : "4K", hs.shuffle ? 1 : 0,
               hs.table_pages, tsc_khz(), tsc_source());
    }
    mmio_write64(KVMGPU_MARKER_GPA, KVMGPU_MARKER_STAGE_MAIN);
    int rc = guest_main(info);
    console_flush();
    return static_cast<uint32_t>(rc);
}
