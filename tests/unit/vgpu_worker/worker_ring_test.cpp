// The worker owns the ring, whatever the doorbell: it consumes the ring in
// guest RAM itself, so commands cross no process boundary; the VMM only
// supervises. A dead worker, a command that hangs, a backend lost for good
// and a broken ring are each noticed and answered, and the guest carries on.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/device_walk_cases.h"
#include "tests/support/forwarding_backend.h"
#include "tests/support/ring_vector_add.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

class WorkerRing : public ::testing::TestWithParam<DoorbellMode> {
protected:
    VgpuOptions opts() const { return VgpuOptions{.doorbell = GetParam(), .poll_spin_us = 20, .poll_sleep_us = 100}; }
};

TEST_P(WorkerRing, CommandsCrossNoProcessBoundary) {
    WorkerVgpu w(WorkerOptions{}, opts());
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    const uint64_t sent = w.worker->messages();
    uint64_t fn = 0;
    w.rig.module_with("vector_add", &fn);
    expect_vector_add_through_ring(w.rig, fn, 3000, 0.5f);
    const Done name = w.rig.call({.opcode = VGPU_OP_DEVICE_GET_NAME, .args = {0}});
    ASSERT_EQ(name.status, VGPU_SUCCESS);
    EXPECT_NE(name.payload[0], 0) << "the worker wrote the payload into the slot";
    EXPECT_EQ(w.worker->messages(), sent) << "a command was sent as a message";
    EXPECT_GE(w.rig.dev->counters().commands, 9u);
    walk_moves_the_right_bytes(w.rig);
    walk_refuses_bad_lists(w.rig);
    EXPECT_EQ(w.worker->messages(), sent);
}

TEST_P(WorkerRing, ResetAndEnableAgain) {
    WorkerVgpu w(WorkerOptions{}, VgpuOptions{.doorbell = GetParam(), .device_mem_quota = 1 << 20});
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    const uint64_t d = w.rig.alloc(1 << 20);
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {4096}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    w.rig.reset(); // reaches the consuming worker
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_NE(w.rig.alloc(1 << 20), 0u) << "the quota came back";
}

TEST_P(WorkerRing, BrokenRingIsReported) {
    WorkerVgpu w(WorkerOptions{}, opts());
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    ASSERT_EQ(w.rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
    w.rig.set_producer(w.rig.consumer() + kRingEntries + 1);
    w.rig.doorbell();
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!(w.rig.reg_read32(VGPU_REG_STATUS) & VGPU_STATUS_BROKEN) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    EXPECT_TRUE(w.rig.reg_read32(VGPU_REG_STATUS) & VGPU_STATUS_BROKEN);
    EXPECT_EQ(w.rig.dev->counters().broken, 1u);
    w.rig.reset();
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
}

// After a replacement the new worker consumes the ring and work goes on.
void expect_consumed_and_usable(VgpuRig& rig, WorkerEngine& worker) {
    // A NOP completes only once the new worker consumes the ring: the
    // messages that set it up (sent while the failed command completed)
    // are all sent by then.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
    const uint64_t sent = worker.messages();
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn);
    expect_vector_add_through_ring(rig, fn, 1000, 1.0f);
    EXPECT_EQ(worker.messages(), sent) << "the new worker does not consume the ring";
}

// A worker that dies in the middle of a memset (the command in hand). A kill
// from outside could land before the command is posted, and the supervisor
// would then replace the worker with no command in hand.
class DyingBackend final : public ForwardingBackend {
public:
    Status memset(uint64_t, uint32_t, uint32_t, uint64_t, BackendStream, bool) override {
        raise(SIGKILL);
        return VGPU_ERROR_UNKNOWN;
    }
};

TEST_P(WorkerRing, DeadWorkerIsReplacedAndTheCommandInHandFails) {
    WorkerVgpu w(WorkerOptions{}, opts(), factory_of<DyingBackend>());
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    const uint64_t d = w.rig.alloc(4096);
    const pid_t pid = w.worker->worker_pid();
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 1, 16, 0}}).status, kWorkerDied);
    EXPECT_EQ(w.rig.dev->counters().recoveries, 1u);
    EXPECT_NE(w.worker->worker_pid(), pid);
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_ERROR_INVALID_VALUE);
    expect_consumed_and_usable(w.rig, *w.worker);
}

// A memset that never returns.
class HangingBackend final : public ForwardingBackend {
public:
    Status memset(uint64_t, uint32_t, uint32_t, uint64_t, BackendStream, bool) override {
        for (;;) pause();
    }
};

TEST_P(WorkerRing, HungCommandIsKilledAfterTheBound) {
    WorkerVgpu w(WorkerOptions{.call_timeout = 300ms}, opts(), factory_of<HangingBackend>());
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    const uint64_t d = w.rig.alloc(4096);
    const pid_t pid = w.worker->worker_pid();
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 1, 16, 0}}).status, kWorkerTimedOut);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms); // the bound, not a load-dependent upper limit
    EXPECT_NE(w.worker->worker_pid(), pid);
    EXPECT_EQ(w.rig.dev->counters().recoveries, 1u);
    expect_consumed_and_usable(w.rig, *w.worker);
}

TEST_P(WorkerRing, StickyErrorReplacesTheWorker) {
    WorkerVgpu w(WorkerOptions{}, opts(), factory_of<UnrecoverableBackend>());
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    const uint64_t d = w.rig.alloc(4096);
    const pid_t pid = w.worker->worker_pid();
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 1, 16, 0}}).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    // The VMM notices at its next look: the next command runs on a new worker.
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_NE(w.worker->worker_pid(), pid);
    EXPECT_EQ(w.rig.dev->counters().recoveries, 1u);
    expect_consumed_and_usable(w.rig, *w.worker);
}

// Every doorbell: a worker of each consumes the ring and wakes on its kick.
INSTANTIATE_TEST_SUITE_P(Doorbells, WorkerRing,
                         ::testing::Values(DoorbellMode::Adaptive, DoorbellMode::Trap, DoorbellMode::Ioeventfd,
                                           DoorbellMode::Poll),
                         [](const auto& info) { return std::string(to_string(info.param)); });

} // namespace
} // namespace kvmgpu::vgpu::test
