// Every GpuBackend call through RemoteBackend, served by the host backend in
// a worker process: results match what the host backend gives in-process.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "tests/support/get_function.h"
#include "kvmtool-gpu/devices/vgpu/backends/backend_factory.h"
#include "worker_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

TEST(RemoteBackend, DescribesTheWorkersBackend) {
    WorkerRig w;
    ASSERT_TRUE(w.be);
    EXPECT_GT(w.be->worker_pid(), 0);
    EXPECT_NE(w.be->worker_pid(), getpid());
    EXPECT_EQ(w.be->id(), VGPU_BACKEND_HOST);
    EXPECT_FALSE(w.be->real_kernels());
    EXPECT_EQ(w.be->default_sg_strategy(), SgStrategy::Coalesce);
    EXPECT_NE(w.be->describe().find("host backend"), std::string::npos) << w.be->describe();
    EXPECT_NE(w.be->describe().find("worker process " + std::to_string(w.be->worker_pid())), std::string::npos);
}

TEST(RemoteBackend, DeviceQueriesRoundTrip) {
    WorkerRig w;
    int n = 0;
    ASSERT_EQ(w.be->device_count(&n), VGPU_SUCCESS);
    EXPECT_EQ(n, 1);
    int v = 0;
    ASSERT_EQ(w.be->device_attribute(1, 0, &v), VGPU_SUCCESS); // MAX_THREADS_PER_BLOCK
    EXPECT_EQ(v, 1024);
    EXPECT_EQ(w.be->device_attribute(1, 3, &v), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(w.be->device_attribute(9999, 0, &v), VGPU_ERROR_INVALID_VALUE);
    char name[128] = {};
    ASSERT_EQ(w.be->device_name(0, name, sizeof name), VGPU_SUCCESS);
    EXPECT_NE(std::string(name).find("host backend"), std::string::npos);
    uint64_t total = 0, free_bytes = 0, total2 = 0;
    ASSERT_EQ(w.be->device_total_mem(0, &total), VGPU_SUCCESS);
    EXPECT_EQ(total, HostBackendOptions{}.total_bytes);
    ASSERT_EQ(w.be->mem_get_info(&free_bytes, &total2), VGPU_SUCCESS);
    EXPECT_EQ(total2, total);
    EXPECT_EQ(free_bytes, total);
    EXPECT_EQ(w.be->ctx_synchronize(), VGPU_SUCCESS);
}

TEST(RemoteBackend, GuestRamIsSharedInPlace) {
    WorkerRig w;
    const uint64_t dev = w.be->guest_ram_device_address(w.at(8192));
    ASSERT_NE(dev, 0u);
    EXPECT_EQ(w.be->guest_ram_device_address(w.at(0)) + 8192, dev);
    // The worker writes guest RAM through its zero-copy window: the VMM sees it.
    std::vector<uint8_t> pattern(4096);
    std::iota(pattern.begin(), pattern.end(), uint8_t{3});
    const uint64_t d = upload(*w.be, pattern.data(), pattern.size()); // staged: the vector is not shared
    ASSERT_EQ(w.be->memcpy_dtod(dev, d, 4096, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(std::memcmp(w.at(8192), pattern.data(), 4096), 0);
    ASSERT_EQ(w.be->memset_d8(dev + 100, 0xEE, 10, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(w.at(8192)[100], 0xEE);
    EXPECT_EQ(w.at(8192)[109], 0xEE);
    EXPECT_EQ(w.at(8192)[110], pattern[110]);
}

TEST(RemoteBackend, CopiesMemsetsAndAllocationsRoundTrip) {
    WorkerRig w;
    const uint64_t bytes = 1 << 20;
    for (uint64_t i = 0; i < bytes; ++i) w.at(0)[i] = static_cast<uint8_t>(i * 7 + 1);
    uint64_t d = 0, e = 0;
    ASSERT_EQ(w.be->mem_alloc(bytes, &d), VGPU_SUCCESS);
    ASSERT_EQ(w.be->mem_alloc(bytes, &e), VGPU_SUCCESS);
    uint64_t free_bytes = 0, total = 0;
    ASSERT_EQ(w.be->mem_get_info(&free_bytes, &total), VGPU_SUCCESS);
    EXPECT_EQ(free_bytes, total - 2 * bytes);
    ASSERT_EQ(w.be->memcpy_htod(d, w.at(0), bytes, 0, false), VGPU_SUCCESS);   // guest RAM: in place
    ASSERT_EQ(w.be->memcpy_dtod(e, d, bytes, 0, true), VGPU_SUCCESS);
    ASSERT_EQ(w.be->memset_d32(e + 64, 0xCAFEF00D, 4, 0, false), VGPU_SUCCESS);
    ASSERT_EQ(w.be->memcpy_dtoh(w.at(2 << 20), e, bytes, 0, false), VGPU_SUCCESS);
    uint32_t word;
    std::memcpy(&word, w.at((2 << 20) + 76), 4);
    EXPECT_EQ(word, 0xCAFEF00Du);
    EXPECT_EQ(std::memcmp(w.at(2 << 20), w.at(0), 64), 0);
    EXPECT_EQ(std::memcmp(w.at((2 << 20) + 80), w.at(80), bytes - 80), 0);
    // Not guest RAM: staged through the channel, both ways.
    std::vector<uint8_t> mine(bytes);
    ASSERT_EQ(w.be->memcpy_dtoh(mine.data(), d, bytes, 0, true), VGPU_SUCCESS);
    EXPECT_EQ(std::memcmp(mine.data(), w.at(0), bytes), 0);
    EXPECT_EQ(w.be->memset_d32(d + 2, 1, 1, 0, false), VGPU_ERROR_INVALID_VALUE); // misaligned, as in-process
    EXPECT_EQ(w.be->memcpy_htod(d + bytes - 4, w.at(0), 8, 0, false), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(w.be->mem_free(d), VGPU_SUCCESS);
    EXPECT_EQ(w.be->mem_free(d), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(w.be->mem_free(e), VGPU_SUCCESS);
}

TEST(RemoteBackend, EveryScatterGatherStrategyRoundTrips) {
    WorkerRig w;
    // 64 scattered 4 KiB pages of guest RAM, odd lengths.
    std::vector<memmap::HostRun> runs;
    uint64_t total = 0;
    for (uint64_t i = 0; i < 64; ++i) {
        const uint64_t page = (i * 37) % 256, len = 4096 - (i % 7) * 3;
        runs.push_back({w.at(page * 4096), memmap::GuestPhysAddr{page * 4096}, len});
        for (uint64_t k = 0; k < len; ++k) runs.back().host[k] = static_cast<uint8_t>(i + k);
        total += len;
    }
    std::vector<uint8_t> want;
    for (auto& r : runs) want.insert(want.end(), r.host, r.host + r.len);
    uint64_t d = 0;
    ASSERT_EQ(w.be->mem_alloc(total, &d), VGPU_SUCCESS);
    for (SgStrategy s : {SgStrategy::PerChunk, SgStrategy::Coalesce, SgStrategy::Bounce, SgStrategy::Batch,
                         SgStrategy::GatherKernel}) {
        ASSERT_EQ(w.be->memset_d8(d, 0, total, 0, false), VGPU_SUCCESS);
        ASSERT_EQ(w.be->memcpy_htod_sg(d, runs, s, 0, false), VGPU_SUCCESS) << to_string(s);
        std::vector<uint8_t> got(total);
        ASSERT_EQ(w.be->memcpy_dtoh(got.data(), d, total, 0, false), VGPU_SUCCESS);
        EXPECT_TRUE(got == want) << to_string(s);
        for (auto& r : runs) std::memset(r.host, 0, r.len);
        ASSERT_EQ(w.be->memcpy_dtoh_sg(d, runs, s, 0, false), VGPU_SUCCESS) << to_string(s);
        std::vector<uint8_t> back;
        for (auto& r : runs) back.insert(back.end(), r.host, r.host + r.len);
        EXPECT_TRUE(back == want) << to_string(s) << " (device to host)";
    }
    // A run the worker does not share is refused, not copied from a stale snapshot.
    std::vector<uint8_t> heap(4096);
    const memmap::HostRun stray{heap.data(), memmap::GuestPhysAddr{0}, heap.size()};
    EXPECT_EQ(w.be->memcpy_htod_sg(d, {&stray, 1}, SgStrategy::Coalesce, 0, false), VGPU_ERROR_INVALID_VALUE);
}

TEST(RemoteBackend, ModulesLaunchesStreamsAndEventsRoundTrip) {
    WorkerRig w;
    const BackendFunction fn = load_vector_add(*w.be);
    ASSERT_NE(fn, 0u);
    BackendModule m = 0;
    BackendFunction f = 0;
    const uint8_t img[] = {1, 2, 3};
    ASSERT_EQ(w.be->module_load(img, &m), VGPU_SUCCESS);
    EXPECT_EQ(kvmgpu::test::get_function(*w.be, m, "no_such_kernel", &f), VGPU_ERROR_NOT_FOUND);
    EXPECT_EQ(w.be->module_load({}, &m), VGPU_ERROR_INVALID_IMAGE); // as in-process
    const uint32_t n = 5000;
    std::vector<float> a(n), b(n);
    for (uint32_t i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = 0.25f * static_cast<float>(i);
    const uint64_t da = upload(*w.be, a.data(), n * 4), db = upload(*w.be, b.data(), n * 4);
    uint64_t dc = 0;
    ASSERT_EQ(w.be->mem_alloc(n * 4, &dc), VGPU_SUCCESS);

    BackendStream s = 0;
    BackendEvent e0 = 0, e1 = 0;
    ASSERT_EQ(w.be->stream_create(0, &s), VGPU_SUCCESS);
    ASSERT_EQ(w.be->event_create(0, &e0), VGPU_SUCCESS);
    ASSERT_EQ(w.be->event_create(0, &e1), VGPU_SUCCESS);
    ASSERT_EQ(w.be->event_record(e0, s), VGPU_SUCCESS);
    ASSERT_EQ(vector_add(*w.be, fn, da, db, dc, n), VGPU_SUCCESS);
    ASSERT_EQ(w.be->event_record(e1, s), VGPU_SUCCESS);
    ASSERT_EQ(w.be->stream_synchronize(s), VGPU_SUCCESS);
    ASSERT_EQ(w.be->event_synchronize(e1), VGPU_SUCCESS);
    float ms = -1;
    ASSERT_EQ(w.be->event_elapsed_ms(e0, e1, &ms), VGPU_SUCCESS);
    EXPECT_GE(ms, 0.0f);
    EXPECT_TRUE(std::isfinite(ms));
    std::vector<float> c(n);
    ASSERT_EQ(w.be->memcpy_dtoh(c.data(), dc, n * 4, 0, false), VGPU_SUCCESS);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], 1.25f * static_cast<float>(i)) << i;
    BackendFunction empty = 0;
    ParamLayout layout;
    ASSERT_EQ(kvmgpu::test::get_function(*w.be, m, "empty_kernel", &empty, &layout), VGPU_SUCCESS);
    EXPECT_EQ(layout.count(), 0u);
    // The layout crosses the channel intact: vector_add's, as the worker's backend made it.
    BackendFunction again = 0;
    ASSERT_EQ(kvmgpu::test::get_function(*w.be, m, "vector_add", &again, &layout), VGPU_SUCCESS);
    EXPECT_EQ(layout.sizes, (std::vector<uint32_t>{8, 8, 8, 4}));
    EXPECT_EQ(layout.offsets, (std::vector<uint32_t>{0, 8, 16, 24}));
    EXPECT_EQ(w.be->launch(empty, {1, 1, 1}, {1, 1, 1}, 0, s, {}, {}), VGPU_SUCCESS); // no parameters at all
    // Parameter sizes reach the worker: a wrong one is refused there.
    uint64_t p64 = 0;
    void* bad[] = {&p64};
    const uint16_t bad_sizes[] = {8};
    EXPECT_EQ(w.be->launch(fn, {1, 1, 1}, {1, 1, 1}, 0, 0, bad, bad_sizes), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(w.be->event_destroy(e0), VGPU_SUCCESS);
    EXPECT_EQ(w.be->event_destroy(e0), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(w.be->event_destroy(e1), VGPU_SUCCESS);
    EXPECT_EQ(w.be->stream_destroy(s), VGPU_SUCCESS);
    EXPECT_EQ(w.be->stream_synchronize(s), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(w.be->module_unload(m), VGPU_SUCCESS);
    EXPECT_EQ(w.be->module_unload(m), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(w.be->replacements(), 0u);
}

TEST(RemoteBackend, RecoveryInPlaceKeepsTheWorker) {
    WorkerRig w;
    const pid_t pid = w.be->worker_pid();
    uint64_t d = 0;
    ASSERT_EQ(w.be->mem_alloc(4096, &d), VGPU_SUCCESS);
    EXPECT_FALSE(w.be->recover_from(VGPU_ERROR_INVALID_VALUE)); // not sticky: nothing dropped
    EXPECT_EQ(w.be->memset_d8(d, 1, 4096, 0, false), VGPU_SUCCESS);
    // The host backend recovers from an illegal address in place.
    EXPECT_TRUE(w.be->recover_from(VGPU_ERROR_ILLEGAL_ADDRESS));
    EXPECT_EQ(w.be->worker_pid(), pid);
    EXPECT_EQ(w.be->mem_free(d), VGPU_ERROR_INVALID_VALUE); // gone with everything else
    EXPECT_NE(w.be->guest_ram_device_address(w.at(0)), 0u);
    EXPECT_EQ(w.be->mem_alloc(4096, &d), VGPU_SUCCESS);
}

// Guest RAM must be shared with the worker: private memory is refused, and
// RAM mapped after the worker was forked is picked up by a new worker as
// long as the old one held nothing.
TEST(RemoteBackend, GuestRamMappedAfterTheForkOrNotShared) {
    std::string why;
    auto be = RemoteBackend::create(host_factory(), {}, &why);
    ASSERT_TRUE(be) << why;
    std::vector<uint8_t> heap(1 << 16);
    EXPECT_EQ(be->register_guest_ram(heap.data(), heap.size()), VGPU_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(be->guest_ram_device_address(heap.data()), 0u);

    auto late = memmap::Backing::create(memmap::PageSize::k4K, 1 << 20);
    const pid_t first = be->worker_pid();
    ASSERT_EQ(be->register_guest_ram(late->data(), late->size()), VGPU_SUCCESS);
    EXPECT_NE(be->worker_pid(), first) << "a worker that cannot see the RAM must be replaced";
    EXPECT_NE(be->guest_ram_device_address(late->data()), 0u);
    EXPECT_EQ(be->replacements(), 0u) << "not a fault";
    EXPECT_FALSE(be->recover_from(VGPU_ERROR_INVALID_VALUE));

    // Once the worker holds objects it is kept: the later RAM is not zero-copy.
    uint64_t d = 0;
    ASSERT_EQ(be->mem_alloc(4096, &d), VGPU_SUCCESS);
    auto later = memmap::Backing::create(memmap::PageSize::k4K, 1 << 20);
    const pid_t second = be->worker_pid();
    EXPECT_EQ(be->register_guest_ram(later->data(), later->size()), VGPU_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(be->worker_pid(), second);
    EXPECT_EQ(be->guest_ram_device_address(later->data()), 0u);
    // ... but copies from it still work, staged.
    std::memset(later->data(), 0x6B, 4096);
    ASSERT_EQ(be->memcpy_htod(d, later->data(), 4096, 0, false), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_dtoh(late->data(), d, 4096, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(late->data()[4095], 0x6B);
}

TEST(RemoteBackend, FactoryFailureComesBackAsTheReason) {
    std::string why;
    auto none = RemoteBackend::create([](std::string* w) -> std::unique_ptr<GpuBackend> {
        *w = "no device in this test";
        return nullptr;
    }, {}, &why);
    EXPECT_FALSE(none);
    EXPECT_EQ(why, "no device in this test");
    auto throws = RemoteBackend::create([](std::string*) -> std::unique_ptr<GpuBackend> {
        throw std::runtime_error("factory threw");
    }, {}, &why);
    EXPECT_FALSE(throws);
    EXPECT_EQ(why, "factory threw");
}

// The factory's default puts CUDA in a worker: the VMM process never loads
// libcuda, whether or not this machine has a GPU.
TEST(RemoteBackend, FactoryProbesCudaInAChildOnly) {
    std::string why;
    auto b = make_backend(BackendChoice::Auto, &why);
    ASSERT_TRUE(b);
    std::printf("make_backend(Auto): %s\n", why.c_str());
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    EXPECT_EQ(h, nullptr) << "the VMM process loaded libcuda";
    if (h) dlclose(h);
    if (b->id() == VGPU_BACKEND_CUDA) {
        EXPECT_NE(dynamic_cast<RemoteBackend*>(b.get()), nullptr);
    }
    auto host = make_backend(BackendChoice::Host, &why, 0, GpuWorker::Process);
    EXPECT_NE(dynamic_cast<HostBackend*>(host.get()), nullptr) << "the host backend stays in-process";
    GpuWorker g;
    EXPECT_TRUE(parse_gpu_worker("Process", &g) && g == GpuWorker::Process);
    EXPECT_TRUE(parse_gpu_worker("inline", &g) && g == GpuWorker::Inline);
    EXPECT_FALSE(parse_gpu_worker("thread", &g));
}

// The per-call cost: a trivial call (device_count) in a loop, against the
// same call on an in-process host backend. Printed (min, median, 99th
// percentile, mean); bounded loosely, as this runs on loaded CI machines.
TEST(RemoteBackend, TrivialCallRoundTrip) {
    WorkerRig w;
    HostBackend inline_be;
    struct Figures {
        double min, median, p99, mean;
    };
    auto time_calls = [](GpuBackend& be, int calls) {
        std::vector<double> us(static_cast<size_t>(calls));
        int n = 0;
        for (double& t : us) {
            const auto t0 = std::chrono::steady_clock::now();
            EXPECT_EQ(be.device_count(&n), VGPU_SUCCESS);
            t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        }
        const double mean = std::accumulate(us.begin(), us.end(), 0.0) / calls;
        std::sort(us.begin(), us.end());
        return Figures{us.front(), us[us.size() / 2], us[us.size() * 99 / 100], mean};
    };
    time_calls(*w.be, 1000); // warm-up
    const Figures remote = time_calls(*w.be, 20000), local = time_calls(inline_be, 20000);
    std::printf("device_count round trip through the worker: min %.2f us, median %.2f us, p99 %.1f us, mean %.1f us "
                "(in-process: median %.3f us)\n",
                remote.min, remote.median, remote.p99, remote.mean, local.median);
    RecordProperty("remote_call_median_us", std::to_string(remote.median));
    EXPECT_LT(remote.median, 1000.0);
}

} // namespace
} // namespace kvmgpu::vgpu::test
