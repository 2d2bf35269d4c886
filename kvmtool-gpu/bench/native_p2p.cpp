#include "kvmtool-gpu/bench/native_p2p.h"

#include <algorithm>
#include <chrono>

#include "kvmtool-gpu/abi/p2p_rules.h"
#ifdef KVMGPU_HAVE_CUDA_BACKEND
#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"
#endif

namespace kvmgpu::bench {

#ifdef KVMGPU_HAVE_CUDA_BACKEND

namespace {

struct Device {
    CUcontext ctx = nullptr;
    CUdevice dev = 0;
    CUdeviceptr buf[2] = {}; // [0] read from, [1] written to
    CUstream stream[2] = {};
    CUevent start = nullptr, mid = nullptr, end = nullptr;
};

// The guest's p2p program, step for step (guest-stub/programs/p2p.cpp).
class PeerCopies {
public:
    explicit PeerCopies(const vgpu::CudaDriverApi& api) : api_(api) {}
    ~PeerCopies() {
        for (Device& d : devs_)
            if (d.ctx) api_.cuCtxDestroy(d.ctx); // frees its memory, streams and events
    }

    // "" or what failed.
    std::string set_up(const std::vector<int>& gpus, uint64_t max_bytes) {
        devs_.resize(gpus.size());
        for (size_t k = 0; k < gpus.size(); ++k) {
            Device& x = devs_[k];
            if (!ok(api_.cuDeviceGet(&x.dev, gpus[k]), "cuDeviceGet") ||
                !ok(api_.cuCtxCreate(&x.ctx, nullptr, 0, x.dev), "cuCtxCreate"))
                return why_;
            for (int b = 0; b < 2; ++b)
                if (!ok(api_.cuMemAlloc(&x.buf[b], max_bytes), "cuMemAlloc") ||
                    !ok(api_.cuMemsetD8Async(x.buf[b], static_cast<unsigned char>(k * 2 + b + 1), max_bytes, nullptr),
                        "cuMemsetD8") ||
                    !ok(api_.cuStreamCreate(&x.stream[b], CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
                    return why_;
            if (!ok(api_.cuEventCreate(&x.start, CU_EVENT_DEFAULT), "cuEventCreate") ||
                !ok(api_.cuEventCreate(&x.mid, CU_EVENT_DEFAULT), "cuEventCreate") ||
                !ok(api_.cuEventCreate(&x.end, CU_EVENT_DEFAULT), "cuEventCreate") ||
                !ok(api_.cuCtxSynchronize(), "cuCtxSynchronize"))
                return why_;
        }
        return "";
    }

    void run(const P2pPlan& plan, std::vector<P2pSample>* out) {
        const int n = static_cast<int>(devs_.size());
        for (int s = 0; s < n; ++s)
            for (int d = 0; d < n; ++d) {
                out->push_back(sample("peer", "", s, d, 0, 0, 0, 0, ""));
                out->back().can = s != d && can_access(s, d);
            }
        for (int a = 0; a < 2; ++a) {
            if ((a == 0 && !plan.access_off) || (a == 1 && !plan.access_on)) continue;
            const std::string access = a ? "on" : "off";
            for (int s = 0; s < n; ++s)
                for (int d = 0; d < n; ++d) {
                    if (a == 1 && !set_access(s, d, true)) continue; // off first: nothing enabled yet
                    for (uint64_t bytes : plan.sizes)
                        for (int bidi = 0; bidi < 2; ++bidi)
                            for (unsigned t = 0; t < plan.trials; ++t) {
                                uint64_t ns = 0;
                                const uint64_t reps = p2p_reps(bytes);
                                const CUresult r = copy_between(s, d, bytes, reps, bidi != 0, &ns);
                                out->push_back(sample(bidi ? "bidi" : "uni", access, s, d, bytes, reps, ns, 0,
                                                      status(r)));
                            }
                    for (unsigned t = 0; t < plan.trials; ++t) {
                        uint64_t wall = 0, ev = 0;
                        const CUresult r = latency(s, d, plan.iters, &wall, &ev);
                        out->push_back(sample("lat", access, s, d, 4, plan.iters, ev, wall, status(r)));
                    }
                    if (a == 1) set_access(s, d, false);
                }
        }
    }

private:
    static P2pSample sample(const char* kind, const std::string& access, int src, int dst, uint64_t bytes,
                            uint64_t count, uint64_t event_ns, uint64_t wall_ns, const std::string& status) {
        return P2pSample{"native", kind, access, src, dst, bytes, count, event_ns, wall_ns, false, status};
    }
    bool ok(CUresult r, const char* what) {
        if (r == CUDA_SUCCESS) return true;
        why_ = std::string(what) + ": " + api_.describe(r);
        return false;
    }
    std::string status(CUresult r) const {
        if (r == CUDA_SUCCESS) return "ok";
        const char* name = nullptr;
        api_.cuGetErrorName(r, &name);
        return std::string("error:") + (name ? name : "unnamed");
    }
    void use(int d) { api_.cuCtxSetCurrent(devs_[d].ctx); }
    bool can_access(int s, int d) {
        int can = 0;
        return api_.cuDeviceCanAccessPeer(&can, devs_[s].dev, devs_[d].dev) == CUDA_SUCCESS && can;
    }
    bool set_access(int s, int d, bool on) {
        if (s == d) return true;
        if (on && !(can_access(s, d) && can_access(d, s))) return false;
        for (const auto& [from, to] : {std::pair{s, d}, std::pair{d, s}}) {
            use(from);
            const CUresult r = on ? api_.cuCtxEnablePeerAccess(devs_[to].ctx, 0)
                                  : api_.cuCtxDisablePeerAccess(devs_[to].ctx);
            if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED &&
                r != CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
                return false;
        }
        return true;
    }
    CUresult elapsed_ns(const Device& x, uint64_t* ns) {
        float ms = 0;
        CUresult r = api_.cuEventSynchronize(x.end);
        if (r == CUDA_SUCCESS) r = api_.cuEventElapsedTime(&ms, x.start, x.end);
        *ns = static_cast<uint64_t>(static_cast<double>(ms) * 1e6 + 0.5);
        return r;
    }
    CUresult copy_between(int src, int dst, uint64_t bytes, uint64_t reps, bool bidi, uint64_t* ns) {
        Device& s = devs_[src];
        Device& d = devs_[dst];
        use(src);
        CUresult r = api_.cuEventRecord(s.start, s.stream[0]);
        if (r == CUDA_SUCCESS && bidi) r = api_.cuStreamWaitEvent(s.stream[1], s.start, 0);
        for (uint64_t i = 0; r == CUDA_SUCCESS && i < reps; ++i) {
            r = api_.cuMemcpyPeerAsync(d.buf[1], d.ctx, s.buf[0], s.ctx, bytes, s.stream[0]);
            if (r == CUDA_SUCCESS && bidi) r = api_.cuMemcpyPeerAsync(s.buf[1], s.ctx, d.buf[0], d.ctx, bytes, s.stream[1]);
        }
        if (r == CUDA_SUCCESS && bidi) {
            r = api_.cuEventRecord(s.mid, s.stream[1]);
            if (r == CUDA_SUCCESS) r = api_.cuStreamWaitEvent(s.stream[0], s.mid, 0);
        }
        if (r == CUDA_SUCCESS) r = api_.cuEventRecord(s.end, s.stream[0]);
        if (r == CUDA_SUCCESS) r = elapsed_ns(s, ns);
        return r;
    }
    CUresult latency(int src, int dst, uint64_t iters, uint64_t* wall_ns, uint64_t* event_ns) {
        Device& s = devs_[src];
        Device& d = devs_[dst];
        use(src);
        CUresult r = CUDA_SUCCESS;
        const auto t0 = std::chrono::steady_clock::now();
        for (uint64_t i = 0; r == CUDA_SUCCESS && i < iters; ++i) {
            r = api_.cuMemcpyPeerAsync(d.buf[1], d.ctx, s.buf[0], s.ctx, 4, s.stream[0]);
            if (r == CUDA_SUCCESS) r = api_.cuStreamSynchronize(s.stream[0]);
        }
        *wall_ns = static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
        if (r == CUDA_SUCCESS) r = api_.cuEventRecord(s.start, s.stream[0]);
        for (uint64_t i = 0; r == CUDA_SUCCESS && i < iters; ++i)
            r = api_.cuMemcpyPeerAsync(d.buf[1], d.ctx, s.buf[0], s.ctx, 4, s.stream[0]);
        if (r == CUDA_SUCCESS) r = api_.cuEventRecord(s.end, s.stream[0]);
        if (r == CUDA_SUCCESS) r = elapsed_ns(s, event_ns);
        return r;
    }

    const vgpu::CudaDriverApi& api_;
    std::vector<Device> devs_;
    std::string why_;
};

} // namespace

std::string native_p2p(const std::vector<int>& gpus, const P2pPlan& plan, std::vector<P2pSample>* out) {
    std::string why;
    const vgpu::CudaDriverApi* api = vgpu::CudaDriverApi::get(&why);
    if (!api) return why;
    uint64_t max_bytes = 4;
    for (uint64_t b : plan.sizes) max_bytes = std::max(max_bytes, b);
    PeerCopies p(*api);
    if (std::string w = p.set_up(gpus, max_bytes); !w.empty()) return w;
    p.run(plan, out);
    return "";
}

#else

std::string native_p2p(const std::vector<int>&, const P2pPlan&, std::vector<P2pSample>*) {
    return "this VMM was built without cuda.h: no native peer-copy baseline";
}

#endif

} // namespace kvmgpu::bench
