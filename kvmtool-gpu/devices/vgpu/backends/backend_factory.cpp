#include "kvmtool-gpu/devices/vgpu/backends/backend_factory.h"

#include <dlfcn.h>
#include <strings.h>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/remote_backend.h"
#ifdef KVMGPU_HAVE_CUDA_BACKEND
#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#endif

namespace kvmgpu::vgpu {

bool parse_backend_choice(std::string_view s, BackendChoice* out) {
    const std::string v(s);
    if (strcasecmp(v.c_str(), "auto") == 0) return *out = BackendChoice::Auto, true;
    if (strcasecmp(v.c_str(), "cuda") == 0) return *out = BackendChoice::Cuda, true;
    if (strcasecmp(v.c_str(), "host") == 0) return *out = BackendChoice::Host, true;
    return false;
}

const char* to_string(BackendChoice c) {
    switch (c) {
    case BackendChoice::Auto: return "auto";
    case BackendChoice::Cuda: return "cuda";
    case BackendChoice::Host: return "host";
    }
    return "?";
}

bool parse_gpu_worker(std::string_view s, GpuWorker* out) {
    const std::string v(s);
    if (strcasecmp(v.c_str(), "process") == 0) return *out = GpuWorker::Process, true;
    if (strcasecmp(v.c_str(), "inline") == 0) return *out = GpuWorker::Inline, true;
    return false;
}

const char* to_string(GpuWorker w) { return w == GpuWorker::Process ? "process" : "inline"; }

namespace {
#ifdef KVMGPU_HAVE_CUDA_BACKEND
// A child forked after its parent initialised CUDA cannot use CUDA: if this
// process already has libcuda (an inline backend, a native benchmark), a
// worker would be no use.
bool libcuda_loaded_here() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != nullptr;
}
#endif

// *note: anything the description should add (a fallback taken).
std::unique_ptr<GpuBackend> make_cuda(int ordinal, GpuWorker worker, std::string* reason, std::string* note) {
#ifdef KVMGPU_HAVE_CUDA_BACKEND
    const CudaBackendOptions opts{.ordinal = ordinal};
    if (worker == GpuWorker::Process && libcuda_loaded_here()) {
        *note = " (in this process: libcuda was already loaded here, so a forked GPU worker could not use it)";
        worker = GpuWorker::Inline;
    }
    if (worker == GpuWorker::Inline) return CudaBackend::create(opts, reason);
    return RemoteBackend::create(
        [opts](std::string* why) -> std::unique_ptr<GpuBackend> { return CudaBackend::create(opts, why); },
        RemoteBackendOptions{}, reason);
#else
    (void)ordinal, (void)worker, (void)note;
    *reason = "this VMM was built without cuda.h: no CUDA backend";
    return nullptr;
#endif
}
} // namespace

std::unique_ptr<GpuBackend> make_backend(BackendChoice choice, std::string* why, int cuda_ordinal, GpuWorker worker) {
    std::string reason, note;
    std::unique_ptr<GpuBackend> b;
    if (choice != BackendChoice::Host) {
        b = make_cuda(cuda_ordinal, worker, &reason, &note);
        if (!b && choice == BackendChoice::Cuda) {
            if (why) *why = "CUDA backend unavailable: " + reason;
            return nullptr;
        }
    }
    if (b) {
        if (why) *why = b->describe() + note;
        return b;
    }
    b = std::make_unique<HostBackend>();
    if (why) {
        *why = choice == BackendChoice::Host ? b->describe() + " (forced)"
                                             : b->describe() + " (CUDA unavailable: " + reason + ")";
    }
    return b;
}

} // namespace kvmgpu::vgpu
