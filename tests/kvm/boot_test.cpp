// Boots hand-assembled guests to check each way a run can end.
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

// kvm-pvm runs non-PVM guests in KVM's instruction emulator, which has no
// SSE and is ~100x slower: these two checks describe hardware KVM only.
#define SKIP_UNDER_PVM()                                                                                  \
    if (detect_kvm_flavor().engine == "pvm")                                                              \
    GTEST_SKIP() << "kvm-pvm emulates this guest's instructions (" << detect_kvm_flavor().describe() << ")"

TEST_F(TinyGuest, SseWorksAtEntry) {
    SKIP_UNDER_PVM();
    auto r = run_code(code::sse_then_exit());
    EXPECT_TRUE(r.passed()) << to_string(r.outcome) << ": " << r.detail << "\n" << r.register_dump;
}

TEST_F(TinyGuest, GuestRunsNativelyNotEmulated) {
    SKIP_UNDER_PVM();
    // 2e8 iterations: well under a second on hardware (nested or not);
    // minutes if KVM emulated each instruction.
    auto r = run_code(code::count_down_then_exit(200000000), 20);
    ASSERT_TRUE(r.passed()) << r.detail;
    EXPECT_LT(r.timings.run_ns, 5e9) << "guest instructions appear to be emulated";
}

TEST_F(TinyGuest, TripleFaultIsReportedWithRegisters) {
    auto r = run_code(code::ud2);
    EXPECT_EQ(r.outcome, RunOutcome::TripleFault) << r.detail;
    EXPECT_NE(r.register_dump.find("rip="), std::string::npos);
}

TEST_F(TinyGuest, HaltWithoutExitIsAnError) {
    auto r = run_code(code::halt);
    EXPECT_EQ(r.outcome, RunOutcome::Halted) << r.detail;
}

TEST_F(TinyGuest, SpinningGuestTimesOut) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_code(code::spin, 0.5);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.outcome, RunOutcome::Timeout) << r.detail;
    EXPECT_LT(s, 10.0);
    EXPECT_GE(s, 0.5);
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

TEST_F(KvmTest, ImageBeyondRamIsRefused) {
    const auto path = write_temp_image(tiny_elf(code::exit_with(0), 80ull << 20), "far");
    EXPECT_THROW(VirtualMachine(*kvm_, quiet_options(path)), ImageError);
    std::remove(path.c_str());
}

} // namespace
} // namespace kvmgpu::test
