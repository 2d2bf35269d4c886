#include "kvmtool-gpu/devices/vgpu/rand/cuda_rand.h"

#include <curand.h>
#include <dlfcn.h>

#include "kvmtool-gpu/devices/vgpu/backends/host_library.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

#define KVMGPU_CURAND_ENTRIES(X)                                                                          \
    X(curandCreateGenerator) X(curandDestroyGenerator) X(curandSetStream) X(curandSetPseudoRandomGeneratorSeed) \
    X(curandGenerate) X(curandGenerateUniform) X(curandGenerateUniformDouble) X(curandGenerateNormal)     \
    X(curandGenerateNormalDouble) X(curandGetVersion) X(curandSetGeneratorOffset) X(curandSetGeneratorOrdering) \
    X(curandSetQuasiRandomGeneratorDimensions) X(curandGenerateLongLong) X(curandGenerateLogNormal)           \
    X(curandGenerateLogNormalDouble)

struct CurandApi {
#define KVMGPU_CURAND_MEMBER(name) decltype(&::name) name = nullptr;
    KVMGPU_CURAND_ENTRIES(KVMGPU_CURAND_MEMBER)
#undef KVMGPU_CURAND_MEMBER
};

namespace {
Status from_curand(curandStatus_t s) {
    switch (s) {
    case CURAND_STATUS_SUCCESS: return VGPU_SUCCESS;
    case CURAND_STATUS_ALLOCATION_FAILED: return VGPU_ERROR_OUT_OF_MEMORY;
    case CURAND_STATUS_TYPE_ERROR:
    case CURAND_STATUS_OUT_OF_RANGE:
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return VGPU_ERROR_INVALID_VALUE;
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED:
    case CURAND_STATUS_ARCH_MISMATCH: return VGPU_ERROR_NOT_SUPPORTED;
    case CURAND_STATUS_NOT_INITIALIZED:
    case CURAND_STATUS_INITIALIZATION_FAILED: return VGPU_ERROR_NOT_INITIALIZED;
    case CURAND_STATUS_LAUNCH_FAILURE: return VGPU_ERROR_LAUNCH_FAILED;
    default: return VGPU_ERROR_UNKNOWN;
    }
}

const CurandApi* load_curand() {
    const HostLibrary found = open_host_library("cuRAND", "libcurand.so.10", "", "(no option)",
                                                "cuRAND calls fail with CURAND_STATUS_INITIALIZATION_FAILED");
    if (!found.handle) return nullptr;
    auto* api = new CurandApi; // one per process, never unloaded
#define KVMGPU_CURAND_RESOLVE(name)                                                        \
    api->name = reinterpret_cast<decltype(api->name)>(dlsym(found.handle, #name));        \
    if (!api->name) {                                                                      \
        log_error("cuRAND: the library has no %s: cuRAND calls fail", #name);             \
        delete api;                                                                        \
        return nullptr;                                                                    \
    }
    KVMGPU_CURAND_ENTRIES(KVMGPU_CURAND_RESOLVE)
#undef KVMGPU_CURAND_RESOLVE
    int version = 0;
    api->curandGetVersion(&version);
    log_info("cuRAND: libcurand %d from %s", version, found.path.c_str());
    return api;
}

curandGenerator_t gen(BackendRand g) { return reinterpret_cast<curandGenerator_t>(g); }
} // namespace

CudaRand::~CudaRand() {
    if (api_)
        for (BackendRand g : live_) api_->curandDestroyGenerator(gen(g));
}

const CurandApi* CudaRand::api() {
    static const CurandApi* process_api = load_curand(); // once per process
    api_ = process_api;
    return api_;
}

Status CudaRand::create(uint32_t rng_type, BackendRand* out) {
    const CurandApi* a = api();
    if (!a) return VGPU_ERROR_NOT_INITIALIZED;
    curandGenerator_t g = nullptr;
    const Status s = from_curand(a->curandCreateGenerator(&g, static_cast<curandRngType_t>(rng_type)));
    if (s != VGPU_SUCCESS) return s;
    *out = reinterpret_cast<BackendRand>(g);
    live_.insert(*out);
    return VGPU_SUCCESS;
}

Status CudaRand::destroy(BackendRand g) {
    if (!live_.erase(g)) return VGPU_ERROR_INVALID_HANDLE;
    return from_curand(api_->curandDestroyGenerator(gen(g)));
}

Status CudaRand::set_stream(BackendRand g, BackendStream s) {
    if (!live_.count(g)) return VGPU_ERROR_INVALID_HANDLE;
    return from_curand(api_->curandSetStream(gen(g), reinterpret_cast<cudaStream_t>(s)));
}

Status CudaRand::set_seed(BackendRand g, uint64_t seed) {
    if (!live_.count(g)) return VGPU_ERROR_INVALID_HANDLE;
    return from_curand(api_->curandSetPseudoRandomGeneratorSeed(gen(g), seed));
}

Status CudaRand::generate(BackendRand g, uint32_t kind, uint64_t dptr, uint64_t count, double mean, double stddev) {
    if (!live_.count(g)) return VGPU_ERROR_INVALID_HANDLE;
    void* out = reinterpret_cast<void*>(static_cast<uintptr_t>(dptr));
    switch (kind) {
    case VGPU_RAND_BITS: return from_curand(api_->curandGenerate(gen(g), static_cast<unsigned*>(out), count));
    case VGPU_RAND_UNIFORM: return from_curand(api_->curandGenerateUniform(gen(g), static_cast<float*>(out), count));
    case VGPU_RAND_UNIFORM_DOUBLE:
        return from_curand(api_->curandGenerateUniformDouble(gen(g), static_cast<double*>(out), count));
    case VGPU_RAND_NORMAL:
        return from_curand(api_->curandGenerateNormal(gen(g), static_cast<float*>(out), count, float(mean), float(stddev)));
    case VGPU_RAND_NORMAL_DOUBLE:
        return from_curand(api_->curandGenerateNormalDouble(gen(g), static_cast<double*>(out), count, mean, stddev));
    case VGPU_RAND_LONG_LONG:
        return from_curand(api_->curandGenerateLongLong(gen(g), static_cast<unsigned long long*>(out), count));
    case VGPU_RAND_LOG_NORMAL:
        return from_curand(
            api_->curandGenerateLogNormal(gen(g), static_cast<float*>(out), count, float(mean), float(stddev)));
    case VGPU_RAND_LOG_NORMAL_DOUBLE:
        return from_curand(api_->curandGenerateLogNormalDouble(gen(g), static_cast<double*>(out), count, mean, stddev));
    default: return VGPU_ERROR_INVALID_VALUE;
    }
}

Status CudaRand::set_offset(BackendRand g, uint64_t offset) {
    if (!live_.count(g)) return VGPU_ERROR_INVALID_HANDLE;
    return from_curand(api_->curandSetGeneratorOffset(gen(g), offset));
}

Status CudaRand::set_ordering(BackendRand g, uint32_t ordering) {
    if (!live_.count(g)) return VGPU_ERROR_INVALID_HANDLE;
    return from_curand(api_->curandSetGeneratorOrdering(gen(g), static_cast<curandOrdering_t>(ordering)));
}

Status CudaRand::set_dimensions(BackendRand g, uint32_t dimensions) {
    if (!live_.count(g)) return VGPU_ERROR_INVALID_HANDLE;
    return from_curand(api_->curandSetQuasiRandomGeneratorDimensions(gen(g), dimensions));
}

} // namespace kvmgpu::vgpu
