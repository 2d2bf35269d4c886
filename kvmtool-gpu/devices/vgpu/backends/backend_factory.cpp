#include "kvmtool-gpu/devices/vgpu/backends/backend_factory.h"

#include <strings.h>

#include <vector>

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
    return devices_of(gpus, [](int) { return std::make_unique<HostBackend>(); });
}

} // namespace

DeviceBackends make_cuda_backend(std::span<const int> gpus, std::string* why) {
#ifdef KVMGPU_HAVE_CUDA_BACKEND
    return devices_of(gpus, [why](int ordinal) { return CudaBackend::create(CudaBackendOptions{.ordinal = ordinal}, why); });
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
