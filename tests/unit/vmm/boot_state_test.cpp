#include "kvmtool-gpu/vmm/boot_state.h"

#include "kvmtool-gpu/abi/linux_abi.h"

#include <gtest/gtest.h>

namespace kvmgpu {
namespace {

memmap::GuestMemory ram(uint64_t bytes) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, bytes));
    return mem;
}

uint64_t entry_at(const memmap::GuestMemory& mem, uint64_t table, uint64_t index) {
    return *mem.read_obj<uint64_t>(memmap::GuestPhysAddr{table + index * 8});
}

// Walks the VMM's tables like the MMU does for a 2 MiB mapping.
std::optional<uint64_t> translate(const memmap::GuestMemory& mem, uint64_t va) {
    const uint64_t mask = 0x000ffffffffff000ull;
    uint64_t e = entry_at(mem, KVMGPU_BOOT_PML4_GPA, (va >> 39) & 511);
    if (!(e & 1)) return std::nullopt;
    e = entry_at(mem, e & mask, (va >> 30) & 511);
    if (!(e & 1)) return std::nullopt;
    e = entry_at(mem, e & mask, (va >> 21) & 511);
    if (!(e & 1) || !(e & 0x80)) return std::nullopt;
    return (e & 0x000fffffffe00000ull) | (va & 0x1fffff);
}

TEST(BootState, IdentityMapsRamAndMmioWindow) {
    auto mem = ram(64ull << 20);
    BootParams p;
    p.entry = 0x100000;
    p.image_end = 0x123456;
    p.cmdline = "size=4096 mode=x";
    write_boot_structures(mem, p);
    for (uint64_t va : {0x0ull, 0x100000ull, (64ull << 20) - 8, 0x3fffffffull})
        EXPECT_EQ(translate(mem, va), va) << std::hex << va;
    EXPECT_EQ(translate(mem, KVMGPU_VGPU_GPA + 0x1000), KVMGPU_VGPU_GPA + 0x1000);
    EXPECT_EQ(translate(mem, KVMGPU_CONSOLE_GPA), KVMGPU_CONSOLE_GPA);
    EXPECT_FALSE(translate(mem, 1ull << 39)); // beyond PML4[0]: unmapped
}

TEST(BootState, WritesBootInfoAndCommandLine) {
    auto mem = ram(32ull << 20);
    BootParams p;
    p.image_end = 0x200001;
    p.tsc_khz = 2400000;
    p.seed = 42;
    p.cmdline = "hello=1";
    write_boot_structures(mem, p);
    auto info = *mem.read_obj<kvmgpu_boot_info>(memmap::GuestPhysAddr{KVMGPU_BOOT_INFO_GPA});
    EXPECT_EQ(info.magic, KVMGPU_BOOT_MAGIC);
    EXPECT_EQ(info.ram_size, 32ull << 20);
    EXPECT_EQ(info.image_end, 0x400000u); // rounded up to 2 MiB
    EXPECT_EQ(info.tsc_khz, 2400000u);
    EXPECT_EQ(info.seed, 42u);
    EXPECT_EQ(info.cmdline_len, 7u);
    char buf[8] = {};
    ASSERT_TRUE(mem.read(memmap::GuestPhysAddr{info.cmdline_gpa}, buf, 8));
    EXPECT_STREQ(buf, "hello=1");
}

TEST(BootState, RefusesOversizedCommandLine) {
    auto mem = ram(16ull << 20);
    BootParams p;
    p.cmdline.assign(KVMGPU_CMDLINE_MAX, 'x');
    EXPECT_THROW(write_boot_structures(mem, p), std::invalid_argument);
}

TEST(BootState, LongModeRegisters) {
    kvm_sregs base{};
    base.apic_base = 0xfee00900; // kept from KVM's defaults
    const auto s = long_mode_sregs(base);
    EXPECT_EQ(s.apic_base, 0xfee00900u);
    EXPECT_TRUE(s.cr0 & (1u << 31)) << "paging";
    EXPECT_TRUE(s.cr4 & (1u << 5)) << "PAE";
    EXPECT_EQ(s.efer & 0x500, 0x500u) << "LME|LMA";
    EXPECT_EQ(s.cs.l, 1);
    EXPECT_EQ(s.cs.db, 0);
    EXPECT_EQ(s.cr3, KVMGPU_BOOT_PML4_GPA);
    const auto r = entry_regs(0x100040);
    EXPECT_EQ(r.rip, 0x100040u);
    EXPECT_EQ(r.rdi, KVMGPU_BOOT_INFO_GPA);
    EXPECT_EQ(r.rflags & (1u << 9), 0u) << "interrupts off";
}

TEST(BootState, GuestStartsInRingThreeWithPortsAndExceptionsWired) {
    const auto s = long_mode_sregs(kvm_sregs{});
    EXPECT_EQ(s.cs.selector, KVMGPU_USER_CODE_SELECTOR);
    EXPECT_EQ(s.cs.dpl, 3);
    EXPECT_EQ(s.ss.selector, KVMGPU_USER_DATA_SELECTOR);
    EXPECT_EQ(s.ss.dpl, 3);
    EXPECT_TRUE(s.cr4 & (1u << 9)) << "OSFXSR: SSE for guest code";
    EXPECT_EQ(entry_regs(0).rflags & (3u << 12), 3u << 12) << "IOPL 3";
    EXPECT_EQ(s.tr.base, KVMGPU_TSS_GPA);
    EXPECT_EQ(s.idt.base, KVMGPU_IDT_GPA);
    EXPECT_EQ(s.fs.base, KVMGPU_BOOT_INFO_GPA) << "stack-protector canary at %fs:0x28 readable";
    EXPECT_EQ(s.fs.dpl, 3);

    auto mem = ram(64ull << 20);
    write_boot_structures(mem, BootParams{});
    // GDT entries behind the selectors: present, DPL 3, 64-bit code.
    const uint64_t code = entry_at(mem, KVMGPU_GDT_GPA, KVMGPU_USER_CODE_SELECTOR >> 3);
    EXPECT_EQ((code >> 45) & 3, 3u);
    EXPECT_TRUE(code & (1ull << 53)) << "L";
    EXPECT_EQ((entry_at(mem, KVMGPU_GDT_GPA, KVMGPU_USER_DATA_SELECTOR >> 3) >> 45) & 3, 3u);
    // Every table entry on the way to RAM and to the MMIO window has U=1.
    for (uint64_t va : {0x100000ull, KVMGPU_VGPU_GPA}) {
        uint64_t table = KVMGPU_BOOT_PML4_GPA;
        for (int shift : {39, 30, 21}) {
            const uint64_t e = entry_at(mem, table, (va >> shift) & 511);
            EXPECT_EQ(e & 7, 7u) << "present, writable, user at shift " << shift;
            table = e & 0x000ffffffffff000ull;
        }
    }
    // TSS: RSP0 is the fault stack; the I/O bitmap allows the exit port and
    // ends with its 0xff terminator right at the limit.
    EXPECT_EQ(*mem.read_obj<uint64_t>(memmap::GuestPhysAddr{KVMGPU_TSS_GPA + 4}), KVMGPU_FAULT_STACK_TOP);
    const uint16_t bitmap = *mem.read_obj<uint16_t>(memmap::GuestPhysAddr{KVMGPU_TSS_GPA + 102});
    const auto exit_bits = mem.read_obj<uint8_t>(memmap::GuestPhysAddr{KVMGPU_TSS_GPA + bitmap + KVMGPU_EXIT_PORT / 8});
    EXPECT_EQ(exit_bits, 0u);
    EXPECT_EQ(mem.read_obj<uint8_t>(memmap::GuestPhysAddr{KVMGPU_TSS_GPA + s.tr.limit}), 0xffu);
    // IDT gate 14 (#PF): ring-0 interrupt gate to stub 14, which writes 14 to the fault port.
    const uint64_t lo = entry_at(mem, KVMGPU_IDT_GPA, 28);
    const uint64_t target = (lo & 0xffff) | ((lo >> 48) & 0xffff) << 16;
    EXPECT_EQ(target, KVMGPU_FAULT_STUBS_GPA + 14 * 16);
    EXPECT_EQ((lo >> 40) & 0xff, 0x8Eu);
    // #BP's gate is DPL 3 (int3 from ring 3 raises #BP, as on Linux); the others DPL 0.
    EXPECT_EQ((entry_at(mem, KVMGPU_IDT_GPA, 6) >> 40) & 0xff, 0xEEu);
    EXPECT_EQ((entry_at(mem, KVMGPU_IDT_GPA, 26) >> 40) & 0xff, 0x8Eu);
    uint8_t stub[14];
    ASSERT_TRUE(mem.read(memmap::GuestPhysAddr{target}, stub, sizeof stub));
    EXPECT_EQ(stub[0], 0x50) << "push rax";
    EXPECT_EQ(stub[1], 0x52) << "push rdx";
    EXPECT_EQ(stub[2], 0xB8);
    EXPECT_EQ(stub[3], 14);
    EXPECT_EQ(stub[9] | stub[10] << 8, static_cast<int>(KVMGPU_FAULT_PORT));
    EXPECT_EQ(stub[11], 0xEF) << "out dx, eax";
}

// Every exception goes to the VMM's stack (IST1), not the stack in use: an
// exception in the ring-0 system-call stub, which `syscall` enters on the
// guest's own RSP (e.g. a single-step trap with TF set), was delivered on
// whatever RSP held, and a bad one made it a triple fault.
TEST(BootState, ExceptionsSwitchToTheVmmsStackWhateverRspHolds) {
    auto mem = ram(64ull << 20);
    write_boot_structures(mem, BootParams{});
    EXPECT_EQ(*mem.read_obj<uint64_t>(memmap::GuestPhysAddr{KVMGPU_TSS_GPA + 36}), KVMGPU_FAULT_STACK_TOP) << "IST1";
    for (uint64_t v = 0; v < 32; ++v) EXPECT_EQ((entry_at(mem, KVMGPU_IDT_GPA, 2 * v) >> 32) & 7, 1u) << "vector " << v;
    EXPECT_EQ(boot_exception_state_damage(mem), "");
    const uint8_t scribble[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_TRUE(mem.write(memmap::GuestPhysAddr{KVMGPU_IDT_GPA + 14 * 16}, scribble, 8));
    ASSERT_TRUE(mem.write(memmap::GuestPhysAddr{KVMGPU_TSS_GPA + 4}, scribble, 8));
    EXPECT_EQ(boot_exception_state_damage(mem), "TSS, IDT");
}

// A Linux-ABI guest runs at IOPL 0 with one port open to ring 3 (the
// system-call stub's: kvm-pvm runs the stub at CPL 3), and its
// ring 3 reaches none of the VMM's ring-0 state: with everything U=1 and
// writable, ring 3 rewrote the page tables, the IDT, the TSS's I/O bitmap
// and the system-call stub (now read-only to ring 3).
TEST(BootState, LinuxGuestsRing3GetsNoneOfTheVmmsPagesOrPorts) {
    auto mem = ram(64ull << 20);
    BootParams p;
    p.linux_abi = true;
    write_boot_structures(mem, p);
    const uint64_t low_pt = boot_page_tables(64ull << 20, true).low_pt;
    ASSERT_EQ(entry_at(mem, boot_page_tables(64ull << 20, true).first_pd, 0) & ~0xfffull, low_pt);
    constexpr uint64_t kP = 1, kW = 2, kU = 4;
    auto flags = [&](uint64_t gpa) {
        const uint64_t e = entry_at(mem, low_pt, gpa >> 12);
        if (e & kP) EXPECT_EQ(e & 0x000ffffffffff000ull, gpa & ~0xfffull) << std::hex << gpa << ": identity";
        return e & 7;
    };
    EXPECT_EQ(flags(0), 0u) << "page 0";
    EXPECT_EQ(flags(KVMGPU_BOOT_INFO_GPA), kP | kU) << "boot info: read-only";
    for (uint64_t gpa : {KVMGPU_GDT_GPA, KVMGPU_TSS_GPA, KVMGPU_IDT_GPA, KVMGPU_FAULT_STUBS_GPA})
        EXPECT_EQ(flags(gpa), kP | kW) << std::hex << gpa << ": ring 0 only";
    for (uint64_t gpa = KVMGPU_BOOT_PML4_GPA; gpa < KVMGPU_BOOT_TABLES_END; gpa += 0x1000)
        EXPECT_EQ(flags(gpa), 0u) << std::hex << gpa << ": page tables unmapped";
    EXPECT_EQ(flags(KVMGPU_CMDLINE_GPA), kP | kU);
    EXPECT_EQ(flags(KVMGPU_LINUX_SYSCALL_STUB_GPA), kP | kU) << "the stub: read-only (kvm-pvm fetches it at CPL 3)";
    for (uint64_t gpa = KVMGPU_LINUX_VVAR_GPA; gpa < KVMGPU_IMAGE_BASE; gpa += 0x1000)
        EXPECT_EQ(flags(gpa), kP | kU) << std::hex << gpa << ": clock page and vDSO read-only";
    for (uint64_t gpa = KVMGPU_IMAGE_BASE; gpa < (2ull << 20); gpa += 0x1000) EXPECT_EQ(flags(gpa), kP | kW | kU);
    // The TSS's I/O bitmap: every port closed, the exit port included, but
    // the system-call port.
    const uint16_t bitmap = *mem.read_obj<uint16_t>(memmap::GuestPhysAddr{KVMGPU_TSS_GPA + 102});
    for (uint32_t port = 0; port < KVMGPU_TSS_OPEN_PORTS; ++port) {
        const uint8_t byte = *mem.read_obj<uint8_t>(memmap::GuestPhysAddr{KVMGPU_TSS_GPA + bitmap + port / 8});
        ASSERT_EQ((byte >> (port % 8)) & 1, port == KVMGPU_LINUX_SYSCALL_PORT ? 0 : 1) << std::hex << port;
    }
}

// A Linux-ABI guest's file window (KVMGPU_LINUX_FILE_WINDOW_GPA): identity
// mapped, user, writable, executable (no NX bit), on every 2 MiB of it, with
// its directories inside the boot tables; project images have none.
TEST(BootState, LinuxGuestsFileWindowIsIdentityMappedUserRwx) {
    for (const uint64_t bytes : {64ull << 20, 3ull << 30}) {
        auto mem = ram(bytes);
        BootParams p;
        p.linux_abi = true;
        write_boot_structures(mem, p);
        const BootPageTables t = boot_page_tables(bytes, true);
        EXPECT_EQ(t.window_pds, KVMGPU_LINUX_FILE_WINDOW_SIZE >> 30);
        EXPECT_LE(t.end, KVMGPU_BOOT_TABLES_END);
        for (uint64_t off = 0; off < KVMGPU_LINUX_FILE_WINDOW_SIZE; off += 2ull << 20) {
            const uint64_t va = KVMGPU_LINUX_FILE_WINDOW_GPA + off + 0x1234;
            ASSERT_EQ(translate(mem, va), va) << std::hex << va;
            const uint64_t pdpte = entry_at(mem, t.pdpt, va >> 30);
            const uint64_t pde = entry_at(mem, pdpte & 0x000ffffffffff000ull, (va >> 21) & 511);
            ASSERT_EQ(pde & 7, 7u) << std::hex << va << ": present, writable, user";
            ASSERT_EQ(pdpte & 7, 7u);
            ASSERT_EQ(pde >> 63, 0u) << "executable";
            ASSERT_GE(pdpte & 0x000ffffffffff000ull, t.window_pd);
            ASSERT_LT(pdpte & 0x000ffffffffff000ull, t.end);
        }
        EXPECT_FALSE(translate(mem, KVMGPU_LINUX_FILE_WINDOW_GPA - 1)) << "nothing between RAM's GiB and the window";
        static_assert(KVMGPU_LINUX_FILE_WINDOW_GPA + KVMGPU_LINUX_FILE_WINDOW_SIZE == KVMGPU_MMIO_BASE,
                      "the window ends where the MMIO window starts");
    }
    auto mem = ram(64ull << 20);
    write_boot_structures(mem, BootParams{});
    EXPECT_FALSE(translate(mem, KVMGPU_LINUX_FILE_WINDOW_GPA)) << "project images: no window";
    EXPECT_EQ(boot_page_tables(64ull << 20, false).window_pds, 0u);
}

// The largest RAM the tables map still leaves a Linux-ABI guest's tables
// (and its window's) inside [PML4, KVMGPU_BOOT_TABLES_END), and ends below
// the window; one GiB more is refused.
TEST(BootState, LargestRamEndsBelowTheFileWindowWithItsTables) {
    const uint64_t max = max_boot_ram_bytes();
    EXPECT_LE(max, KVMGPU_LINUX_FILE_WINDOW_GPA);
    EXPECT_LE(boot_page_tables(max, true).end, KVMGPU_BOOT_TABLES_END);
    EXPECT_GT(boot_page_tables(max + (1ull << 30), true).end, KVMGPU_BOOT_TABLES_END);
}

} // namespace
} // namespace kvmgpu
