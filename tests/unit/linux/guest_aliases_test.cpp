// Aliases without KVM: the page-table entries they add (walked here as the
// CPU would), the tables they take, every refusal, and the system call's
// checks and UserMemory's reach through them.
#include <sys/syscall.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/vmm/boot_state.h"
#include "kvmtool-gpu/vmm/linux/guest_aliases.h"
#include "kvmtool-gpu/vmm/linux/syscall_server.h"
#include "memmap/backing.h"

namespace kvmgpu::linux_abi {
namespace {

constexpr uint64_t kMiB = 1ull << 20, k2M = 2 * kMiB, kRam = 64 * kMiB;

struct Aliases : ::testing::Test {
    memmap::GuestMemory mem;
    void SetUp() override {
        mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRam));
        BootParams p;
        p.linux_abi = true;
        write_boot_structures(mem, p);
    }
    uint64_t entry(uint64_t table, uint64_t index) {
        return *mem.read_obj<uint64_t>(memmap::GuestPhysAddr{table + index * 8});
    }
    // The CPU's walk: the guest-physical address va reaches, or ~0 when not present.
    uint64_t walk(uint64_t va) {
        uint64_t t = KVMGPU_BOOT_PML4_GPA;
        for (int level = 3; level >= 1; --level) {
            const uint64_t e = entry(t, (va >> (12 + 9 * level)) & 511);
            if (!(e & 1)) return ~0ull;
            if (level == 1 || (e & 0x80)) {
                EXPECT_TRUE(e & 0x80) << "a 2 MiB page";
                EXPECT_EQ(e & 7, 7u) << "present, writable, user";
                return (e & 0x000FFFFFFFE00000ull) + (va & (k2M - 1));
            }
            t = e & 0x000FFFFFFFFFF000ull;
        }
        return ~0ull;
    }
};

TEST_F(Aliases, MapsUnderTheBootPdptAndInANewPml4Slot) {
    const uint64_t lo = boot_tables_end(kRam, true);
    GuestAliases a(mem, lo, KVMGPU_BOOT_TABLES_END);
    ASSERT_EQ(a.map(64ull << 30, 8 * kMiB, 2 * k2M), 0);
    EXPECT_EQ(walk((64ull << 30) + 12345), 8 * kMiB + 12345);
    EXPECT_EQ(walk((64ull << 30) + k2M + 7), 8 * kMiB + k2M + 7);
    EXPECT_EQ(walk((64ull << 30) + 2 * k2M), ~0ull) << "nothing past the alias";
    ASSERT_EQ(a.map(0x7f0000000000ull, 12 * kMiB, k2M), 0);
    EXPECT_EQ(walk(0x7f0000000000ull + 99), 12 * kMiB + 99);
    EXPECT_EQ(walk(16 * kMiB), 16 * kMiB) << "the identity map is untouched";
    // One PD for the first; a PDPT and a PD for the second, taken in order from lo.
    EXPECT_EQ(entry(KVMGPU_BOOT_PML4_GPA, 0x7f0000000000ull >> 39) & ~0xFFFull, lo + 0x1000);
    EXPECT_EQ(a.physical((64ull << 30) + k2M, k2M), 8 * kMiB + k2M);
    EXPECT_FALSE(a.physical((64ull << 30) + k2M, k2M + 1)) << "runs past the alias";
    EXPECT_FALSE(a.physical(8 * kMiB, 1)) << "RAM is not an alias";
    EXPECT_EQ(a.count(), 2u);
}

TEST_F(Aliases, RefusesWhatIsNotItsToMap) {
    GuestAliases a(mem, boot_tables_end(kRam, true), KVMGPU_BOOT_TABLES_END);
    EXPECT_EQ(a.map((64ull << 30) + 4096, 8 * kMiB, k2M), EINVAL);
    EXPECT_EQ(a.map(64ull << 30, 8 * kMiB + 4096, k2M), EINVAL);
    EXPECT_EQ(a.map(64ull << 30, 8 * kMiB, 4096), EINVAL);
    EXPECT_EQ(a.map(64ull << 30, 8 * kMiB, 0), EINVAL);
    EXPECT_EQ(a.map(1ull << 47, 8 * kMiB, k2M), EINVAL);
    EXPECT_EQ(a.map((1ull << 47) - k2M, 8 * kMiB, 2 * k2M), EINVAL);
    EXPECT_EQ(a.map(~0ull - k2M + 1, 8 * kMiB, 2 * k2M), EINVAL);
    EXPECT_EQ(a.map(32 * kMiB, 8 * kMiB, k2M), EEXIST) << "inside RAM, the stack guard's hole included";
    EXPECT_EQ(a.map(kRam + k2M, 8 * kMiB, k2M), EEXIST) << "the identity map's last GiB, past RAM";
    EXPECT_EQ(a.map(KVMGPU_MMIO_BASE, 8 * kMiB, k2M), EEXIST) << "the MMIO window";
    EXPECT_EQ(a.map(64ull << 30, kRam - k2M, 2 * k2M), EFAULT) << "past RAM";
    ASSERT_EQ(a.map(64ull << 30, 8 * kMiB, 2 * k2M), 0);
    EXPECT_EQ(a.map((64ull << 30) + k2M, 20 * kMiB, k2M), EEXIST) << "over an alias";
    EXPECT_EQ(walk((64ull << 30) + k2M), 8 * kMiB + k2M) << "a refusal changes nothing";
}

TEST_F(Aliases, RunsOutOfTablesWithEnomem) {
    const uint64_t lo = boot_tables_end(kRam, true);
    GuestAliases one_table(mem, lo, lo + 0x1000);
    EXPECT_EQ(one_table.map(0x7f0000000000ull, 8 * kMiB, k2M), ENOMEM) << "needs a PDPT and a PD";
    EXPECT_EQ(walk(0x7f0000000000ull), ~0ull) << "nothing half made";
    ASSERT_EQ(one_table.map(64ull << 30, 8 * kMiB, k2M), 0) << "one PD is enough here";
    EXPECT_EQ(one_table.map(65ull << 30, 8 * kMiB, k2M), ENOMEM);
}

TEST_F(Aliases, RunsOutOfSlotsWithEnomem) {
    GuestAliases a(mem, boot_tables_end(kRam, true), KVMGPU_BOOT_TABLES_END);
    for (uint64_t i = 0; i < GuestAliases::kMaxAliases; ++i)
        ASSERT_EQ(a.map((66ull << 30) + i * k2M, 8 * kMiB, k2M), 0) << i;
    EXPECT_EQ(a.map(80ull << 30, 8 * kMiB, k2M), ENOMEM) << "every slot taken";
}

// Guest RAM outside the VMM's tables, as bytes: what an alias must never write.
std::vector<uint8_t> ram_outside(const memmap::GuestMemory& mem, uint64_t tables_lo, uint64_t tables_hi) {
    std::vector<uint8_t> bytes(mem.total_bytes());
    EXPECT_TRUE(mem.read(memmap::GuestPhysAddr{0}, bytes.data(), bytes.size()));
    std::fill(bytes.begin() + KVMGPU_BOOT_PML4_GPA, bytes.begin() + KVMGPU_BOOT_PML4_GPA + 0x1000, 0); // the boot PML4
    std::fill(bytes.begin() + KVMGPU_BOOT_PML4_GPA + 0x1000, bytes.begin() + KVMGPU_BOOT_PML4_GPA + 0x2000, 0); // its PDPT
    std::fill(bytes.begin() + tables_lo, bytes.begin() + tables_hi, 0);
    return bytes;
}

// Ring 3 could write the page tables (or a device could), and the alias
// code walked them: an entry of the guest's making sent the VMM's writes
// into ordinary guest RAM (and a "PDPT" pointing back at itself made the
// VMM's own large-page write turn an entry the walk used next into a leaf:
// an empty std::optional dereferenced). Here a planted PML4 entry leads to
// a "PDPT" and a "PD" in the guest's RAM.
TEST_F(Aliases, GuestMadeEntriesNeverSteerTheVmmsWrites) {
    const uint64_t lo = boot_tables_end(kRam, true), hi = KVMGPU_BOOT_TABLES_END;
    const uint64_t fake_pdpt = 8 * kMiB, fake_pd = fake_pdpt + 0x1000, slot = 5;
    const uint64_t to_pdpt = fake_pdpt | 7, to_pd = fake_pd | 7;
    mem.write(memmap::GuestPhysAddr{KVMGPU_BOOT_PML4_GPA + slot * 8}, &to_pdpt, 8);
    mem.write(memmap::GuestPhysAddr{fake_pdpt}, &to_pd, 8);
    const auto before = ram_outside(mem, lo, hi);
    GuestAliases a(mem, lo, hi);
    const uint64_t va = slot << 39;
    ASSERT_EQ(a.map(va, 16 * kMiB, 2 * k2M), 0);
    EXPECT_TRUE(ram_outside(mem, lo, hi) == before) << "no byte of the guest's RAM outside the tables changed";
    EXPECT_EQ(walk(va + 5), 16 * kMiB + 5);
    EXPECT_EQ(walk(va + k2M + 5), 16 * kMiB + k2M + 5);
    EXPECT_EQ(entry(KVMGPU_BOOT_PML4_GPA, slot) & ~0xFFFull, lo) << "a PDPT of the VMM's replaced the planted one";
}

// A count made before the walk is worth nothing when the guest can change
// the tables (a second vCPU between the two walks; here: the VMM's own
// zeroing of a table page the guest had pointed an entry at). The VMM took
// a table page past its area, and its bound check then wrapped.
TEST_F(Aliases, TablesComeOnlyFromTheAreaWhateverTheGuestWrote) {
    const uint64_t lo = boot_tables_end(kRam, true), hi = lo + 2 * 0x1000;
    const uint64_t slot = 9, fake_pd = 8 * kMiB;
    const uint64_t to_next_free = lo | 7, to_fake_pd = fake_pd | 7;
    mem.write(memmap::GuestPhysAddr{KVMGPU_BOOT_PML4_GPA + slot * 8}, &to_next_free, 8); // slot 9 -> the next free page
    mem.write(memmap::GuestPhysAddr{lo}, &to_fake_pd, 8);                               // ... whose entry 0 -> RAM
    const auto before = ram_outside(mem, lo, hi);
    GuestAliases a(mem, lo, hi);
    const uint64_t va = (slot << 39) - k2M; // the last 2 MiB of slot 8, the first of slot 9
    EXPECT_EQ(a.map(va, 16 * kMiB, 2 * k2M), ENOMEM) << "two new PDPTs and two PDs do not fit two pages";
    EXPECT_TRUE(ram_outside(mem, lo, hi) == before) << "nothing written outside the area (the command line, the stub...)";
    ASSERT_EQ(a.map((8ull << 39) - k2M, 16 * kMiB, k2M), 0) << "a PDPT and a PD: the whole area";
    EXPECT_EQ(a.map(64ull << 30, 16 * kMiB, k2M), ENOMEM) << "the area is used up: no bound wraps";
    EXPECT_TRUE(ram_outside(mem, lo, hi) == before);
}

// The first 2 MiB hold the VMM's boot structures, which the guest reaches
// only as the boot tables allow (its own pages are above 1 MiB): no alias
// gives a second, writable name to them.
TEST_F(Aliases, TheBootAreaGetsNoSecondName) {
    GuestAliases a(mem, boot_tables_end(kRam, true), KVMGPU_BOOT_TABLES_END);
    EXPECT_EQ(a.map(64ull << 30, 0, k2M), EFAULT);
    EXPECT_EQ(a.map(64ull << 30, 0, 2 * k2M), EFAULT);
    EXPECT_EQ(a.map(64ull << 30, k2M, k2M), 0);
}

TEST(AliasSyscall, OnlyRamAndItsPointersReachThrough) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRam));
    BootParams p;
    p.linux_abi = true;
    write_boot_structures(mem, p);
    ProcessLayout l;
    l.managed_lo = 1 * kMiB;
    l.managed_hi = 56 * kMiB;
    l.brk_start = 4 * kMiB;
    l.stack_lo = 58 * kMiB;
    l.stack_top = kRam;
    l.unmapped = {{0, 4096}, {56 * kMiB, 58 * kMiB}};
    l.alias_tables_lo = boot_tables_end(kRam, true);
    l.alias_tables_hi = KVMGPU_BOOT_TABLES_END;
    std::string console;
    ServerOptions o;
    o.console_text = [&](std::string_view t) { console.append(t); };
    SyscallServer server(mem, l, o);
    CpuState cpu;
    auto call = [&](uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2) {
        SyscallCall c;
        c.nr = nr;
        c.arg[0] = a0;
        c.arg[1] = a1;
        c.arg[2] = a2;
        return server.serve(c, cpu).ret;
    };
    EXPECT_EQ(call(KVMGPU_LINUX_SYS_ALIAS, 64ull << 30, 16 * kMiB, 0), -EINVAL);
    EXPECT_EQ(call(KVMGPU_LINUX_SYS_ALIAS, 64ull << 30, kRam, k2M), -EFAULT) << "past RAM";
    EXPECT_EQ(call(KVMGPU_LINUX_SYS_ALIAS, 64ull << 30, kRam - k2M, 2 * k2M), -EFAULT) << "runs past RAM";
    ASSERT_EQ(call(KVMGPU_LINUX_SYS_ALIAS, 64ull << 30, 16 * kMiB, k2M), 0);
    mem.write(memmap::GuestPhysAddr{16 * kMiB + 100}, "through\n", 8);
    EXPECT_EQ(call(SYS_write, 1, (64ull << 30) + 100, 8), 8);
    EXPECT_EQ(console, "through\n");
    EXPECT_EQ(call(SYS_write, 1, (64ull << 30) + k2M - 4, 8), -EFAULT) << "runs past the alias";
    EXPECT_EQ(syscall_name(KVMGPU_LINUX_SYS_ALIAS), "kvmgpu_alias");
}

} // namespace
} // namespace kvmgpu::linux_abi
