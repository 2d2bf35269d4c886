#include "kvmtool-gpu/bench/native_share.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "kvmtool-gpu/bench/native_child.h"

#ifdef KVMGPU_HAVE_CUDA_BACKEND
#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"
#endif
#ifdef KVMGPU_HAVE_BENCH_MULTIGPU_FATBIN
extern "C" const unsigned char kvmgpu_bench_multigpu_fatbin[]; // holds matmul
#endif

namespace kvmgpu::bench {

namespace {

constexpr unsigned kMaxProcesses = 64;
constexpr size_t kLatencySamples = 8192;

// A member that has been told to stop finishes its unit of work and
// destroys its context within this many seconds, or is killed.
constexpr double kStopBoundS = 120;

// One process's slot in the shared page: what this process reads while
// the members run.
struct alignas(64) Slot {
    std::atomic<int> ready{0};   // 1 set up, -1 failed
    std::atomic<uint64_t> work{0}; // bytes copied or kernels finished
};
// What a member returns when it ends (native_child.h).
struct MemberResult {
    std::string error; // "" or what failed
    uint64_t lat_p50_ns = 0, lat_p99_ns = 0;
    auto wire() { return std::tie(error, lat_p50_ns, lat_p99_ns); }
};
struct Shared {
    std::atomic<int> stop{0};
    Slot slots[kMaxProcesses];
};

#if defined(KVMGPU_HAVE_CUDA_BACKEND) && defined(KVMGPU_HAVE_BENCH_MULTIGPU_FATBIN)

using Clock = std::chrono::steady_clock;

// The child's body: "" or what failed.
std::string native_member(const NativeShareWork& w, Shared* shared, Slot* slot, MemberResult* result) {
    std::string why;
    const vgpu::CudaDriverApi* api = vgpu::CudaDriverApi::get(&why);
    if (!api) return why;
    auto ok = [&](CUresult r, const char* what) {
        if (r != CUDA_SUCCESS) why = std::string(what) + ": " + api->describe(r);
        return r == CUDA_SUCCESS;
    };
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr word;
    if (!ok(api->cuDeviceGet(&dev, 0), "cuDeviceGet") || !ok(api->cuCtxCreate(&ctx, nullptr, 0, dev), "cuCtxCreate") ||
        !ok(api->cuStreamCreate(&stream, 0), "cuStreamCreate") || !ok(api->cuMemAlloc(&word, 4), "cuMemAlloc"))
        return why;
    // The guest's units: both directions from a pinned and a pageable
    // buffer, or one matmul; then the same one-word synchronous memset.
    void* pinned = nullptr;
    std::vector<uint8_t> pageable;
    CUdeviceptr dev_buf = 0, a = 0, b = 0, c = 0;
    CUfunction matmul = nullptr;
    unsigned n = w.order;
    if (w.work == "bandwidth") {
        pageable.assign(w.bytes, 1);
        if (!ok(api->cuMemHostAlloc(&pinned, w.bytes, 0), "cuMemHostAlloc") ||
            !ok(api->cuMemAlloc(&dev_buf, w.bytes), "cuMemAlloc"))
            return why;
        std::memset(pinned, 2, w.bytes);
    } else {
        CUmodule m;
        const size_t words = size_t{n} * n;
        if (!ok(api->cuModuleLoadData(&m, kvmgpu_bench_multigpu_fatbin), "cuModuleLoadData") ||
            !ok(api->cuModuleGetFunction(&matmul, m, "matmul"), "matmul") ||
            !ok(api->cuMemAlloc(&a, words * 4), "cuMemAlloc") || !ok(api->cuMemAlloc(&b, words * 4), "cuMemAlloc") ||
            !ok(api->cuMemAlloc(&c, words * 4), "cuMemAlloc") ||
            !ok(api->cuMemsetD32Async(a, 0x3e800000u, words, stream), "cuMemsetD32") ||
            !ok(api->cuMemsetD32Async(b, 0x3f000000u, words, stream), "cuMemsetD32"))
            return why;
    }
    auto unit = [&]() -> uint64_t {
        if (matmul) {
            void* params[] = {&a, &b, &c, &n};
            const unsigned g = (n + 15) / 16;
            for (unsigned k = 0; k < w.batch; ++k)
                if (!ok(api->cuLaunchKernel(matmul, g, g, 1, 16, 16, 1, 0, stream, params, nullptr), "cuLaunchKernel"))
                    return 0;
            return ok(api->cuStreamSynchronize(stream), "cuStreamSynchronize") ? w.batch : 0;
        }
        for (void* host : {pinned, static_cast<void*>(pageable.data())})
            if (!ok(api->cuMemcpyHtoDAsync(dev_buf, host, w.bytes, stream), "cuMemcpyHtoDAsync") ||
                !ok(api->cuMemcpyDtoHAsync(host, dev_buf, w.bytes, stream), "cuMemcpyDtoHAsync"))
                return 0;
        return ok(api->cuStreamSynchronize(stream), "cuStreamSynchronize") ? 4 * w.bytes : 0;
    };
    if (unit() == 0) return why;
    std::vector<uint64_t> lat;
    lat.reserve(kLatencySamples);
    slot->ready.store(1);
    while (!shared->stop.load(std::memory_order_relaxed)) {
        const uint64_t done = unit();
        if (done == 0) return why;
        slot->work.fetch_add(done, std::memory_order_relaxed);
        const auto t0 = Clock::now();
        if (!ok(api->cuMemsetD32Async(word, 0, 1, stream), "cuMemsetD32") ||
            !ok(api->cuStreamSynchronize(stream), "cuStreamSynchronize"))
            return why;
        if (lat.size() < kLatencySamples)
            lat.push_back(static_cast<uint64_t>(std::chrono::duration<double, std::nano>(Clock::now() - t0).count()));
    }
    std::sort(lat.begin(), lat.end());
    if (!lat.empty()) {
        result->lat_p50_ns = lat[lat.size() / 2];
        result->lat_p99_ns = lat[std::max<size_t>((lat.size() * 99 + 99) / 100, 1) - 1];
    }
    api->cuCtxDestroy(ctx);
    return "";
}

#else

std::string native_member(const NativeShareWork&, Shared*, Slot*, MemberResult*) {
    return "this VMM was built without cuda.h or nvcc: no native baseline";
}

#endif

} // namespace

std::vector<ShareRow> run_native_share(const NativeShareWork& w, unsigned processes, const ShareWindow& window,
                                       std::string* why) {
    std::vector<ShareRow> rows;
    if (processes == 0 || processes > kMaxProcesses) {
        *why = "native processes: 1.." + std::to_string(kMaxProcesses);
        return rows;
    }
    void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        *why = std::string("mmap: ") + std::strerror(errno);
        return rows;
    }
    Shared* shared = new (mem) Shared;
    std::vector<std::unique_ptr<NativeChild>> members;
    for (unsigned i = 0; i < processes; ++i) {
        members.push_back(std::make_unique<NativeChild>("the process", [&, i] {
            Slot* slot = &shared->slots[i];
            for (const auto& [name, value] : w.env) setenv(name.c_str(), value.c_str(), 1); // MPS client settings
            MemberResult result;
            result.error = native_member(w, shared, slot, &result);
            if (!result.error.empty()) slot->ready.store(-1);
            wire::Writer out;
            out.put(result);
            return out.take();
        }));
        if (!members.back()->started()) break; // the rest would fail alike; each reports "fork failed"
    }
    // Every process ready (or one failed), then the window.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(window.ready_timeout_s);
    auto state = [&] {
        int ready = 0;
        for (unsigned i = 0; i < members.size(); ++i) {
            const int s = shared->slots[i].ready.load();
            if (s < 0) return -1;
            ready += s;
        }
        return ready;
    };
    int s;
    while ((s = state()) >= 0 && s < static_cast<int>(processes) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::vector<double> rates(processes, 0);
    const bool measured = s == static_cast<int>(processes);
    if (measured) {
        const auto w = read_window(window, [&] {
            std::vector<uint64_t> s;
            for (unsigned i = 0; i < processes; ++i) s.push_back(shared->slots[i].work.load());
            return s;
        });
        for (unsigned i = 0; i < processes; ++i)
            rates[i] = static_cast<double>(w.after[i] - w.before[i]) / w.seconds;
    }
    shared->stop.store(1);
    const auto stop_deadline =
        NativeChild::Clock::now() + std::chrono::duration_cast<NativeChild::Clock::duration>(
                                        std::chrono::duration<double>(kStopBoundS));
    for (unsigned i = 0; i < processes; ++i) {
        ShareRow r{"native", w.work, processes, i};
        r.rate = w.work == "bandwidth" ? rates[i] / 1e9 : rates[i];
        const bool started = i < members.size() && members[i]->started();
        std::string ended; // why the process did not end normally
        MemberResult m;
        if (started) {
            if (const auto bytes = members[i]->collect(stop_deadline, &ended)) {
                wire::Reader in(*bytes);
                in.get(m);
                if (!in.ok()) ended = "a malformed result";
            }
        }
        r.lat_p50_ns = m.lat_p50_ns;
        r.lat_p99_ns = m.lat_p99_ns;
        if (!started) r.status = "fork failed";
        else if (!m.error.empty()) r.status = m.error;
        else if (!measured) r.status = "not every process got ready in time";
        else if (!ended.empty()) r.status = "the process did not end normally";
        rows.push_back(r);
    }
    if (rows[0].status != "ok" && !measured) *why = rows[0].status;
    shared->~Shared();
    munmap(mem, sizeof(Shared));
    return rows;
}

} // namespace kvmgpu::bench
