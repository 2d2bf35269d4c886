// cuBLAS handles (a VM handle of the current context in the VMM, the
// stream and modes kept here too), versions, status names, and the
// helpers every call is sent with.
#include <string.h>

#include <new>

#include "guest-stub/cublas/cublas_internal.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

namespace guest::cublas {

cublasStatus_t status_of(uint32_t s)
{
    switch (s) {
    case VGPU_SUCCESS: return CUBLAS_STATUS_SUCCESS;
    case VGPU_ERROR_INVALID_VALUE: return CUBLAS_STATUS_INVALID_VALUE;
    case VGPU_ERROR_OUT_OF_MEMORY: return CUBLAS_STATUS_ALLOC_FAILED;
    case VGPU_ERROR_NOT_SUPPORTED: return CUBLAS_STATUS_NOT_SUPPORTED;
    case VGPU_ERROR_NOT_INITIALIZED:
    case VGPU_ERROR_INVALID_HANDLE:
    case VGPU_ERROR_INVALID_CONTEXT: return CUBLAS_STATUS_NOT_INITIALIZED;
    default:
        return s >= 700 && s < 800 ? CUBLAS_STATUS_EXECUTION_FAILED : CUBLAS_STATUS_INTERNAL_ERROR;
    }
}

vgpu_blas_head head_of(cublasHandle_t h, uint32_t routine)
{
    vgpu_blas_head out{};
    out.handle = h->vgpu;
    out.routine = routine;
    out.flags = h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE ? VGPU_BLAS_DEVICE_SCALARS : 0;
    return out;
}

vgpu_blas_scalar scalar_of(cublasHandle_t h, const void* value, size_t bytes)
{
    vgpu_blas_scalar s{};
    if (h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE)
        s.dptr = dev(value);
    else if (value && bytes <= sizeof s.bytes)
        memcpy(s.bytes, value, bytes);
    return s;
}

cublasStatus_t submit(uint16_t opcode, const void* call, uint32_t bytes, const BlasPlan& plan, void* result,
                      uint32_t result_bytes)
{
    GUEST_API_LOCK(); // the routines (level 1-3, gemm) submit here
    if (plan.why)
        return status_of(plan.status);
    cuda::Call c;
    c.op = opcode;
    c.payload = call;
    c.payload_len = bytes;
    if (!result)
        return status_of(cuda::call_async(c));
    uint64_t res[2] = {0, 0};
    const CUresult r = cuda::call_sync(c, res);
    if (r == CUDA_SUCCESS)
        memcpy(result, res, result_bytes);
    return status_of(r);
}

} // namespace guest::cublas

using namespace guest;
using namespace guest::cublas;

namespace {
template <uint16_t Op, class... More>
cublasStatus_t handle_call(cublasHandle_t h, More... more)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    return status_of(cuda::call<Op>({h->vgpu, static_cast<uint64_t>(more)...}));
}
} // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle)
{
    GUEST_API_LOCK();
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (cudart::enter() != cudaSuccess)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cuda::Call c = cuda::command<VGPU_OP_BLAS_CREATE>();
    uint64_t vgpu = 0;
    const CUresult r = cuda::call_result(c, &vgpu);
    if (r != CUDA_SUCCESS)
        return status_of(r) == CUBLAS_STATUS_INVALID_VALUE ? CUBLAS_STATUS_NOT_INITIALIZED : status_of(r);
    cublasContext* h = new (std::nothrow) cublasContext;
    if (!h) {
        cublasContext lost;
        lost.vgpu = vgpu;
        handle_call<VGPU_OP_BLAS_DESTROY>(&lost);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    h->vgpu = vgpu;
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle)
{
    GUEST_API_LOCK();
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    // The VMM destroys it after the calls queued before (the ring is in
    // order), and cublasDestroy waits for the handle's work on the host.
    const cublasStatus_t s = handle_call<VGPU_OP_BLAS_DESTROY>(handle);
    delete handle;
    return s;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream)
{
    GUEST_API_LOCK();
    const cublasStatus_t s = handle_call<VGPU_OP_BLAS_SET_STREAM>(handle, cuda::stream_arg(stream));
    if (s == CUBLAS_STATUS_SUCCESS)
        handle->stream = stream;
    return s;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream)
{
    GUEST_API_LOCK();
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!stream)
        return CUBLAS_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

// Pointer mode travels with each call (VGPU_BLAS_DEVICE_SCALARS).
cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode)
{
    GUEST_API_LOCK();
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode)
{
    GUEST_API_LOCK();
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    GUEST_API_LOCK();
    const cublasStatus_t s = handle_call<VGPU_OP_BLAS_SET_MATH_MODE>(handle, static_cast<uint64_t>(mode));
    if (s == CUBLAS_STATUS_SUCCESS)
        handle->math_mode = mode;
    return s;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode)
{
    GUEST_API_LOCK();
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->math_mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void* workspace, size_t bytes)
{
    GUEST_API_LOCK();
    return handle_call<VGPU_OP_BLAS_SET_WORKSPACE>(handle, cublas::dev(workspace), bytes);
}

// The host library's version, as cuBLAS reports its own.
cublasStatus_t cublasGetVersion(cublasHandle_t handle, int* version)
{
    GUEST_API_LOCK();
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!version)
        return CUBLAS_STATUS_INVALID_VALUE;
    cuda::Call c = cuda::command<VGPU_OP_BLAS_GET_VERSION>();
    uint64_t v = 0;
    const CUresult r = cuda::call_result(c, &v);
    if (r == CUDA_SUCCESS)
        *version = static_cast<int>(v);
    return status_of(r);
}

// The API this library implements: the headers it was built with.
cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value)
{
    GUEST_API_LOCK();
    if (!value)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
}

const char* cublasGetStatusName(cublasStatus_t status)
{
    GUEST_API_LOCK();
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

const char* cublasGetStatusString(cublasStatus_t status)
{
    GUEST_API_LOCK();
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "error detected trying to check the license";
    default: return "unknown error";
    }
}
