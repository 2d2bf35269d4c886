#include "kvmtool-gpu/bench/native_devices.h"

#ifdef KVMGPU_HAVE_CUDA_BACKEND
#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"
#endif

namespace kvmgpu::bench {

std::string describe_native_gpu(int ordinal, BenchMeta* meta) {
#ifdef KVMGPU_HAVE_CUDA_BACKEND
    std::string why;
    const vgpu::CudaDriverApi* api = vgpu::CudaDriverApi::get(&why);
    if (!api) return why;
    CUdevice dev;
    char name[256] = {};
    if (api->cuDeviceGet(&dev, ordinal) == CUDA_SUCCESS) api->cuDeviceGetName(name, sizeof name - 1, dev);
    meta->set("gpu", name);
    meta->set("driver", "CUDA " + std::to_string(api->driver_version / 1000) + "." +
                            std::to_string(api->driver_version % 1000 / 10));
    return "";
#else
    (void)ordinal, (void)meta;
    return "this VMM was built without cuda.h: no native baseline";
#endif
}

bool native_on_gpus_skipped(BenchMeta* meta, bool no_native, bool host_forced) {
    if (no_native) meta->set("native_baseline", "none (--no-native)");
    else if (host_forced) meta->set("native_baseline", "none (--vgpu host: the guest uses the host backend, not a GPU)");
    return no_native || host_forced;
}

void set_native_verdict(BenchMeta* meta, const std::string& why) {
    meta->set("native_baseline", why.empty() ? "CUDA Driver API in a process of its own, a context per device"
                                             : "incomplete: " + why);
    meta->native_baseline = why.empty();
}

std::string gpu_list_text(const std::vector<int>& gpus) {
    std::string s;
    for (int g : gpus) s += (s.empty() ? "" : ",") + std::to_string(g);
    return s;
}

} // namespace kvmgpu::bench
