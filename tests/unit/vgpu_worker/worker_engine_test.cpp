// The device model in a GPU worker process, on the host backend: commands
// cross as copies and run there, the guest sees exactly what it sees with
// the inline engine, and a backend that cannot be made says why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/inline_engine.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_device.h"
#include "kvmtool-gpu/devices/vgpu_worker/engine_factory.h"
#include "tests/support/device_walk_cases.h"
#include "tests/support/ring_vector_add.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

// The worker factories these tests use (plain functions: worker_recipe.h).
int g_backends_made = 0; // counted in whichever process made one
DeviceBackends make_no_backend(const std::string& reason, std::string* why) {
    ++g_backends_made;
    *why = reason;
    return {};
}
DeviceBackends make_throwing_backend(const std::string&, std::string*) { throw std::runtime_error("factory threw"); }
// A slow CUDA start: the host backend once the file `gate` exists.
DeviceBackends make_backend_once_open(const std::string& gate, std::string* why) {
    while (access(gate.c_str(), F_OK) != 0) usleep(1000);
    return host_factory()(why);
}
DeviceBackends make_backend_never(const std::string&, std::string*) {
    for (;;) pause();
}

TEST(WorkerEngine, RunsTheHostBackendInAnotherProcess) {
    WorkerVgpu w;
    ASSERT_TRUE(w.worker);
    EXPECT_GT(w.worker->worker_pid(), 0);
    EXPECT_NE(w.worker->worker_pid(), getpid());
    const std::string d = w.worker->describe();
    EXPECT_NE(d.find("host"), std::string::npos) << d;
    EXPECT_NE(d.find("in GPU worker process " + std::to_string(w.worker->worker_pid())), std::string::npos) << d;
    EXPECT_EQ(w.rig.dev->registration_status(), VGPU_SUCCESS);
    EXPECT_EQ(w.rig.reg_read32(VGPU_REG_BACKEND), VGPU_BACKEND_HOST);
    EXPECT_TRUE(w.rig.reg_read64(VGPU_REG_FEATURES) & VGPU_FEATURE_ZERO_COPY);
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_INIT}).r0, VGPU_BACKEND_HOST);
}

TEST(WorkerEngine, ResultsPayloadsAndGuestRamCrossTheBoundary) {
    WorkerVgpu w;
    VgpuRig& rig = w.rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    // A payload the worker writes (the name) comes back into the slot.
    const Done name = rig.call({.opcode = VGPU_OP_DEVICE_GET_NAME, .args = {0}});
    ASSERT_EQ(name.status, VGPU_SUCCESS);
    const std::string got(reinterpret_cast<const char*>(name.payload.data()));
    EXPECT_FALSE(got.empty());
    // Results in both words.
    const Done info = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
    ASSERT_EQ(info.status, VGPU_SUCCESS);
    EXPECT_GT(info.r1, 0u);
    EXPECT_LE(info.r0, info.r1);
    // The worker reads and writes guest RAM in place.
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn);
    expect_vector_add_through_ring(rig, fn, 5000, 0.25f);
    const uint64_t d = rig.alloc(4096);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D32, .args = {d, 0xA5A5A5A5, 1024, 0}}).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, 4096, 0}}).status, VGPU_SUCCESS);
    uint32_t back[1024];
    rig.get(kDataGpa, back, sizeof back);
    for (uint32_t v : back) ASSERT_EQ(v, 0xA5A5A5A5u);
    // Guest errors come back as statuses, and the worker lives on.
    const pid_t pid = w.worker->worker_pid();
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d + 8}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = 999}).status, VGPU_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(w.worker->worker_pid(), pid);
    // The worker's dispatch counts into the VMM's counters.
    const VgpuCounterSnapshot c = rig.dev->counters();
    EXPECT_GE(c.commands, 10u);
    EXPECT_EQ(c.errors, 2u);
    EXPECT_EQ(c.bad_opcodes, 1u);
    EXPECT_GT(c.bytes_htod, 0u);
    EXPECT_EQ(c.per_opcode[VGPU_OP_DEVICE_GET_NAME], 1u);
    EXPECT_EQ(c.recoveries, 0u);
}

TEST(WorkerEngine, StreamsAndEvents) {
    WorkerVgpu w;
    VgpuRig& rig = w.rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const Done s = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ASSERT_EQ(s.status, VGPU_SUCCESS);
    const Done e0 = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    const Done e1 = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    ASSERT_EQ(e0.status, VGPU_SUCCESS);
    ASSERT_EQ(e1.status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {e0.r0, s.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {e1.r0, s.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_SYNCHRONIZE, .args = {e1.r0}}).status, VGPU_SUCCESS);
    const Done ms = rig.call({.opcode = VGPU_OP_EVENT_ELAPSED_TIME, .args = {e0.r0, e1.r0}});
    ASSERT_EQ(ms.status, VGPU_SUCCESS);
    float f;
    const uint32_t bits = static_cast<uint32_t>(ms.r0);
    std::memcpy(&f, &bits, sizeof f);
    EXPECT_GE(f, 0.0f);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_DESTROY, .args = {e0.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_DESTROY, .args = {s.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_DESTROY, .args = {s.r0}}).status, VGPU_ERROR_INVALID_HANDLE);
}

TEST(WorkerEngine, DeviceWalk) {
    WorkerVgpu w;
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    walk_moves_the_right_bytes(w.rig);
    walk_many_in_flight(w.rig);
    walk_refuses_bad_lists(w.rig);
}

TEST(WorkerEngine, ResetFreesWhatTheWorkerHolds) {
    WorkerVgpu w(WorkerOptions{}, VgpuOptions{.device_mem_quota = 1 << 20});
    VgpuRig& rig = w.rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const uint64_t d = rig.alloc(1 << 20);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {4096}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    rig.reset();
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_NE(rig.alloc(1 << 20), 0u) << "the quota came back";
}

TEST(WorkerEngine, FactoryFailureComesBackAsTheReason) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    const WorkerOptions waits{.start_in_background = false};
    std::string why;
    auto none = WorkerEngine::create(mem, {&make_no_backend, "no such device here"}, VgpuOptions{}, waits, &why);
    EXPECT_FALSE(none);
    EXPECT_EQ(why, "no such device here");
    auto throws = WorkerEngine::create(mem, {&make_throwing_backend, ""}, VgpuOptions{}, waits, &why);
    EXPECT_FALSE(throws);
    EXPECT_EQ(why, "factory threw");
    EXPECT_THROW(WorkerEngine::create(mem, host_factory(), VgpuOptions{.max_ring = 3}, WorkerOptions{}, &why),
                 std::invalid_argument);
}

// Started in the background (the default), a backend that cannot be made
// shows at start(): its reason, backend id 0, and the guest's commands fail
// with NO_DEVICE; no worker is forked again for them.
TEST(WorkerEngine, BackgroundStartFailureShowsAtStartAndFailsCommands) {
    g_backends_made = 0;
    WorkerVgpu w(WorkerOptions{}, VgpuOptions{}, {&make_no_backend, "no such device here"});
    ASSERT_TRUE(w.worker);
    EXPECT_EQ(w.rig.dev->backend_description().rfind("no such device here", 0), 0u) << w.rig.dev->backend_description();
    EXPECT_EQ(w.rig.reg_read32(VGPU_REG_BACKEND), 0u);
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_INIT}).status, VGPU_ERROR_NO_DEVICE);
    EXPECT_EQ(w.worker->worker_pid(), -1);
    EXPECT_EQ(w.worker->replacements(), 0u);
    EXPECT_EQ(g_backends_made, 0) << "the factory ran in this process, not in the worker";
}

// The guest's first register access waits for the worker's start; the
// device's start() does not.
TEST(WorkerEngine, DeviceStartReturnsBeforeTheBackendIsUp) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    // The worker's factory waits for a file the test creates: a slow CUDA start.
    char gate[] = "/tmp/kvmgpu-start-gate-XXXXXX";
    ASSERT_TRUE(mkdtemp(gate));
    const std::string open_file = std::string(gate) + "/open";
    std::string why;
    auto e = WorkerEngine::create(mem, {&make_backend_once_open, open_file}, VgpuOptions{}, WorkerOptions{}, &why);
    ASSERT_TRUE(e) << why;
    VgpuDevice dev(mem, std::move(e));
    dev.start();
    EXPECT_FALSE(dev.ready()) << "start() waited for the worker's backend";
    FILE* f = fopen(open_file.c_str(), "w");
    ASSERT_TRUE(f);
    fclose(f);
    uint32_t backend = 0;
    dev.read(VGPU_REG_BACKEND, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&backend), 4));
    EXPECT_TRUE(dev.ready());
    EXPECT_EQ(backend, VGPU_BACKEND_HOST);
    dev.stop();
    unlink(open_file.c_str());
    rmdir(gate);
}

// A VM that ends before its worker's backend is up stops at once.
TEST(WorkerEngine, StopDuringABackgroundStartEndsIt) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    std::string why;
    auto e = WorkerEngine::create(mem, {&make_backend_never, ""}, VgpuOptions{}, WorkerOptions{}, &why);
    ASSERT_TRUE(e) << why;
    WorkerEngine* worker = e.get();
    VgpuDevice dev(mem, std::move(e));
    dev.start();
    const pid_t pid = worker->worker_pid();
    EXPECT_GT(pid, 0);
    dev.stop(); // returns: the start's wait is cancelled, the worker killed
    EXPECT_EQ(worker->worker_pid(), -1);
    EXPECT_NE(kill(pid, 0), 0) << "the starting worker is gone";
}

TEST(WorkerEngine, FactoryProbesCudaInAChildOnly) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    std::string why;
    auto e = make_engine(mem, VgpuOptions{}, BackendChoice::Auto, GpuWorker::Process, &why);
    ASSERT_TRUE(e);
    why = e->start().description + " [" + why + "]"; // a worker's start ends here
    std::printf("make_engine(Auto): %s\n", why.c_str());
    EXPECT_FALSE(libcuda_loaded_here());
    if (e->backend_id() == VGPU_BACKEND_CUDA) EXPECT_NE(dynamic_cast<WorkerEngine*>(e.get()), nullptr);
    else EXPECT_NE(why.find("CUDA unavailable"), std::string::npos) << why;
    auto host = make_engine(mem, VgpuOptions{}, BackendChoice::Host, GpuWorker::Process, &why);
    ASSERT_TRUE(host);
    EXPECT_NE(dynamic_cast<InlineEngine*>(host.get()), nullptr) << "the host backend always runs inline";
    EXPECT_NE(why.find("forced"), std::string::npos) << why;
    GpuWorker g;
    EXPECT_TRUE(parse_gpu_worker("Process", &g) && g == GpuWorker::Process);
    EXPECT_TRUE(parse_gpu_worker("inline", &g) && g == GpuWorker::Inline);
    EXPECT_FALSE(parse_gpu_worker("thread", &g));
}

} // namespace
} // namespace kvmgpu::vgpu::test
