// Workers that die, hang or are sent too much: the call gets an error
// status within its bound, recover_from() reports the replacement once, and
// later calls work on a fresh worker. Also the whole device model on top.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "tests/support/get_function.h"
#include "tests/unit/vgpu/ring_vector_add.h"
#include "tests/unit/vgpu/vgpu_rig.h"
#include "worker_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

// After a replacement: new allocations, a new module and a launch work, and
// guest RAM is registered in the new worker.
void expect_usable(WorkerRig& w) {
    EXPECT_NE(w.be->guest_ram_device_address(w.at(0)), 0u);
    const BackendFunction fn = load_vector_add(*w.be);
    const uint32_t n = 300;
    std::vector<float> a(n, 1.5f), b(n, 2.0f), c(n);
    std::memcpy(w.at(0), a.data(), n * 4);
    std::memcpy(w.at(4096), b.data(), n * 4);
    const uint64_t da = upload(*w.be, w.at(0), n * 4), db = upload(*w.be, w.at(4096), n * 4);
    uint64_t dc = 0;
    ASSERT_EQ(w.be->mem_alloc(n * 4, &dc), VGPU_SUCCESS);
    ASSERT_EQ(vector_add(*w.be, fn, da, db, dc, n), VGPU_SUCCESS);
    ASSERT_EQ(w.be->memcpy_dtoh(c.data(), dc, n * 4, 0, false), VGPU_SUCCESS);
    for (float v : c) ASSERT_EQ(v, 3.5f);
}

bool process_gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

TEST(RemoteRecovery, WorkerKilledFromOutsideIsReplaced) {
    WorkerRig w;
    uint64_t old = 0;
    ASSERT_EQ(w.be->mem_alloc(4096, &old), VGPU_SUCCESS);
    const pid_t pid = w.be->worker_pid();
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    uint64_t d = 0;
    EXPECT_EQ(w.be->mem_alloc(4096, &d), kWorkerDied); // not a 20 s call time-out: that would be TIMEOUT
    EXPECT_TRUE(w.be->recover_from(kWorkerDied));
    EXPECT_FALSE(w.be->recover_from(VGPU_ERROR_INVALID_VALUE)) << "reported once";
    EXPECT_NE(w.be->worker_pid(), pid);
    EXPECT_GT(w.be->worker_pid(), 0);
    EXPECT_EQ(w.be->replacements(), 1u);
    EXPECT_TRUE(process_gone(pid)) << "the dead worker was not reaped";
    EXPECT_EQ(w.be->mem_free(old), VGPU_ERROR_INVALID_VALUE); // the old worker's objects are gone
    expect_usable(w);
}

TEST(RemoteRecovery, InjectedCrashIsReplaced) {
    WorkerRig w;
    const pid_t pid = w.be->worker_pid();
    EXPECT_EQ(w.be->inject_fault(WorkerFault::Crash), kWorkerDied);
    EXPECT_TRUE(w.be->recover_from(kWorkerDied));
    EXPECT_NE(w.be->worker_pid(), pid);
    expect_usable(w);
    EXPECT_NE(w.be->describe().find("1 replaced"), std::string::npos) << w.be->describe();
}

TEST(RemoteRecovery, HungWorkerIsKilledAfterTheBound) {
    WorkerRig w(RemoteBackendOptions{.call_timeout = 300ms});
    const pid_t pid = w.be->worker_pid();
    ASSERT_EQ(w.be->inject_fault(WorkerFault::HangNextCall), VGPU_SUCCESS);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(w.be->ctx_synchronize(), kWorkerTimedOut);
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(took, 300ms); // the bound, not a load-dependent upper limit
    EXPECT_TRUE(w.be->recover_from(kWorkerTimedOut));
    EXPECT_NE(w.be->worker_pid(), pid);
    EXPECT_TRUE(process_gone(pid));
    expect_usable(w);
}

TEST(RemoteRecovery, DataBiggerThanTheChannelIsRefusedOrSplit) {
    WorkerRig w(RemoteBackendOptions{.data_bytes = 64 << 10});
    const pid_t pid = w.be->worker_pid();
    BackendModule m = 0;
    std::vector<uint8_t> image(64 << 10, 0x90);
    EXPECT_EQ(w.be->module_load(image, &m), VGPU_ERROR_INVALID_VALUE); // no room for the NUL after it
    image.resize((64 << 10) - 1);
    EXPECT_EQ(w.be->module_load(image, &m), VGPU_SUCCESS);
    char name[(64 << 10) + 1];
    EXPECT_EQ(w.be->device_name(0, name, sizeof name), VGPU_ERROR_INVALID_VALUE);
    BackendFunction f = 0;
    EXPECT_EQ(kvmgpu::test::get_function(*w.be, m, std::string(70 << 10, 'x'), &f), VGPU_ERROR_INVALID_VALUE);
    std::vector<uint8_t> param(64 << 10);
    void* params[] = {param.data(), param.data()};
    const uint16_t sizes[] = {40000, 40000};
    EXPECT_EQ(w.be->launch(1, {1, 1, 1}, {1, 1, 1}, 0, 0, params, sizes), VGPU_ERROR_INVALID_VALUE);

    // A 1 MiB copy of private memory goes in 64 KiB pieces.
    std::vector<uint8_t> src(1 << 20), dst(1 << 20);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 31 + (i >> 12));
    const uint64_t d = upload(*w.be, src.data(), src.size());
    ASSERT_EQ(w.be->memcpy_dtoh(dst.data(), d, dst.size(), 0, false), VGPU_SUCCESS);
    EXPECT_TRUE(src == dst);
    // 4096 runs (96 KiB of run list) go in two calls, continuing on the device.
    std::vector<memmap::HostRun> runs;
    for (uint64_t i = 0; i < 4096; ++i) runs.push_back({w.at(i * 64), memmap::GuestPhysAddr{i * 64}, 64});
    std::memset(w.at(0), 0, 4096 * 64);
    ASSERT_EQ(w.be->memcpy_dtoh_sg(d, runs, SgStrategy::PerChunk, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(std::memcmp(w.at(0), src.data(), 4096 * 64), 0);
    EXPECT_EQ(w.be->worker_pid(), pid) << "refusals must not cost the worker";
    EXPECT_EQ(w.be->replacements(), 0u);
}

TEST(RemoteRecovery, DestructorEndsTheWorker) {
    pid_t pid;
    {
        WorkerRig w;
        pid = w.be->worker_pid();
        ASSERT_GT(pid, 0);
    }
    EXPECT_TRUE(process_gone(pid));
    {
        WorkerRig w(RemoteBackendOptions{.quit_timeout = 200ms});
        pid = w.be->worker_pid();
        ASSERT_EQ(w.be->inject_fault(WorkerFault::HangNextCall), VGPU_SUCCESS); // will not answer Quit
    }
    EXPECT_TRUE(process_gone(pid));
}

// The device model on a worker: the guest gets the status of a call whose
// worker died, the VM's handles are dropped, and later commands work.
TEST(RemoteRecovery, WorkerDeathThroughTheRing) {
    std::string why;
    auto be = RemoteBackend::create(host_factory(), {}, &why);
    ASSERT_TRUE(be) << why;
    RemoteBackend* remote = be.get();
    VgpuRig rig(VgpuOptions{}, std::move(be)); // its RAM is mapped after the fork: a new worker picks it up
    ASSERT_EQ(rig.dev->registration_status(), VGPU_SUCCESS);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_TRUE(rig.reg_read64(VGPU_REG_FEATURES) & VGPU_FEATURE_ZERO_COPY);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_INIT}).r0, VGPU_BACKEND_HOST);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn);
    const uint64_t da = rig.alloc(4096);

    ASSERT_EQ(kill(remote->worker_pid(), SIGKILL), 0);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {da, 1, 4096, 0}}).status, kWorkerDied);
    EXPECT_EQ(rig.dev->counters().recoveries, 1u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {da}}).status, VGPU_ERROR_INVALID_VALUE); // dropped
    const std::vector<std::vector<uint8_t>> stale{bytes(da), bytes(da), bytes(da), bytes(uint32_t{1})};
    EXPECT_EQ(rig.launch(fn, stale, 1, 1, 1, 1).status, VGPU_ERROR_INVALID_HANDLE);

    // A new module and new allocations on the new worker.
    rig.module_with("vector_add", &fn);
    expect_vector_add_through_ring(rig, fn, 1000, 1.0f);
    // The zero-copy window is live again.
    const uint64_t win = rig.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kDataGpa, 4096}}).r0;
    EXPECT_NE(win, 0u);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {win, 0x42, 16, 0}}).status, VGPU_SUCCESS);
    uint8_t got[16];
    rig.get(kDataGpa, got, sizeof got);
    EXPECT_EQ(got[0], 0x42);
    EXPECT_EQ(got[15], 0x42);
}

} // namespace
} // namespace kvmgpu::vgpu::test
