// The machine state a guest starts in: a flat GDT with ring-3 64-bit
// segments, identity page tables (2 MiB pages, U=1, over all RAM and the MMIO
// window), boot info, command line, and a long-mode register file at CPL3. Writes only guest RAM and plain structs,
// so it is tested without KVM.
#pragma once

#include <linux/kvm.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "memmap/guest_memory.h"

namespace kvmgpu {

struct BootParams {
    uint64_t entry = 0;
    uint64_t image_end = 0;
    uint64_t host_page_size = 4096;
    uint64_t tsc_khz = 0;
    uint64_t seed = 1;
    bool nested = false;
    std::string cmdline;
    // Linux-ABI guests (abi/linux_abi.h): the first 2 MiB on 4 KiB pages
    // with page 0 unmapped, a 2 MiB guard left unmapped (0: none), and the
    // ring-0 system-call stub written. Project images leave these off.
    bool linux_abi = false;
    uint64_t guard_2m_gpa = 0;
};

// Largest RAM the boot page tables can cover (one page directory per GiB
// between KVMGPU_BOOT_PML4_GPA and KVMGPU_BOOT_TABLES_END).
uint64_t max_boot_ram_bytes();

// The first byte after the page tables write_boot_structures writes for this
// RAM; [that, KVMGPU_BOOT_TABLES_END) is free for tables added later (a
// Linux-ABI guest's aliases, vmm/linux/guest_aliases.h).
uint64_t boot_tables_end(uint64_t ram, bool linux_abi);

// Writes GDT, page tables, boot info and command line into `mem`. Throws
// std::invalid_argument when RAM or the command line does not fit.
void write_boot_structures(const memmap::GuestMemory& mem, const BootParams& p);

// Long-mode segment and control registers; `base` is what KVM_GET_SREGS
// gave (kept for the fields KVM initialised, e.g. TR, APIC base).
kvm_sregs long_mode_sregs(const kvm_sregs& base);
// Linux-ABI guests: EFER.SCE, FS base 0, on top of long_mode_sregs.
kvm_sregs linux_sregs(const kvm_sregs& base);
// STAR, LSTAR (the stub), SFMASK for a Linux-ABI guest's `syscall`.
std::vector<kvm_msr_entry> linux_syscall_msrs();
kvm_regs entry_regs(uint64_t entry);
kvm_fpu initial_fpu();

} // namespace kvmgpu
