#include "kvmtool-gpu/devices/vgpu/backend_factory.h"

#include <strings.h>

#include <vector>

#include "kvmtool-gpu/devices/vgpu/blas/host_blas.h"
#include "kvmtool-gpu/devices/vgpu/fft/host_fft.h"
#include "kvmtool-gpu/devices/vgpu/rand/host_rand.h"
#ifdef KVMGPU_HAVE_CUDA_BACKEND
#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "kvmtool-gpu/devices/vgpu/blas/cuda_blas.h"
#include "kvmtool-gpu/devices/vgpu/fft/cuda_fft.h"
#include "kvmtool-gpu/devices/vgpu/rand/cuda_rand.h"
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

namespace {

// One backend per entry of gpus from make_one(ordinal); empty when one
// cannot be made.
template <class MakeOne>
DeviceBackends devices_of(std::span<const int> gpus, MakeOne make_one) {
    std::vector<std::unique_ptr<GpuBackend>> devices;
    for (int ordinal : gpus) {
        auto b = make_one(ordinal);
        if (!b) return {};
        devices.push_back(std::move(b));
    }
    if (devices.empty()) return {};
    return DeviceBackends(std::move(devices));
}

DeviceBackends host_devices(std::span<const int> gpus) {
    return devices_of(gpus, [](int) { return make_host_backend(); });
}

#ifdef KVMGPU_HAVE_CUDA_BACKEND
// The host's libcublas, libcurand and libcufft, each loaded at its first use.
std::unique_ptr<CudaBackend> with_cuda_libraries(std::unique_ptr<CudaBackend> b) {
    if (!b) return b;
    const CudaDriverApi* api = &b->driver_api();
    b->offer_libraries({
        .blas = [api] { return std::make_unique<CudaBlas>(*api); },
        .rand = [] { return std::make_unique<CudaRand>(); },
        .fft = [] { return std::make_unique<CudaFft>(); },
    });
    return b;
}
#endif

} // namespace

std::unique_ptr<HostBackend> make_host_backend(HostBackendOptions opts) {
    auto b = std::make_unique<HostBackend>(opts);
    const DeviceAddressSpace* memory = b.get();
    b->offer_libraries({
        .blas = [memory] { return std::make_unique<HostBlas>(*memory); },
        .rand = [memory] { return std::make_unique<HostRand>(*memory); },
        .fft = [memory] { return std::make_unique<HostFft>(*memory); },
    });
    return b;
}

DeviceBackends make_cuda_backend(std::span<const int> gpus, std::string* why) {
#ifdef KVMGPU_HAVE_CUDA_BACKEND
    return devices_of(gpus, [why](int ordinal) {
        return with_cuda_libraries(CudaBackend::create(CudaBackendOptions{.ordinal = ordinal}, why));
    });
#else
    (void)gpus;
    *why = "this VMM was built without cuda.h: no CUDA backend";
    return {};
#endif
}

DeviceBackends host_instead_of_cuda(const std::string& reason, std::string* why,
                                                 std::span<const int> gpus) {
    auto b = host_devices(gpus);
    if (why) *why = b.describe() + " (CUDA unavailable: " + reason + ")";
    return b;
}

DeviceBackends make_backend(BackendChoice choice, std::string* why, std::span<const int> gpus) {
    std::string reason;
    DeviceBackends b;
    if (gpus.empty()) {
        if (why) *why = "no devices asked for";
        return {};
    }
    if (choice != BackendChoice::Host) {
        b = make_cuda_backend(gpus, &reason);
        if (!b && choice == BackendChoice::Cuda) {
            if (why) *why = "CUDA backend unavailable: " + reason;
            return {};
        }
    }
    if (b) {
        if (why) *why = b.describe();
        return b;
    }
    if (choice != BackendChoice::Host) return host_instead_of_cuda(reason, why, gpus);
    b = host_devices(gpus);
    if (why) *why = b.describe() + " (forced)";
    return b;
}

} // namespace kvmgpu::vgpu
