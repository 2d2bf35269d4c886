// The machine state a guest starts in: a flat GDT with ring-3 64-bit
// segments, identity page tables (2 MiB pages, U=1, over all RAM and the MMIO
// window; a Linux-ABI guest's first 2 MiB on 4 KiB pages that keep the VMM's
// own from ring 3), boot info, command line, and a long-mode register file at CPL3. Writes only guest RAM and plain structs,
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
    // (linux_low_page_flags), the file window identity mapped like RAM
    // (user, read-write-execute), a 2 MiB guard left unmapped (0: none), a TSS
    // that opens no port, and the ring-0 system-call stub written. Project
    // images leave these off.
    bool linux_abi = false;
    uint64_t guard_2m_gpa = 0;
};

// Largest RAM the boot page tables can cover (one page directory per GiB
// between KVMGPU_BOOT_PML4_GPA and KVMGPU_BOOT_TABLES_END, after room for
// the MMIO window's, a Linux-ABI guest's low table and its file window's).
// It ends below the file window (KVMGPU_LINUX_FILE_WINDOW_GPA).
uint64_t max_boot_ram_bytes();

// Where write_boot_structures puts the page tables for this RAM: the PML4
// at KVMGPU_BOOT_PML4_GPA, its one PDPT (PML4[0]), a PD per GiB of RAM
// (each maps the whole GiB, past the end of RAM too), the MMIO window's PD
// (PDPT[KVMGPU_MMIO_BASE >> 30]) and, for a Linux-ABI guest, the 4 KiB table
// of the first 2 MiB and a PD per GiB of the file window (window_pd: the
// first; window_pds: how many, 0 for project images). [end,
// KVMGPU_BOOT_TABLES_END) is free for tables added later (a Linux-ABI
// guest's aliases, vmm/linux/guest_aliases.h).
struct BootPageTables {
    uint64_t pml4, pdpt, first_pd, ram_pds, mmio_pd, low_pt, window_pd, window_pds, end;
};
BootPageTables boot_page_tables(uint64_t ram, bool linux_abi);
uint64_t boot_tables_end(uint64_t ram, bool linux_abi);

// Which of the VMM's exception-delivery structures (GDT, TSS stacks, IDT,
// exception stubs) no longer hold what write_boot_structures wrote, as
// "IDT, TSS"; "" when all do. For a triple fault's report.
std::string boot_exception_state_damage(const memmap::GuestMemory& mem);

// A Linux-ABI guest's 4 KiB page at `gpa` below 2 MiB: its page-table
// entry's flags, 0 for unmapped. Ring 3 gets nothing of the VMM's ring-0
// state (GDT, TSS, IDT, fault stubs, system-call stub: ring 0 only; page
// tables and page 0: unmapped) and reads but cannot write what it is given
// (boot info, command line, clock page, vDSO); its own pages from
// KVMGPU_IMAGE_BASE up are read-write.
uint64_t linux_low_page_flags(uint64_t gpa);

// Writes GDT, page tables, boot info and command line into `mem`. Throws
// std::invalid_argument when RAM or the command line does not fit.
void write_boot_structures(const memmap::GuestMemory& mem, const BootParams& p);

// Long-mode segment and control registers; `base` is what KVM_GET_SREGS
// gave (kept for the fields KVM initialised, e.g. TR, APIC base).
kvm_sregs long_mode_sregs(const kvm_sregs& base);
// Linux-ABI guests: EFER.SCE, FS base 0, on top of long_mode_sregs; CR4.OSXSAVE with `osxsave`.
kvm_sregs linux_sregs(const kvm_sregs& base, bool osxsave = false);
// STAR, LSTAR (the stub), SFMASK for a Linux-ABI guest's `syscall`.
std::vector<kvm_msr_entry> linux_syscall_msrs();
kvm_regs entry_regs(uint64_t entry);
kvm_fpu initial_fpu();

} // namespace kvmgpu
