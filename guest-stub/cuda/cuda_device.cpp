// Device queries, context synchronization and error names.
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/runtime/mem.h"

using namespace guest::cuda;

namespace {

CUresult check_device(CUdevice dev)
{
    int count = 0;
    if (CUresult r = cuDeviceGetCount(&count))
        return r;
    return dev >= 0 && dev < count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

} // namespace

extern "C" CUresult cuDeviceGetCount(int* count)
{
    if (count == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    Call c;
    c.op = VGPU_OP_DEVICE_GET_COUNT;
    uint64_t res[2];
    CUresult r = call_sync(c, res);
    if (r == CUDA_SUCCESS)
        *count = static_cast<int>(res[0]);
    return r;
}

extern "C" CUresult cuDeviceGet(CUdevice* device, int ordinal)
{
    if (device == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_device(ordinal))
        return r;
    *device = ordinal;
    return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev)
{
    if (pi == nullptr || dev < 0)
        return CUDA_ERROR_INVALID_VALUE;
    Call c;
    c.op = VGPU_OP_DEVICE_GET_ATTRIBUTE;
    c.arg[0] = static_cast<uint64_t>(attrib);
    c.arg[1] = static_cast<uint64_t>(dev);
    uint64_t res[2];
    CUresult r = call_sync(c, res);
    if (r == CUDA_SUCCESS)
        *pi = static_cast<int>(res[0]);
    return r;
}

extern "C" CUresult cuDeviceGetName(char* name, int len, CUdevice dev)
{
    if (name == nullptr || len <= 0 || dev < 0)
        return CUDA_ERROR_INVALID_VALUE;
    Call c;
    c.op = VGPU_OP_DEVICE_GET_NAME;
    c.arg[0] = static_cast<uint64_t>(dev);
    char buf[VGPU_PAYLOAD_BYTES];
    CUresult r = call_sync(c, nullptr, buf, sizeof buf);
    if (r != CUDA_SUCCESS)
        return r;
    size_t n = 0;
    while (n < sizeof buf && buf[n] != '\0' && n + 1 < static_cast<size_t>(len)) {
        name[n] = buf[n];
        ++n;
    }
    name[n] = '\0';
    return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceTotalMem(size_t* bytes, CUdevice dev)
{
    if (bytes == nullptr || dev < 0)
        return CUDA_ERROR_INVALID_VALUE;
    Call c;
    c.op = VGPU_OP_DEVICE_TOTAL_MEM;
    c.arg[0] = static_cast<uint64_t>(dev);
    uint64_t res[2];
    CUresult r = call_sync(c, res);
    if (r == CUDA_SUCCESS)
        *bytes = res[0];
    return r;
}

extern "C" CUresult cuCtxSynchronize(void)
{
    Call c;
    c.op = VGPU_OP_CTX_SYNCHRONIZE;
    return sync_point(call_sync(c));
}

extern "C" CUresult cuGetErrorName(CUresult error, const char** str)
{
    if (str == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
    case CUDA_SUCCESS: *str = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *str = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *str = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *str = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case CUDA_ERROR_NO_DEVICE: *str = "CUDA_ERROR_NO_DEVICE"; break;
    case CUDA_ERROR_INVALID_DEVICE: *str = "CUDA_ERROR_INVALID_DEVICE"; break;
    case CUDA_ERROR_INVALID_IMAGE: *str = "CUDA_ERROR_INVALID_IMAGE"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *str = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case CUDA_ERROR_INVALID_HANDLE: *str = "CUDA_ERROR_INVALID_HANDLE"; break;
    case CUDA_ERROR_ILLEGAL_STATE: *str = "CUDA_ERROR_ILLEGAL_STATE"; break;
    case CUDA_ERROR_NOT_FOUND: *str = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_NOT_READY: *str = "CUDA_ERROR_NOT_READY"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *str = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *str = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; break;
    case CUDA_ERROR_LAUNCH_FAILED: *str = "CUDA_ERROR_LAUNCH_FAILED"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *str = "CUDA_ERROR_NOT_SUPPORTED"; break;
    case CUDA_ERROR_TIMEOUT: *str = "CUDA_ERROR_TIMEOUT"; break;
    case CUDA_ERROR_UNKNOWN: *str = "CUDA_ERROR_UNKNOWN"; break;
    default: *str = nullptr; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

extern "C" CUresult cuGetErrorString(CUresult error, const char** str)
{
    if (str == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
    case CUDA_SUCCESS: *str = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *str = "invalid argument"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *str = "out of memory"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *str = "initialization error (cuInit not called or failed)"; break;
    case CUDA_ERROR_NO_DEVICE: *str = "no vGPU device found"; break;
    case CUDA_ERROR_INVALID_DEVICE: *str = "invalid device ordinal"; break;
    case CUDA_ERROR_INVALID_IMAGE: *str = "device kernel image is invalid"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *str = "invalid device context"; break;
    case CUDA_ERROR_INVALID_HANDLE: *str = "invalid resource handle"; break;
    case CUDA_ERROR_ILLEGAL_STATE: *str = "vGPU command ring broken"; break;
    case CUDA_ERROR_NOT_FOUND: *str = "named symbol not found"; break;
    case CUDA_ERROR_NOT_READY: *str = "device not ready"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *str = "an illegal memory access was encountered"; break;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *str = "too many resources requested for launch"; break;
    case CUDA_ERROR_LAUNCH_FAILED: *str = "unspecified launch failure"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *str = "operation not supported"; break;
    case CUDA_ERROR_TIMEOUT: *str = "vGPU did not complete a command in time"; break;
    case CUDA_ERROR_UNKNOWN: *str = "unknown error"; break;
    default: *str = nullptr; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
