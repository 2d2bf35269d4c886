// Boots hand-assembled guests to check each way a run can end.
#include <chrono>
#include <thread>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/kvm/kvm_flavor.h"
#include "tests/kvm/kvm_fixture.h"
#include "tests/support/tiny_elf.h"

namespace kvmgpu::test {
namespace {

RunResult boot(KvmSystem& kvm, VmOptions o) {
    VirtualMachine vm(kvm, std::move(o));
    return vm.run();
}

class TinyGuest : public KvmTest {
protected:
    RunResult run_code(const std::vector<uint8_t>& code, double timeout_s = 20) {
        const auto path = write_temp_image(tiny_elf(code), "tiny");
        auto o = quiet_options(path);
        o.timeout_s = timeout_s;
        auto r = boot(*kvm_, o);
        std::remove(path.c_str());
        return r;
    }
};

TEST_F(TinyGuest, ExitPortCarriesTheCode) {
    auto r = run_code(code::exit_with(7));
    EXPECT_EQ(r.outcome, RunOutcome::GuestExit) << r.detail;
    EXPECT_EQ(r.exit_code, 7u);
    EXPECT_FALSE(r.passed());
    r = run_code(code::exit_with(0));
    EXPECT_TRUE(r.passed()) << r.detail;
    EXPECT_EQ(r.final_regs.rax, 0u);
}

TEST_F(TinyGuest, SseWorksAtEntry) {
    auto r = run_code(code::sse_then_exit());
    EXPECT_TRUE(r.passed()) << to_string(r.outcome) << ": " << r.detail << "\n" << r.register_dump;
}

// The exit port works from ring 3: through IOPL 3 on VMX/SVM, through the
// TSS's I/O bitmap on kvm-pvm, whose ring 3 is the host's and keeps IOPL 0.
TEST_F(TinyGuest, EntersInRingThreeWithPortsOpen) {
    auto r = run_code(code::exit_with(0));
    ASSERT_TRUE(r.passed()) << r.detail;
    if (detect_kvm_flavor().engine != "pvm") {
        EXPECT_EQ(r.final_regs.rflags & (3u << 12), 3u << 12) << "IOPL 3";
    }
}

// The guest's code runs natively: KVM's emulator runs none of the loop's
// instructions (counted by KVM, not timed).
TEST_F(TinyGuest, GuestRunsNativelyNotEmulated) {
    constexpr uint32_t kLoops = 2000000;
    auto r = run_code(code::calibrate_then_exit(KVMGPU_CPU_CONTROL_GPA + KVMGPU_CPU_CONTROL_REG_CALIBRATE, kLoops));
    ASSERT_TRUE(r.passed()) << r.detail;
    ASSERT_TRUE(r.execution.measured) << "the calibration window was not seen";
    EXPECT_EQ(r.execution.loop_iterations, kLoops);
    if (!r.execution.emulated_instructions) GTEST_SKIP() << "this kernel has no KVM binary statistics";
    EXPECT_LT(*r.execution.emulated_instructions, kLoops) << r.execution.describe();
    EXPECT_FALSE(r.execution.emulated()) << r.execution.describe();
    EXPECT_EQ(r.execution.label(), "native");
}

TEST_F(TinyGuest, CalibrationWindowWithoutBeginIsIgnored) {
    auto r = run_code(code::then_exit(code::store64(KVMGPU_CPU_CONTROL_GPA + KVMGPU_CPU_CONTROL_REG_CALIBRATE, 0)));
    ASSERT_TRUE(r.passed()) << r.detail;
    EXPECT_FALSE(r.execution.measured);
    EXPECT_EQ(r.execution.label(), "not measured");
}

// Ctrl-C's path: request_stop() from another thread ends a spinning guest
// (no time-out set), before its run starts or during it.
TEST_F(TinyGuest, RequestStopEndsTheRunAsInterrupted) {
    const auto path = write_temp_image(tiny_elf(code::spin), "tiny");
    for (bool before_run : {false, true}) {
        auto o = quiet_options(path);
        o.timeout_s = 0; // none: only the stop can end it
        VirtualMachine vm(*kvm_, o);
        if (before_run) vm.request_stop();
        std::thread stopper([&] {
            if (before_run) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            vm.request_stop();
        });
        const RunResult r = vm.run();
        stopper.join();
        EXPECT_EQ(r.outcome, RunOutcome::Interrupted) << r.detail;
        EXPECT_FALSE(r.passed());
    }
    std::remove(path.c_str());
}

TEST_F(TinyGuest, Cr3LoadIsServedByTheVmm) {
    // Reload the VMM's own boot tables: the guest carries on and exits.
    auto r = run_code(code::then_exit(code::store64(KVMGPU_CPU_CONTROL_GPA, KVMGPU_BOOT_PML4_GPA), 5));
    EXPECT_EQ(r.outcome, RunOutcome::GuestExit) << r.detail;
    EXPECT_EQ(r.exit_code, 5u);
}

TEST_F(TinyGuest, Cr3OutsideRamOrMisalignedIsRefused) {
    for (uint32_t bad : {0x3001u, 0x7ffff000u}) {
        auto r = run_code(code::then_exit(code::store64(KVMGPU_CPU_CONTROL_GPA, bad)));
        EXPECT_EQ(r.outcome, RunOutcome::BadRequest) << r.detail;
        EXPECT_NE(r.detail.find("CR3"), std::string::npos) << r.detail;
    }
}

// Exceptions reach the VMM's IDT stubs (fault port) with their frame, on
// kvm-pvm and on VMX/SVM alike (where a triple fault would reset the vCPU).
TEST_F(TinyGuest, FaultIsReportedWithVectorInstructionAndRegisters) {
    auto r = run_code(code::ud2);
    EXPECT_EQ(r.outcome, RunOutcome::GuestFault) << r.detail;
    EXPECT_NE(r.register_dump.find("rip="), std::string::npos);
    EXPECT_NE(r.detail.find("#UD"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("RIP 0x100000"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("UD2"), std::string::npos) << r.detail;
}

// Ring 3 may not halt: HLT is a #GP, named as such.
TEST_F(TinyGuest, HaltIsAFaultInRingThree) {
    auto r = run_code(code::halt);
    EXPECT_EQ(r.outcome, RunOutcome::GuestFault) << r.detail;
    EXPECT_NE(r.detail.find("#GP"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("HLT (privileged)"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("CPL3"), std::string::npos) << r.detail;
}

TEST_F(TinyGuest, PageFaultNamesTheAddressAndAccess) {
    // A write far above RAM (448 GiB: nothing maps it).
    auto r = run_code(code::then_exit(code::store64(0x7000000000ull, 1)));
    EXPECT_EQ(r.outcome, RunOutcome::GuestFault) << r.detail;
    EXPECT_NE(r.detail.find("#PF"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("accessing 0x7000000000 (write, not present)"), std::string::npos) << r.detail;
}

TEST_F(TinyGuest, SpinningGuestTimesOut) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_code(code::spin, 0.5);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.outcome, RunOutcome::Timeout) << r.detail;
    EXPECT_GE(s, 0.5); // not before its time (an upper bound would depend on the machine's load)
}

// Time-outs the watchdog cannot represent mean "none": the run ends when the
// guest exits instead of hanging in the watchdog (1e19 s did, before).
TEST_F(TinyGuest, AbsurdTimeoutsDoNotHangTheVmm) {
    for (double t : {1e19, 1e300, __builtin_inf(), __builtin_nan(""), -5.0}) {
        auto r = run_code(code::exit_with(0), t);
        EXPECT_TRUE(r.passed()) << t << ": " << r.detail;
    }
}

TEST_F(TinyGuest, TwoVmsInOneProcessRunConcurrently) {
    const auto a = write_temp_image(tiny_elf(code::exit_with(3)), "vm-a");
    const auto b = write_temp_image(tiny_elf(code::exit_with(4)), "vm-b");
    VirtualMachine vm_a(*kvm_, quiet_options(a));
    VirtualMachine vm_b(*kvm_, quiet_options(b));
    RunResult ra, rb;
    std::thread t([&] { ra = vm_a.run(); });
    rb = vm_b.run();
    t.join();
    EXPECT_EQ(ra.exit_code, 3u);
    EXPECT_EQ(rb.exit_code, 4u);
    std::remove(a.c_str());
    std::remove(b.c_str());
}

TEST_F(KvmTest, BadMemorySizesAreRefusedBeforeBoot) {
    const auto path = write_temp_image(tiny_elf(code::exit_with(0)), "mem");
    auto o = quiet_options(path);
    o.ram_bytes = (64ull << 20) + 4096; // not a multiple of 2M
    EXPECT_THROW(VirtualMachine(*kvm_, o), std::invalid_argument);
    o.ram_bytes = 64ull << 20;
    o.host_pages = memmap::PageSize::k2M;
    const uint64_t free = free_huge_pages("hugepages-2048kB");
    o.ram_bytes = (free + 8) * (2ull << 20); // more than the pool holds
    try {
        VirtualMachine vm(*kvm_, o);
        ADD_FAILURE() << "a VM larger than the huge-page pool was created";
    } catch (const memmap::HugePagePoolError& e) {
        EXPECT_NE(std::string(e.what()).find("nr_hugepages"), std::string::npos) << e.what();
    }
    std::remove(path.c_str());
}

// --pages auto chose 2 MiB pages, and by the time guest RAM is mapped the
// pool cannot back it (another VMM reserved pages meanwhile): the VM comes
// up on 4 KiB pages instead of failing, and says which it got.
TEST_F(KvmTest, ChosenHugePagesFallBackWhenThePoolRunsShort) {
    const auto path = write_temp_image(tiny_elf(code::exit_with(0)), "fallback");
    auto o = quiet_options(path);
    o.host_pages = memmap::PageSize::k2M;
    o.host_pages_chosen = true;
    o.ram_bytes = (free_huge_pages("hugepages-2048kB") + 8) * (2ull << 20); // more than the pool holds
    VirtualMachine vm(*kvm_, o);
    EXPECT_EQ(vm.options().host_pages, memmap::PageSize::k4K);
    EXPECT_EQ(vm.run().exit_code, 0u);
    std::remove(path.c_str());
}

TEST_F(KvmTest, ImageBeyondRamIsRefused) {
    const auto path = write_temp_image(tiny_elf(code::exit_with(0), 80ull << 20), "far");
    EXPECT_THROW(VirtualMachine(*kvm_, quiet_options(path)), ImageError);
    std::remove(path.c_str());
}

} // namespace
} // namespace kvmgpu::test
