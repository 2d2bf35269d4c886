#include "kvmtool-gpu/bench/native_multigpu.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#ifdef KVMGPU_HAVE_CUDA_BACKEND
#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"
#endif
#ifdef KVMGPU_HAVE_BENCH_MULTIGPU_FATBIN
extern "C" const unsigned char kvmgpu_bench_multigpu_fatbin[];
#endif

namespace kvmgpu::bench {

#if defined(KVMGPU_HAVE_CUDA_BACKEND) && defined(KVMGPU_HAVE_BENCH_MULTIGPU_FATBIN)

namespace {

constexpr int kRoles = 4;

struct Role {
    CUcontext ctx = nullptr;
    CUfunction matmul = nullptr, add = nullptr;
    CUdeviceptr left = 0, right = 0, partial = 0;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// To the microsecond, as the guest reports its times.
double to_us(double ms) { return std::round(ms * 1000) / 1000; }

class Study {
public:
    Study(const vgpu::CudaDriverApi& api, uint64_t n) : api_(api), n_(n), half_(n * n * 2) {}
    ~Study() {
        if (host_) api_.cuMemFreeHost(host_);
        for (Role& r : roles_)
            if (r.ctx) api_.cuCtxDestroy(r.ctx); // frees its memory, module and streams
    }

    // "" or what failed.
    std::string set_up(const std::vector<int>& gpus) {
        for (int k = 0; k < kRoles; ++k) {
            Role& r = roles_[k];
            CUdevice dev;
            CUmodule m;
            if (!ok(api_.cuDeviceGet(&dev, gpus[k % gpus.size()]), "cuDeviceGet") ||
                !ok(api_.cuCtxCreate(&r.ctx, nullptr, 0, dev), "cuCtxCreate") ||
                !ok(api_.cuModuleLoadData(&m, kvmgpu_bench_multigpu_fatbin), "cuModuleLoadData") ||
                !ok(api_.cuModuleGetFunction(&r.matmul, m, "matmul"), "matmul") ||
                !ok(api_.cuModuleGetFunction(&r.add, m, "vector_add"), "vector_add") ||
                !ok(api_.cuMemAlloc(&r.left, half_), "cuMemAlloc") || !ok(api_.cuMemAlloc(&r.right, 2 * half_), "cuMemAlloc") ||
                !ok(api_.cuMemAlloc(&r.partial, half_), "cuMemAlloc") ||
                !ok(api_.cuMemsetD32Async(r.left, 0x3e800000u, half_ / 4, nullptr), "cuMemsetD32") || // 0.25f
                !ok(api_.cuMemsetD32Async(r.right, 0x3f000000u, half_ / 2, nullptr), "cuMemsetD32") || // 0.5f
                !ok(api_.cuCtxSynchronize(), "cuCtxSynchronize"))
                return why_;
        }
        use(0);
        for (int k = 1; k < kRoles; ++k) {
            if (!ok(api_.cuMemAlloc(&gathered_[k], half_), "cuMemAlloc") ||
                !ok(api_.cuStreamCreate(&streams_[k], CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
                return why_;
            int can = 0;
            CUdevice d0, dk;
            if (api_.cuDeviceGet(&d0, gpus[0]) == CUDA_SUCCESS && api_.cuDeviceGet(&dk, gpus[k % gpus.size()]) == CUDA_SUCCESS &&
                api_.cuDeviceCanAccessPeer(&can, d0, dk) == CUDA_SUCCESS && can)
                api_.cuCtxEnablePeerAccess(roles_[k].ctx, 0); // ALREADY_ENABLED is fine too
        }
        if (!ok(api_.cuMemAlloc(&e_, 2 * half_), "cuMemAlloc") || !ok(api_.cuMemHostAlloc(&host_, half_, 0), "cuMemHostAlloc"))
            return why_;
        return "";
    }

    // T: one partial product device to host; then each mode, reps times.
    std::string measure(unsigned reps, std::vector<MultigpuRow>* out) {
        std::vector<double> t;
        for (unsigned r = 0; r < reps; ++r) {
            use(1);
            const auto t0 = std::chrono::steady_clock::now();
            if (!ok(api_.cuMemcpyDtoHAsync(host_, roles_[1].partial, half_, nullptr), "cuMemcpyDtoH") ||
                !ok(api_.cuCtxSynchronize(), "cuCtxSynchronize"))
                return why_;
            t.push_back(ms_since(t0));
        }
        out->push_back(MultigpuRow{n_, "native", "t", 0, 0, to_us(median(t)), ""});
        for (bool peer : {true, false}) {
            std::vector<double> total, gather;
            for (unsigned r = 0; r < reps; ++r) {
                const auto t0 = std::chrono::steady_clock::now();
                if (!compute()) return why_;
                const auto t1 = std::chrono::steady_clock::now();
                if (!(peer ? gather_peer() : gather_host())) return why_;
                const double g = ms_since(t1);
                if (!add()) return why_;
                total.push_back(ms_since(t0));
                gather.push_back(g);
            }
            out->push_back(MultigpuRow{n_, "native", peer ? "gg" : "gh", to_us(median(total)), to_us(median(gather)), 0, ""});
        }
        return "";
    }

private:
    bool ok(CUresult r, const char* what) {
        if (r == CUDA_SUCCESS) return true;
        why_ = std::string(what) + ": " + api_.describe(r);
        return false;
    }
    void use(int k) { api_.cuCtxSetCurrent(roles_[k].ctx); }

    bool compute() {
        unsigned n = static_cast<unsigned>(n_);
        for (int k = 0; k < kRoles; ++k) {
            Role& r = roles_[k];
            use(k);
            void* p[] = {&r.left, &r.right, &r.partial, &n};
            if (!ok(api_.cuLaunchKernel(r.matmul, n / 16, n / 32, 1, 16, 16, 1, 0, nullptr, p, nullptr), "matmul"))
                return false;
        }
        for (int k = 0; k < kRoles; ++k) {
            use(k);
            if (!ok(api_.cuCtxSynchronize(), "cuCtxSynchronize")) return false;
        }
        return true;
    }
    bool gather_peer() {
        use(0);
        for (int k = 1; k < kRoles; ++k)
            if (!ok(api_.cuMemcpyPeerAsync(gathered_[k], roles_[0].ctx, roles_[k].partial, roles_[k].ctx, half_,
                                           streams_[k]),
                    "cuMemcpyPeerAsync"))
                return false;
        return ok(api_.cuCtxSynchronize(), "cuCtxSynchronize");
    }
    bool gather_host() {
        for (int k = 1; k < kRoles; ++k) {
            use(k);
            if (!ok(api_.cuMemcpyDtoHAsync(host_, roles_[k].partial, half_, nullptr), "cuMemcpyDtoH") ||
                !ok(api_.cuCtxSynchronize(), "cuCtxSynchronize"))
                return false;
            use(0);
            if (!ok(api_.cuMemcpyHtoDAsync(gathered_[k], host_, half_, nullptr), "cuMemcpyHtoD") ||
                !ok(api_.cuCtxSynchronize(), "cuCtxSynchronize"))
                return false;
        }
        return true;
    }
    bool add() {
        use(0);
        unsigned count = static_cast<unsigned>(n_ * n_ / 2);
        CUdeviceptr top = e_, bottom = e_ + half_;
        void* p_top[] = {&roles_[0].partial, &gathered_[2], &top, &count};
        void* p_bottom[] = {&gathered_[1], &gathered_[3], &bottom, &count};
        const unsigned blocks = (count + 255) / 256;
        return ok(api_.cuLaunchKernel(roles_[0].add, blocks, 1, 1, 256, 1, 1, 0, nullptr, p_top, nullptr), "add") &&
               ok(api_.cuLaunchKernel(roles_[0].add, blocks, 1, 1, 256, 1, 1, 0, nullptr, p_bottom, nullptr), "add") &&
               ok(api_.cuCtxSynchronize(), "cuCtxSynchronize");
    }

    const vgpu::CudaDriverApi& api_;
    uint64_t n_, half_;
    Role roles_[kRoles];
    CUdeviceptr gathered_[kRoles] = {}, e_ = 0;
    CUstream streams_[kRoles] = {};
    void* host_ = nullptr;
    std::string why_;
};

} // namespace

std::string native_multigpu(const std::vector<int>& gpus, const std::vector<uint64_t>& orders, unsigned reps,
                            std::vector<MultigpuRow>* out) {
    std::string why;
    const vgpu::CudaDriverApi* api = vgpu::CudaDriverApi::get(&why);
    if (!api) return why;
    for (uint64_t n : orders) {
        Study s(*api, n);
        if (std::string w = s.set_up(gpus); !w.empty()) return "order " + std::to_string(n) + ": " + w;
        if (std::string w = s.measure(reps, out); !w.empty()) return "order " + std::to_string(n) + ": " + w;
    }
    return "";
}

#else

std::string native_multigpu(const std::vector<int>&, const std::vector<uint64_t>&, unsigned, std::vector<MultigpuRow>*) {
    return "this VMM was built without cuda.h or nvcc: no native multi-GPU baseline";
}

#endif

} // namespace kvmgpu::bench
