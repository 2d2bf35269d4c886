#include "kvmtool-gpu/vmm/boot_state.h"

#include "kvmtool-gpu/abi/linux_abi.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace kvmgpu {

namespace {

// Every entry is U=1 (the guest runs in ring 3 and reaches everything it
// maps), but a Linux-ABI guest's first 2 MiB (linux_low_page_flags).
constexpr uint64_t kPresent = 1ull << 0, kWritable = 1ull << 1, kUser = 1ull << 2, kHuge = 1ull << 7;
constexpr uint64_t kTableFlags = kPresent | kWritable | kUser;
constexpr uint64_t k2M = 2ull << 20, k1G = 1ull << 30;
constexpr uint64_t kPdptGpa = KVMGPU_BOOT_PML4_GPA + 0x1000;
constexpr uint64_t kFirstPdGpa = kPdptGpa + 0x1000;

constexpr uint64_t kCr0Pe = 1ull << 0, kCr0Mp = 1ull << 1, kCr0Et = 1ull << 4, kCr0Ne = 1ull << 5,
                   kCr0Wp = 1ull << 16, kCr0Pg = 1ull << 31;
constexpr uint64_t kCr4Pae = 1ull << 5, kCr4Osfxsr = 1ull << 9, kCr4Osxmmexcpt = 1ull << 10;
constexpr uint64_t kEferLme = 1ull << 8, kEferLma = 1ull << 10, kEferNxe = 1ull << 11;

// TSS: 104 bytes, then an I/O bitmap for ports below KVMGPU_TSS_OPEN_PORTS
// and its 0xff terminator. A project image's bitmap is all zero bits
// (allowed): ring 3 needs it for the exit port, as kvm-pvm's emulator checks
// the bitmap even with IOPL 3 requested. A Linux-ABI guest's is all ones but
// for the system-call port: it runs at IOPL 0, and on kvm-pvm SYSCALL enters
// the stub at LSTAR still at CPL 3, so the stub's `out` needs that one port
// (the VMM serves it only from the stub's address: linux_process.cpp). The
// fault stubs run at CPL 0 through the IDT, where IOPL 0 allows any port.
constexpr uint64_t kTssBytes = 104, kIoBitmapBytes = KVMGPU_TSS_OPEN_PORTS / 8 + 1;
constexpr uint64_t kTssLimit = kTssBytes + kIoBitmapBytes - 1;
static_assert(KVMGPU_TSS_OPEN_PORTS % 8 == 0 && KVMGPU_TSS_GPA + kTssLimit < KVMGPU_BOOT_PML4_GPA, "TSS fits");

// A 64-bit available-TSS descriptor (two GDT slots) for base and limit.
constexpr uint64_t tss_descriptor_low(uint64_t base, uint64_t limit) {
    return (limit & 0xffff) | (base & 0xffffff) << 16 | 0x89ull << 40 | ((limit >> 16) & 0xf) << 48 |
           ((base >> 24) & 0xff) << 56;
}

// Exceptions: an IDT of 32 interrupt gates (ring 0, code 0x08; #BP and #OF
// may also be raised from ring 3 by `int3` and `into`), each to a
// 16-byte stub `push %rax; push %rdx; mov $vector, %eax; mov
// $KVMGPU_FAULT_PORT, %dx; out %eax, %dx; jmp .` on the TSS's IST1 stack
// (also its RSP0), so the VMM learns the vector and finds the exception
// frame above the two saved registers (KVMGPU_FAULT_SAVED_BYTES) at RSP,
// every register of the faulting code intact, instead of a triple fault
// (which VMX/SVM answer with a reset, losing every register). IST, not the
// stack in use: an exception in ring 0 (the system-call stub, entered by
// `syscall` on the guest's own RSP, e.g. the single-step trap of a
// `syscall` made with TF set) is then delivered whatever RSP holds.
constexpr uint64_t kVectors = 32, kStubBytes = 16, kFaultIst = 1;
constexpr uint64_t kTssRsp0 = 4, kTssIst1 = 36;

std::vector<uint8_t> fault_stubs() {
    std::vector<uint8_t> code(kVectors * kStubBytes, 0xCC);
    for (uint64_t v = 0; v < kVectors; ++v) {
        const uint8_t stub[] = {0x50, 0x52,                                                   // push rax; push rdx
                                0xB8, uint8_t(v), 0, 0, 0,                                    // mov eax, v
                                0x66, 0xBA, uint8_t(KVMGPU_FAULT_PORT), uint8_t(KVMGPU_FAULT_PORT >> 8), // mov dx, port
                                0xEF,                                                         // out dx, eax
                                0xEB, 0xFE};                                                  // jmp .
        std::memcpy(&code[v * kStubBytes], stub, sizeof stub);
    }
    return code;
}

std::vector<uint64_t> idt_gates() {
    std::vector<uint64_t> idt(kVectors * 2);
    for (uint64_t v = 0; v < kVectors; ++v) {
        const uint64_t target = KVMGPU_FAULT_STUBS_GPA + v * kStubBytes;
        // #BP and #OF gates are DPL 3, as Linux's: `int3` and `into` from ring 3 raise those
        // vectors (SIGTRAP for a Linux-ABI guest) rather than a #GP for the gate's privilege.
        const uint64_t type = (v == 3 || v == 4) ? 0xEE : 0x8E;
        idt[2 * v] = (target & 0xffff) | uint64_t{0x08} << 16 | kFaultIst << 32 | type << 40 |
                     ((target >> 16) & 0xffff) << 48;
        idt[2 * v + 1] = target >> 32;
    }
    return idt;
}

// GDT: null, ring-0 64-bit code (0x08) and data (0x10), the TSS (0x18, two
// slots), then the ring-3 data (0x28) and 64-bit code (0x30) the guest runs
// on: with RPL 3 they are the selectors 0x2b and 0x33 (Linux's SYSRET layout).
constexpr uint16_t kTssSelector = 0x18;
constexpr uint64_t kGdt[] = {0, 0x00af9b000000ffffull, 0x00cf93000000ffffull,
                             tss_descriptor_low(KVMGPU_TSS_GPA, kTssLimit), KVMGPU_TSS_GPA >> 32,
                             0x00cff3000000ffffull, 0x00affb000000ffffull};
static_assert(KVMGPU_USER_DATA_SELECTOR == (5 << 3 | 3) && KVMGPU_USER_CODE_SELECTOR == (6 << 3 | 3),
              "user selectors index kGdt");
constexpr uint64_t kRflagsReserved = 1ull << 1, kRflagsIopl3 = 3ull << 12;

uint64_t pd_pages_for(uint64_t ram) { return (ram + k1G - 1) / k1G; }

void must_write(const memmap::GuestMemory& mem, uint64_t gpa, const void* src, uint64_t len) {
    if (!mem.write(memmap::GuestPhysAddr{gpa}, src, len))
        throw std::invalid_argument("guest RAM too small for the boot structures");
}

} // namespace

constexpr uint64_t kWindowPds = KVMGPU_LINUX_FILE_WINDOW_SIZE / k1G;

uint64_t max_boot_ram_bytes() {
    // Pages kept for the MMIO window's directory, a Linux-ABI guest's low
    // table and its file window's directories.
    const uint64_t tables = (KVMGPU_BOOT_TABLES_END - kFirstPdGpa) / 0x1000 - 2 - kWindowPds;
    static_assert((KVMGPU_BOOT_TABLES_END - kFirstPdGpa) / 0x1000 - 2 - kWindowPds <=
                      KVMGPU_LINUX_FILE_WINDOW_GPA / k1G,
                  "RAM the tables can map ends below the file window");
    return tables * k1G;
}

BootPageTables boot_page_tables(uint64_t ram, bool linux_abi) {
    // The PDs of RAM, the MMIO window's, and a Linux-ABI guest's low 4 KiB table.
    BootPageTables t{};
    t.pml4 = KVMGPU_BOOT_PML4_GPA;
    t.pdpt = kPdptGpa;
    t.first_pd = kFirstPdGpa;
    t.ram_pds = pd_pages_for(ram);
    t.mmio_pd = kFirstPdGpa + t.ram_pds * 0x1000;
    t.low_pt = linux_abi ? t.mmio_pd + 0x1000 : 0;
    t.window_pd = linux_abi ? t.low_pt + 0x1000 : 0;
    t.window_pds = linux_abi ? kWindowPds : 0;
    t.end = linux_abi ? t.window_pd + t.window_pds * 0x1000 : t.mmio_pd + 0x1000;
    return t;
}

uint64_t boot_tables_end(uint64_t ram, bool linux_abi) { return boot_page_tables(ram, linux_abi).end; }

std::string boot_exception_state_damage(const memmap::GuestMemory& mem) {
    std::string damaged;
    auto differs = [&](const char* what, uint64_t gpa, const void* want, uint64_t len, uint64_t ignore_bits = 0) {
        std::vector<uint8_t> got(len);
        bool same = mem.read(memmap::GuestPhysAddr{gpa}, got.data(), len);
        for (uint64_t i = 0; same && i + 8 <= len; i += 8) {
            uint64_t a, b;
            std::memcpy(&a, &got[i], 8);
            std::memcpy(&b, static_cast<const uint8_t*>(want) + i, 8);
            same = ((a ^ b) & ~ignore_bits) == 0;
        }
        if (same) return;
        damaged += damaged.empty() ? "" : ", ";
        damaged += what;
    };
    constexpr uint64_t kAccessedAndBusy = 3ull << 40; // the CPU may set them in a descriptor
    differs("GDT", KVMGPU_GDT_GPA, kGdt, sizeof kGdt, kAccessedAndBusy);
    const uint64_t fault_stack = KVMGPU_FAULT_STACK_TOP;
    uint8_t tss_now[kTssIst1 + 8] = {};
    if (!mem.read(memmap::GuestPhysAddr{KVMGPU_TSS_GPA}, tss_now, sizeof tss_now) ||
        std::memcmp(&tss_now[kTssRsp0], &fault_stack, 8) != 0 || std::memcmp(&tss_now[kTssIst1], &fault_stack, 8) != 0)
        damaged += damaged.empty() ? "TSS" : ", TSS";
    const auto idt = idt_gates();
    differs("IDT", KVMGPU_IDT_GPA, idt.data(), idt.size() * 8);
    auto stubs = fault_stubs();
    stubs.resize((stubs.size() + 7) / 8 * 8, 0xCC);
    differs("exception stubs", KVMGPU_FAULT_STUBS_GPA, stubs.data(), stubs.size());
    return damaged;
}

uint64_t linux_low_page_flags(uint64_t gpa) {
    static_assert(KVMGPU_BOOT_INFO_GPA + 0x1000 == KVMGPU_GDT_GPA && KVMGPU_GDT_GPA + 0x1000 == KVMGPU_BOOT_PML4_GPA &&
                      KVMGPU_BOOT_TABLES_END == KVMGPU_CMDLINE_GPA && KVMGPU_CMDLINE_MAX == 0x1000 &&
                      KVMGPU_CMDLINE_GPA + 0x1000 == KVMGPU_LINUX_SYSCALL_STUB_GPA &&
                      KVMGPU_LINUX_SYSCALL_STUB_GPA + 0x1000 == KVMGPU_LINUX_VVAR_GPA,
                  "the first MiB's pages, in this order");
    if (gpa >= KVMGPU_IMAGE_BASE) return kPresent | kWritable | kUser;           // the program's
    if (gpa == 0) return 0;                                                        // NULL faults
    if (gpa < KVMGPU_GDT_GPA) return kPresent | kUser;                             // boot info
    if (gpa < KVMGPU_BOOT_PML4_GPA) return kPresent | kWritable;                   // GDT, TSS, IDT, fault stubs and stack
    if (gpa < KVMGPU_BOOT_TABLES_END) return 0;                                    // page tables
    if (gpa < KVMGPU_LINUX_SYSCALL_STUB_GPA) return kPresent | kUser;              // command line
    // The system-call stub: read-only to ring 3, but user: kvm-pvm fetches
    // the first instructions after `syscall` at CPL 3 (a supervisor page
    // faults there). A jump to it from ring 3 is only a system call without
    // the `syscall` instruction, returned from by the same checked rules.
    if (gpa < KVMGPU_LINUX_VVAR_GPA) return kPresent | kUser;
    return kPresent | kUser;                                                       // clock page, vDSO
}

void write_boot_structures(const memmap::GuestMemory& mem, const BootParams& p) {
    const uint64_t ram = mem.total_bytes();
    if (ram > max_boot_ram_bytes() || ram > KVMGPU_MAX_RAM)
        throw std::invalid_argument("guest RAM of " + std::to_string(ram >> 20) + " MiB exceeds the " +
                                    std::to_string(max_boot_ram_bytes() >> 20) + " MiB the boot page tables map");
    if (p.cmdline.size() >= KVMGPU_CMDLINE_MAX)
        throw std::invalid_argument("guest command line longer than " + std::to_string(KVMGPU_CMDLINE_MAX - 1) +
                                    " bytes");

    must_write(mem, KVMGPU_GDT_GPA, kGdt, sizeof kGdt);
    std::vector<uint8_t> tss(kTssLimit + 1, 0);
    if (p.linux_abi) {
        std::fill(tss.begin() + kTssBytes, tss.end(), 0xff);
        tss[kTssBytes + KVMGPU_LINUX_SYSCALL_PORT / 8] &= static_cast<uint8_t>(~(1u << (KVMGPU_LINUX_SYSCALL_PORT % 8)));
    }
    const uint16_t io_bitmap_offset = kTssBytes;
    std::memcpy(&tss[102], &io_bitmap_offset, sizeof io_bitmap_offset);
    const uint64_t fault_stack = KVMGPU_FAULT_STACK_TOP;
    std::memcpy(&tss[kTssRsp0], &fault_stack, sizeof fault_stack);
    std::memcpy(&tss[kTssIst1], &fault_stack, sizeof fault_stack);
    tss.back() = 0xff;
    must_write(mem, KVMGPU_TSS_GPA, tss.data(), tss.size());
    const auto idt = idt_gates();
    must_write(mem, KVMGPU_IDT_GPA, idt.data(), idt.size() * sizeof idt[0]);
    const auto stubs = fault_stubs();
    must_write(mem, KVMGPU_FAULT_STUBS_GPA, stubs.data(), stubs.size());

    // Identity map: PML4[0] -> PDPT; PDPT[g] -> one PD per GiB of RAM, each
    // 512 x 2 MiB; PDPT[256] -> a PD for the MMIO window at 256 GiB.
    const uint64_t npd = pd_pages_for(ram);
    std::vector<uint64_t> table(512);
    table.assign(512, 0);
    table[0] = kPdptGpa | kTableFlags;
    must_write(mem, KVMGPU_BOOT_PML4_GPA, table.data(), 4096);

    const uint64_t mmio_pd = kFirstPdGpa + npd * 0x1000;
    table.assign(512, 0);
    for (uint64_t g = 0; g < npd; ++g) table[g] = (kFirstPdGpa + g * 0x1000) | kTableFlags;
    static_assert(KVMGPU_MMIO_BASE % k1G == 0 && KVMGPU_MMIO_BASE / k1G < 512, "MMIO window in PML4[0]");
    table[KVMGPU_MMIO_BASE / k1G] = mmio_pd | kTableFlags;

    // Linux-ABI guests: a 4 KiB table for the first 2 MiB after the MMIO
    // window's directory, then the file window's directories.
    const BootPageTables layout = boot_page_tables(ram, p.linux_abi);
    const uint64_t low_pt = layout.low_pt;
    if (layout.end > KVMGPU_BOOT_TABLES_END)
        throw std::invalid_argument("guest RAM too large for a Linux-ABI guest's page tables");
    for (uint64_t g = 0; g < layout.window_pds; ++g)
        table[KVMGPU_LINUX_FILE_WINDOW_GPA / k1G + g] = (layout.window_pd + g * 0x1000) | kTableFlags;
    must_write(mem, kPdptGpa, table.data(), 4096);
    for (uint64_t g = 0; g < npd; ++g) {
        for (uint64_t i = 0; i < 512; ++i) {
            const uint64_t gpa = g * k1G + i * k2M;
            table[i] = gpa | kTableFlags | kHuge;
            if (p.linux_abi && gpa == 0) table[i] = low_pt | kTableFlags;
            if (p.linux_abi && p.guard_2m_gpa && gpa == p.guard_2m_gpa) table[i] = 0;
        }
        must_write(mem, kFirstPdGpa + g * 0x1000, table.data(), 4096);
    }
    table.assign(512, 0);
    for (uint64_t i = 0; i * k2M < KVMGPU_MMIO_SIZE; ++i)
        table[i] = (KVMGPU_MMIO_BASE + i * k2M) | kTableFlags | kHuge;
    must_write(mem, mmio_pd, table.data(), 4096);
    for (uint64_t g = 0; g < layout.window_pds; ++g) {
        const uint64_t gib = KVMGPU_LINUX_FILE_WINDOW_GPA + g * k1G;
        for (uint64_t i = 0; i < 512; ++i) table[i] = (gib + i * k2M) | kTableFlags | kHuge;
        must_write(mem, layout.window_pd + g * 0x1000, table.data(), 4096);
    }
    if (p.linux_abi) {
        table.assign(512, 0);
        for (uint64_t i = 0; i < 512; ++i)
            if (const uint64_t flags = linux_low_page_flags(i * 0x1000)) table[i] = (i * 0x1000) | flags;
        must_write(mem, low_pt, table.data(), 4096);
        // `out %al, $KVMGPU_LINUX_SYSCALL_PORT; ud2`: the VMM returns to ring 3 itself.
        const uint8_t stub[] = {0xE6, uint8_t(KVMGPU_LINUX_SYSCALL_PORT), 0x0F, 0x0B};
        must_write(mem, KVMGPU_LINUX_SYSCALL_STUB_GPA, stub, sizeof stub);
    }

    must_write(mem, KVMGPU_CMDLINE_GPA, p.cmdline.c_str(), p.cmdline.size() + 1);

    kvmgpu_boot_info info{};
    info.magic = KVMGPU_BOOT_MAGIC;
    info.abi_version = KVMGPU_PLATFORM_ABI_VERSION;
    info.ram_size = ram;
    info.image_end = (p.image_end + k2M - 1) & ~(k2M - 1);
    info.host_page_size = p.host_page_size;
    info.tsc_khz = p.tsc_khz;
    info.seed = p.seed;
    info.cmdline_gpa = KVMGPU_CMDLINE_GPA;
    info.cmdline_len = static_cast<uint32_t>(p.cmdline.size());
    info.flags = p.nested ? KVMGPU_BOOT_FLAG_NESTED : 0;
    must_write(mem, KVMGPU_BOOT_INFO_GPA, &info, sizeof info);
}

kvm_sregs long_mode_sregs(const kvm_sregs& base) {
    kvm_sregs s = base;
    kvm_segment code{};
    code.base = 0;
    code.limit = 0xffffffff;
    code.selector = KVMGPU_USER_CODE_SELECTOR;
    code.type = 0xb; // execute/read, accessed
    code.dpl = 3;
    code.present = 1;
    code.s = 1;
    code.l = 1;
    code.g = 1;
    kvm_segment data = code;
    data.selector = KVMGPU_USER_DATA_SELECTOR;
    data.type = 0x3; // read/write, accessed
    data.l = 0;
    data.db = 1;
    s.cs = code;
    s.ds = s.es = s.fs = s.gs = s.ss = data;
    // FS base: the boot info page, which ring 3 can read and nothing changes
    // after boot. Code built with the stack protector reads its canary at
    // %fs:0x28; with base 0 that is the guest's unmapped page 0. (No project
    // image links such code since the runtime-API samples became Linux-ABI
    // guests; the ABI keeps the promise.)
    s.fs.base = KVMGPU_BOOT_INFO_GPA;
    // A busy 64-bit TSS (its I/O bitmap lets ring 3 reach the platform's
    // ports) and an unusable LDT: also what VMX's guest-state checks want.
    kvm_segment tr{};
    tr.base = KVMGPU_TSS_GPA;
    tr.limit = kTssLimit;
    tr.selector = kTssSelector;
    tr.type = 0xb;
    tr.present = 1;
    s.tr = tr;
    kvm_segment ldt{};
    ldt.type = 0x2;
    ldt.unusable = 1;
    s.ldt = ldt;
    s.gdt.base = KVMGPU_GDT_GPA;
    s.gdt.limit = sizeof kGdt - 1;
    s.idt.base = KVMGPU_IDT_GPA;
    s.idt.limit = kVectors * 16 - 1;
    s.cr3 = KVMGPU_BOOT_PML4_GPA;
    s.cr4 = kCr4Pae | kCr4Osfxsr | kCr4Osxmmexcpt;
    s.cr0 = kCr0Pe | kCr0Mp | kCr0Et | kCr0Ne | kCr0Wp | kCr0Pg;
    s.efer = kEferLme | kEferLma | kEferNxe;
    return s;
}

kvm_sregs linux_sregs(const kvm_sregs& base, bool osxsave) {
    kvm_sregs s = long_mode_sregs(base);
    constexpr uint64_t kCr4Osxsave = 1ull << 18;
    if (osxsave) s.cr4 |= kCr4Osxsave;
    constexpr uint64_t kEferSce = 1ull << 0;
    s.efer |= kEferSce;
    s.fs.base = 0; // glibc's: arch_prctl(ARCH_SET_FS) sets it
    return s;
}

std::vector<kvm_msr_entry> linux_syscall_msrs() {
    constexpr uint32_t kStar = 0xC0000081, kLstar = 0xC0000082, kSfmask = 0xC0000084;
    // STAR: syscall enters CS 0x08 / SS 0x10 (ring 0); the sysret base 0x23
    // names the user selectors 0x2b and 0x33 (the VMM returns without sysret).
    // SFMASK clears TF, IF, DF, AC and NT on entry, as Linux does.
    const uint64_t star = (uint64_t{0x23} << 48) | (uint64_t{0x08} << 32);
    const uint64_t sfmask = (1u << 8) | (1u << 9) | (1u << 10) | (1u << 18) | (1u << 14);
    return {kvm_msr_entry{kStar, 0, star}, kvm_msr_entry{kLstar, 0, KVMGPU_LINUX_SYSCALL_STUB_GPA},
            kvm_msr_entry{kSfmask, 0, sfmask}};
}

kvm_fpu initial_fpu() {
    kvm_fpu f{};
    f.fcw = 0x37f;    // x87 default control word
    f.mxcsr = 0x1f80; // SSE: all exceptions masked
    return f;
}

kvm_regs entry_regs(uint64_t entry) {
    kvm_regs r{};
    r.rip = entry;
    r.rdi = KVMGPU_BOOT_INFO_GPA;
    // Interrupts off; IOPL 3 so the guest's port writes (exit port) are
    // allowed at CPL3 where KVM runs on VMX/SVM (kvm-pvm exits on them anyway).
    r.rflags = kRflagsReserved | kRflagsIopl3;
    return r;
}

} // namespace kvmgpu
