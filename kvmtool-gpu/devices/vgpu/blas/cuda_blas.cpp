#include "kvmtool-gpu/devices/vgpu/blas/cuda_blas.h"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <type_traits>

#include "kvmtool-gpu/devices/vgpu/backends/host_library.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

// The numbers the ABI takes from cuBLAS and CUDA are theirs.
static_assert(VGPU_BLAS_R_32F == CUDA_R_32F && VGPU_BLAS_R_64F == CUDA_R_64F && VGPU_BLAS_R_16F == CUDA_R_16F &&
              VGPU_BLAS_C_32F == CUDA_C_32F && VGPU_BLAS_C_64F == CUDA_C_64F && VGPU_BLAS_R_16BF == CUDA_R_16BF);
static_assert(VGPU_BLAS_COMPUTE_16F == CUBLAS_COMPUTE_16F && VGPU_BLAS_COMPUTE_32F == CUBLAS_COMPUTE_32F &&
              VGPU_BLAS_COMPUTE_64F == CUBLAS_COMPUTE_64F && VGPU_BLAS_COMPUTE_32F_FAST_16F == CUBLAS_COMPUTE_32F_FAST_16F &&
              VGPU_BLAS_COMPUTE_32F_FAST_16BF == CUBLAS_COMPUTE_32F_FAST_16BF &&
              VGPU_BLAS_COMPUTE_32F_FAST_TF32 == CUBLAS_COMPUTE_32F_FAST_TF32 &&
              VGPU_BLAS_COMPUTE_16F_PEDANTIC == CUBLAS_COMPUTE_16F_PEDANTIC &&
              VGPU_BLAS_COMPUTE_32F_PEDANTIC == CUBLAS_COMPUTE_32F_PEDANTIC &&
              VGPU_BLAS_COMPUTE_64F_PEDANTIC == CUBLAS_COMPUTE_64F_PEDANTIC);
static_assert(CUBLAS_OP_N == 0 && CUBLAS_OP_T == 1 && CUBLAS_OP_C == 2 && CUBLAS_FILL_MODE_LOWER == 0 &&
              CUBLAS_FILL_MODE_UPPER == 1 && CUBLAS_DIAG_NON_UNIT == 0 && CUBLAS_DIAG_UNIT == 1 &&
              CUBLAS_SIDE_LEFT == 0 && CUBLAS_SIDE_RIGHT == 1 && CUBLAS_GEMM_DEFAULT == -1);

// Entry points by their cublas_v2.h names; each member has the header's type.
#define KVMGPU_CUBLAS_ENTRIES(X)                                                                               \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetPointerMode_v2) X(cublasSetMathMode) \
    X(cublasSetWorkspace_v2) X(cublasGetProperty) X(cublasAxpyEx) X(cublasScalEx) X(cublasDotEx) X(cublasDotcEx) \
    X(cublasNrm2Ex) X(cublasAsumEx) X(cublasIamaxEx) X(cublasIaminEx) X(cublasCopyEx) X(cublasSwapEx)             \
    X(cublasSgemv_v2) X(cublasDgemv_v2) X(cublasCgemv_v2) X(cublasZgemv_v2) X(cublasSger_v2) X(cublasDger_v2)     \
    X(cublasCgeru_v2) X(cublasCgerc_v2) X(cublasZgeru_v2) X(cublasZgerc_v2) X(cublasStrsv_v2) X(cublasDtrsv_v2)   \
    X(cublasCtrsv_v2) X(cublasZtrsv_v2) X(cublasHgemm) X(cublasSgemm_v2) X(cublasDgemm_v2) X(cublasCgemm_v2)      \
    X(cublasZgemm_v2) X(cublasHgemmStridedBatched) X(cublasSgemmStridedBatched)                  \
    X(cublasDgemmStridedBatched) X(cublasCgemmStridedBatched) X(cublasZgemmStridedBatched)                       \
    X(cublasHgemmBatched) X(cublasSgemmBatched) X(cublasDgemmBatched)              \
    X(cublasCgemmBatched) X(cublasZgemmBatched) X(cublasStrsm_v2) X(cublasDtrsm_v2)        \
    X(cublasCtrsm_v2) X(cublasZtrsm_v2) X(cublasSsyrk_v2) X(cublasDsyrk_v2) X(cublasCsyrk_v2) X(cublasZsyrk_v2)   \
    X(cublasSgeam) X(cublasDgeam) X(cublasCgeam) X(cublasZgeam)

// The GemmEx family has C++ overloads (a cudaDataType compute type, from
// CUDA 10): the entry point is the one taking cublasComputeType_t.
using PfnGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                     const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                     cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using PfnGemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                   const void*, const void*, cudaDataType, int, long long, const void*,
                                                   cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                                   long long, int, cublasComputeType_t, cublasGemmAlgo_t);
using PfnGemmBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void* const[], cudaDataType, int, const void* const[],
                                            cudaDataType, int, const void*, void* const[], cudaDataType, int, int,
                                            cublasComputeType_t, cublasGemmAlgo_t);
#define KVMGPU_CUBLAS_OVERLOADED(X) \
    X(cublasGemmEx, PfnGemmEx) X(cublasGemmStridedBatchedEx, PfnGemmStridedBatchedEx) X(cublasGemmBatchedEx, PfnGemmBatchedEx)

struct CublasApi {
#define KVMGPU_CUBLAS_MEMBER(name) decltype(&::name) name = nullptr;
    KVMGPU_CUBLAS_ENTRIES(KVMGPU_CUBLAS_MEMBER)
#undef KVMGPU_CUBLAS_MEMBER
#define KVMGPU_CUBLAS_TYPED(name, type)                                           \
    static_assert(std::is_same_v<decltype(static_cast<type>(&::name)), type>, "cublas_v2.h declares it"); \
    type name = nullptr;
    KVMGPU_CUBLAS_OVERLOADED(KVMGPU_CUBLAS_TYPED)
#undef KVMGPU_CUBLAS_TYPED
    std::string path; // the file the loader opened
    int version = 0;  // CUBLAS_VERSION form: major * 10000 + minor * 100 + patch
};

struct CudaBlas::Handle {
    cublasHandle_t h = nullptr;
    cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
    CUstream stream = nullptr;
    CUdeviceptr arrays = 0; // GEMM_POINTERS' checked lists
    uint64_t arrays_bytes = 0;
    uint64_t uploaded_bytes = 0; // what the last upload put there (0: nothing trusted)
};

namespace {
std::string& cublas_override() {
    static std::string path;
    return path;
}

Status from_cublas(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return VGPU_SUCCESS;
    case CUBLAS_STATUS_NOT_INITIALIZED: return VGPU_ERROR_NOT_INITIALIZED;
    case CUBLAS_STATUS_ALLOC_FAILED: return VGPU_ERROR_OUT_OF_MEMORY;
    case CUBLAS_STATUS_INVALID_VALUE: return VGPU_ERROR_INVALID_VALUE;
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED: return VGPU_ERROR_NOT_SUPPORTED;
    case CUBLAS_STATUS_EXECUTION_FAILED: return VGPU_ERROR_LAUNCH_FAILED;
    default: return VGPU_ERROR_UNKNOWN; // MAPPING_ERROR, INTERNAL_ERROR, LICENSE_ERROR
    }
}

const CublasApi* load_cublas() {
    const HostLibrary found = open_host_library("cuBLAS", "libcublas.so.13", cublas_override(), "--cublas",
                                                "cuBLAS calls fail with CUBLAS_STATUS_NOT_INITIALIZED");
    void* lib = found.handle;
    if (!lib) return nullptr;
    auto* api = new CublasApi; // one per process, never unloaded (as the driver API)
    bool complete = true;
#define KVMGPU_CUBLAS_RESOLVE(name)                                                       \
    api->name = reinterpret_cast<decltype(api->name)>(dlsym(lib, #name));                \
    if (!api->name) {                                                                     \
        log_error("cuBLAS: the library has no %s: cuBLAS calls fail", #name);            \
        complete = false;                                                                 \
    }
    KVMGPU_CUBLAS_ENTRIES(KVMGPU_CUBLAS_RESOLVE)
#define KVMGPU_CUBLAS_RESOLVE_TYPED(name, type) KVMGPU_CUBLAS_RESOLVE(name)
    KVMGPU_CUBLAS_OVERLOADED(KVMGPU_CUBLAS_RESOLVE_TYPED)
#undef KVMGPU_CUBLAS_RESOLVE_TYPED
#undef KVMGPU_CUBLAS_RESOLVE
    if (!complete) {
        delete api;
        return nullptr;
    }
    api->path = found.path;
    int major = 0, minor = 0, patch = 0;
    api->cublasGetProperty(MAJOR_VERSION, &major);
    api->cublasGetProperty(MINOR_VERSION, &minor);
    api->cublasGetProperty(PATCH_LEVEL, &patch);
    api->version = major * 10000 + minor * 100 + patch;
    log_info("cuBLAS: libcublas %d.%d.%d from %s", major, minor, patch, api->path.c_str());
    return api;
}

template <class T> T* dev(uint64_t p) { return reinterpret_cast<T*>(static_cast<uintptr_t>(p)); }
// A scalar of the call: its value in the struct (host mode) or its device address.
template <class T>
const T* scalar(const vgpu_blas_head& h, const vgpu_blas_scalar& s) {
    return h.flags & VGPU_BLAS_DEVICE_SCALARS ? dev<const T>(s.dptr) : reinterpret_cast<const T*>(s.bytes);
}
cublasOperation_t op(uint32_t v) { return static_cast<cublasOperation_t>(v); }
cublasFillMode_t fill(uint32_t v) { return static_cast<cublasFillMode_t>(v); }
cublasDiagType_t diag(uint32_t v) { return static_cast<cublasDiagType_t>(v); }
cudaDataType dtype(uint32_t v) { return static_cast<cudaDataType>(v); }
int i32(int64_t v) { return static_cast<int>(v); } // checked to fit (blas_checks)
cudaDataType real_of(uint32_t t) {
    return t == VGPU_BLAS_C_32F ? CUDA_R_32F : t == VGPU_BLAS_C_64F ? CUDA_R_64F : dtype(t);
}
} // namespace

void set_cublas_path(std::string path) { cublas_override() = std::move(path); }

CudaBlas::CudaBlas(const CudaDriverApi& driver) : driver_(driver) {}

CudaBlas::~CudaBlas() {
    for (auto& [id, h] : handles_) {
        if (h->arrays) driver_.cuMemFree(h->arrays);
        if (api_) api_->cublasDestroy_v2(h->h);
    }
}

void CudaBlas::forget_all() {
    for (auto& [id, h] : handles_) h->h = nullptr, h->arrays = 0; // gone with the context, not freed
    handles_.clear();
}

const CublasApi* CudaBlas::api() {
    if (!tried_) {
        static const CublasApi* process_api = load_cublas(); // once per process
        api_ = process_api;
        tried_ = true;
    }
    return api_;
}

std::string CudaBlas::describe() const {
    return api_ ? "libcublas " + std::to_string(api_->version) + " from " + api_->path : "libcublas (not loaded)";
}

CudaBlas::Handle* CudaBlas::find(BackendBlas h) {
    const auto it = handles_.find(h);
    return it == handles_.end() ? nullptr : it->second.get();
}

Status CudaBlas::create(BackendBlas* out) {
    const CublasApi* a = api();
    if (!a) return VGPU_ERROR_NOT_INITIALIZED;
    auto h = std::make_unique<Handle>();
    const Status s = from_cublas(a->cublasCreate_v2(&h->h));
    if (s != VGPU_SUCCESS) return s;
    *out = reinterpret_cast<BackendBlas>(h.get());
    handles_.emplace(*out, std::move(h));
    return VGPU_SUCCESS;
}

Status CudaBlas::destroy(BackendBlas id) {
    Handle* h = find(id);
    if (!h) return VGPU_ERROR_INVALID_HANDLE;
    // Its queued work may still read the pointer lists.
    if (h->arrays) driver_.cuStreamSynchronize(h->stream), driver_.cuMemFree(h->arrays);
    const Status s = from_cublas(api_->cublasDestroy_v2(h->h));
    handles_.erase(id);
    return s;
}

Status CudaBlas::set_stream(BackendBlas id, BackendStream s) {
    Handle* h = find(id);
    if (!h) return VGPU_ERROR_INVALID_HANDLE;
    // The pointer lists are reused in stream order: the old stream's work finishes first.
    if (h->arrays) driver_.cuStreamSynchronize(h->stream);
    h->stream = reinterpret_cast<CUstream>(s);
    return from_cublas(api_->cublasSetStream_v2(h->h, h->stream));
}

Status CudaBlas::set_math_mode(BackendBlas id, uint32_t mode) {
    Handle* h = find(id);
    if (!h) return VGPU_ERROR_INVALID_HANDLE;
    return from_cublas(api_->cublasSetMathMode(h->h, static_cast<cublasMath_t>(mode)));
}

Status CudaBlas::set_workspace(BackendBlas id, uint64_t dptr, uint64_t bytes) {
    Handle* h = find(id);
    if (!h) return VGPU_ERROR_INVALID_HANDLE;
    return from_cublas(api_->cublasSetWorkspace_v2(h->h, dev<void>(dptr), bytes));
}

Status CudaBlas::version(int* out) {
    const CublasApi* a = api();
    if (!a) return VGPU_ERROR_NOT_INITIALIZED;
    *out = a->version;
    return VGPU_SUCCESS;
}

Status CudaBlas::scalars(Handle& h, const vgpu_blas_head& head) {
    const cublasPointerMode_t want =
        head.flags & VGPU_BLAS_DEVICE_SCALARS ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST;
    if (want == h.mode) return VGPU_SUCCESS;
    const Status s = from_cublas(api_->cublasSetPointerMode_v2(h.h, want));
    if (s == VGPU_SUCCESS) h.mode = want;
    return s;
}

#define KVMGPU_BLAS_HANDLE(id, head)                      \
    Handle* hp = find(id);                                \
    if (!hp) return VGPU_ERROR_INVALID_HANDLE;            \
    if (Status ps = scalars(*hp, head); ps != VGPU_SUCCESS) return ps; \
    cublasHandle_t h = hp->h;

Status CudaBlas::level1(BackendBlas id, const vgpu_blas_level1& c, BlasResult* r) {
    KVMGPU_BLAS_HANDLE(id, c.head)
    const bool on_device = c.head.flags & VGPU_BLAS_DEVICE_SCALARS;
    void* result = on_device ? dev<void>(c.result) : static_cast<void*>(r->bits);
    const cudaDataType t = dtype(c.type);
    const int n = c.n, incx = i32(c.x.inc), incy = i32(c.y.inc);
    void* x = dev<void>(c.x.ptr);
    void* y = dev<void>(c.y.ptr);
    const void* alpha = scalar<uint8_t>(c.head, c.alpha);
    switch (c.head.routine) {
    case VGPU_BLAS_AXPY: return from_cublas(api_->cublasAxpyEx(h, n, alpha, t, x, t, incx, y, t, incy, t));
    case VGPU_BLAS_SCAL: return from_cublas(api_->cublasScalEx(h, n, alpha, t, x, t, incx, t));
    case VGPU_BLAS_DOT: return from_cublas(api_->cublasDotEx(h, n, x, t, incx, y, t, incy, result, t, t));
    case VGPU_BLAS_DOTC: return from_cublas(api_->cublasDotcEx(h, n, x, t, incx, y, t, incy, result, t, t));
    case VGPU_BLAS_NRM2:
        return from_cublas(api_->cublasNrm2Ex(h, n, x, t, incx, result, real_of(c.type), real_of(c.type)));
    case VGPU_BLAS_ASUM:
        return from_cublas(api_->cublasAsumEx(h, n, x, t, incx, result, real_of(c.type), real_of(c.type)));
    case VGPU_BLAS_IAMAX: return from_cublas(api_->cublasIamaxEx(h, n, x, t, incx, static_cast<int*>(result)));
    case VGPU_BLAS_IAMIN: return from_cublas(api_->cublasIaminEx(h, n, x, t, incx, static_cast<int*>(result)));
    case VGPU_BLAS_COPY: return from_cublas(api_->cublasCopyEx(h, n, x, t, incx, y, t, incy));
    case VGPU_BLAS_SWAP: return from_cublas(api_->cublasSwapEx(h, n, x, t, incx, y, t, incy));
    default: return VGPU_ERROR_INVALID_VALUE;
    }
}

// One cuBLAS routine over the four element types: F(S, float), F(D, double), ...
#define KVMGPU_SDCZ(type, CALL)                                         \
    switch (type) {                                                     \
    case VGPU_BLAS_R_32F: return from_cublas(CALL(S, float));           \
    case VGPU_BLAS_R_64F: return from_cublas(CALL(D, double));          \
    case VGPU_BLAS_C_32F: return from_cublas(CALL(C, cuComplex));       \
    case VGPU_BLAS_C_64F: return from_cublas(CALL(Z, cuDoubleComplex)); \
    default: return VGPU_ERROR_NOT_SUPPORTED;                           \
    }

Status CudaBlas::level2(BackendBlas id, const vgpu_blas_level2& c) {
    KVMGPU_BLAS_HANDLE(id, c.head)
    const int lda = i32(c.a.ld), incx = i32(c.x.inc), incy = i32(c.y.inc);
    switch (c.head.routine) {
    case VGPU_BLAS_GEMV:
#define GEMV(P, T)                                                                                               \
    api_->cublas##P##gemv_v2(h, op(c.trans), c.m, c.n, scalar<T>(c.head, c.alpha), dev<T>(c.a.ptr), lda,        \
                             dev<T>(c.x.ptr), incx, scalar<T>(c.head, c.beta), dev<T>(c.y.ptr), incy)
        KVMGPU_SDCZ(c.type, GEMV)
#undef GEMV
    case VGPU_BLAS_GER:
    case VGPU_BLAS_GERC: {
        const bool conj = c.head.routine == VGPU_BLAS_GERC;
#define GER_ARGS(T) h, c.m, c.n, scalar<T>(c.head, c.alpha), dev<T>(c.x.ptr), incx, dev<T>(c.y.ptr), incy, dev<T>(c.a.ptr), lda
        switch (c.type) {
        case VGPU_BLAS_R_32F: return from_cublas(api_->cublasSger_v2(GER_ARGS(float)));
        case VGPU_BLAS_R_64F: return from_cublas(api_->cublasDger_v2(GER_ARGS(double)));
        case VGPU_BLAS_C_32F:
            return from_cublas(conj ? api_->cublasCgerc_v2(GER_ARGS(cuComplex)) : api_->cublasCgeru_v2(GER_ARGS(cuComplex)));
        case VGPU_BLAS_C_64F:
            return from_cublas(conj ? api_->cublasZgerc_v2(GER_ARGS(cuDoubleComplex))
                                    : api_->cublasZgeru_v2(GER_ARGS(cuDoubleComplex)));
        default: return VGPU_ERROR_NOT_SUPPORTED;
        }
#undef GER_ARGS
    }
    case VGPU_BLAS_TRSV:
#define TRSV(P, T) \
    api_->cublas##P##trsv_v2(h, fill(c.uplo), op(c.trans), diag(c.diag), c.n, dev<T>(c.a.ptr), lda, dev<T>(c.x.ptr), incx)
        KVMGPU_SDCZ(c.type, TRSV)
#undef TRSV
    default: return VGPU_ERROR_INVALID_VALUE;
    }
}

Status CudaBlas::upload_pointers(Handle& h, const BlasPointers& p, CUdeviceptr* out) {
    const uint64_t bytes = 3 * p.c.size() * sizeof(uint64_t);
    // An upload from pageable memory may wait for the stream's earlier work.
    if (p.same_as_last && h.arrays && h.uploaded_bytes == bytes) return *out = h.arrays, VGPU_SUCCESS;
    if (bytes > h.arrays_bytes) {
        if (h.arrays) driver_.cuStreamSynchronize(h.stream), driver_.cuMemFree(h.arrays), h.arrays = 0;
        h.arrays_bytes = 0;
        if (driver_.cuMemAlloc(&h.arrays, bytes) != CUDA_SUCCESS) return VGPU_ERROR_OUT_OF_MEMORY;
        h.arrays_bytes = bytes;
    }
    // From pageable memory the driver copies the source before returning;
    // the lists follow one another in the dispatch's buffer (A, B, C).
    h.uploaded_bytes = 0;
    if (driver_.cuMemcpyHtoDAsync(h.arrays, p.a.data(), bytes, h.stream) != CUDA_SUCCESS) return VGPU_ERROR_UNKNOWN;
    h.uploaded_bytes = bytes;
    *out = h.arrays;
    return VGPU_SUCCESS;
}

Status CudaBlas::gemm(BackendBlas id, const vgpu_blas_gemm& c, const BlasPointers& pointers) {
    KVMGPU_BLAS_HANDLE(id, c.head)
    const int lda = i32(c.a.ld), ldb = i32(c.b.ld), ldc = i32(c.c.ld);
    const cublasOperation_t ta = op(c.transa), tb = op(c.transb);
    const bool ex = c.head.routine == VGPU_BLAS_GEMM_EX;
    const void* alpha = scalar<uint8_t>(c.head, c.alpha);
    const void* beta = scalar<uint8_t>(c.head, c.beta);
    if (c.form == VGPU_BLAS_GEMM_ONE) {
        if (ex)
            return from_cublas(api_->cublasGemmEx(h, ta, tb, c.m, c.n, c.k, alpha, dev<void>(c.a.ptr), dtype(c.atype), lda,
                                                  dev<void>(c.b.ptr), dtype(c.btype), ldb, beta, dev<void>(c.c.ptr),
                                                  dtype(c.ctype), ldc, static_cast<cublasComputeType_t>(c.compute),
                                                  static_cast<cublasGemmAlgo_t>(c.algo)));
        if (c.ctype == VGPU_BLAS_R_16F)
            return from_cublas(api_->cublasHgemm(h, ta, tb, c.m, c.n, c.k, scalar<__half>(c.head, c.alpha), dev<__half>(c.a.ptr),
                                                 lda, dev<__half>(c.b.ptr), ldb, scalar<__half>(c.head, c.beta),
                                                 dev<__half>(c.c.ptr), ldc));
#define GEMM(P, T)                                                                                              \
    api_->cublas##P##gemm_v2(h, ta, tb, c.m, c.n, c.k, scalar<T>(c.head, c.alpha), dev<T>(c.a.ptr), lda,       \
                             dev<T>(c.b.ptr), ldb, scalar<T>(c.head, c.beta), dev<T>(c.c.ptr), ldc)
        KVMGPU_SDCZ(c.ctype, GEMM)
#undef GEMM
    }
    if (c.form == VGPU_BLAS_GEMM_STRIDED) {
        const long long sa = c.a.stride, sb = c.b.stride, sc = c.c.stride;
        if (ex)
            return from_cublas(api_->cublasGemmStridedBatchedEx(
                h, ta, tb, c.m, c.n, c.k, alpha, dev<void>(c.a.ptr), dtype(c.atype), lda, sa, dev<void>(c.b.ptr),
                dtype(c.btype), ldb, sb, beta, dev<void>(c.c.ptr), dtype(c.ctype), ldc, sc, c.batch,
                static_cast<cublasComputeType_t>(c.compute), static_cast<cublasGemmAlgo_t>(c.algo)));
#define STRIDED(P, T)                                                                                             \
    api_->cublas##P##gemmStridedBatched(h, ta, tb, c.m, c.n, c.k, scalar<T>(c.head, c.alpha), dev<T>(c.a.ptr), lda, \
                                        sa, dev<T>(c.b.ptr), ldb, sb, scalar<T>(c.head, c.beta), dev<T>(c.c.ptr), ldc, \
                                        sc, c.batch)
        if (c.ctype == VGPU_BLAS_R_16F) return from_cublas(STRIDED(H, __half));
        KVMGPU_SDCZ(c.ctype, STRIDED)
#undef STRIDED
    }
    // GEMM_POINTERS: the checked lists, in a buffer of the handle's.
    if (c.batch == 0 || pointers.c.empty()) return VGPU_SUCCESS; // cuBLAS does nothing either
    CUdeviceptr lists = 0;
    if (Status s = upload_pointers(*hp, pointers, &lists); s != VGPU_SUCCESS) return s;
    const uint64_t n = pointers.c.size();
    void* const* pa = dev<void* const>(lists);
    void* const* pb = dev<void* const>(lists + n * sizeof(uint64_t));
    void* const* pc = dev<void* const>(lists + 2 * n * sizeof(uint64_t));
    if (ex)
        return from_cublas(api_->cublasGemmBatchedEx(h, ta, tb, c.m, c.n, c.k, alpha, const_cast<const void* const*>(pa),
                                                     dtype(c.atype), lda, const_cast<const void* const*>(pb), dtype(c.btype),
                                                     ldb, beta, pc, dtype(c.ctype), ldc, c.batch,
                                                     static_cast<cublasComputeType_t>(c.compute),
                                                     static_cast<cublasGemmAlgo_t>(c.algo)));
#define BATCHED(P, T)                                                                                               \
    api_->cublas##P##gemmBatched(h, ta, tb, c.m, c.n, c.k, scalar<T>(c.head, c.alpha),                               \
                                 reinterpret_cast<const T* const*>(pa), lda, reinterpret_cast<const T* const*>(pb), ldb, \
                                 scalar<T>(c.head, c.beta), reinterpret_cast<T* const*>(pc), ldc, c.batch)
    if (c.ctype == VGPU_BLAS_R_16F) return from_cublas(BATCHED(H, __half));
    KVMGPU_SDCZ(c.ctype, BATCHED)
#undef BATCHED
}

Status CudaBlas::level3(BackendBlas id, const vgpu_blas_level3& c) {
    KVMGPU_BLAS_HANDLE(id, c.head)
    const int lda = i32(c.a.ld), ldb = i32(c.b.ld), ldc = i32(c.c.ld);
    switch (c.head.routine) {
    case VGPU_BLAS_TRSM:
#define TRSM(P, T)                                                                                                  \
    api_->cublas##P##trsm_v2(h, static_cast<cublasSideMode_t>(c.side), fill(c.uplo), op(c.transa), diag(c.diag), c.m, \
                             c.n, scalar<T>(c.head, c.alpha), dev<T>(c.a.ptr), lda, dev<T>(c.b.ptr), ldb)
        KVMGPU_SDCZ(c.type, TRSM)
#undef TRSM
    case VGPU_BLAS_SYRK:
#define SYRK(P, T)                                                                                                 \
    api_->cublas##P##syrk_v2(h, fill(c.uplo), op(c.transa), c.n, c.k, scalar<T>(c.head, c.alpha), dev<T>(c.a.ptr), \
                             lda, scalar<T>(c.head, c.beta), dev<T>(c.c.ptr), ldc)
        KVMGPU_SDCZ(c.type, SYRK)
#undef SYRK
    case VGPU_BLAS_GEAM:
#define GEAM(P, T)                                                                                                 \
    api_->cublas##P##geam(h, op(c.transa), op(c.transb), c.m, c.n, scalar<T>(c.head, c.alpha), dev<T>(c.a.ptr), lda, \
                          scalar<T>(c.head, c.beta), dev<T>(c.b.ptr), ldb, dev<T>(c.c.ptr), ldc)
        KVMGPU_SDCZ(c.type, GEAM)
#undef GEAM
    default: return VGPU_ERROR_INVALID_VALUE;
    }
}

#undef KVMGPU_SDCZ
#undef KVMGPU_BLAS_HANDLE

} // namespace kvmgpu::vgpu
