// The CUDA backend in a GPU worker process, as the VMM runs it by default
// (label gpu). A kernel that faults comes back as its CUresult, the worker
// whose CUDA it poisoned is replaced, and later work runs on a fresh one;
// the VMM process itself never loads libcuda. Each test skips with the
// one-line reason when no CUDA backend can be made.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "tests/support/get_function.h"
#include "kvmtool-gpu/devices/vgpu/backends/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/backends/remote_backend.h"
#include "memmap/backing.h"
#include "device_walk_cases.h"
#include "ring_vector_add.h"
#include "param_layout_cases.h"
#include "vgpu_rig.h"

extern "C" const unsigned char vgpu_test_kernels_fatbin[];
extern "C" const unsigned char vgpu_test_kernels_fatbin_end[];

namespace kvmgpu::vgpu::test {
namespace {

std::span<const uint8_t> test_fatbin() {
    return {vgpu_test_kernels_fatbin, static_cast<size_t>(vgpu_test_kernels_fatbin_end - vgpu_test_kernels_fatbin)};
}

bool libcuda_in_this_process() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != nullptr;
}

// The factory's default: CUDA in a worker process.
std::unique_ptr<RemoteBackend> make_remote(std::string* why) {
    auto b = make_backend(BackendChoice::Cuda, why, 0, GpuWorker::Process);
    if (!b) return nullptr;
    auto* r = dynamic_cast<RemoteBackend*>(b.get());
    if (!r) {
        *why = "make_backend gave an in-process backend: " + *why;
        return nullptr;
    }
    b.release();
    return std::unique_ptr<RemoteBackend>(r);
}

#define REQUIRE_REMOTE_CUDA(var)                                        \
    std::string why_;                                                   \
    auto var = make_remote(&why_);                                      \
    if (!var && why_.rfind("make_backend", 0) == 0) FAIL() << why_;     \
    if (!var) GTEST_SKIP() << "no CUDA backend: " << why_

// vector_add(a, b, c, n) from gpu_test_kernels.cu.
Status vector_add(GpuBackend& be, BackendFunction fn, uint64_t a, uint64_t b, uint64_t c, uint32_t n) {
    void* params[] = {&a, &b, &c, &n};
    const uint16_t sizes[] = {8, 8, 8, 4};
    return be.launch(fn, {(n + 255) / 256, 1, 1}, {256, 1, 1}, 0, 0, params, sizes);
}

TEST(RemoteCuda, KernelFaultIsRecoveredByANewWorker) {
    // Guest RAM first: the worker is forked with it mapped.
    auto ram = memmap::Backing::create(memmap::PageSize::k4K, 16 << 20);
    REQUIRE_REMOTE_CUDA(be);
    std::printf("%s\n", be->describe().c_str());
    EXPECT_FALSE(libcuda_in_this_process()) << "the VMM process loaded libcuda";
    ASSERT_EQ(be->register_guest_ram(ram->data(), ram->size()), VGPU_SUCCESS);
    EXPECT_NE(be->guest_ram_device_address(ram->data()), 0u);

    BackendModule m = 0;
    BackendFunction fn = 0;
    ASSERT_EQ(be->module_load(test_fatbin(), &m), VGPU_SUCCESS);
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "vector_add", &fn), VGPU_SUCCESS);
    constexpr uint32_t n = 1 << 16;
    uint64_t da = 0, db = 0;
    ASSERT_EQ(be->mem_alloc(n * 4, &da), VGPU_SUCCESS);
    ASSERT_EQ(be->mem_alloc(n * 4, &db), VGPU_SUCCESS);
    // c = 0x10: every thread stores to an illegal address.
    const Status launched = vector_add(*be, fn, da, db, 0x10, n);
    const Status s = launched != VGPU_SUCCESS ? launched : be->ctx_synchronize();
    std::printf("after the fault: %u (%s)\n", s, status_name(s));
    EXPECT_EQ(s, VGPU_ERROR_ILLEGAL_ADDRESS);

    const pid_t first = be->worker_pid();
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(be->recover_from(s));
    std::printf("recovery (new worker, context, guest RAM registered): %.0f ms\n",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    EXPECT_GT(be->worker_pid(), 0);
    // Driver 580 cannot make a new context in the faulted process, so the
    // worker is replaced; a driver that could would recover in place.
    std::printf("%s\n", be->worker_pid() != first ? "the faulted worker was replaced"
                                                    : "the worker's backend recovered in place");
    EXPECT_EQ(be->replacements(), be->worker_pid() != first ? 1u : 0u);
    EXPECT_FALSE(be->recover_from(VGPU_ERROR_INVALID_VALUE)) << "the replacement is reported once";
    EXPECT_NE(be->guest_ram_device_address(ram->data()), 0u) << "guest RAM not registered in the new worker";

    // Later work: a new module and new allocations, correct results.
    ASSERT_EQ(be->module_load(test_fatbin(), &m), VGPU_SUCCESS);
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "vector_add", &fn), VGPU_SUCCESS);
    uint64_t xa = 0, xb = 0, xc = 0;
    ASSERT_EQ(be->mem_alloc(n * 4, &xa), VGPU_SUCCESS);
    ASSERT_EQ(be->mem_alloc(n * 4, &xb), VGPU_SUCCESS);
    ASSERT_EQ(be->mem_alloc(n * 4, &xc), VGPU_SUCCESS);
    auto* a = reinterpret_cast<float*>(ram->data());
    auto* b = reinterpret_cast<float*>(ram->data() + n * 4);
    auto* c = reinterpret_cast<float*>(ram->data() + 2 * n * 4);
    for (uint32_t i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = 0.5f * static_cast<float>(i), c[i] = -1;
    ASSERT_EQ(be->memcpy_htod(xa, a, n * 4, 0, false), VGPU_SUCCESS);
    // b through the default scatter-gather strategy (the gather kernel where
    // built): it reads guest RAM through the new worker's mapping.
    std::vector<memmap::HostRun> runs;
    for (uint64_t off = 0; off < n * 4; off += 4096)
        runs.push_back({reinterpret_cast<uint8_t*>(b) + off, memmap::GuestPhysAddr{n * 4 + off}, 4096});
    ASSERT_EQ(be->memcpy_htod_sg(xb, runs, be->default_sg_strategy(), 0, false), VGPU_SUCCESS)
        << to_string(be->default_sg_strategy());
    ASSERT_EQ(vector_add(*be, fn, xa, xb, xc, n), VGPU_SUCCESS);
    ASSERT_EQ(be->ctx_synchronize(), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_dtoh(c, xc, n * 4, 0, false), VGPU_SUCCESS);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], 1.5f * static_cast<float>(i)) << i;
    EXPECT_FALSE(libcuda_in_this_process());
}

// Through the device model: the guest gets ILLEGAL_ADDRESS, its handles are
// dropped, and a new module, new allocations and a launch then work.
TEST(RemoteCuda, KernelFaultThroughTheRing) {
    REQUIRE_REMOTE_CUDA(be);
    RemoteBackend* remote = be.get();
    VgpuRig rig(VgpuOptions{}, std::move(be)); // RAM mapped after the fork: a new worker is made for it
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
    std::printf("%s\n", remote->worker_pid() != first ? "the faulted worker was replaced" : "recovered in place");
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {da}}).status, VGPU_ERROR_INVALID_VALUE); // dropped
    EXPECT_EQ(rig.launch(fn, bad, 4, 1, 256, 1).status, VGPU_ERROR_INVALID_HANDLE);

    rig.module_with("vector_add", &fn, test_fatbin());
    ASSERT_NE(fn, 0u);
    expect_vector_add_through_ring(rig, fn, 100000, 2.0f);
    EXPECT_FALSE(libcuda_in_this_process());
}

// The device walk through the worker: list and regions cross as addresses.
TEST(RemoteCuda, DeviceWalkThroughTheRing) {
    REQUIRE_REMOTE_CUDA(be);
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.dev->registration_status(), VGPU_SUCCESS);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    walk_moves_the_right_bytes(rig);
    walk_many_in_flight(rig);
    walk_refuses_bad_lists(rig);
    EXPECT_FALSE(libcuda_in_this_process());
}

// Two VMs in one VMM process: a fault in one costs the other nothing.
TEST(RemoteCuda, OneVmsFaultLeavesTheOtherRunning) {
    REQUIRE_REMOTE_CUDA(b1);
    auto b2 = make_remote(&why_);
    ASSERT_TRUE(b2) << why_;
    VgpuRig faulty(VgpuOptions{}, std::move(b1)), other(VgpuOptions{}, std::move(b2));
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

// What a call costs through the worker on this machine (printed): a trivial
// call, a 4 KiB synchronous copy from guest RAM, and an empty-kernel launch
// with its synchronisation.
TEST(RemoteCuda, CallOverhead) {
    auto ram = memmap::Backing::create(memmap::PageSize::k4K, 4 << 20);
    REQUIRE_REMOTE_CUDA(be);
    ASSERT_EQ(be->register_guest_ram(ram->data(), ram->size()), VGPU_SUCCESS);
    BackendModule m = 0;
    BackendFunction empty = 0;
    ASSERT_EQ(be->module_load(test_fatbin(), &m), VGPU_SUCCESS);
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "empty_kernel", &empty), VGPU_SUCCESS);
    uint64_t d = 0;
    ASSERT_EQ(be->mem_alloc(4096, &d), VGPU_SUCCESS);
    auto median_us = [](auto&& fn) {
        std::vector<double> us(5000);
        for (int i = 0; i < 200; ++i) fn(); // warm-up
        for (double& t : us) {
            const auto t0 = std::chrono::steady_clock::now();
            fn();
            t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        }
        std::sort(us.begin(), us.end());
        return us[us.size() / 2];
    };
    int count = 0;
    const double trivial = median_us([&] { EXPECT_EQ(be->device_count(&count), VGPU_SUCCESS); });
    const double copy = median_us([&] { EXPECT_EQ(be->memcpy_htod(d, ram->data(), 4096, 0, false), VGPU_SUCCESS); });
    const double launch = median_us([&] {
        EXPECT_EQ(be->launch(empty, {1, 1, 1}, {1, 1, 1}, 0, 0, {}, {}), VGPU_SUCCESS);
        EXPECT_EQ(be->stream_synchronize(0), VGPU_SUCCESS);
    });
    std::printf("through the GPU worker, median: device_count %.2f us, 4 KiB htod (sync) %.2f us, "
                "empty launch + stream sync %.2f us\n",
                trivial, copy, launch);
    RecordProperty("device_count_us", std::to_string(trivial));
    RecordProperty("htod_4k_us", std::to_string(copy));
    RecordProperty("empty_launch_sync_us", std::to_string(launch));
}

// In worker mode the layout crosses the RPC channel; the check is the same.
TEST(RemoteCuda, LaunchMustMatchTheKernelsParameterLayout) {
    REQUIRE_REMOTE_CUDA(be);
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.dev->registration_status(), VGPU_SUCCESS);
    launch_must_match_layout(rig, test_fatbin());
}

} // namespace
} // namespace kvmgpu::vgpu::test
