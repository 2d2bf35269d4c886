#include "kvmtool-gpu/devices/vgpu/backends/backend_factory.h"

#include <strings.h>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
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

std::unique_ptr<GpuBackend> make_cuda_backend(int ordinal, std::string* why) {
#ifdef KVMGPU_HAVE_CUDA_BACKEND
    return CudaBackend::create(CudaBackendOptions{.ordinal = ordinal}, why);
#else
    (void)ordinal;
    *why = "this VMM was built without cuda.h: no CUDA backend";
    return nullptr;
#endif
}

std::unique_ptr<GpuBackend> host_instead_of_cuda(const std::string& reason, std::string* why) {
    auto b = std::make_unique<HostBackend>();
    if (why) *why = b->describe() + " (CUDA unavailable: " + reason + ")";
    return b;
}

std::unique_ptr<GpuBackend> make_backend(BackendChoice choice, std::string* why, int cuda_ordinal) {
    std::string reason;
    std::unique_ptr<GpuBackend> b;
    if (choice != BackendChoice::Host) {
        b = make_cuda_backend(cuda_ordinal, &reason);
        if (!b && choice == BackendChoice::Cuda) {
            if (why) *why = "CUDA backend unavailable: " + reason;
            return nullptr;
        }
    }
    if (b) {
        if (why) *why = b->describe();
        return b;
    }
    if (choice != BackendChoice::Host) return host_instead_of_cuda(reason, why);
    b = std::make_unique<HostBackend>();
    if (why) *why = b->describe() + " (forced)";
    return b;
}

} // namespace kvmgpu::vgpu
