// The CUDA Driver API, found at run time: libcuda.so.1 is dlopen'ed and every
// entry point resolved through cuGetProcAddress. Nothing links against
// libcuda, so the VMM builds and starts on machines without a driver.
//
// Each entry point is asked for at the version whose signature this build's
// cuda.h declares (the PFN_<name>_v<version> types of cudaTypedefs.h),
// checked at compile time. Asking for everything at CUDA_VERSION is wrong:
// with 13.0, cuGetProcAddress("cuCtxSynchronize", 13000) returns the new
// cuCtxSynchronize(CUcontext) while cuda.h still declares cuCtxSynchronize(void)
// (seen on the H100: calling it without the argument gave CONTEXT_IS_DESTROYED).
//
// Members carry the API's own names, so a call reads as in the CUDA
// documentation: api.cuMemAlloc(&p, n). An entry point one backend call
// alone needs is not listed here: KVMGPU_CUDA_LATE resolves it where it is
// called, at its first use.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>
#include <type_traits>

namespace kvmgpu::vgpu {

// (name, version): version picks PFN_<name>_v<version> and is what
// cuGetProcAddress is asked for.
#define KVMGPU_CUDA_REQUIRED(X)                                                                                 \
    X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuGetErrorName, 6000) X(cuGetErrorString, 6000)                \
    X(cuDeviceGet, 2000) X(cuDeviceGetCount, 2000) X(cuDeviceGetName, 2000) X(cuDeviceGetAttribute, 2000)        \
    X(cuDeviceTotalMem, 3020) X(cuCtxCreate, 12050) X(cuCtxDestroy, 4000) X(cuCtxSetCurrent, 4000)               \
    X(cuCtxPopCurrent, 4000) X(cuCtxSynchronize, 2000) X(cuMemAlloc, 3020) X(cuMemFree, 3020)                    \
    X(cuMemGetInfo, 3020) X(cuMemHostRegister, 6050) X(cuMemHostUnregister, 4000)                                \
    X(cuMemHostGetDevicePointer, 3020) X(cuMemHostAlloc, 2020) X(cuMemFreeHost, 2000)                            \
    X(cuMemcpyHtoDAsync, 3020) X(cuMemcpyDtoHAsync, 3020) X(cuMemcpyDtoDAsync, 3020) X(cuMemcpyPeerAsync, 4000)                         \
    X(cuDeviceCanAccessPeer, 4000) X(cuCtxEnablePeerAccess, 4000) X(cuCtxDisablePeerAccess, 4000) X(cuDeviceGetP2PAttribute, 8000) X(cuDeviceGetPCIBusId, 4010) X(cuMemsetD8Async, 3020) X(cuMemsetD16Async, 3020)    \
    X(cuMemsetD32Async, 3020) X(cuModuleLoadData, 2000) X(cuModuleUnload, 2000) X(cuModuleGetFunction, 2000) X(cuModuleGetGlobal, 3020)     \
    X(cuFuncGetParamInfo, 12040) X(cuFuncGetAttribute, 2020) X(cuFuncSetAttribute, 9000)                                                                                \
    X(cuLaunchKernel, 4000) X(cuLaunchCooperativeKernel, 9000) X(cuStreamCreate, 2000) X(cuStreamSynchronize, 2000) X(cuStreamDestroy, 4000)        \
    X(cuStreamWaitEvent, 3020) X(cuStreamCreateWithPriority, 5050) X(cuCtxGetStreamPriorityRange, 5050)         \
    X(cuEventCreate, 2000) X(cuEventRecord, 2000) X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 12080)       \
    X(cuEventDestroy, 4000) X(cuStreamQuery, 2000) X(cuEventQuery, 2000)                                        \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000) X(cuCtxSetLimit, 3010) X(cuCtxGetLimit, 3010) \
    X(cuArray3DCreate, 3020) X(cuArrayDestroy, 2000) X(cuMemcpy3DAsync, 3020) X(cuMemcpy2DAsync, 3020) X(cuTexObjectCreate, 5000)         \
    X(cuTexObjectDestroy, 5000) X(cuSurfObjectCreate, 5000) X(cuSurfObjectDestroy, 5000)

// Absent from older drivers; nullptr then.
// Graphs and stream capture (cuda_graphs.h): the backend offers them only
// when every one resolved; the same for the cuMem* virtual memory calls.
#define KVMGPU_CUDA_OPTIONAL(X)                                                                                  \
    X(cuMemcpyBatchAsync, 13000) X(cuStreamBeginCapture, 10010) X(cuStreamEndCapture, 10000)                     \
    X(cuStreamGetCaptureInfo, 12030) X(cuGraphCreate, 10000) X(cuGraphDestroy, 10000)                            \
    X(cuGraphAddKernelNode, 12000) X(cuGraphKernelNodeSetParams, 12000) X(cuGraphExecKernelNodeSetParams, 12000) \
    X(cuGraphAddMemcpyNode, 10000) X(cuGraphAddMemsetNode, 10000) X(cuGraphAddEmptyNode, 10000)                  \
    X(cuGraphAddDependencies, 12030) X(cuGraphRemoveDependencies, 12030) X(cuGraphGetNodes, 10000)               \
    X(cuGraphDestroyNode, 10000) X(cuGraphInstantiateWithFlags, 11040) X(cuGraphLaunch, 10000)                   \
    X(cuGraphUpload, 11010) X(cuGraphExecUpdate, 12000) X(cuGraphExecDestroy, 10000)                            \
    X(cuThreadExchangeStreamCaptureMode, 10010)                                                                  \
    X(cuMemGetAllocationGranularity, 10020) X(cuMemAddressReserve, 10020) X(cuMemAddressFree, 10020)             \
    X(cuMemCreate, 10020) X(cuMemRelease, 10020) X(cuMemMap, 10020) X(cuMemUnmap, 10020) X(cuMemSetAccess, 10020) \
    X(cuMemAllocAsync, 11020) X(cuMemFreeAsync, 11020) X(cuMemAllocManaged, 6000)

// Resolved entry points; one per process, never unloaded.
struct CudaDriverApi {
#define KVMGPU_CUDA_MEMBER(name, version) PFN_##name##_v##version name = nullptr;
    KVMGPU_CUDA_REQUIRED(KVMGPU_CUDA_MEMBER)
    KVMGPU_CUDA_OPTIONAL(KVMGPU_CUDA_MEMBER)
#undef KVMGPU_CUDA_MEMBER
    int driver_version = 0; // cuDriverGetVersion, e.g. 13000

    // `name` at `version` (see above), nullptr when the driver lacks it.
    void* find(const char* name, int version) const;
    using GetProcAddress = CUresult (*)(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult* status);
    GetProcAddress get_proc_address = nullptr; // cuGetProcAddress_v2

    // Loads and initialises the driver once (cuInit). nullptr on failure,
    // with a one-line reason in *why (no library, old driver, no device).
    static const CudaDriverApi* get(std::string* why);

    // "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
    std::string describe(CUresult r) const;
};

// The entry point `name` at `version` from `api` (a CudaDriverApi), of the
// signature cuda.h declares (checked at compile time); nullptr when the
// driver lacks it. Resolved once per call site: the driver is one per process.
#define KVMGPU_CUDA_LATE(api, name, version)                                                        \
    [](const ::kvmgpu::vgpu::CudaDriverApi& a) {                                                    \
        static_assert(std::is_same_v<PFN_##name##_v##version, decltype(&::name)>,                  \
                      #name ": version " #version " is not the signature cuda.h declares");         \
        static const auto resolved = reinterpret_cast<PFN_##name##_v##version>(a.find(#name, version)); \
        return resolved;                                                                            \
    }(api)

} // namespace kvmgpu::vgpu
