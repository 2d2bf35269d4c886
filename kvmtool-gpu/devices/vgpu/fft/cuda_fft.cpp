#include "kvmtool-gpu/devices/vgpu/fft/cuda_fft.h"

#include <cufft.h>
#include <dlfcn.h>

#include "kvmtool-gpu/devices/vgpu/backends/host_library.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

static_assert(uint32_t(FftType::R2C) == CUFFT_R2C && uint32_t(FftType::C2R) == CUFFT_C2R &&
              uint32_t(FftType::C2C) == CUFFT_C2C && uint32_t(FftType::D2Z) == CUFFT_D2Z &&
              uint32_t(FftType::Z2D) == CUFFT_Z2D && uint32_t(FftType::Z2Z) == CUFFT_Z2Z);

#define KVMGPU_CUFFT_ENTRIES(X)                                                                                  \
    X(cufftCreate) X(cufftSetAutoAllocation) X(cufftMakePlanMany64) X(cufftSetWorkArea) X(cufftDestroy)           \
    X(cufftSetStream) X(cufftGetSize) X(cufftExecC2C)                                                          \
    X(cufftExecR2C) X(cufftExecC2R) X(cufftExecZ2Z) X(cufftExecD2Z) X(cufftExecZ2D) X(cufftGetVersion)

struct CufftApi {
#define KVMGPU_CUFFT_MEMBER(name) decltype(&::name) name = nullptr;
    KVMGPU_CUFFT_ENTRIES(KVMGPU_CUFFT_MEMBER)
#undef KVMGPU_CUFFT_MEMBER
};

namespace {
Status from_cufft(cufftResult r) {
    switch (r) {
    case CUFFT_SUCCESS: return VGPU_SUCCESS;
    case CUFFT_ALLOC_FAILED: return VGPU_ERROR_OUT_OF_MEMORY;
    case CUFFT_INVALID_TYPE:
    case CUFFT_INVALID_VALUE:
    case CUFFT_INVALID_SIZE: return VGPU_ERROR_INVALID_VALUE;
    case CUFFT_INVALID_PLAN: return VGPU_ERROR_INVALID_HANDLE;
    case CUFFT_NOT_SUPPORTED: return VGPU_ERROR_NOT_SUPPORTED;
    case CUFFT_SETUP_FAILED: return VGPU_ERROR_NOT_INITIALIZED;
    case CUFFT_EXEC_FAILED: return VGPU_ERROR_LAUNCH_FAILED;
    default: return VGPU_ERROR_UNKNOWN;
    }
}

const CufftApi* load_cufft() {
    const HostLibrary found = open_host_library("cuFFT", "libcufft.so.12", "", "(no option)",
                                                "cuFFT calls fail with CUFFT_SETUP_FAILED");
    if (!found.handle) return nullptr;
    auto* api = new CufftApi; // one per process, never unloaded
#define KVMGPU_CUFFT_RESOLVE(name)                                                         \
    api->name = reinterpret_cast<decltype(api->name)>(dlsym(found.handle, #name));        \
    if (!api->name) {                                                                      \
        log_error("cuFFT: the library has no %s: cuFFT calls fail", #name);               \
        delete api;                                                                        \
        return nullptr;                                                                    \
    }
    KVMGPU_CUFFT_ENTRIES(KVMGPU_CUFFT_RESOLVE)
#undef KVMGPU_CUFFT_RESOLVE
    int version = 0;
    api->cufftGetVersion(&version);
    log_info("cuFFT: libcufft %d from %s", version, found.path.c_str());
    return api;
}

cufftHandle plan_of(BackendFft p) { return static_cast<cufftHandle>(p - 1); } // ids are handle + 1 (0 is a plan)
template <class T> T* dev(uint64_t p) { return reinterpret_cast<T*>(static_cast<uintptr_t>(p)); }
} // namespace

CudaFft::~CudaFft() {
    if (api_)
        for (BackendFft p : live_) api_->cufftDestroy(plan_of(p));
}

const CufftApi* CudaFft::api() {
    static const CufftApi* process_api = load_cufft(); // once per process
    api_ = process_api;
    return api_;
}

// Every plan through cufftMakePlanMany64 (cufftPlan1d/2d/3d are its basic
// cases): one path for the basic and the advanced layouts.
Status CudaFft::plan(const FftShape& s, bool auto_allocation, BackendFft* out, uint64_t* work) {
    const CufftApi* a = api();
    if (!a) return VGPU_ERROR_NOT_INITIALIZED;
    cufftHandle h = 0;
    if (Status st = from_cufft(a->cufftCreate(&h)); st != VGPU_SUCCESS) return st;
    long long n[3], inembed[3], onembed[3];
    for (uint32_t d = 0; d < 3; ++d) n[d] = (long long)s.n[d], inembed[d] = (long long)s.in.embed[d], onembed[d] = (long long)s.out.embed[d];
    size_t bytes = 0;
    cufftResult r = a->cufftSetAutoAllocation(h, auto_allocation ? 1 : 0);
    if (r == CUFFT_SUCCESS)
        r = a->cufftMakePlanMany64(h, int(s.rank), n, s.advanced ? inembed : nullptr, (long long)s.in.stride,
                                   (long long)s.in.dist, s.advanced ? onembed : nullptr, (long long)s.out.stride,
                                   (long long)s.out.dist, static_cast<cufftType>(s.type), (long long)s.batch, &bytes);
    if (Status st = from_cufft(r); st != VGPU_SUCCESS) {
        a->cufftDestroy(h);
        return st;
    }
    *work = bytes;
    *out = static_cast<BackendFft>(h) + 1;
    live_.insert(*out);
    return VGPU_SUCCESS;
}

Status CudaFft::set_work_area(BackendFft p, uint64_t dptr) {
    if (!live_.count(p)) return VGPU_ERROR_INVALID_HANDLE;
    return from_cufft(api_->cufftSetWorkArea(plan_of(p), dev<void>(dptr)));
}

Status CudaFft::destroy(BackendFft p) {
    if (!live_.erase(p)) return VGPU_ERROR_INVALID_HANDLE;
    return from_cufft(api_->cufftDestroy(plan_of(p)));
}

Status CudaFft::set_stream(BackendFft p, BackendStream s) {
    if (!live_.count(p)) return VGPU_ERROR_INVALID_HANDLE;
    return from_cufft(api_->cufftSetStream(plan_of(p), reinterpret_cast<cudaStream_t>(s)));
}

Status CudaFft::exec(BackendFft p, const FftShape& s, uint64_t in, uint64_t out, int direction) {
    if (!live_.count(p)) return VGPU_ERROR_INVALID_HANDLE;
    const cufftHandle h = plan_of(p);
    switch (s.type) {
    case FftType::C2C: return from_cufft(api_->cufftExecC2C(h, dev<cufftComplex>(in), dev<cufftComplex>(out), direction));
    case FftType::Z2Z:
        return from_cufft(api_->cufftExecZ2Z(h, dev<cufftDoubleComplex>(in), dev<cufftDoubleComplex>(out), direction));
    case FftType::R2C: return from_cufft(api_->cufftExecR2C(h, dev<cufftReal>(in), dev<cufftComplex>(out)));
    case FftType::C2R: return from_cufft(api_->cufftExecC2R(h, dev<cufftComplex>(in), dev<cufftReal>(out)));
    case FftType::D2Z: return from_cufft(api_->cufftExecD2Z(h, dev<cufftDoubleReal>(in), dev<cufftDoubleComplex>(out)));
    case FftType::Z2D: return from_cufft(api_->cufftExecZ2D(h, dev<cufftDoubleComplex>(in), dev<cufftDoubleReal>(out)));
    }
    return VGPU_ERROR_INVALID_VALUE;
}

} // namespace kvmgpu::vgpu
