// The CUDA backend on a real GPU (label gpu). Each test skips with the
// one-line reason when no CUDA backend can be created (no driver, no GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>

#include "tests/support/get_function.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "kvmtool-gpu/devices/vgpu_worker/engine_factory.h"
#include "tests/support/device_walk_cases.h"
#include "tests/support/graph_cases.h"
#include "tests/support/param_layout_cases.h"
#include "memmap/backing.h"
#include "tests/support/gpu_test_kernels.h"
#include "tests/support/vgpu_rig.h"


namespace kvmgpu::vgpu::test {
namespace {

std::unique_ptr<CudaBackend> make_cuda(std::string* why) { return CudaBackend::create(CudaBackendOptions{}, why); }

// gpu_test_kernels.cu, built by nvcc and linked in: what a guest would load.
#define REQUIRE_CUDA(var)                                     \
    std::string why_;                                         \
    auto var = make_cuda(&why_);                              \
    if (!var) GTEST_SKIP() << "no CUDA backend: " << why_;    \
    var->bind_thread()

// Guest RAM stand-in, registered with the backend (lazy: as reached).
struct Ram {
    std::unique_ptr<memmap::Backing> b;
    Ram(GpuBackend& be, uint64_t bytes, bool lazy = false) : b(memmap::Backing::create(memmap::PageSize::k4K, bytes)) {
        EXPECT_EQ(lazy ? be.add_guest_ram(b->data(), bytes) : be.register_guest_ram(b->data(), bytes), VGPU_SUCCESS);
    }
    uint8_t* at(uint64_t off) { return b->data() + off; }
};

// `pages` scattered 4 KiB runs (shuffled page order) plus odd-sized ones.
std::vector<memmap::HostRun> scattered(Ram& ram, uint64_t first_page, uint64_t pages, bool odd, uint32_t seed) {
    std::vector<uint64_t> order(pages);
    std::iota(order.begin(), order.end(), first_page);
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    std::vector<memmap::HostRun> runs;
    for (uint64_t i = 0; i < pages; ++i) {
        // Odd mode: lengths and offsets that are not multiples of 16.
        const uint64_t off = odd ? (i * 5) % 48 : 0, len = odd ? 4096 - 48 - (i % 13) : 4096;
        runs.push_back({ram.at(order[i] * 4096 + off), {order[i] * 4096 + off}, len});
    }
    return runs;
}

void fill(std::span<const memmap::HostRun> runs, uint8_t seed) {
    uint64_t k = 0;
    for (auto& r : runs)
        for (uint64_t i = 0; i < r.len; ++i, ++k) r.host[i] = static_cast<uint8_t>(seed + k * 13 + (k >> 10));
}

const SgStrategy kAll[] = {SgStrategy::PerChunk, SgStrategy::Coalesce, SgStrategy::Bounce, SgStrategy::Batch,
                           SgStrategy::GatherKernel};

bool available(CudaBackend& be, SgStrategy s) {
    return !(s == SgStrategy::Batch && !be.has_batch()) && !(s == SgStrategy::GatherKernel && !be.has_gather_kernel());
}

TEST(CudaBackend, DescribesItselfAndCopies) {
    REQUIRE_CUDA(be);
    std::printf("%s\n", be->describe().c_str());
    Ram ram(*be, 4 << 20);
    EXPECT_NE(be->guest_ram_device_address(ram.at(4096)), 0u);
    uint64_t d;
    ASSERT_EQ(be->mem_alloc(1 << 20, &d), VGPU_SUCCESS);
    for (int i = 0; i < (1 << 20); ++i) ram.at(0)[i] = static_cast<uint8_t>(i * 3);
    ASSERT_EQ(be->memcpy_htod(d, ram.at(0), 1 << 20, 0, false), VGPU_SUCCESS);
    ASSERT_EQ(be->memset(d + 16, 0xDEADBEEF, 4, 2, 0, false), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_dtoh(ram.at(2 << 20), d, 1 << 20, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(0, std::memcmp(ram.at(2 << 20), ram.at(0), 16));
    uint32_t w;
    std::memcpy(&w, ram.at((2 << 20) + 20), 4);
    EXPECT_EQ(w, 0xDEADBEEFu);
    EXPECT_EQ(0, std::memcmp(ram.at((2 << 20) + 24), ram.at(24), (1 << 20) - 24));
    EXPECT_EQ(be->mem_free(d), VGPU_SUCCESS);
}

void every_strategy_moves_the_right_bytes(CudaBackend* be, bool lazy) {
    Ram ram(*be, 64 << 20, lazy);
    for (bool odd : {false, true}) {
        const auto src = scattered(ram, 0, 1024, odd, 1);
        const auto dst = scattered(ram, 2048, 1024, odd, 2);
        fill(src, odd ? 7 : 3);
        uint64_t total = 0;
        for (auto& r : src) total += r.len;
        std::vector<uint8_t> want;
        for (auto& r : src) want.insert(want.end(), r.host, r.host + r.len);
        uint64_t d;
        ASSERT_EQ(be->mem_alloc(total, &d), VGPU_SUCCESS);
        for (SgStrategy s : kAll) {
            if (!available(*be, s)) {
                EXPECT_EQ(be->memcpy_htod_sg(d, src, s, 0, false), VGPU_ERROR_NOT_SUPPORTED) << to_string(s);
                continue;
            }
            ASSERT_EQ(be->memset(d, 0, 1, total, 0, false), VGPU_SUCCESS);
            ASSERT_EQ(be->memcpy_htod_sg(d, src, s, 0, false), VGPU_SUCCESS) << to_string(s);
            std::vector<uint8_t> got(total);
            ASSERT_EQ(be->memcpy_dtoh(got.data(), d, total, 0, false), VGPU_SUCCESS);
            EXPECT_TRUE(got == want) << to_string(s) << (odd ? " odd" : "");
            for (auto& r : dst) std::memset(r.host, 0, r.len);
            ASSERT_EQ(be->memcpy_dtoh_sg(d, dst, s, 0, false), VGPU_SUCCESS) << to_string(s);
            std::vector<uint8_t> back;
            for (auto& r : dst) back.insert(back.end(), r.host, r.host + r.len);
            EXPECT_TRUE(back == want) << to_string(s) << (odd ? " odd" : "") << " (device to host)";
        }
        be->mem_free(d);
    }
}

TEST(CudaBackend, EveryScatterGatherStrategyMovesTheRightBytes) {
    REQUIRE_CUDA(be);
    every_strategy_moves_the_right_bytes(be.get(), false);
}

// Runs registered as they are reached, some of them cut where two
// registrations meet.
TEST(CudaBackend, EveryScatterGatherStrategyMovesTheRightBytesFromLazyRam) {
    REQUIRE_CUDA(be);
    every_strategy_moves_the_right_bytes(be.get(), true);
}

TEST(CudaBackend, LazyRamRegistersWhatCopiesReachAndCopiesAcrossRegistrations) {
    REQUIRE_CUDA(be);
    constexpr uint64_t M = 1 << 20;
    Ram ram(*be, 64 * M, true);
    EXPECT_EQ(be->registered_bytes(), 0u);
    EXPECT_NE(be->guest_ram_device_address(ram.at(4096)), 0u) << "the zero-copy window exists before registration";
    uint64_t d;
    ASSERT_EQ(be->mem_alloc(16 * M, &d), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_htod(d, ram.at(2 * M), 1, 0, false), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_htod(d, ram.at(6 * M + 5), 1, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(be->registered_bytes(), 4 * M) << "one 2 MiB granule each";
    for (uint64_t i = 0; i < 8 * M; ++i) ram.at(M)[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
    // [1M, 9M) spans the two registrations and three new ones.
    ASSERT_EQ(be->memcpy_htod(d, ram.at(M), 8 * M, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(be->registered_bytes(), 10 * M);
    ASSERT_EQ(be->memcpy_dtoh(ram.at(20 * M + 3), d, 8 * M, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(0, std::memcmp(ram.at(20 * M + 3), ram.at(M), 8 * M));
    EXPECT_EQ(be->registered_bytes(), 20 * M) << "[20M, 29M) rounded out to granules";
    // Asked for (zero-copy), a range is registered and readable by the device.
    ASSERT_EQ(be->prepare_guest_ram(ram.at(40 * M), M), VGPU_SUCCESS);
    EXPECT_EQ(be->registered_bytes(), 22 * M);
    ASSERT_EQ(be->prepare_guest_ram(nullptr, 0), VGPU_SUCCESS);
    EXPECT_EQ(be->registered_bytes(), 64 * M);
    EXPECT_EQ(be->mem_free(d), VGPU_SUCCESS);
}

// A pitched copy whose host rows run across three registrations, both
// ways, as the device model sends it (the span prepared first): the
// driver refuses such a copy whole, so the backend cuts it.
TEST(CudaBackend, PitchedCopiesAcrossLazyRegistrations) {
    REQUIRE_CUDA(be);
    constexpr uint64_t M = 1 << 20, kPitch = 4096 + 64, kWidth = 3000, kRows = 1000;
    Ram ram(*be, 32 * M, true);
    ASSERT_EQ(be->prepare_guest_ram(ram.at(2 * M), 1), VGPU_SUCCESS); // [2M, 4M) registered first
    for (uint64_t i = 0; i < kPitch * kRows; ++i) ram.at(M + 100)[i] = static_cast<uint8_t>(i * 13 + (i >> 11));
    uint64_t d;
    ASSERT_EQ(be->mem_alloc(kWidth * kRows, &d), VGPU_SUCCESS);
    Copy3D up;
    up.src.kind = VGPU_COPY_HOST, up.src.host = ram.at(M + 100), up.src.pitch = kPitch, up.src.height = kRows;
    up.dst.kind = VGPU_COPY_DEVICE, up.dst.dptr = d, up.dst.pitch = kWidth, up.dst.height = kRows;
    up.width_bytes = kWidth, up.height = kRows, up.depth = 1;
    ASSERT_EQ(be->prepare_guest_ram(up.src.host, kPitch * kRows), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_3d(up, 0, false), VGPU_SUCCESS);
    // Back, to a second place whose rows also cross registrations.
    Copy3D down = up;
    std::swap(down.src, down.dst);
    down.dst.host = ram.at(7 * M + 5), down.dst.pitch = kPitch + 8;
    ASSERT_EQ(be->prepare_guest_ram(ram.at(8 * M), 1), VGPU_SUCCESS);
    ASSERT_EQ(be->prepare_guest_ram(down.dst.host, (kPitch + 8) * kRows), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_3d(down, 0, false), VGPU_SUCCESS);
    for (uint64_t r = 0; r < kRows; ++r)
        ASSERT_EQ(0, std::memcmp(down.dst.host + r * (kPitch + 8), up.src.host + r * kPitch, kWidth)) << "row " << r;
    EXPECT_EQ(be->mem_free(d), VGPU_SUCCESS);
}

// A graph's copy nodes whose host ranges span lazy registrations (and the
// gaps between): the driver refuses host memory that is not one
// registration in a node, so the range is made one first.
TEST(CudaBackend, CopyNodesAcrossLazyRegistrations) {
    REQUIRE_CUDA(be);
    GraphBackend* graphs = be->graphs();
    if (!graphs) GTEST_SKIP() << "the driver offers no graphs";
    constexpr uint64_t M = 1 << 20;
    Ram ram(*be, 32 * M, true);
    for (const uint64_t at : {2 * M, 6 * M, 13 * M}) ASSERT_EQ(be->prepare_guest_ram(ram.at(at), 1), VGPU_SUCCESS);
    for (uint64_t i = 0; i < 4 * M; ++i) ram.at(3 * M)[i] = static_cast<uint8_t>(i * 11 + (i >> 13));
    uint64_t d;
    ASSERT_EQ(be->mem_alloc(4 * M, &d), VGPU_SUCCESS);
    BackendGraph g = 0;
    ASSERT_EQ(graphs->graph_create(&g), VGPU_SUCCESS);
    GraphNodeSpec up;
    up.kind = GraphNodeSpec::Kind::Memcpy, up.direction = VGPU_OP_MEMCPY_HTOD;
    up.dst = d, up.bytes = 4 * M, up.host = ram.at(3 * M); // [3M, 7M) meets [2M, 4M) and [6M, 8M)
    ASSERT_EQ(be->prepare_guest_ram_in_one(up.host, up.bytes), VGPU_SUCCESS);
    BackendGraphNode first = 0, second = 0;
    ASSERT_EQ(graphs->add_node(g, up, &first), VGPU_SUCCESS);
    GraphNodeSpec down = up;
    down.direction = VGPU_OP_MEMCPY_DTOH, down.src = d, down.dst = 0, down.host = ram.at(12 * M + 5);
    down.dependencies = std::span<const BackendGraphNode>(&first, 1);
    ASSERT_EQ(be->prepare_guest_ram_in_one(down.host, down.bytes), VGPU_SUCCESS);
    ASSERT_EQ(graphs->add_node(g, down, &second), VGPU_SUCCESS);
    BackendGraphExec e = 0;
    ASSERT_EQ(graphs->instantiate(g, 0, &e), VGPU_SUCCESS);
    ASSERT_EQ(graphs->launch(e, 0, false), VGPU_SUCCESS);
    ASSERT_EQ(be->ctx_synchronize(), VGPU_SUCCESS);
    EXPECT_EQ(0, std::memcmp(ram.at(12 * M + 5), ram.at(3 * M), 4 * M));
    EXPECT_EQ(graphs->exec_destroy(e), VGPU_SUCCESS);
    EXPECT_EQ(graphs->graph_destroy(g), VGPU_SUCCESS);
    EXPECT_EQ(be->mem_free(d), VGPU_SUCCESS);
}

// Prints what each strategy reaches for 65,536 scattered 4 KiB pages
// (256 MiB), the DESIGN.md case. Figures only: speed is judged by `bench
// bandwidth`, never by a test (a busy machine must not fail it).
TEST(CudaBackend, ScatteredPageBandwidth) {
    REQUIRE_CUDA(be);
    constexpr uint64_t kPages = 65536;
    Ram ram(*be, (kPages + 16) * 4096);
    const auto runs = scattered(ram, 0, kPages, false, 3);
    fill(runs, 1);
    uint64_t d;
    ASSERT_EQ(be->mem_alloc(kPages * 4096, &d), VGPU_SUCCESS);
    for (SgStrategy s : kAll) {
        if (!available(*be, s)) continue;
        for (bool htod : {true, false}) {
            auto run = [&] { return htod ? be->memcpy_htod_sg(d, runs, s, 0, false) : be->memcpy_dtoh_sg(d, runs, s, 0, false); };
            ASSERT_EQ(run(), VGPU_SUCCESS); // warm-up
            const int reps = s == SgStrategy::PerChunk || s == SgStrategy::Coalesce ? 1 : 3;
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < reps; ++i) ASSERT_EQ(run(), VGPU_SUCCESS);
            const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
            const double gbps = kPages * 4096 / sec / 1e9;
            std::printf("sg %-13s %s: %6.1f GB/s\n", to_string(s), htod ? "htod" : "dtoh", gbps);
            RecordProperty(std::string(to_string(s)) + (htod ? "_htod_GBps" : "_dtoh_GBps"), std::to_string(gbps));
            if (s == SgStrategy::GatherKernel) {
                // Host side alone (run table built and sent, kernel queued).
                const auto e0 = std::chrono::steady_clock::now();
                ASSERT_EQ(htod ? be->memcpy_htod_sg(d, runs, s, 0, true) : be->memcpy_dtoh_sg(d, runs, s, 0, true),
                          VGPU_SUCCESS);
                const double enqueue_us =
                    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - e0).count();
                ASSERT_EQ(be->stream_synchronize(0), VGPU_SUCCESS);
                std::printf("sg %-13s %s: %6.0f us to build and enqueue the run table\n", to_string(s),
                            htod ? "htod" : "dtoh", enqueue_us);
            }
        }
    }
}

// The device walk on the same 65,536 shuffled pages, from a list in guest
// RAM as a guest writes it. Prints GB/s and what the host spends per call.
TEST(CudaBackend, DeviceWalkBandwidth) {
    REQUIRE_CUDA(be);
    if (!be->has_device_walk()) GTEST_SKIP() << "built without nvcc: no device walk";
    constexpr uint64_t kPages = 65536;
    Ram ram(*be, (kPages + 16 + 256) * 4096); // pages, then the list (1 MiB)
    const auto runs = scattered(ram, 0, kPages, false, 3);
    fill(runs, 1);
    auto* list = reinterpret_cast<vgpu_sg_entry*>(ram.at((kPages + 16) * 4096));
    for (uint64_t i = 0; i < kPages; ++i) list[i] = {runs[i].gpa.value, runs[i].len};
    const RamRegion region{0, ram.b->size(), ram.b->data()};
    const SgWalk w{list, kPages, kPages * 4096, std::span<const RamRegion>(&region, 1)};
    uint64_t d;
    ASSERT_EQ(be->mem_alloc(kPages * 4096, &d), VGPU_SUCCESS);
    for (bool htod : {true, false}) {
        ASSERT_EQ(be->memcpy_sg_walk(htod, d, w, 0, false), VGPU_SUCCESS); // warm-up
        constexpr int kReps = 5;
        const auto t0 = std::chrono::steady_clock::now();
        double enqueue_us = 0;
        for (int i = 0; i < kReps; ++i) {
            const auto e0 = std::chrono::steady_clock::now();
            ASSERT_EQ(be->memcpy_sg_walk(htod, d, w, 0, true), VGPU_SUCCESS);
            enqueue_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - e0).count();
        }
        ASSERT_EQ(be->stream_synchronize(0), VGPU_SUCCESS);
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kReps;
        const double gbps = kPages * 4096 / sec / 1e9;
        std::printf("sg device-walk   %s: %6.1f GB/s, %.0f us per call on the host\n", htod ? "htod" : "dtoh", gbps,
                    enqueue_us / kReps);
        RecordProperty(std::string("device_walk") + (htod ? "_htod_GBps" : "_dtoh_GBps"), std::to_string(gbps));
    }
    // The bytes: back out through the walk into zeroed pages, compare.
    std::vector<uint8_t> want;
    for (const auto& r : runs) want.insert(want.end(), r.host, r.host + r.len);
    ASSERT_EQ(be->memcpy_sg_walk(true, d, w, 0, false), VGPU_SUCCESS);
    for (const auto& r : runs) std::memset(r.host, 0, r.len);
    ASSERT_EQ(be->memcpy_sg_walk(false, d, w, 0, false), VGPU_SUCCESS);
    uint64_t k = 0;
    for (const auto& r : runs) {
        ASSERT_EQ(std::memcmp(r.host, want.data() + k, r.len), 0) << "page at gpa " << r.gpa.value;
        k += r.len;
    }
}

// One of the shared device-walk cases on a CUDA VM of its own.
void on_cuda_vm(void (*walk_case)(VgpuRig&)) {
    REQUIRE_CUDA(be);
    if (!be->has_device_walk()) GTEST_SKIP() << "built without nvcc: no device walk";
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    walk_case(rig);
}

TEST(CudaVgpu, DeviceWalkMovesTheRightBytes) { on_cuda_vm(walk_moves_the_right_bytes); }
TEST(CudaVgpu, DeviceWalkManyInFlight) { on_cuda_vm(walk_many_in_flight); }
TEST(CudaVgpu, DeviceWalkRefusesBadLists) { on_cuda_vm(walk_refuses_bad_lists); }

// One of the shared graph cases on a CUDA VM of its own (the driver's graphs and capture).
void graph_case_on_cuda(void (*graph_case)(GraphVm&)) {
    REQUIRE_CUDA(be);
    if (!be->graphs()) GTEST_SKIP() << "the driver lacks a graph entry point";
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    GraphVm vm(rig, test_fatbin());
    graph_case(vm);
}

TEST(CudaVgpu, GraphRunsInDependencyOrder) { graph_case_on_cuda(graph_runs_in_dependency_order); }
TEST(CudaVgpu, GraphKernelNodeParams) { graph_case_on_cuda(kernel_node_params_in_graph_and_exec); }
TEST(CudaVgpu, CaptureRecordsAndReplays) { graph_case_on_cuda(capture_records_and_replays); }
TEST(CudaVgpu, SynchronizingACaptureInvalidatesIt) { graph_case_on_cuda(synchronizing_a_capture_invalidates_it); }
TEST(CudaVgpu, GraphShapeAndClone) { graph_case_on_cuda(graph_shape_and_clone); }
TEST(CudaVgpu, StreamAttributesRoundTrip) { graph_case_on_cuda(stream_attributes_round_trip); }
TEST(CudaVgpu, EventNodesAndSwitchedOffNodes) { graph_case_on_cuda(event_nodes_and_switched_off_nodes); }
TEST(CudaVgpu, GraphMemoryNodes) { graph_case_on_cuda(graph_memory_nodes); }
TEST(CudaVgpu, ConditionalNodesAndCaptureGraphs) { graph_case_on_cuda(conditional_nodes_and_capture_graphs); }
TEST(CudaVgpu, ChildGraphNodes) { graph_case_on_cuda(child_graph_nodes); }

TEST(CudaBackend, LoadedModuleKernelRuns) {
    REQUIRE_CUDA(be);
    BackendModule m;
    ASSERT_EQ(be->module_load(test_fatbin(), &m), VGPU_SUCCESS);
    BackendFunction poke, empty;
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "poke_u64", &poke), VGPU_SUCCESS);
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "empty_kernel", &empty), VGPU_SUCCESS);
    EXPECT_EQ(kvmgpu::test::get_function(*be, m, "nope", &empty), VGPU_ERROR_NOT_FOUND);
    uint64_t d;
    ASSERT_EQ(be->mem_alloc(8, &d), VGPU_SUCCESS);
    uint64_t v = 0x1234567890ABCDEFull;
    void* params[] = {&d, &v};
    const uint16_t sizes[] = {8, 8};
    ASSERT_EQ(be->launch(poke, {1, 1, 1}, {32, 1, 1}, 0, 0, params, sizes, false), VGPU_SUCCESS);
    uint64_t got = 0;
    ASSERT_EQ(be->memcpy_dtoh(&got, d, 8, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(got, v);
    EXPECT_EQ(be->module_unload(m), VGPU_SUCCESS);
}

// The whole path on the GPU: guest commands in the ring, a fatbin image in
// guest RAM, the launch through the device model.
TEST(CudaVgpu, VectorAddThroughTheRing) {
    std::string why;
    auto be = make_cuda(&why);
    if (!be) GTEST_SKIP() << "no CUDA backend: " << why;
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_TRUE(rig.reg_read64(VGPU_REG_FEATURES) & VGPU_FEATURE_REAL_KERNELS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_INIT}).r0, VGPU_BACKEND_CUDA);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn, test_fatbin());
    ASSERT_NE(fn, 0u);
    constexpr uint32_t n = 100000;
    std::vector<float> a(n), b(n);
    for (uint32_t i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = 2.0f;
    const uint64_t da = rig.alloc(n * 4), db = rig.alloc(n * 4), dc = rig.alloc(n * 4);
    rig.put(kDataGpa, a.data(), n * 4);
    rig.put(kDataGpa + n * 4, b.data(), n * 4);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {da, kDataGpa, n * 4, 0}}).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {db, kDataGpa + n * 4, n * 4, 0}}).status, VGPU_SUCCESS);
    const std::vector<std::vector<uint8_t>> p{bytes(da), bytes(db), bytes(dc), bytes(n)};
    ASSERT_EQ(rig.launch(fn, p, (n + 255) / 256, 1, 256, 1).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, dc, n * 4, 0}}).status, VGPU_SUCCESS);
    std::vector<float> c(n);
    rig.get(kDataGpa, c.data(), n * 4);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], static_cast<float>(i) + 2.0f) << i;

}

// Occupancy and limits reach the driver: its occupancy for vector_add, the
// stack limit read back as the driver rounded it and charged to the quota
// (every resident thread's growth), RESET giving the start value back.
TEST(CudaVgpu, OccupancyAndLimitsThroughTheRing) {
    std::string why;
    auto be = make_cuda(&why);
    if (!be) GTEST_SKIP() << "no CUDA backend: " << why;
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn, test_fatbin());
    const Done occ = rig.call({.opcode = VGPU_OP_FUNC_OCCUPANCY, .args = {fn, 256, 0, 0}});
    ASSERT_EQ(occ.status, VGPU_SUCCESS);
    EXPECT_GE(occ.r0, 1u);
    EXPECT_LE(occ.r0 * 256, 2048u); // no GPU holds more than 2048 threads per multiprocessor
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_OCCUPANCY, .args = {fn, 1025, 0, 0}}).r0, 0u);
    const Done start = rig.call({.opcode = VGPU_OP_CTX_LIMIT, .args = {VGPU_LIMIT_STACK_SIZE, 0, 0}});
    ASSERT_EQ(start.status, VGPU_SUCCESS);
    const Done info0 = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
    const Done set = rig.call({.opcode = VGPU_OP_CTX_LIMIT, .args = {VGPU_LIMIT_STACK_SIZE, start.r0 + 1024, 1}});
    ASSERT_EQ(set.status, VGPU_SUCCESS);
    EXPECT_GE(set.r0, start.r0 + 1024);
    const Done info1 = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
    EXPECT_LT(info1.r0, info0.r0); // the reservation counts against the quota
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_CTX_LIMIT, .args = {VGPU_LIMIT_STACK_SIZE, 1ull << 40, 1}}).status,
              VGPU_ERROR_OUT_OF_MEMORY);
    rig.reset();
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_CTX_LIMIT, .args = {VGPU_LIMIT_STACK_SIZE, 0, 0}}).r0, start.r0);
}

// cuOccupancyAvailableDynamicSMemPerBlock: the backend gives what the
// driver gives the same function natively, errors included (zero, negative
// and too large counts, which the device model passes on as the guest's ints).
TEST(CudaBackend, AvailableSharedIsTheDriversAnswer) {
    REQUIRE_CUDA(be);
    std::string why;
    const CudaDriverApi* api = CudaDriverApi::get(&why);
    ASSERT_NE(api, nullptr) << why;
    const auto native = KVMGPU_CUDA_LATE(*api, cuOccupancyAvailableDynamicSMemPerBlock, 10020);
    if (!native) GTEST_SKIP() << "this driver lacks cuOccupancyAvailableDynamicSMemPerBlock";
    BackendModule m = 0;
    ASSERT_EQ(be->module_load(test_fatbin(), &m), VGPU_SUCCESS);
    BackendFunction f = 0;
    ParamLayout layout;
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "vector_add", &f, &layout), VGPU_SUCCESS);
    const std::pair<int, int> cases[] = {{1, 256}, {2, 256}, {8, 256}, {1, 1024}, {2, 1024},  {32, 32},
                                         {0, 256}, {1, 0},   {-1, 256}, {1, -32}, {1, 2048}, {64, 1024}};
    for (const auto& [blocks, block] : cases) {
        size_t want = 0;
        const CUresult native_status = native(&want, reinterpret_cast<CUfunction>(f), blocks, block);
        uint64_t got = 0;
        const Status status = be->available_shared(f, blocks, block, &got);
        std::printf("available shared, %d blocks of %d: native %d %zu B, backend %u %llu B\n", blocks, block,
                    static_cast<int>(native_status), want, status, static_cast<unsigned long long>(got));
        EXPECT_EQ(status, static_cast<Status>(native_status)) << blocks << " x " << block;
        if (native_status == CUDA_SUCCESS) {
            EXPECT_EQ(got, want) << blocks << " x " << block;
        }
    }
    EXPECT_EQ(be->module_unload(m), VGPU_SUCCESS);
}

// The layout comes from the module, and launches must match it exactly.
TEST(CudaBackend, ReportsTheModulesParameterLayout) {
    REQUIRE_CUDA(be);
    Ram ram(*be, 1 << 20);
    BackendModule m = 0;
    ASSERT_EQ(be->module_load(test_fatbin(), &m), VGPU_SUCCESS);
    BackendFunction f = 0;
    ParamLayout l;
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "copy_wide", &f, &l), VGPU_SUCCESS);
    EXPECT_EQ(l.sizes, (std::vector<uint32_t>{64, 8}));
    EXPECT_EQ(l.offsets, (std::vector<uint32_t>{0, 64}));
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "vector_add", &f, &l), VGPU_SUCCESS);
    EXPECT_EQ(l.sizes, (std::vector<uint32_t>{8, 8, 8, 4}));
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "empty_kernel", &f, &l), VGPU_SUCCESS);
    EXPECT_EQ(l.count(), 0u);
    EXPECT_EQ(be->module_unload(m), VGPU_SUCCESS);
}

TEST(CudaVgpu, LaunchMustMatchTheKernelsParameterLayout) {
    std::string why;
    auto be = make_cuda(&why);
    if (!be) GTEST_SKIP() << "no CUDA backend: " << why;
    VgpuRig rig(VgpuOptions{}, std::move(be));
    launch_must_match_layout(rig, test_fatbin());
}

// The quota bypass seen on the H100: alloc the whole quota, a refused
// asynchronous walk, RESET; six rounds must not hold more than one quota.
TEST(CudaVgpu, ResetAfterARefusedAsyncWalkFreesDeviceMemory) {
    std::string why;
    auto be = make_cuda(&why);
    if (!be) GTEST_SKIP() << "no CUDA backend: " << why;
    auto probe = make_cuda(&why); // a context of its own, to read the device's free memory
    ASSERT_TRUE(probe) << why;
    constexpr uint64_t kQuota = 1ull << 30;
    VgpuRig rig(VgpuOptions{.device_mem_quota = kQuota}, std::move(be));
    uint64_t free0 = 0, total = 0;
    for (int round = 0; round < 6; ++round) {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        const uint64_t d = rig.alloc(kQuota);
        if (round == 0) {
            probe->bind_thread();
            ASSERT_EQ(probe->mem_get_info(&free0, &total), VGPU_SUCCESS);
        }
        EXPECT_EQ(post_refused_async_walk(rig, d), VGPU_SUCCESS) << "refused at the command: no async refusal to test";
        rig.reset();
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        rig.alloc(kQuota); // the quota came back: so must the memory
        rig.reset();
        uint64_t free_now = 0;
        probe->bind_thread();
        ASSERT_EQ(probe->mem_get_info(&free_now, &total), VGPU_SUCCESS);
        // free0 was read with one quota allocated; now none is.
        EXPECT_GE(free_now + (256ull << 20), free0) << "round " << round << ": device memory leaked across RESET";
    }
}

TEST(CudaVgpu, TwoVmsDoNotShareDeviceMemory) {
    std::string why;
    auto b1 = make_cuda(&why);
    if (!b1) GTEST_SKIP() << "no CUDA backend: " << why;
    auto b2 = make_cuda(&why);
    ASSERT_TRUE(b2) << why;
    VgpuRig a(VgpuOptions{}, std::move(b1)), b(VgpuOptions{}, std::move(b2));
    ASSERT_EQ(a.enable(), VGPU_SUCCESS);
    ASSERT_EQ(b.enable(), VGPU_SUCCESS);
    const uint64_t da = a.alloc(4096);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {da, kDataGpa, 16, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {da, kDataGpa, 16, 0}}).status, VGPU_SUCCESS);
}

// ---- sticky errors: last in this file --------------------------------------
// An illegal address poisons the whole process with driver 580 (cuda.h:
// "the process must be terminated and relaunched"), so these run last and
// accept either outcome of recover_from(): a working new context, or a
// backend that fails every later call cleanly. ctest runs each test in its
// own process, so each gets a clean driver there.

bool cuda_still_usable(std::string* why) {
    auto probe = make_cuda(why);
    return probe != nullptr;
}

TEST(CudaSticky, BackendRecoversOrFailsCleanly) {
    REQUIRE_CUDA(be);
    BackendModule m;
    ASSERT_EQ(be->module_load(test_fatbin(), &m), VGPU_SUCCESS);
    Ram ram(*be, 4 << 20);
    BackendFunction poke;
    ASSERT_EQ(kvmgpu::test::get_function(*be, m, "poke_u64", &poke), VGPU_SUCCESS);
    uint64_t bad = 0x10, v = 1;
    void* params[] = {&bad, &v};
    const uint16_t sizes[] = {8, 8};
    ASSERT_EQ(be->launch(poke, {1, 1, 1}, {1, 1, 1}, 0, 0, params, sizes, false), VGPU_SUCCESS); // faults later
    const Status s = be->ctx_synchronize();
    std::printf("after the fault: cuCtxSynchronize -> %u (%s)\n", s, status_name(s));
    EXPECT_GE(static_cast<uint32_t>(s), 700u);
    EXPECT_LT(static_cast<uint32_t>(s), 800u);
    EXPECT_TRUE(be->recover_from(s));
    std::printf("recovery: %s\n", be->context_lost() ? "context lost for good" : "new context");
    uint64_t d = 0;
    if (be->context_lost()) {
        EXPECT_NE(be->mem_alloc(4096, &d), VGPU_SUCCESS); // fails, does not crash or hang
        EXPECT_NE(be->describe().find("LOST"), std::string::npos);
        EXPECT_FALSE(be->recover_from(VGPU_ERROR_ILLEGAL_ADDRESS)); // no endless retries
        return;
    }
    EXPECT_NE(be->guest_ram_device_address(ram.at(0)), 0u);
    ASSERT_EQ(be->mem_alloc(4096, &d), VGPU_SUCCESS);
    std::memset(ram.at(0), 0x5A, 4096);
    const memmap::HostRun run{ram.at(0), {0}, 4096};
    const SgStrategy how = be->has_gather_kernel() ? SgStrategy::GatherKernel : SgStrategy::Coalesce;
    ASSERT_EQ(be->memcpy_htod_sg(d, {&run, 1}, how, 0, false), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_dtoh(ram.at(8192), d, 4096, 0, false), VGPU_SUCCESS);
    EXPECT_EQ(0, std::memcmp(ram.at(0), ram.at(8192), 4096));
    EXPECT_FALSE(be->recover_from(VGPU_ERROR_INVALID_VALUE)); // not sticky: nothing re-created
}

// Security issue 25 on a GPU. Registration churn: every registration's
// driver cost is charged to the quota, the GPU's memory and this process's
// resident memory come back after 4,000 register/unregister cycles, and
// RESET gives back what is still registered.
uint64_t resident_kib() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kib = 0;
    while (f && std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmRSS: %lu kB", &kib) == 1) break;
    if (f) std::fclose(f);
    return kib;
}

TEST(CudaVgpu, RegistrationChurnStaysInsideTheQuota) {
    std::string why;
    auto be = make_cuda(&why);
    if (!be) GTEST_SKIP() << "no CUDA backend: " << why;
    // A quota far above the GPU's memory: MEM_GET_INFO then shows the driver's free bytes.
    VgpuRig rig(VgpuOptions{.device_mem_quota = 1ull << 40}, std::move(be));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    std::vector<vgpu_sg_entry> list;
    for (uint64_t i = 0; i < 64; ++i) list.push_back({kDataGpa + 1024 * 1024 + 2 * i * 4096, 4096});
    rig.put(kDataGpa, list.data(), list.size() * sizeof(vgpu_sg_entry));
    const Cmd reg{.opcode = VGPU_OP_HOST_REGISTER, .args = {kDataGpa, list.size(), 64 * 4096, 0}};
    const uint64_t gpu_free = rig.call({.opcode = VGPU_OP_MEM_GET_INFO}).r0, rss = resident_kib();
    for (int i = 0; i < 4000; ++i) {
        const Done r = rig.call(reg);
        ASSERT_EQ(r.status, VGPU_SUCCESS) << i;
        ASSERT_EQ(rig.call({.opcode = VGPU_OP_HOST_UNREGISTER, .args = {r.r0}}).status, VGPU_SUCCESS) << i;
    }
    const uint64_t gpu_free_after = rig.call({.opcode = VGPU_OP_MEM_GET_INFO}).r0, rss_after = resident_kib();
    std::printf("4000 register/unregister cycles: GPU free %llu -> %llu MiB, resident %llu -> %llu MiB\n",
                (unsigned long long)(gpu_free >> 20), (unsigned long long)(gpu_free_after >> 20),
                (unsigned long long)(rss >> 10), (unsigned long long)(rss_after >> 10));
    EXPECT_GE(gpu_free_after + (16ull << 20), gpu_free);
    EXPECT_LT(rss_after, rss + (256 << 10)) << "resident memory grew by more than 256 MiB";
    rig.reset();

    // A 1 MiB quota: the charges refuse the 16th registration held at once.
    auto small = make_cuda(&why);
    ASSERT_TRUE(small) << why;
    VgpuRig tight(VgpuOptions{.device_mem_quota = 1 << 20}, std::move(small));
    ASSERT_EQ(tight.enable(), VGPU_SUCCESS);
    tight.put(kDataGpa, list.data(), list.size() * sizeof(vgpu_sg_entry));
    int held = 0;
    Done last;
    while (held < 4000 && (last = tight.call(reg)).status == VGPU_SUCCESS) ++held;
    std::printf("a VM with a 1 MiB quota held %d registrations, then status %u\n", held, last.status);
    EXPECT_EQ(last.status, VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(held, static_cast<int>((1 << 20) / ((64 << 10) + 64 * 4096 / 512)));
    tight.reset();
    ASSERT_EQ(tight.enable(), VGPU_SUCCESS);
    EXPECT_EQ(tight.call(reg).status, VGPU_SUCCESS) << "RESET gave the charges back";
}

// A sticky fault on device 0 of two (inline, in this process): device 1's
// memory does not outlive the handles the device model forgets.
TEST(CudaSticky, AFaultOnOneOfTwoDevicesFreesBoth) {
    std::string why;
    if (!cuda_still_usable(&why)) GTEST_SKIP() << "CUDA unusable in this process (an earlier sticky error): " << why;
    const int two_gpus[] = {0, 1}, one_gpu[] = {0, 0};
    auto make = [&](const memmap::GuestMemory& mem, const VgpuOptions& o) {
        auto e = make_engine(mem, o, BackendChoice::Cuda, GpuWorker::Inline, &why, two_gpus);
        if (!e) e = make_engine(mem, o, BackendChoice::Cuda, GpuWorker::Inline, &why, one_gpu);
        return e;
    };
    VgpuRig rig(VgpuOptions{.device_mem_quota = 1ull << 40}, make);
    if (!rig.dev) GTEST_SKIP() << "no CUDA backend: " << why;
    std::printf("%s\n", why.c_str());
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 1}}).status, VGPU_SUCCESS);
    const uint64_t free_before = rig.call({.opcode = VGPU_OP_MEM_GET_INFO}).r0;
    for (int i = 0; i < 3; ++i) rig.alloc(512ull << 20); // 1.5 GiB on device 1
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}}).status, VGPU_SUCCESS);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn, test_fatbin());
    const uint64_t da = rig.alloc(4096);
    const uint32_t n = 1024;
    const std::vector<std::vector<uint8_t>> bad{bytes(da), bytes(da), bytes(uint64_t{0x10}), bytes(n)};
    const Done r = rig.launch(fn, bad, 4, 1, 256, 1);
    EXPECT_GE(r.status, 700u);
    EXPECT_EQ(rig.dev->counters().recoveries, 1u);
    // Device 1 freed its 1.5 GiB, or lost its context with them (driver 580
    // lets no context of a poisoned process work again).
    const Done ctx1 = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 1}});
    const Done info = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
    std::printf("after the fault: device 1 context %u, free %llu MiB (before the 1.5 GiB: %llu MiB)\n", ctx1.status,
                (unsigned long long)(info.r0 >> 20), (unsigned long long)(free_before >> 20));
    if (info.status == VGPU_SUCCESS) {
        EXPECT_GE(info.r0 + (256ull << 20), free_before);
    }
}

// A kernel fault through the ring: the status comes back to the guest, the
// VM's handles are dropped, and later commands still complete.
TEST(CudaSticky, KernelFaultThroughTheRing) {
    std::string why;
    if (!cuda_still_usable(&why)) GTEST_SKIP() << "CUDA unusable in this process (an earlier sticky error): " << why;
    auto be = make_cuda(&why);
    ASSERT_TRUE(be) << why;
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn, test_fatbin());
    ASSERT_NE(fn, 0u);
    const uint64_t da = rig.alloc(4096);
    const uint32_t n = 1024;
    const std::vector<std::vector<uint8_t>> bad{bytes(da), bytes(da), bytes(uint64_t{0x10}), bytes(n)};
    const Done r = rig.launch(fn, bad, 4, 1, 256, 1);
    EXPECT_GE(r.status, 700u);
    EXPECT_LT(r.status, 800u);
    EXPECT_EQ(rig.dev->counters().recoveries, 1u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {da}}).status, VGPU_ERROR_INVALID_VALUE); // dropped
    const Done later = rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {4096}}); // completes either way
    std::printf("after the fault a new allocation gives status %u\n", later.status);
    EXPECT_NE(later.status, 0xFFFFFFFFu);
}

// Queries see pending work as the driver does, and a stream that waits for
// another's event starts its work only after it.
TEST(CudaVgpu, QueriesAndCrossStreamWaits) {
    std::string why;
    auto be = make_cuda(&why);
    if (!be) GTEST_SKIP() << "no CUDA backend: " << why;
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    uint64_t spin = 0;
    rig.module_with("spin_kernel", &spin, test_fatbin());
    const uint64_t s1 = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    const uint64_t s2 = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    const uint64_t ev = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).r0;
    // About half a second of one thread at ~2 GHz: long enough to look at.
    const std::vector<std::vector<uint8_t>> cycles{bytes(uint64_t{1} << 30)};
    // Queued (ASYNC): a launch without the flag would wait for the kernel.
    Cmd spin_launch = rig.launch_cmd(spin, cycles, {1, 1, 1}, {1, 1, 1}, s1);
    spin_launch.flags = VGPU_CMD_FLAG_ASYNC;
    ASSERT_EQ(rig.call(spin_launch).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {ev, s1}, .flags = VGPU_CMD_FLAG_ASYNC}).status,
              VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {s2, ev, 0}}).status, VGPU_SUCCESS);
    const uint64_t marker = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).r0;
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {marker, s2}, .flags = VGPU_CMD_FLAG_ASYNC}).status,
              VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_QUERY, .args = {s1}}).status, VGPU_ERROR_NOT_READY);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_QUERY, .args = {ev}}).status, VGPU_ERROR_NOT_READY);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_QUERY, .args = {marker}}).status, VGPU_ERROR_NOT_READY)
        << "s2 did not wait for s1's event";
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s2}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_QUERY, .args = {ev}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_QUERY, .args = {s1}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {s2, ev, 1}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.dev->counters().errors, 1u) << "NOT_READY is an answer, not an error";
}

// A stream that waits for another stream's event is not ready while the
// event is pending, and becomes ready once it is done. The first stream is
// held by a stream wait on a word no one has written yet (no kernel, no
// timing); a non-blocking stream's write then lets everything run.
TEST(CudaVgpu, StreamWaitingOnAPendingEventIsNotReady) {
    std::string why;
    auto be = make_cuda(&why);
    if (!be) GTEST_SKIP() << "no CUDA backend: " << why;
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const uint64_t word = rig.alloc(4096);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D32, .args = {word, 0, 1, 0}}).status, VGPU_SUCCESS);
    const uint64_t held = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {1}}).r0; // non-blocking
    const uint64_t waiter = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {1}}).r0;
    const uint64_t writer = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {1}}).r0;
    const uint64_t ev = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).r0;
    const uint16_t async = VGPU_CMD_FLAG_ASYNC;
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_WAIT_VALUE, .args = {held, word, 1, 1 /* EQ */, 4}, .flags = async})
                  .status,
              VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {ev, held}, .flags = async}).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {waiter, ev, 0}, .flags = async}).status,
              VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_QUERY, .args = {ev}}).status, VGPU_ERROR_NOT_READY);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_QUERY, .args = {held}}).status, VGPU_ERROR_NOT_READY);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_QUERY, .args = {waiter}}).status, VGPU_ERROR_NOT_READY)
        << "a stream waiting for a pending event reports its work done";
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_WRITE_VALUE, .args = {writer, word, 1, 0, 4}, .flags = async}).status,
              VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {waiter}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_QUERY, .args = {waiter}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_QUERY, .args = {held}}).status, VGPU_SUCCESS);
}

} // namespace
} // namespace kvmgpu::vgpu::test

namespace kvmgpu::vgpu::test {
namespace {

// AUTO by the list's average entry: the copy engine for long runs (2 MiB
// guest pages), the device walk for short ones (4 KiB pages), the walk
// without a total.
TEST(CudaBackend, AutoPicksByAverageRun) {
    REQUIRE_CUDA(be);
    Ram ram(*be, 4 << 20);
    const uint64_t at = CudaBackend::kBatchMinAverageRun;
    const SgStrategy long_runs = be->has_batch() ? SgStrategy::Batch : be->default_sg_strategy(); // driver < 12.8: none
    EXPECT_EQ(be->auto_sg_strategy(4, 4 * at), long_runs);
    EXPECT_EQ(be->auto_sg_strategy(512, 512 * (2 << 20)), long_runs);
    EXPECT_EQ(be->auto_sg_strategy(4, 4 * at - 1), be->default_sg_strategy());
    EXPECT_EQ(be->auto_sg_strategy(65536, 65536 * 4096), SgStrategy::DeviceWalk);
    EXPECT_EQ(be->auto_sg_strategy(4, 0), SgStrategy::DeviceWalk);
}

} // namespace
} // namespace kvmgpu::vgpu::test

namespace kvmgpu::vgpu::test {
namespace {

// Compressible memory where the device offers it (CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED):
// asked for, granted, mapped and used like any other.
TEST(CudaBackendVmm, CompressibleMemoryWhereTheDeviceOffersIt) {
    REQUIRE_CUDA(be);
    int offered = 0;
    ASSERT_EQ(be->device_attribute(CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, &offered), VGPU_SUCCESS);
    uint64_t g = 0, va = 0, h = 0;
    ASSERT_EQ(be->vmm_granularity(&g), VGPU_SUCCESS);
    ASSERT_EQ(be->vmm_reserve(g, g, 0, &va), VGPU_SUCCESS);
    bool compressible = true;
    ASSERT_EQ(be->vmm_create(g, &compressible, &h), VGPU_SUCCESS);
    EXPECT_EQ(compressible, offered != 0);
    ASSERT_EQ(be->vmm_map(va, g, h), VGPU_SUCCESS);
    ASSERT_EQ(be->vmm_set_access(va, g, VGPU_VMM_ACCESS_READWRITE), VGPU_SUCCESS);
    std::vector<uint8_t> in(4096, 0x3c), out(4096, 0);
    ASSERT_EQ(be->memcpy_htod(va, in.data(), in.size(), 0, false), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_dtoh(out.data(), va, out.size(), 0, false), VGPU_SUCCESS);
    EXPECT_EQ(in, out);
    ASSERT_EQ(be->vmm_unmap(va, g), VGPU_SUCCESS);
    ASSERT_EQ(be->vmm_release(h), VGPU_SUCCESS);
    ASSERT_EQ(be->vmm_free_reservation(va, g), VGPU_SUCCESS);
}

// The driver's VMM calls through the backend: a mapping reachable by
// copies, and an address asked for in the range where a Linux-ABI guest's
// page-locked memory lies (what managed memory needs: docs/managed-memory.md).
TEST(CudaBackendVmm, ReserveCreateMapAccessCopyAndTheAddressAskedFor) {
    REQUIRE_CUDA(be);
    uint64_t g = 0;
    ASSERT_EQ(be->vmm_granularity(&g), VGPU_SUCCESS);
    ASSERT_TRUE(g >= 4096 && (g & (g - 1)) == 0) << g;
    uint64_t va = 0, h = 0;
    ASSERT_EQ(be->vmm_reserve(2 * g, g, 0, &va), VGPU_SUCCESS);
    bool compressible = false;
    ASSERT_EQ(be->vmm_create(g, &compressible, &h), VGPU_SUCCESS);
    EXPECT_FALSE(compressible); // not asked for
    ASSERT_EQ(be->vmm_map(va + g, g, h), VGPU_SUCCESS);
    ASSERT_EQ(be->vmm_release(h), VGPU_SUCCESS); // the mapping keeps the memory
    ASSERT_EQ(be->vmm_set_access(va + g, g, VGPU_VMM_ACCESS_READWRITE), VGPU_SUCCESS);
    std::vector<uint8_t> in(4096, 0x5a), out(4096, 0);
    ASSERT_EQ(be->memcpy_htod(va + g + 12288, in.data(), in.size(), 0, false), VGPU_SUCCESS);
    ASSERT_EQ(be->memcpy_dtoh(out.data(), va + g + 12288, out.size(), 0, false), VGPU_SUCCESS);
    EXPECT_EQ(in, out);
    ASSERT_EQ(be->vmm_unmap(va + g, g), VGPU_SUCCESS);
    ASSERT_EQ(be->vmm_free_reservation(va, 2 * g), VGPU_SUCCESS);
    // Guest RAM addresses (1 GiB .. 16 GiB): how many the driver gives as asked.
    unsigned given = 0, asked = 0;
    for (uint64_t want = 1ull << 30; want < (16ull << 30); want += 1ull << 30, ++asked) {
        uint64_t got = 0;
        if (be->vmm_reserve(g, g, want, &got) != VGPU_SUCCESS) continue;
        given += got == want;
        be->vmm_free_reservation(got, g);
    }
    // A fact, not a requirement: managed memory is offered only where they
    // are given (the dispatch asks once; H100, driver 580: none, 2026-11-26).
    std::printf("[ vmm ] the driver gave %u of %u guest-RAM-range addresses as asked\n", given, asked);
}

} // namespace
} // namespace kvmgpu::vgpu::test
