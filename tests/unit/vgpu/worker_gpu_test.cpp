// The CUDA backend in a GPU worker process, as the VMM runs it by default
// (label gpu), driven through the ring. A kernel that faults comes back as
// its CUresult, the worker whose CUDA it poisoned is replaced, and later
// work runs on a fresh one; the test process itself never loads libcuda.
// Each test skips with the one-line reason when no CUDA backend can be made.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "kvmtool-gpu/devices/vgpu_worker/engine_factory.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_engine.h"
#include "tests/support/device_walk_cases.h"
#include "tests/support/param_layout_cases.h"
#include "tests/support/ring_vector_add.h"
#include "tests/support/gpu_test_kernels.h"
#include "tests/support/vgpu_rig.h"


namespace kvmgpu::vgpu::test {
namespace {

// A rig on make_engine's default for CUDA: a worker process. *why says why
// there is none; a CUDA engine that is not a worker is a failure.
std::unique_ptr<VgpuRig> worker_rig(std::string* why, WorkerEngine** worker = nullptr, VgpuOptions opts = {}) {
    auto rig = std::make_unique<VgpuRig>(opts, [&](const memmap::GuestMemory& mem, const VgpuOptions& o) {
        return make_engine(mem, o, BackendChoice::Cuda, GpuWorker::Process, why);
    });
    if (!rig->dev) return nullptr;
    auto* w = dynamic_cast<WorkerEngine*>(&rig->dev->engine());
    EXPECT_NE(w, nullptr) << "make_engine gave an in-process engine: " << *why;
    if (worker) *worker = w;
    return w ? std::move(rig) : nullptr;
}

#define REQUIRE_WORKER_CUDA(var, ...)                            \
    std::string why_;                                            \
    auto var = worker_rig(&why_ __VA_OPT__(,) __VA_ARGS__);      \
    if (HasFailure()) return;                                    \
    if (!var) GTEST_SKIP() << "no CUDA backend: " << why_

// Four devices on GPU 0 (--gpus 0,0,0,0) in one worker: a context on each,
// memory on each, peer copies between them and a kernel on one device
// reading another's memory (unified addressing).
TEST(WorkerCuda, FourDevicesOnOneGpu) {
    std::string why;
    const int gpus[] = {0, 0, 0, 0};
    VgpuRig rig(VgpuOptions{}, [&](const memmap::GuestMemory& mem, const VgpuOptions& o) {
        return make_engine(mem, o, BackendChoice::Cuda, GpuWorker::Process, &why, gpus);
    });
    if (!rig.dev) GTEST_SKIP() << "no CUDA backend: " << why;
    std::printf("%s\n", why.c_str());
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_COUNT}).r0, 4u);
    const Done peer = rig.call({.opcode = VGPU_OP_DEVICE_CAN_ACCESS_PEER, .args = {0, 1}});
    EXPECT_EQ(peer.status, VGPU_SUCCESS);
    std::printf("cuDeviceCanAccessPeer(device 0, device 1), both on GPU 0: %llu\n",
                static_cast<unsigned long long>(peer.r0));
    uint64_t ctx[4], mem[4];
    const uint32_t value[4] = {0x3F800000, 0x40000000, 0x40400000, 0x40800000}; // 1.0f, 2.0f, 3.0f, 4.0f
    for (uint64_t d = 0; d < 4; ++d) {
        const Done c = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, d}});
        ASSERT_EQ(c.status, VGPU_SUCCESS);
        ctx[d] = c.r0;
        mem[d] = rig.alloc(1 << 20);
        ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D32, .args = {mem[d], value[d], 1 << 18, 0}}).status,
                  VGPU_SUCCESS);
    }
    // Device 3 is current: gather 0..2 into device 3's buffer, a quarter each.
    for (uint64_t d = 0; d < 3; ++d)
        ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_PEER,
                            .args = {mem[3] + d * (256 << 10), ctx[3], mem[d], ctx[d], 256 << 10, 0}})
                      .status,
                  VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, mem[3], 1 << 20, 0}}).status, VGPU_SUCCESS);
    for (uint64_t q = 0; q < 4; ++q) {
        uint32_t v = 0;
        rig.get(kDataGpa + q * (256 << 10) + 4, &v, sizeof v);
        EXPECT_EQ(v, value[q]) << "quarter " << q;
    }
    // A kernel on device 1 adding device 0's and device 2's memory (unified addressing).
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {ctx[1]}}).status, VGPU_SUCCESS);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn, test_fatbin());
    const uint32_t n = 1024;
    ASSERT_EQ(rig.launch(fn, std::vector<std::vector<uint8_t>>{bytes(mem[0]), bytes(mem[2]), bytes(mem[1]), bytes(n)},
                         n / 256, 1, 256, 1)
                  .status,
              VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, mem[1], 4, 0}}).status, VGPU_SUCCESS);
    uint32_t sum_bits = 0;
    rig.get(kDataGpa, &sum_bits, 4);
    EXPECT_EQ(sum_bits, value[3]); // 1.0f + 3.0f
    // A registered guest buffer (two frames, out of order) has one address
    // on every device, and unregisters once for all of them.
    const vgpu_sg_entry list[2] = {{kDataGpa + 0x20000, 4096}, {kDataGpa + 0x10000, 4096}};
    rig.put(kDataGpa + 0x30000, list, sizeof list);
    const Done reg = rig.call({.opcode = VGPU_OP_HOST_REGISTER, .args = {kDataGpa + 0x30000, 2, 8192, 0}});
    ASSERT_EQ(reg.status, VGPU_SUCCESS);
    ASSERT_NE(reg.r1, 0u);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {reg.r1 + 4096, 0x6b, 4096, 0}}).status, VGPU_SUCCESS);
    uint8_t second_frame_of_buffer = 0;
    rig.get(kDataGpa + 0x10000 + 4095, &second_frame_of_buffer, 1);
    EXPECT_EQ(second_frame_of_buffer, 0x6b);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_HOST_UNREGISTER, .args = {reg.r0}}).status, VGPU_SUCCESS);
    // Destroying device 2's context frees its memory on device 2.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_CTX_DESTROY, .args = {ctx[2]}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {mem[2]}}).status, VGPU_ERROR_INVALID_VALUE);
}

// Through the device model: the guest gets ILLEGAL_ADDRESS, its handles are
// dropped, and a new module, new allocations and a launch then work.
TEST(WorkerCuda, KernelFaultThroughTheRing) {
    WorkerEngine* remote = nullptr;
    REQUIRE_WORKER_CUDA(rigp, &remote);
    VgpuRig& rig = *rigp;
    std::printf("%s\n", remote->describe().c_str());
    EXPECT_FALSE(libcuda_loaded_here()) << "the VMM process loaded libcuda";
    ASSERT_EQ(rig.dev->registration_status(), VGPU_SUCCESS);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_TRUE(rig.reg_read64(VGPU_REG_FEATURES) & VGPU_FEATURE_REAL_KERNELS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_INIT}).r0, VGPU_BACKEND_CUDA);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn, test_fatbin());
    ASSERT_NE(fn, 0u);
    const uint64_t da = rig.alloc(4096);
    const uint32_t n = 1024;
    const std::vector<std::vector<uint8_t>> bad{bytes(da), bytes(da), bytes(uint64_t{0x10}), bytes(n)};
    const pid_t first = remote->worker_pid();
    const Done r = rig.launch(fn, bad, 4, 1, 256, 1);
    EXPECT_EQ(r.status, VGPU_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(rig.dev->counters().recoveries, 1u);
    // Driver 580 cannot make a new context in the faulted process, so the
    // worker is replaced; a driver that could would recover in place.
    std::printf("%s\n", remote->worker_pid() != first ? "the faulted worker was replaced" : "recovered in place");
    EXPECT_EQ(remote->replacements(), remote->worker_pid() != first ? 1u : 0u);
    EXPECT_NE(rig.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kDataGpa, 4096}}).r0, 0u)
        << "guest RAM not registered in the new worker";
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {da}}).status, VGPU_ERROR_INVALID_VALUE); // dropped
    EXPECT_EQ(rig.launch(fn, bad, 4, 1, 256, 1).status, VGPU_ERROR_INVALID_HANDLE);

    rig.module_with("vector_add", &fn, test_fatbin());
    ASSERT_NE(fn, 0u);
    expect_vector_add_through_ring(rig, fn, 100000, 2.0f);
    EXPECT_FALSE(libcuda_loaded_here());
}

// With the polling doorbell the worker watches the ring itself; a faulting
// kernel there poisons the worker's CUDA, the VMM notices at its next look,
// and the next commands run on a new worker that watches the ring again.
TEST(WorkerCuda, KernelFaultInAWatchedRing) {
    WorkerEngine* remote = nullptr;
    REQUIRE_WORKER_CUDA(rigp, &remote, VgpuOptions{.doorbell = DoorbellMode::Poll});
    VgpuRig& rig = *rigp;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const uint64_t sent = remote->messages();
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn, test_fatbin());
    const uint64_t da = rig.alloc(4096);
    const std::vector<std::vector<uint8_t>> bad{bytes(da), bytes(da), bytes(uint64_t{0x10}), bytes(uint32_t{1024})};
    const pid_t first = remote->worker_pid();
    EXPECT_EQ(rig.launch(fn, bad, 4, 1, 256, 1).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {da}}).status, VGPU_ERROR_INVALID_VALUE); // dropped
    EXPECT_EQ(rig.dev->counters().recoveries, 1u);
    std::printf("%s\n", remote->worker_pid() != first ? "the faulted worker was replaced" : "recovered in place");
    rig.module_with("vector_add", &fn, test_fatbin());
    expect_vector_add_through_ring(rig, fn, 100000, 2.0f);
    std::printf("messages to workers for %llu commands: %llu\n",
                static_cast<unsigned long long>(rig.dev->counters().commands),
                static_cast<unsigned long long>(remote->messages() - sent));
    EXPECT_FALSE(libcuda_loaded_here());
}

// The device walk in the worker: it reads the list in guest RAM itself.
TEST(WorkerCuda, DeviceWalkThroughTheRing) {
    REQUIRE_WORKER_CUDA(rigp);
    VgpuRig& rig = *rigp;
    ASSERT_EQ(rig.dev->registration_status(), VGPU_SUCCESS);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    walk_moves_the_right_bytes(rig);
    walk_many_in_flight(rig);
    walk_refuses_bad_lists(rig);
    EXPECT_FALSE(libcuda_loaded_here());
}

// Two VMs in one VMM process: a fault in one costs the other nothing.
TEST(WorkerCuda, OneVmsFaultLeavesTheOtherRunning) {
    REQUIRE_WORKER_CUDA(faultyp);
    auto otherp = worker_rig(&why_);
    ASSERT_TRUE(otherp) << why_;
    VgpuRig &faulty = *faultyp, &other = *otherp;
    ASSERT_EQ(faulty.enable(), VGPU_SUCCESS);
    ASSERT_EQ(other.enable(), VGPU_SUCCESS);
    uint64_t f1 = 0, f2 = 0;
    faulty.module_with("vector_add", &f1, test_fatbin());
    other.module_with("vector_add", &f2, test_fatbin());
    const uint64_t kept = other.alloc(4096);
    std::vector<uint8_t> data(4096, 0x5C), back(4096);
    other.put(kDataGpa, data.data(), data.size());
    ASSERT_EQ(other.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {kept, kDataGpa, 4096, 0}}).status, VGPU_SUCCESS);

    const uint64_t fa = faulty.alloc(4096);
    const std::vector<std::vector<uint8_t>> bad{bytes(fa), bytes(fa), bytes(uint64_t{0x10}), bytes(uint32_t{1024})};
    EXPECT_EQ(faulty.launch(f1, bad, 4, 1, 256, 1).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(faulty.dev->counters().recoveries, 1u);

    // The other VM's module, allocation and data are untouched.
    expect_vector_add_through_ring(other, f2, 4096, 1.0f);
    ASSERT_EQ(other.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, kept, 4096, 0}}).status, VGPU_SUCCESS);
    other.get(kDataGpa, back.data(), back.size());
    EXPECT_TRUE(back == data);
    EXPECT_EQ(other.dev->counters().recoveries, 0u);
}

// What a command costs through the ring and the worker on this machine
// (printed, not judged): a trivial command, a 4 KiB synchronous copy from
// guest RAM, and an empty-kernel launch with its synchronisation.
TEST(WorkerCuda, CommandOverhead) {
    REQUIRE_WORKER_CUDA(rigp);
    VgpuRig& rig = *rigp;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    uint64_t empty = 0;
    rig.module_with("empty_kernel", &empty, test_fatbin());
    const uint64_t d = rig.alloc(4096);
    auto median_us = [](auto&& fn) {
        std::vector<double> us(3000);
        for (int i = 0; i < 200; ++i) fn(); // warm-up
        for (double& t : us) {
            const auto t0 = std::chrono::steady_clock::now();
            fn();
            t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        }
        std::sort(us.begin(), us.end());
        return us[us.size() / 2];
    };
    const double trivial = median_us([&] { ASSERT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_COUNT}).status, 0u); });
    const double copy = median_us(
        [&] { ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, 4096, 0}}).status, 0u); });
    const double launch = median_us([&] {
        ASSERT_EQ(rig.launch(empty, {}, 1, 1, 1, 1).status, VGPU_SUCCESS);
        ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {0}}).status, VGPU_SUCCESS);
    });
    std::printf("through the ring and the GPU worker, median: device_get_count %.2f us, 4 KiB htod (sync) %.2f us, "
                "empty launch + stream sync %.2f us\n",
                trivial, copy, launch);
    RecordProperty("device_count_us", std::to_string(trivial));
    RecordProperty("htod_4k_us", std::to_string(copy));
    RecordProperty("empty_launch_sync_us", std::to_string(launch));
}

// In the worker the same dispatch checks launches against the module's layout.
TEST(WorkerCuda, LaunchMustMatchTheKernelsParameterLayout) {
    REQUIRE_WORKER_CUDA(rigp);
    ASSERT_EQ(rigp->dev->registration_status(), VGPU_SUCCESS);
    launch_must_match_layout(*rigp, test_fatbin());
}

} // namespace
} // namespace kvmgpu::vgpu::test
