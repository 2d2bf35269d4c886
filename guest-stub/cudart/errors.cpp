// Error state and error names: the last error (cudaGetLastError /
// cudaPeekAtLastError), sticky errors, cudaGetErrorName/String, and the
// driver -> runtime status mapping.
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

namespace {

// The runtime status numbers equal the driver's for every status the vGPU
// and the guest Driver API return.
#define KVMGPU_SAME(rt, drv) static_cast<int>(rt) == static_cast<int>(drv)
static_assert(KVMGPU_SAME(cudaErrorInvalidValue, CUDA_ERROR_INVALID_VALUE) &&
                  KVMGPU_SAME(cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY) &&
                  KVMGPU_SAME(cudaErrorInitializationError, CUDA_ERROR_NOT_INITIALIZED) &&
                  KVMGPU_SAME(cudaErrorNoDevice, CUDA_ERROR_NO_DEVICE) &&
                  KVMGPU_SAME(cudaErrorInvalidDevice, CUDA_ERROR_INVALID_DEVICE) &&
                  KVMGPU_SAME(cudaErrorInvalidKernelImage, CUDA_ERROR_INVALID_IMAGE) &&
                  KVMGPU_SAME(cudaErrorDeviceUninitialized, CUDA_ERROR_INVALID_CONTEXT) &&
                  KVMGPU_SAME(cudaErrorNoKernelImageForDevice, CUDA_ERROR_NO_BINARY_FOR_GPU) &&
                  KVMGPU_SAME(cudaErrorInvalidResourceHandle, CUDA_ERROR_INVALID_HANDLE) &&
                  KVMGPU_SAME(cudaErrorIllegalState, CUDA_ERROR_ILLEGAL_STATE) &&
                  KVMGPU_SAME(cudaErrorSymbolNotFound, CUDA_ERROR_NOT_FOUND) &&
                  KVMGPU_SAME(cudaErrorNotReady, CUDA_ERROR_NOT_READY) &&
                  KVMGPU_SAME(cudaErrorIllegalAddress, CUDA_ERROR_ILLEGAL_ADDRESS) &&
                  KVMGPU_SAME(cudaErrorLaunchOutOfResources, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) &&
                  KVMGPU_SAME(cudaErrorLaunchTimeout, CUDA_ERROR_LAUNCH_TIMEOUT) &&
                  KVMGPU_SAME(cudaErrorPeerAccessAlreadyEnabled, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) &&
                  KVMGPU_SAME(cudaErrorPeerAccessNotEnabled, CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) &&
                  KVMGPU_SAME(cudaErrorHostMemoryAlreadyRegistered, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) &&
                  KVMGPU_SAME(cudaErrorHostMemoryNotRegistered, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) &&
                  KVMGPU_SAME(cudaErrorLaunchFailure, CUDA_ERROR_LAUNCH_FAILED) &&
                  KVMGPU_SAME(cudaErrorCooperativeLaunchTooLarge, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) &&
                  KVMGPU_SAME(cudaErrorNotSupported, CUDA_ERROR_NOT_SUPPORTED) &&
                  KVMGPU_SAME(cudaErrorTimeout, CUDA_ERROR_TIMEOUT) &&
                  KVMGPU_SAME(cudaErrorUnknown, CUDA_ERROR_UNKNOWN),
              "runtime and driver status numbers differ");
#undef KVMGPU_SAME

// After one of these the context cannot be used again (as with the real
// runtime: only cudaDeviceReset, or a new process, recovers).
bool is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorECCUncorrectable:
    case cudaErrorIllegalState: // the guest saw the vGPU ring broken
    case cudaErrorTimeout:      // no completion within vgpu_timeout_s
        return true;
    default:
        return false;
    }
}

GUEST_PER_THREAD constinit cudaError_t g_last = cudaSuccess; // cudaGetLastError is per thread
constinit cudaError_t g_sticky = cudaSuccess;

struct ErrorText {
    cudaError_t error;
    const char* name;
    const char* text;
};

#define KVMGPU_ERR(e, text) {e, #e, text}
const ErrorText kErrors[] = {
    KVMGPU_ERR(cudaSuccess, "no error"),
    KVMGPU_ERR(cudaErrorInvalidValue, "invalid argument"),
    KVMGPU_ERR(cudaErrorMemoryAllocation, "out of memory"),
    KVMGPU_ERR(cudaErrorInitializationError, "initialization error"),
    KVMGPU_ERR(cudaErrorCudartUnloading, "driver shutting down"),
    KVMGPU_ERR(cudaErrorInvalidConfiguration, "invalid configuration argument"),
    KVMGPU_ERR(cudaErrorInvalidPitchValue, "invalid pitch argument"),
    KVMGPU_ERR(cudaErrorInvalidSymbol, "invalid device symbol"),
    KVMGPU_ERR(cudaErrorInvalidHostPointer, "invalid host pointer"),
    KVMGPU_ERR(cudaErrorInvalidDevicePointer, "invalid device pointer"),
    KVMGPU_ERR(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"),
    KVMGPU_ERR(cudaErrorMissingConfiguration, "__global__ function call is not configured"),
    KVMGPU_ERR(cudaErrorInvalidDeviceFunction, "invalid device function"),
    KVMGPU_ERR(cudaErrorNoDevice, "no CUDA-capable device is detected"),
    KVMGPU_ERR(cudaErrorInvalidDevice, "invalid device ordinal"),
    KVMGPU_ERR(cudaErrorInvalidKernelImage, "device kernel image is invalid"),
    KVMGPU_ERR(cudaErrorDeviceUninitialized, "invalid device context"),
    KVMGPU_ERR(cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device"),
    KVMGPU_ERR(cudaErrorInvalidResourceHandle, "invalid resource handle"),
    KVMGPU_ERR(cudaErrorIllegalState, "the operation cannot be performed in the present state"),
    KVMGPU_ERR(cudaErrorSymbolNotFound, "named symbol not found"),
    KVMGPU_ERR(cudaErrorNotReady, "device not ready"),
    KVMGPU_ERR(cudaErrorIllegalAddress, "an illegal memory access was encountered"),
    KVMGPU_ERR(cudaErrorLaunchOutOfResources, "too many resources requested for launch"),
    KVMGPU_ERR(cudaErrorLaunchTimeout, "the launch timed out and was terminated"),
    KVMGPU_ERR(cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled"),
    KVMGPU_ERR(cudaErrorPeerAccessNotEnabled, "peer access has not been enabled"),
    KVMGPU_ERR(cudaErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped"),
    KVMGPU_ERR(cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region"),
    KVMGPU_ERR(cudaErrorAssert, "device-side assert triggered"),
    KVMGPU_ERR(cudaErrorIllegalInstruction, "an illegal instruction was encountered"),
    KVMGPU_ERR(cudaErrorMisalignedAddress, "misaligned address"),
    KVMGPU_ERR(cudaErrorLaunchFailure, "unspecified launch failure"),
    KVMGPU_ERR(cudaErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch"),
    KVMGPU_ERR(cudaErrorNotPermitted, "operation not permitted"),
    KVMGPU_ERR(cudaErrorNotSupported, "operation not supported"),
    KVMGPU_ERR(cudaErrorTimeout, "timeout expired"),
    KVMGPU_ERR(cudaErrorUnknown, "unknown error"),
    // Statuses the VMM's driver may pass through unchanged.
    KVMGPU_ERR(cudaErrorStubLibrary, "CUDA driver is a stub library"),
    KVMGPU_ERR(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version"),
    KVMGPU_ERR(cudaErrorCallRequiresNewerDriver, "the call requires a newer driver"),
    KVMGPU_ERR(cudaErrorDevicesUnavailable, "CUDA-capable device(s) is/are busy or unavailable"),
    KVMGPU_ERR(cudaErrorECCUncorrectable, "uncorrectable ECC error encountered"),
    KVMGPU_ERR(cudaErrorUnsupportedLimit, "limit is not supported on this architecture"),
    KVMGPU_ERR(cudaErrorPeerAccessUnsupported, "peer access is not supported between these two devices"),
    KVMGPU_ERR(cudaErrorInvalidPtx, "a PTX JIT compilation failed"),
    KVMGPU_ERR(cudaErrorNvlinkUncorrectable, "uncorrectable NVLink error detected during the execution"),
    KVMGPU_ERR(cudaErrorJitCompilerNotFound, "PTX JIT compiler library not found"),
    KVMGPU_ERR(cudaErrorUnsupportedPtxVersion, "the provided PTX was compiled with an unsupported toolchain"),
    KVMGPU_ERR(cudaErrorContained, "a contained error was encountered"),
    KVMGPU_ERR(cudaErrorLaunchIncompatibleTexturing, "launch uses incompatible texturing mode"),
    KVMGPU_ERR(cudaErrorContextIsDestroyed, "context is destroyed"),
    KVMGPU_ERR(cudaErrorTooManyPeers, "peer mapping resources exhausted"),
    KVMGPU_ERR(cudaErrorHardwareStackError, "hardware stack error"),
    KVMGPU_ERR(cudaErrorInvalidAddressSpace, "operation not supported on global/shared address space"),
    KVMGPU_ERR(cudaErrorInvalidPc, "invalid program counter"),
    KVMGPU_ERR(cudaErrorTensorMemoryLeak, "tensor memory not completely freed"),
    KVMGPU_ERR(cudaErrorSystemNotReady, "system not yet initialized"),
    KVMGPU_ERR(cudaErrorSystemDriverMismatch, "system has unsupported display driver / cuda driver combination"),
};
#undef KVMGPU_ERR

const ErrorText* find(cudaError_t e)
{
    for (const ErrorText& t : kErrors)
        if (t.error == e)
            return &t;
    return nullptr;
}

} // namespace

namespace guest::cudart {

cudaError_t from_driver(CUresult r) { return static_cast<cudaError_t>(static_cast<int>(r)); }

cudaError_t record(cudaError_t e)
{
    if (e == cudaSuccess || e == cudaErrorNotReady)
        return e;
    g_last = e;
    if (is_sticky(e))
        g_sticky = e;
    return e;
}

cudaError_t sticky_error()
{
    if (g_sticky != cudaSuccess)
        g_last = g_sticky;
    return g_sticky;
}

// Reported once, as CUDA 13 does (measured on the H100, driver 580): a
// second cudaGetLastError after a sticky error returns cudaSuccess, while
// every other call keeps failing with it (sticky_error records it again).
cudaError_t take_last_error()
{
    const cudaError_t e = g_last;
    g_last = cudaSuccess;
    return e;
}

cudaError_t peek_last_error() { return g_last; }

void clear_errors()
{
    g_last = cudaSuccess;
    g_sticky = cudaSuccess;
}

} // namespace guest::cudart

extern "C" {

cudaError_t cudaGetLastError(void)
{
    GUEST_API_LOCK();
    return guest::cudart::take_last_error();
}
cudaError_t cudaPeekAtLastError(void)
{
    GUEST_API_LOCK();
    return guest::cudart::peek_last_error();
}

const char* cudaGetErrorName(cudaError_t e)
{
    GUEST_API_LOCK();
    const ErrorText* t = find(e);
    return t != nullptr ? t->name : "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e)
{
    GUEST_API_LOCK();
    const ErrorText* t = find(e);
    return t != nullptr ? t->text : "unrecognized error code";
}

} // extern "C"
