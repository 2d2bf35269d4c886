#include "kvmtool-gpu/bench/native_cuda.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#ifdef KVMGPU_HAVE_CUDA_BACKEND
#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"
#include "kvmtool-gpu/util/clock.h"
#endif

#ifdef KVMGPU_HAVE_BENCH_EMPTY_FATBIN
extern "C" const unsigned char kvmgpu_bench_empty_fatbin[];
#endif

namespace kvmgpu::bench {

#ifdef KVMGPU_HAVE_CUDA_BACKEND

namespace {

// guest-stub/kernels/empty.cu as PTX, for builds without nvcc (the driver JITs it).
constexpr char kEmptyKernelPtx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
                                   ".visible .entry empty_kernel()\n{\n\tret;\n}\n";
} // namespace

struct NativeCuda::Impl {
    const vgpu::CudaDriverApi& api;
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    std::string name;
    CUstream stream = nullptr;
    CUevent start = nullptr, end = nullptr;
    CUdeviceptr dbuf = 0;
    void* pinned = nullptr;
    void* pageable = nullptr;
    uint64_t buf_bytes = 0; // of dbuf and pinned
    uint64_t pageable_bytes = 0, register_ns = 0;

    // The device and pinned buffers, at least `bytes` each.
    CUresult reserve(uint64_t bytes) {
        if (bytes <= buf_bytes) return CUDA_SUCCESS;
        if (dbuf) api.cuMemFree(dbuf), dbuf = 0;
        if (pinned) api.cuMemFreeHost(pinned), pinned = nullptr;
        buf_bytes = 0;
        CUresult r = api.cuMemAlloc(&dbuf, bytes);
        if (r != CUDA_SUCCESS) return dbuf = 0, r;
        if ((r = api.cuMemHostAlloc(&pinned, bytes, 0)) != CUDA_SUCCESS) return pinned = nullptr, r;
        std::memset(pinned, 1, bytes);
        buf_bytes = bytes;
        return CUDA_SUCCESS;
    }
    CUmodule module = nullptr;
    CUfunction empty = nullptr;
    CUgraphExec graph_exec = nullptr; // graph_launches' chain, freed with the context

    explicit Impl(const vgpu::CudaDriverApi& a) : api(a) {}
    ~Impl() {
        if (ctx) {
            api.cuCtxSetCurrent(ctx);
            if (pinned) api.cuMemFreeHost(pinned);
            api.cuCtxDestroy(ctx); // frees the device buffer, module, stream, events
        }
        std::free(pageable);
    }

    std::string failure(const char* what, CUresult r) const { return std::string(what) + ": " + api.describe(r); }
    std::string status(CUresult r) const {
        const char* n = nullptr;
        if (api.cuGetErrorName(r, &n) != CUDA_SUCCESS || !n) n = "unnamed";
        return std::string("error:") + n;
    }

    // Events around body(), one stream synchronize; wall clock around all.
    template <class Body>
    NativeTiming timed(Body body) {
        NativeTiming t;
        api.cuCtxSetCurrent(ctx);
        const uint64_t t0 = now_ns();
        CUresult r = api.cuEventRecord(start, stream);
        if (r == CUDA_SUCCESS) r = body();
        if (r == CUDA_SUCCESS) r = api.cuEventRecord(end, stream);
        const CUresult s = api.cuStreamSynchronize(stream);
        t.wall_ns = now_ns() - t0;
        if (r == CUDA_SUCCESS) r = s;
        float ms = 0;
        if (r == CUDA_SUCCESS) r = api.cuEventElapsedTime(&ms, start, end);
        if (r == CUDA_SUCCESS)
            t.event_ns = static_cast<uint64_t>(std::llround(static_cast<double>(ms) * 1e6));
        else
            t.status = status(r);
        return t;
    }

    // timed() around n calls of op(), stopping at the first error.
    template <class Op>
    NativeTiming timed_loop(uint64_t n, Op op) {
        return timed([&] {
            CUresult r = CUDA_SUCCESS;
            for (uint64_t i = 0; i < n && r == CUDA_SUCCESS; ++i) r = op();
            return r;
        });
    }

    CUresult launch_empty() { return api.cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr); }
};

std::unique_ptr<NativeCuda> NativeCuda::open(std::string* why) {
    const vgpu::CudaDriverApi* api = vgpu::CudaDriverApi::get(why);
    if (!api) return nullptr;
    auto impl = std::make_unique<Impl>(*api);
    CUresult r = api->cuDeviceGet(&impl->dev, 0);
    if (r != CUDA_SUCCESS) return *why = impl->failure("cuDeviceGet", r), nullptr;
    char name[256] = {};
    api->cuDeviceGetName(name, sizeof name - 1, impl->dev);
    impl->name = name;
    if ((r = api->cuCtxCreate(&impl->ctx, nullptr, 0, impl->dev)) != CUDA_SUCCESS)
        return impl->ctx = nullptr, *why = impl->failure("cuCtxCreate", r), nullptr;
    if ((r = api->cuStreamCreate(&impl->stream, CU_STREAM_DEFAULT)) != CUDA_SUCCESS ||
        (r = api->cuEventCreate(&impl->start, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
        (r = api->cuEventCreate(&impl->end, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
        return *why = impl->failure("stream/event create", r), nullptr;
    return std::unique_ptr<NativeCuda>(new NativeCuda(std::move(impl)));
}

std::string NativeCuda::gpu_name() const { return impl_->name; }
int NativeCuda::driver_version() const { return impl_->api.driver_version; }

bool NativeCuda::prepare_copies(uint64_t max_bytes, std::string* why) {
    auto& m = *impl_;
    m.api.cuCtxSetCurrent(m.ctx);
    if (CUresult r = m.reserve(max_bytes); r != CUDA_SUCCESS)
        return *why = m.failure("cuMemAlloc/cuMemHostAlloc", r), false;
    std::free(m.pageable);
    const uint64_t rounded = (max_bytes + 4095) / 4096 * 4096;
    m.pageable = std::aligned_alloc(4096, rounded);
    if (!m.pageable) return *why = "out of host memory for the pageable buffer", false;
    std::memset(m.pageable, 1, rounded); // resident, as a program's buffer would be
    m.pageable_bytes = rounded;
    const uint64_t t0 = now_ns();
    if (m.api.cuMemHostRegister(m.pageable, rounded, 0) == CUDA_SUCCESS) {
        m.register_ns = now_ns() - t0;
        m.api.cuMemHostUnregister(m.pageable);
    }
    return true;
}

double NativeCuda::register_ms_per_gib() const {
    const auto& m = *impl_;
    if (m.register_ns == 0 || m.pageable_bytes == 0) return 0;
    return static_cast<double>(m.register_ns) / 1e6 * static_cast<double>(1ull << 30) / static_cast<double>(m.pageable_bytes);
}

std::vector<NativeTiming> NativeCuda::copy(bool htod, const std::string& kind, uint64_t bytes, uint64_t reps,
                                           unsigned trials) {
    auto& m = *impl_;
    void* host = kind == "pinned" ? m.pinned : m.pageable;
    m.api.cuCtxSetCurrent(m.ctx);
    if (kind == "registered") { // registered for these copies only: the pageable rows stay pageable
        std::vector<NativeTiming> out;
        if (CUresult r = m.api.cuMemHostRegister(m.pageable, m.pageable_bytes, 0); r != CUDA_SUCCESS)
            return std::vector<NativeTiming>(trials, NativeTiming{0, 0, m.status(r)});
        out = copy(htod, "pageable", bytes, reps, trials);
        m.api.cuMemHostUnregister(m.pageable);
        return out;
    }
    auto one = [&] {
        return htod ? m.api.cuMemcpyHtoDAsync(m.dbuf, host, bytes, m.stream)
                    : m.api.cuMemcpyDtoHAsync(host, m.dbuf, bytes, m.stream);
    };
    m.api.cuCtxSetCurrent(m.ctx);
    CUresult r = one();
    const CUresult s = m.api.cuStreamSynchronize(m.stream);
    std::vector<NativeTiming> out(trials);
    if (r != CUDA_SUCCESS || s != CUDA_SUCCESS) {
        for (auto& t : out) t.status = m.status(r != CUDA_SUCCESS ? r : s);
        return out;
    }
    for (auto& t : out) t = m.timed_loop(reps, one);
    return out;
}

bool NativeCuda::prepare_calls(std::string* why) {
    auto& m = *impl_;
    m.api.cuCtxSetCurrent(m.ctx);
    if (m.empty) return true;
#ifdef KVMGPU_HAVE_BENCH_EMPTY_FATBIN
    const void* image = kvmgpu_bench_empty_fatbin;
#else
    const void* image = kEmptyKernelPtx;
#endif
    CUresult r = m.api.cuModuleLoadData(&m.module, image);
    if (r != CUDA_SUCCESS) return *why = m.failure("cuModuleLoadData (empty kernel)", r), false;
    if ((r = m.api.cuModuleGetFunction(&m.empty, m.module, "empty_kernel")) != CUDA_SUCCESS)
        return *why = m.failure("cuModuleGetFunction(empty_kernel)", r), m.empty = nullptr, false;
    if ((r = m.reserve(1 << 20)) != CUDA_SUCCESS)
        return *why = m.failure("cuMemAlloc/cuMemHostAlloc", r), false;
    return true;
}

NativeTiming NativeCuda::launches(uint64_t n, bool with_copy, uint64_t copy_bytes) {
    auto& m = *impl_;
    return m.timed_loop(n, [&] {
        CUresult r = with_copy ? m.api.cuMemcpyHtoDAsync(m.dbuf, m.pinned, copy_bytes, m.stream) : CUDA_SUCCESS;
        return r == CUDA_SUCCESS ? m.launch_empty() : r;
    });
}

NativeTiming NativeCuda::sync_launches(uint64_t iters) {
    auto& m = *impl_;
    return m.timed_loop(iters, [&] {
        const CUresult r = m.launch_empty();
        return r == CUDA_SUCCESS ? m.api.cuStreamSynchronize(m.stream) : r;
    });
}

NativeTiming NativeCuda::sync_copies(uint64_t iters, bool htod, uint64_t bytes) {
    auto& m = *impl_;
    return m.timed_loop(iters, [&] {
        const CUresult r = htod ? m.api.cuMemcpyHtoDAsync(m.dbuf, m.pinned, bytes, m.stream)
                                : m.api.cuMemcpyDtoHAsync(m.pinned, m.dbuf, bytes, m.stream);
        return r == CUDA_SUCCESS ? m.api.cuStreamSynchronize(m.stream) : r;
    });
}

NativeTiming NativeCuda::wake_launches(uint64_t wakes, uint64_t pause_ms) {
    auto& m = *impl_;
    NativeTiming sum;
    for (uint64_t i = 0; i < wakes; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
        const NativeTiming t = m.timed([&] { return m.launch_empty(); });
        if (!t.ok()) return t;
        sum.wall_ns += t.wall_ns;
        sum.event_ns += t.event_ns;
    }
    return sum;
}

NativeTiming NativeCuda::graph_launches(uint64_t n, unsigned chain) {
    auto& m = *impl_;
    const auto& api = m.api;
    if (!api.cuStreamBeginCapture || !api.cuStreamEndCapture || !api.cuGraphInstantiateWithFlags ||
        !api.cuGraphLaunch || !api.cuGraphDestroy)
        return {0, 0, "error:no_graphs_in_driver"};
    api.cuCtxSetCurrent(m.ctx);
    if (!m.graph_exec) {
        CUgraph g = nullptr;
        CUresult r = api.cuStreamBeginCapture(m.stream, CU_STREAM_CAPTURE_MODE_RELAXED);
        for (unsigned i = 0; i < chain && r == CUDA_SUCCESS; ++i) r = m.launch_empty();
        const CUresult end = api.cuStreamEndCapture(m.stream, &g);
        if (r == CUDA_SUCCESS) r = end;
        if (r == CUDA_SUCCESS) r = api.cuGraphInstantiateWithFlags(&m.graph_exec, g, 0);
        if (g) api.cuGraphDestroy(g);
        if (r != CUDA_SUCCESS) return {0, 0, m.status(r)};
    }
    return m.timed_loop(n, [&] { return api.cuGraphLaunch(m.graph_exec, m.stream); });
}

NativeTiming NativeCuda::alloc_async_round_trips(uint64_t iters, uint64_t bytes) {
    auto& m = *impl_;
    const auto& api = m.api;
    if (!api.cuMemAllocAsync || !api.cuMemFreeAsync) return {0, 0, "error:no_stream_ordered_allocator_in_driver"};
    api.cuCtxSetCurrent(m.ctx);
    return m.timed_loop(iters, [&] {
        CUdeviceptr p = 0;
        CUresult r = api.cuMemAllocAsync(&p, bytes, m.stream);
        if (r == CUDA_SUCCESS) r = api.cuMemFreeAsync(p, m.stream);
        return r == CUDA_SUCCESS ? api.cuStreamSynchronize(m.stream) : r;
    });
}

NativeTiming NativeCuda::managed_launches(uint64_t iters, uint64_t bytes) {
    auto& m = *impl_;
    const auto& api = m.api;
    if (!api.cuMemAllocManaged) return {0, 0, "error:no_managed_memory_in_driver"};
    api.cuCtxSetCurrent(m.ctx);
    CUdeviceptr p = 0;
    if (const CUresult r = api.cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL); r != CUDA_SUCCESS)
        return {0, 0, m.status(r)};
    std::memset(reinterpret_cast<void*>(p), 1, bytes);
    const NativeTiming t = m.timed_loop(iters, [&] {
        const CUresult r = m.launch_empty();
        return r == CUDA_SUCCESS ? api.cuStreamSynchronize(m.stream) : r;
    });
    api.cuMemFree(p);
    return t;
}

#else // no cuda.h at build time

struct NativeCuda::Impl {};

std::unique_ptr<NativeCuda> NativeCuda::open(std::string* why) {
    *why = "this VMM was built without cuda.h: no native CUDA baseline";
    return nullptr;
}
std::string NativeCuda::gpu_name() const { return {}; }
int NativeCuda::driver_version() const { return 0; }
bool NativeCuda::prepare_copies(uint64_t, std::string*) { return false; }
double NativeCuda::register_ms_per_gib() const { return 0; }
std::vector<NativeTiming> NativeCuda::copy(bool, const std::string&, uint64_t, uint64_t, unsigned trials) {
    return std::vector<NativeTiming>(trials, NativeTiming{0, 0, "error:no_cuda"});
}
bool NativeCuda::prepare_calls(std::string*) { return false; }
NativeTiming NativeCuda::launches(uint64_t, bool, uint64_t) { return {0, 0, "error:no_cuda"}; }
NativeTiming NativeCuda::sync_launches(uint64_t) { return {0, 0, "error:no_cuda"}; }
NativeTiming NativeCuda::wake_launches(uint64_t, uint64_t) { return {0, 0, "error:no_cuda"}; }
NativeTiming NativeCuda::graph_launches(uint64_t, unsigned) { return {0, 0, "error:no_cuda"}; }
NativeTiming NativeCuda::alloc_async_round_trips(uint64_t, uint64_t) { return {0, 0, "error:no_cuda"}; }
NativeTiming NativeCuda::managed_launches(uint64_t, uint64_t) { return {0, 0, "error:no_cuda"}; }
NativeTiming NativeCuda::sync_copies(uint64_t, bool, uint64_t) { return {0, 0, "error:no_cuda"}; }

#endif

std::unique_ptr<NativeCuda> open_native_baseline(const std::string& bench, bool host_forced,
                                                 const std::string& host_forced_reason,
                                                 const std::function<bool(NativeCuda&, std::string*)>& prepare,
                                                 const std::string& description, BenchMeta* meta) {
    std::string why = host_forced_reason;
    std::unique_ptr<NativeCuda> cuda = host_forced ? nullptr : NativeCuda::open(&why);
    if (cuda && !prepare(*cuda, &why)) cuda.reset();
    if (!cuda) {
        meta->set("native_baseline", "none (" + why + ")");
        std::printf("bench %s: no native GPU baseline: %s\n", bench.c_str(), why.c_str());
        return nullptr;
    }
    meta->set("gpu", cuda->gpu_name());
    meta->set("driver", "CUDA " + std::to_string(cuda->driver_version() / 1000) + "." +
                            std::to_string(cuda->driver_version() % 1000 / 10));
    meta->set("native_baseline", description);
    meta->native_baseline = true;
    std::printf("bench %s: native baseline on %s\n", bench.c_str(), cuda->gpu_name().c_str());
    return cuda;
}

NativeCuda::NativeCuda(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NativeCuda::~NativeCuda() = default;

} // namespace kvmgpu::bench
