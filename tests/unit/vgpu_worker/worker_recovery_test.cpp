// Workers that die, hang or lose their backend: the command gets an error
// status within its bound, the recovery is counted once, every VM handle is
// gone, and later commands work on a fresh worker. RESET does not wait out
// a hung worker.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "tests/support/ring_vector_add.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

bool process_gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

// After a replacement: a new module, new allocations and a launch work, and
// the zero-copy window of guest RAM is live in the new worker.
void expect_usable(VgpuRig& rig) {
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn);
    expect_vector_add_through_ring(rig, fn, 1000, 1.0f);
    const uint64_t win = rig.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kDataGpa, 4096}}).r0;
    ASSERT_NE(win, 0u);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {win, 0x42, 16, 0}}).status, VGPU_SUCCESS);
    uint8_t got[16];
    rig.get(kDataGpa, got, sizeof got);
    EXPECT_EQ(got[0], 0x42);
    EXPECT_EQ(got[15], 0x42);
}

TEST(WorkerRecovery, WorkerKilledFromOutsideIsReplaced) {
    WorkerVgpu w;
    VgpuRig& rig = w.rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn);
    const uint64_t da = rig.alloc(4096);
    const pid_t pid = w.worker->worker_pid();
    ASSERT_GT(pid, 0); // never kill(-1)
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    // Not the 20 s call time-out: that would be kWorkerTimedOut.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {da, 1, 4096, 0}}).status, kWorkerDied);
    EXPECT_EQ(rig.dev->counters().recoveries, 1u);
    EXPECT_NE(w.worker->worker_pid(), pid);
    EXPECT_GT(w.worker->worker_pid(), 0);
    EXPECT_EQ(w.worker->replacements(), 1u);
    EXPECT_TRUE(process_gone(pid)) << "the dead worker was not reaped";
    // The old worker's objects are gone.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {da}}).status, VGPU_ERROR_INVALID_VALUE);
    const std::vector<std::vector<uint8_t>> stale{bytes(da), bytes(da), bytes(da), bytes(uint32_t{1})};
    EXPECT_EQ(rig.launch(fn, stale, 1, 1, 1, 1).status, VGPU_ERROR_INVALID_HANDLE);
    expect_usable(rig);
    EXPECT_EQ(rig.dev->counters().recoveries, 1u);
}

// The worker dies in a command (a crash in the driver, say): the command
// fails kWorkerDied and a new worker takes the ring.
TEST(WorkerRecovery, CrashInACommandIsReplaced) {
    WorkerFaults& faults = shared_faults();
    WorkerVgpu w(WorkerOptions{}, VgpuOptions{}, faulty_factory(faults));
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    const pid_t pid = w.worker->worker_pid();
    faults.arm(WorkerFaults::Crash);
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, kWorkerDied);
    EXPECT_NE(w.worker->worker_pid(), pid);
    EXPECT_TRUE(process_gone(pid));
    EXPECT_EQ(w.rig.dev->counters().recoveries, 1u);
    expect_usable(w.rig);
    EXPECT_NE(w.worker->describe().find("1 replaced"), std::string::npos) << w.worker->describe();
}

// The worker dies while it serves a request (RESET frees the context's
// objects after a synchronize): the VMM, waiting for the reply, sees it gone
// and replaces it rather than wait out the bound.
TEST(WorkerRecovery, CrashInARequestIsReplaced) {
    WorkerFaults& faults = shared_faults();
    WorkerVgpu w(WorkerOptions{.call_timeout = 3600s}, VgpuOptions{}, faulty_factory(faults));
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    ASSERT_NE(w.rig.alloc(4096), 0u); // something for RESET to free
    const pid_t pid = w.worker->worker_pid();
    faults.arm(WorkerFaults::Crash);
    w.rig.reset();
    EXPECT_NE(w.worker->worker_pid(), pid);
    EXPECT_TRUE(process_gone(pid));
    EXPECT_EQ(w.worker->replacements(), 1u);
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    expect_usable(w.rig);
}

TEST(WorkerRecovery, HungWorkerIsKilledAfterTheBound) {
    WorkerFaults& faults = shared_faults();
    WorkerVgpu w(WorkerOptions{.call_timeout = 300ms}, VgpuOptions{}, faulty_factory(faults));
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    const pid_t pid = w.worker->worker_pid();
    faults.arm(WorkerFaults::Hang);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, kWorkerTimedOut);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms); // the bound, not a load-dependent upper limit
    EXPECT_NE(w.worker->worker_pid(), pid);
    EXPECT_TRUE(process_gone(pid));
    EXPECT_EQ(w.rig.dev->counters().recoveries, 1u);
    expect_usable(w.rig);
}

TEST(WorkerRecovery, DestructorEndsTheWorker) {
    pid_t pid;
    {
        WorkerVgpu w;
        pid = w.worker->worker_pid();
        ASSERT_GT(pid, 0);
    }
    EXPECT_TRUE(process_gone(pid));
    WorkerFaults& faults = shared_faults();
    {
        WorkerVgpu w(WorkerOptions{.quit_timeout = 200ms}, VgpuOptions{}, faulty_factory(faults));
        ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
        pid = w.worker->worker_pid();
        faults.arm(WorkerFaults::Hang); // hung in a command: it will not answer Quit
        w.rig.post({.opcode = VGPU_OP_CTX_SYNCHRONIZE});
        w.rig.doorbell();
    }
    EXPECT_TRUE(process_gone(pid));
}

// RESET while the worker hangs in a command: the vCPU that writes RESET
// used to wait for the command's whole bound. Here the bound is an hour, so
// without the cancel this test would hang until ctest's time-out; no
// wall-clock assertion is needed.
TEST(WorkerRecovery, ResetDoesNotWaitOutAHungWorker) {
    WorkerFaults& faults = shared_faults();
    WorkerVgpu w(WorkerOptions{.call_timeout = 3600s}, VgpuOptions{}, faulty_factory(faults));
    VgpuRig& rig = w.rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const pid_t before = w.worker->worker_pid();
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
    faults.arm(WorkerFaults::Hang); // the synchronize below hangs in the worker
    rig.post({.opcode = VGPU_OP_CTX_SYNCHRONIZE});
    rig.doorbell();
    rig.reset(); // returns: the hung command is cancelled, the worker replaced
    EXPECT_NE(w.worker->worker_pid(), before);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {4096}}).status, VGPU_SUCCESS);
}

TEST(WorkerRecovery, StickyErrorTheWorkerCannotRecoverFromReplacesIt) {
    WorkerVgpu w(WorkerOptions{}, VgpuOptions{}, factory_of<UnrecoverableBackend>());
    VgpuRig& rig = w.rig;
    WorkerEngine& worker = *w.worker;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const uint64_t d = rig.alloc(4096);
    const pid_t pid = worker.worker_pid();
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 1, 16, 0}}).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(rig.dev->counters().recoveries, 1u);
    ASSERT_TRUE(new_worker_within_bound(worker, pid)) << "the supervisor did not replace the worker";
    EXPECT_TRUE(process_gone(pid));
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_NE(rig.alloc(4096), 0u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
}

} // namespace
} // namespace kvmgpu::vgpu::test
