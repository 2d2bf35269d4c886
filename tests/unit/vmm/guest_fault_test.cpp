// The fault report's pieces without KVM: the page walk, the instruction
// names, and the exception frame read from a stack in guest RAM.
#include "kvmtool-gpu/vmm/guest_fault.h"

#include <gtest/gtest.h>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/vmm/boot_state.h"

namespace kvmgpu {
namespace {

memmap::GuestMemory booted_ram() {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 64ull << 20));
    write_boot_structures(mem, BootParams{});
    return mem;
}

TEST(GuestFault, WalksTheBootTablesAnd4KLeaves) {
    auto mem = booted_ram();
    EXPECT_EQ(guest_virt_to_phys(mem, KVMGPU_BOOT_PML4_GPA, 0x123456), 0x123456u);
    EXPECT_EQ(guest_virt_to_phys(mem, KVMGPU_BOOT_PML4_GPA | 0x8, 0x200000), 0x200000u) << "CR3 flag bits ignored";
    EXPECT_FALSE(guest_virt_to_phys(mem, KVMGPU_BOOT_PML4_GPA, 1ull << 39));
    // A 4 KiB leaf: PD entry 8 of GiB 0 -> a page table mapping va 16 MiB + 4K to 0x700000.
    const uint64_t pt = 0x800000;
    const uint64_t pd = *mem.read_obj<uint64_t>(memmap::GuestPhysAddr{0x4000}) & ~0xfffull;
    ASSERT_TRUE(mem.write_obj(memmap::GuestPhysAddr{pd + 8 * 8}, pt | 7));
    ASSERT_TRUE(mem.write_obj(memmap::GuestPhysAddr{pt + 8}, uint64_t{0x700000 | 7}));
    EXPECT_EQ(guest_virt_to_phys(mem, KVMGPU_BOOT_PML4_GPA, (16ull << 20) + 0x1234), 0x700234u);
    EXPECT_FALSE(guest_virt_to_phys(mem, KVMGPU_BOOT_PML4_GPA, (16ull << 20) + 0x2000)) << "PT entry 2 empty";
    // A table pointer outside RAM is unmapped, not a crash.
    ASSERT_TRUE(mem.write_obj(memmap::GuestPhysAddr{pd + 9 * 8}, uint64_t{0x7ff0000000 | 7}));
    EXPECT_FALSE(guest_virt_to_phys(mem, KVMGPU_BOOT_PML4_GPA, 18ull << 20));
}

TEST(GuestFault, NamesPrivilegedInstructions) {
    const uint8_t hlt[] = {0xF4}, ud2[] = {0x0F, 0x0B}, cr3[] = {0x0F, 0x22, 0xD8}, nop[] = {0x90}, lone[] = {0x0F};
    EXPECT_EQ(name_faulting_instruction(hlt), "HLT (privileged)");
    EXPECT_EQ(name_faulting_instruction(ud2), "UD2 (invalid opcode)");
    EXPECT_NE(name_faulting_instruction(cr3).find("control register"), std::string::npos);
    EXPECT_EQ(name_faulting_instruction(nop), "");
    EXPECT_EQ(name_faulting_instruction(lone), "");
    EXPECT_EQ(name_faulting_instruction({}), "");
}

TEST(GuestFault, PageFaultFrameNamesAddressAccessAndInstruction) {
    auto mem = booted_ram();
    const uint8_t code[] = {0x48, 0x89, 0x08}; // mov [rax], rcx
    ASSERT_TRUE(mem.write(memmap::GuestPhysAddr{0x100010}, code, sizeof code));
    // The stub's saved RDX and RAX, then what #PF pushes: error code, RIP, CS, RFLAGS, RSP, SS.
    const uint64_t frame[] = {0xdd, 0xaa, 0x6 /* write, user, not present */, 0x100010, KVMGPU_USER_CODE_SELECTOR, 0x202,
                              0x1ff000, KVMGPU_USER_DATA_SELECTOR};
    const uint64_t rsp = KVMGPU_FAULT_STACK_TOP - sizeof frame;
    ASSERT_TRUE(mem.write(memmap::GuestPhysAddr{rsp}, frame, sizeof frame));
    kvm_regs regs{};
    regs.rsp = rsp;
    kvm_sregs sregs{};
    sregs.cr3 = KVMGPU_BOOT_PML4_GPA;
    sregs.cr2 = 0x7000000000;
    const std::string s = describe_exception(mem, 14, regs, sregs);
    EXPECT_NE(s.find("#PF (page fault) at CPL3, RIP 0x100010 (bytes 48 89 08"), std::string::npos) << s;
    EXPECT_NE(s.find("accessing 0x7000000000 (write, not present)"), std::string::npos) << s;
    EXPECT_NE(s.find("RSP 0x1ff000"), std::string::npos) << s;
}

TEST(GuestFault, HostileVectorAndStackAreReportedNotFollowed) {
    auto mem = booted_ram();
    kvm_regs regs{};
    kvm_sregs sregs{};
    regs.rsp = 1ull << 40; // outside RAM
    EXPECT_NE(describe_exception(mem, 13, regs, sregs).find("frame unreadable"), std::string::npos);
    regs.rsp = 0x2f00;
    EXPECT_NE(describe_exception(mem, 0xffffffffu, regs, sregs).find("vector 4294967295"), std::string::npos);
    regs.rip = 1ull << 45; // unmapped RIP on a triple fault
    EXPECT_NE(describe_guest_fault(mem, regs, sregs).find("bytes unreadable"), std::string::npos);
}

// KVM_EXIT_SHUTDOWN used to say only where the CPU stopped; now also why
// the VMM's exception delivery could not work.
TEST(GuestFault, TripleFaultSaysWhyDeliveryFailed) {
    auto mem = booted_ram();
    kvm_regs regs{};
    regs.rip = 0x100000;
    kvm_sregs sregs = long_mode_sregs(kvm_sregs{});
    EXPECT_NE(describe_guest_fault(mem, regs, sregs).find("intact and mapped"), std::string::npos);
    const uint64_t junk = 0x4141414141414141ull;
    ASSERT_TRUE(mem.write_obj(memmap::GuestPhysAddr{KVMGPU_IDT_GPA + 13 * 16}, junk));
    EXPECT_NE(describe_guest_fault(mem, regs, sregs).find("undeliverable because the guest overwrote the VMM's IDT"),
              std::string::npos)
        << describe_guest_fault(mem, regs, sregs);
    auto fresh = booted_ram();
    sregs.cr3 = 0x800000; // a page of zeros: maps nothing
    EXPECT_NE(describe_guest_fault(fresh, regs, sregs).find("CR3 0x800000 do not map the VMM's IDT"), std::string::npos)
        << describe_guest_fault(fresh, regs, sregs);
    sregs = long_mode_sregs(kvm_sregs{});
    sregs.idt.base = 0x5000;
    EXPECT_NE(delivery_failure_reason(fresh, sregs).find("no longer names the VMM's"), std::string::npos);
}

} // namespace
} // namespace kvmgpu
