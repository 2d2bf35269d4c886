#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <type_traits>

namespace kvmgpu::vgpu {

namespace {

// The version asked for must give the signature cuda.h declares.
#define KVMGPU_CUDA_CHECK_SIGNATURE(name, version)                               \
    static_assert(std::is_same_v<PFN_##name##_v##version, decltype(&::name)>, \
                  #name ": version " #version " is not the signature cuda.h declares");
KVMGPU_CUDA_REQUIRED(KVMGPU_CUDA_CHECK_SIGNATURE)
KVMGPU_CUDA_OPTIONAL(KVMGPU_CUDA_CHECK_SIGNATURE)
#undef KVMGPU_CUDA_CHECK_SIGNATURE

// Fills *fn with `symbol` at `version`; false (and *why) when missing.
bool resolve(CudaDriverApi::GetProcAddress get, const char* symbol, int version, void** fn, std::string* why) {
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    // LEGACY_STREAM: stream 0 means the legacy default stream, as in cuda.h
    // without CUDA_API_PER_THREAD_DEFAULT_STREAM.
    const CUresult r = get(symbol, fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
    if (r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS && *fn) return true;
    *fn = nullptr;
    if (why) {
        *why = std::string("libcuda.so.1 has no ") + symbol + " (version " + std::to_string(version) + ")" +
               (q == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? ": driver too old" : "");
    }
    return false;
}

const CudaDriverApi* load(std::string* why) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* e = dlerror();
        *why = std::string("cannot load libcuda.so.1 (no NVIDIA driver?): ") + (e ? e : "?");
        return nullptr;
    }
    auto get = reinterpret_cast<CudaDriverApi::GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!get) {
        *why = "libcuda.so.1 lacks cuGetProcAddress_v2 (driver older than CUDA 12)";
        return nullptr; // the library stays loaded: harmless, and dlclose of libcuda is best avoided
    }
    static CudaDriverApi api;
    api.get_proc_address = get;
#define KVMGPU_CUDA_RESOLVE(name, version) \
    if (!resolve(get, #name, version, reinterpret_cast<void**>(&api.name), why)) return nullptr;
    KVMGPU_CUDA_REQUIRED(KVMGPU_CUDA_RESOLVE)
#undef KVMGPU_CUDA_RESOLVE
#define KVMGPU_CUDA_RESOLVE_OPTIONAL(name, version) \
    resolve(get, #name, version, reinterpret_cast<void**>(&api.name), nullptr);
    KVMGPU_CUDA_OPTIONAL(KVMGPU_CUDA_RESOLVE_OPTIONAL)
#undef KVMGPU_CUDA_RESOLVE_OPTIONAL

    CUresult r = api.cuInit(0);
    if (r != CUDA_SUCCESS) {
        *why = "cuInit: " + api.describe(r);
        return nullptr;
    }
    api.cuDriverGetVersion(&api.driver_version);
    int count = 0;
    r = api.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count == 0) {
        *why = r != CUDA_SUCCESS ? "cuDeviceGetCount: " + api.describe(r) : std::string("no CUDA device");
        return nullptr;
    }
    return &api;
}

} // namespace

const CudaDriverApi* CudaDriverApi::get(std::string* why) {
    static std::once_flag once;
    static const CudaDriverApi* api = nullptr;
    static std::string reason;
    std::call_once(once, [] { api = load(&reason); });
    if (!api && why) *why = reason;
    return api;
}

void* CudaDriverApi::find(const char* name, int version) const {
    void* fn = nullptr;
    return resolve(get_proc_address, name, version, &fn, nullptr) ? fn : nullptr;
}

std::string CudaDriverApi::describe(CUresult r) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName) cuGetErrorName(r, &name);
    if (cuGetErrorString) cuGetErrorString(r, &text);
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s (%s)", name ? name : ("CUresult " + std::to_string(r)).c_str(),
                  text ? text : "no description");
    return buf;
}

} // namespace kvmgpu::vgpu
