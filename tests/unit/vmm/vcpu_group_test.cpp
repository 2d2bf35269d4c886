// The pieces every vCPU thread shares, without KVM: a "vCPU" here is a
// VcpuFd over a memfd (its kvm_run page is plain memory; every ioctl fails,
// as a vCPU whose registers cannot be read). The group's end (first report
// wins, the watchdog's on the first vCPU, the last thread's exit code), the
// context an exit's device sees, the bus handing it to the device, and the
// fault port's end.
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/bus/bus.h"
#include "kvmtool-gpu/devices/cpu_control.h"
#include "kvmtool-gpu/devices/exit_device.h"
#include "kvmtool-gpu/vmm/fault_port.h"
#include "kvmtool-gpu/vmm/group_exit.h"
#include "kvmtool-gpu/vmm/vcpu_context.h"
#include "kvmtool-gpu/vmm/vcpu_loop.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"
#include "memmap/guest_memory.h"

namespace kvmgpu {
namespace {

std::unique_ptr<VcpuFd> memory_vcpu() {
    const int fd = memfd_create("fake-vcpu", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, 4096) != 0) throw std::runtime_error("memfd");
    return std::make_unique<VcpuFd>(UniqueFd(fd), 4096);
}

GroupEnd exit_end(uint32_t code) { return GroupEnd{RunOutcome::GuestExit, code, "exit", ""}; }

TEST(VcpuContext, AFaultCarriesTheThreadAndItsRegistersAnExitNeither) {
    auto vcpu = memory_vcpu();
    VcpuContext first(*vcpu, 1), second(*vcpu, 7);
    first.end(RunOutcome::GuestExit, "guest exited with code 3", 3);
    first.end(RunOutcome::GuestFault, "later"); // the first end stays
    auto e = first.take_end();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->outcome, RunOutcome::GuestExit);
    EXPECT_EQ(e->exit_code, 3u);
    EXPECT_EQ(e->detail, "guest exited with code 3");
    EXPECT_TRUE(e->register_dump.empty());

    second.end(RunOutcome::GuestFault, "guest fault: #GP");
    e = second.take_end();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->detail, "guest fault: #GP (thread 7)");
    EXPECT_FALSE(e->register_dump.empty());
    EXPECT_EQ(e->register_dump, vcpu->dump_state()) << "this vCPU's (here: unreadable)";

    VcpuContext third(*vcpu, 3);
    EXPECT_FALSE(third.done());
    third.exited(9);
    EXPECT_TRUE(third.done());
    EXPECT_FALSE(third.take_end()) << "a thread's exit ends no one else";
    EXPECT_EQ(third.exit_code(), 9u);
}

TEST(GroupExit, TheFirstEndWinsAndWakesOnce) {
    int woken = 0;
    GroupExit group([&] { ++woken; });
    EXPECT_FALSE(group.ended());
    group.end(GroupEnd{RunOutcome::GuestFault, 0, "thread 2 faulted", "dump"});
    group.end(exit_end(0));
    EXPECT_TRUE(group.ended());
    EXPECT_EQ(woken, 1);
    auto vcpu = memory_vcpu();
    VcpuContext first(*vcpu, 1);
    EXPECT_TRUE(group.over(first));
    const GroupEnd e = group.settle(first);
    EXPECT_EQ(e.outcome, RunOutcome::GuestFault);
    EXPECT_EQ(e.detail, "thread 2 faulted");
    EXPECT_EQ(e.register_dump, "dump");
}

TEST(GroupExit, AfterTheFirstThreadsExitTheLastThreadsCodeIsTheProcesss) {
    GroupExit group(nullptr);
    group.thread_started();
    group.thread_started();
    group.thread_left(std::nullopt); // stopped, no code
    auto vcpu = memory_vcpu();
    VcpuContext first(*vcpu, 1);
    first.exited(5);
    std::thread last([&] { group.thread_left(42); });
    const GroupEnd e = group.settle(first); // returns once no other thread lives
    last.join();
    EXPECT_EQ(e.outcome, RunOutcome::GuestExit);
    EXPECT_EQ(e.exit_code, 42u);
    EXPECT_EQ(e.detail, "guest exited with code 42 (its last thread's exit)");
}

TEST(GroupExit, AfterTheFirstThreadsExitAnotherThreadsExitGroupEndsIt) {
    GroupExit group(nullptr);
    group.thread_started();
    auto vcpu = memory_vcpu();
    VcpuContext first(*vcpu, 1);
    first.exited(0);
    std::thread other([&] { group.end(exit_end(4)); }); // still live: its exit_group decides
    const GroupEnd e = group.settle(first);
    other.join();
    EXPECT_EQ(e.exit_code, 4u);
    EXPECT_EQ(e.detail, "exit");
}

TEST(GroupExit, TheWatchdogEndsTheGroupOnTheFirstVcpuOnly) {
    auto vcpu = memory_vcpu();
    GroupExit group(nullptr);
    VcpuWatchdog watchdog(*vcpu, 0); // no time-out: only a stop request
    group.watch(watchdog, 0);
    VcpuContext first(*vcpu, 1), other(*vcpu, 2);
    EXPECT_FALSE(group.over(first));
    watchdog.interrupt();
    EXPECT_FALSE(group.over(other)) << "only the vCPU the watchdog kicks reads it";
    EXPECT_TRUE(group.over(first));
    EXPECT_TRUE(group.over(other)) << "then the group's end stops every loop";
    const GroupEnd e = group.settle(first);
    EXPECT_EQ(e.outcome, RunOutcome::Interrupted);
    EXPECT_EQ(e.detail, "stopped on request (Ctrl-C)");
    EXPECT_TRUE(e.register_dump.empty());
}

TEST(GroupExit, TheWatchdogsTimeOutIsATimeoutWithTheFirstVcpusRegisters) {
    auto vcpu = memory_vcpu();
    GroupExit group(nullptr);
    VcpuWatchdog watchdog(*vcpu, 0.001);
    group.watch(watchdog, 0.001);
    VcpuContext first(*vcpu, 1);
    while (!watchdog.fired()) std::this_thread::yield(); // ctest's time-out bounds this
    EXPECT_TRUE(group.over(first));
    const GroupEnd e = group.settle(first);
    EXPECT_EQ(e.outcome, RunOutcome::Timeout);
    EXPECT_EQ(e.detail, "guest did not exit within 0.0 s (--timeout)");
    EXPECT_FALSE(e.register_dump.empty());
}

// Records which of the two accesses reached it.
struct ContextProbe : BusDevice {
    uint32_t plain = 0, from_tid = 0;
    std::string_view name() const override { return "context-probe"; }
    void read(uint64_t, std::span<uint8_t>) override { ++plain; }
    void write(uint64_t, std::span<const uint8_t>) override { ++plain; }
    void vcpu_write(uint64_t, std::span<const uint8_t>, VcpuContext& ctx) override { from_tid = ctx.tid(); }
};

TEST(Bus, HandsTheVcpuToTheDeviceWithItsAccess) {
    Bus pio("pio");
    auto probe = std::make_shared<ContextProbe>();
    pio.claim(0x80, 4, probe);
    auto vcpu = memory_vcpu();
    VcpuContext ctx(*vcpu, 3);
    const uint8_t byte[1] = {1};
    EXPECT_TRUE(pio.write(0x81, byte, &ctx));
    EXPECT_EQ(probe->from_tid, 3u);
    EXPECT_EQ(probe->plain, 0u);
    uint8_t in[1] = {};
    EXPECT_TRUE(pio.read(0x81, in, &ctx)); // not overridden: the plain read
    EXPECT_TRUE(pio.write(0x81, byte));
    EXPECT_EQ(probe->plain, 2u);
}

TEST(FaultPort, AVectorEndsTheRunAndAStrayByteDoesNot) {
    memmap::GuestMemory memory;
    FaultPort port(memory, nullptr);
    auto vcpu = memory_vcpu();
    VcpuContext ctx(*vcpu, 1);
    const uint8_t stray[1] = {13};
    port.vcpu_write(0, stray, ctx);
    EXPECT_FALSE(ctx.done()) << "only an aligned 4-byte write counts";
    const uint32_t vector = 13;
    uint8_t bytes[4];
    std::memcpy(bytes, &vector, 4);
    port.vcpu_write(0, bytes, ctx);
    auto e = ctx.take_end();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->outcome, RunOutcome::GuestFault);
    EXPECT_EQ(e->detail, "guest fault, vector 13") << "registers unreadable: the vector alone";
}

TEST(VcpuLoop, AFailingKvmRunEndsTheGroupAndAnEndedGroupRunsNothing) {
    Bus pio("pio"), mmio("mmio");
    memmap::GuestMemory memory;
    GroupExit group(nullptr);
    ExitDevice exit_port;
    CpuControl cpu_control;
    auto vcpu = memory_vcpu();
    ExecutionProbe execution(KvmStatsReader("no statistics in this test"));
    const VcpuLoop loop(VcpuLoop::Env{pio, mmio, memory, group, exit_port, cpu_control, execution, nullptr});
    VcpuContext first(*vcpu, 1);
    loop.run(first); // KVM_RUN on a memfd: ENOTTY
    ASSERT_TRUE(group.ended());
    const GroupEnd e = group.settle(first);
    EXPECT_EQ(e.outcome, RunOutcome::Unexpected);
    EXPECT_NE(e.detail.find("KVM_RUN"), std::string::npos) << e.detail;
    EXPECT_EQ(first.exits.total, 0u);
    VcpuContext second(*vcpu, 2);
    loop.run(second);
    EXPECT_FALSE(second.done()) << "the group had ended: no KVM_RUN, no end of its own";
}

} // namespace
} // namespace kvmgpu
