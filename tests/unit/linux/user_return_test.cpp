// The ring-3 state a system call returns to (user_return.h), and what a
// Linux-ABI process's system calls may reach of the VMM's first MiB, with
// a real LinuxProcess layout (no KVM: the server is driven directly).
#include "kvmtool-gpu/vmm/linux/user_return.h"

#include <elf.h>
#include <sys/syscall.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/vmm/linux/linux_process.h"
#include "memmap/backing.h"
#include "tests/support/tiny_elf.h"

namespace kvmgpu::linux_abi {
namespace {

constexpr uint64_t kIf = 1ull << 9, kTf = 1ull << 8, kIopl = 3ull << 12, kNt = 1ull << 14, kRf = 1ull << 16,
                   kVm = 1ull << 17, kAc = 1ull << 18, kVif = 1ull << 19, kVip = 1ull << 20, kId = 1ull << 21;

// R11 went back into RFLAGS with only RF and VM removed: ring 3 got IOPL 3
// (CLI, STI and every port) or NT back from a system call.
TEST(UserReturn, RflagsKeepOnlyWhatRing3MayChange) {
    EXPECT_EQ(user_rflags(~0ull), 0xCD5ull | kTf | kIf | kAc | kId | 2) << "arithmetic flags, TF, DF, AC, ID";
    EXPECT_EQ(user_rflags(0), kIf | 2) << "IF and bit 1 always set";
    for (uint64_t privileged : {kIopl, kNt, kRf, kVm, kVif, kVip})
        EXPECT_EQ(user_rflags(privileged | 0x202) & privileged, 0u) << std::hex << privileged;
    EXPECT_EQ(kUserRflags & kIopl, 0u) << "IOPL 0 from the first instruction";
}

// RCX went into RIP unchecked; a non-canonical one is where Linux falls back
// to IRET and the process gets SIGSEGV.
TEST(UserReturn, OnlyLowerHalfAddressesAreReturnedTo) {
    EXPECT_EQ(user_return_refusal(0x401000), "");
    EXPECT_EQ(user_return_refusal((1ull << 47) - 1), "");
    EXPECT_NE(user_return_refusal(1ull << 47).find("0x800000000000 (RCX) is not a canonical user address"),
              std::string::npos);
    EXPECT_NE(user_return_refusal(0xffff800000000000ull), "") << "canonical, but the kernel's half";
}

struct Process : ::testing::Test {
    memmap::GuestMemory mem;
    std::unique_ptr<LinuxProcess> process;
    void SetUp() override {
        mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 64ull << 20));
        // One PT_LOAD from file offset 0, so it holds the program headers (AT_PHDR), as ld lays one out.
        std::vector<uint8_t> elf = test::tiny_elf({0xCC}, 0x400078);
        Elf64_Phdr ph;
        std::memcpy(&ph, &elf[test::kPhdrOffset], sizeof ph);
        ph.p_offset = 0;
        ph.p_vaddr = ph.p_paddr = 0x400000;
        ph.p_filesz = ph.p_memsz = elf.size();
        std::memcpy(&elf[test::kPhdrOffset], &ph, sizeof ph);
        LinuxGuestOptions o;
        process = std::make_unique<LinuxProcess>(ImageBytes(elf), mem, "/prog", o, BootParams{}, 0,
                                                 [](std::string_view) {});
    }
    std::vector<uint8_t> first_mib() {
        std::vector<uint8_t> b(KVMGPU_IMAGE_BASE);
        EXPECT_TRUE(mem.read(memmap::GuestPhysAddr{0}, b.data(), b.size()));
        return b;
    }
};

// System calls wrote wherever a pointer said in guest RAM, the VMM's own
// pages included: getrandom over the IDT, clock_gettime into the PML4, a
// read over the stub. Random calls then ended in a triple fault.
TEST_F(Process, SystemCallsNeverWriteTheVmmsPages) {
    const auto before = first_mib();
    CpuState cpu;
    auto call = [&](uint64_t nr, uint64_t a0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0) {
        SyscallCall c;
        c.nr = nr;
        c.arg[0] = a0, c.arg[1] = a1, c.arg[2] = a2, c.arg[3] = a3;
        return process->server().serve(c, cpu).ret;
    };
    EXPECT_EQ(call(SYS_getrandom, KVMGPU_IDT_GPA, 64, 0), -EFAULT);
    EXPECT_EQ(call(SYS_clock_gettime, 0, KVMGPU_BOOT_PML4_GPA), -EFAULT);
    EXPECT_EQ(call(SYS_uname, KVMGPU_LINUX_SYSCALL_STUB_GPA), -EFAULT);
    EXPECT_EQ(call(SYS_getrandom, KVMGPU_BOOT_INFO_GPA, 8, 0), -EFAULT) << "read-only to ring 3, so to its calls";
    EXPECT_EQ(call(SYS_write, 1, KVMGPU_LINUX_VDSO_GPA, 4), -EFAULT);
    EXPECT_EQ(call(SYS_getrandom, KVMGPU_IMAGE_BASE - 4, 8, 0), -EFAULT) << "straddling the image base";
    // Random served calls (none that blocks or ends the process), pointers
    // aimed at every page of the first MiB and around it.
    const uint64_t served[] = {SYS_read, SYS_write, SYS_pread64, SYS_readv, SYS_writev, SYS_fstat, SYS_newfstatat,
                               SYS_uname, SYS_getrandom, SYS_clock_gettime, SYS_clock_getres, SYS_gettimeofday,
                               SYS_time, SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_prlimit64, SYS_getrlimit,
                               SYS_sched_getaffinity, SYS_arch_prctl, SYS_set_tid_address, SYS_getcwd,
                               SYS_readlink, SYS_mmap, SYS_mprotect, SYS_madvise, SYS_brk, KVMGPU_LINUX_SYS_ALIAS};
    std::mt19937_64 rng(40);
    auto value = [&]() -> uint64_t {
        switch (rng() % 4) {
        case 0: return (rng() % (KVMGPU_IMAGE_BASE / 8)) * 8; // in the first MiB
        case 1: return rng() % 64;
        case 2: return 0x1000 * (rng() % 0x100) + (rng() % 2 ? 0 : 0xff8);
        default: return rng();
        }
    };
    for (int i = 0; i < 20000; ++i) {
        SyscallCall c;
        c.nr = served[rng() % std::size(served)];
        for (auto& a : c.arg) a = value();
        if (c.nr == SYS_arch_prctl) c.arg[0] = 0x1003 + rng() % 2; // ARCH_GET_FS / _GS: writes
        process->server().serve(c, cpu);
    }
    EXPECT_TRUE(first_mib() == before) << "the VMM's first MiB is exactly as written at boot";
}

} // namespace
} // namespace kvmgpu::linux_abi
