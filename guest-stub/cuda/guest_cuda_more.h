// More of the Driver API NVIDIA's libraries call (issue 42): pitched
// allocations, 2-D memsets, address ranges, parameter info, stream memory
// operations, the linker, libraries and kernels, and the shareable handles
// a VM refuses. Types and numbers as cuda.h has them.
#pragma once

#include "guest-stub/cuda/guest_cuda.h"

extern "C" {

typedef uint32_t cuuint32_t;

// ---- preferences (cuda_preferences.cpp) ---------------------------------
// Kept for the process and reported back; the GPU may ignore them, as the
// driver's may. A function's bank size is checked and dropped.
typedef enum CUsharedconfig_enum {
    CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE = 0x00,
    CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE = 0x01,
    CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE = 0x02
} CUsharedconfig;
CUresult cuCtxGetCacheConfig(CUfunc_cache* pconfig);
CUresult cuCtxSetCacheConfig(CUfunc_cache config);
CUresult cuCtxGetSharedMemConfig(CUsharedconfig* pConfig);
CUresult cuCtxSetSharedMemConfig(CUsharedconfig config);
CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config);
// The device whose PCI domain, bus and device match "[domain:]bus:device.function" (hex).
CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId);

// ---- memory (cuda_memory.cpp, cuda_memset_2d.cpp) -----------------------
// The allocation (device or managed) that dptr lies in; unknown memory:
// CUDA_ERROR_NOT_FOUND. Either output may be left out.
CUresult cuMemGetAddressRange(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr);
// Height rows of WidthInBytes, each row's pitch rounded up to 512 bytes (what
// the driver gives on the GPUs the vGPU serves); ElementSizeBytes 4, 8 or 16.
CUresult cuMemAllocPitch(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                         unsigned int ElementSizeBytes);
CUresult cuMemsetD2D8(CUdeviceptr dst, size_t dstPitch, unsigned char value, size_t Width, size_t Height);
CUresult cuMemsetD2D16(CUdeviceptr dst, size_t dstPitch, unsigned short value, size_t Width, size_t Height);
CUresult cuMemsetD2D32(CUdeviceptr dst, size_t dstPitch, unsigned int value, size_t Width, size_t Height);
CUresult cuMemsetD2D8Async(CUdeviceptr dst, size_t dstPitch, unsigned char value, size_t Width, size_t Height,
                           CUstream stream);
CUresult cuMemsetD2D16Async(CUdeviceptr dst, size_t dstPitch, unsigned short value, size_t Width, size_t Height,
                            CUstream stream);
CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t dstPitch, unsigned int value, size_t Width, size_t Height,
                            CUstream stream);

// ---- legacy device properties and the profiler (cuda_device_extras.cpp,
// cuda_profiler.cpp) -------------------------------------------------------
typedef struct CUdevprop_st {
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int sharedMemPerBlock;
    int totalConstantMemory;
    int SIMDWidth;
    int memPitch;
    int regsPerBlock;
    int clockRate;
    int textureAlign;
} CUdevprop;
// The device's attributes in the CUDA 2.0 struct (old programs, and NVIDIA's
// samples that load libcuda by hand, still ask for it).
CUresult cuDeviceGetProperties(CUdevprop* prop, CUdevice dev);
// No profiler runs inside the VM: start and stop succeed and collect nothing,
// as the driver answers with no profiler attached.
CUresult cuProfilerStart(void);
CUresult cuProfilerStop(void);

// ---- functions (cuda_module.cpp) ----------------------------------------
// The paramIndex-th parameter's offset and size, from the layout the module
// defines (the one cuLaunchKernel lays parameters out by).
CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset, size_t* paramSize);

// ---- stream memory operations (cuda_stream.cpp) -------------------------
#define CU_STREAM_WRITE_VALUE_DEFAULT 0x0u
#define CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER 0x1u
#define CU_STREAM_WAIT_VALUE_GEQ 0x0u
#define CU_STREAM_WAIT_VALUE_EQ 0x1u
#define CU_STREAM_WAIT_VALUE_AND 0x2u
#define CU_STREAM_WAIT_VALUE_NOR 0x3u
#define CU_STREAM_WAIT_VALUE_FLUSH (1u << 30)
// A word of this VM's device memory written, or waited for, in stream order
// (VGPU_OP_STREAM_WRITE_VALUE / _WAIT_VALUE); queued like a launch. Not
// while the stream captures (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);
CUresult cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags);
CUresult cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);
CUresult cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags);
// Several of those in one call (cuda_stream_mem_ops.cpp): each operation
// sent in order as the call above it names; a flush of remote writes has
// nothing to flush in a VM (no peer writes into its memory) and is
// accepted; a memory barrier is refused (CUDA_ERROR_NOT_SUPPORTED).
typedef enum CUstreamBatchMemOpType_enum {
    CU_STREAM_MEM_OP_WAIT_VALUE_32 = 1,
    CU_STREAM_MEM_OP_WRITE_VALUE_32 = 2,
    CU_STREAM_MEM_OP_WAIT_VALUE_64 = 4,
    CU_STREAM_MEM_OP_WRITE_VALUE_64 = 5,
    CU_STREAM_MEM_OP_BARRIER = 6,
    CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES = 3
} CUstreamBatchMemOpType;
typedef union CUstreamBatchMemOpParams_union {
    CUstreamBatchMemOpType operation;
    struct CUstreamMemOpWaitValueParams_st {
        CUstreamBatchMemOpType operation;
        CUdeviceptr address;
        union {
            cuuint32_t value;
            cuuint64_t value64;
        };
        unsigned int flags;
        CUdeviceptr alias;
    } waitValue;
    struct CUstreamMemOpWriteValueParams_st {
        CUstreamBatchMemOpType operation;
        CUdeviceptr address;
        union {
            cuuint32_t value;
            cuuint64_t value64;
        };
        unsigned int flags;
        CUdeviceptr alias;
    } writeValue;
    struct CUstreamMemOpFlushRemoteWritesParams_st {
        CUstreamBatchMemOpType operation;
        unsigned int flags;
    } flushRemoteWrites;
    struct CUstreamMemOpMemoryBarrierParams_st {
        CUstreamBatchMemOpType operation;
        unsigned int flags;
    } memoryBarrier;
    cuuint64_t pad[6];
} CUstreamBatchMemOpParams;
typedef CUstreamBatchMemOpParams CUstreamBatchMemOpParams_v1;
CUresult cuStreamBatchMemOp(CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray,
                            unsigned int flags);
CUresult cuStreamBatchMemOp_v2(CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray,
                               unsigned int flags);

// ---- a stream's context (cuda_stream.cpp) --------------------------------
// The context a stream was created in; the default streams': the current
// one (CUDA_ERROR_INVALID_CONTEXT without). No green contexts: *pGreenCtx null.
typedef struct CUgreenCtx_st* CUgreenCtx;
CUresult cuStreamGetCtx(CUstream hStream, CUcontext* pctx);
CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx);
CUresult cuStreamGetId(CUstream hStream, unsigned long long* streamId);
CUresult cuStreamGetFlags(CUstream hStream, unsigned int* flags);
CUresult cuStreamGetDevice(CUstream hStream, CUdevice* device);

// ---- stream attributes (cuda_stream_attributes.cpp) ------------------------
// Access policy window, synchronization policy, memory sync domain and its
// map forwarded (vgpu_abi.h, VGPU_STREAM_ATTR_*); priority 0 (the range is [0, 0]).
CUresult cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue* value);
CUresult cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value_out);
CUresult cuStreamCopyAttributes(CUstream dst, CUstream src);
// Nothing persists in L2 (no set-aside on a shared GPU): nothing to reset.
CUresult cuCtxResetPersistingL2Cache(void);
CUresult cuModuleGetFunctionCount(unsigned int* count, CUmodule mod);
CUresult cuModuleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions, CUmodule mod);

// ---- the linker (cuda_link.cpp) -----------------------------------------
typedef enum CUjitInputType_enum {
    CU_JIT_INPUT_CUBIN = 0,
    CU_JIT_INPUT_PTX = 1,
    CU_JIT_INPUT_FATBINARY = 2,
    CU_JIT_INPUT_OBJECT = 3,
    CU_JIT_INPUT_LIBRARY = 4,
    CU_JIT_INPUT_NVVM = 5,
    CU_JIT_NUM_INPUT_TYPES = 6
} CUjitInputType;
typedef struct CUlinkState_st* CUlinkState;
// A link of one image (a cubin, PTX or fat binary) completes to that image,
// which cuModuleLoadData takes as it is; the vGPU's driver compiles it at
// load. A link of several images, or of an object or library, is not
// offered: cuLinkComplete answers CUDA_ERROR_NOT_SUPPORTED. JIT options are
// the hints cuModuleLoadDataEx takes.
CUresult cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues, CUlinkState* stateOut);
CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                       unsigned int numOptions, CUjit_option* options, void** optionValues);
CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
                       CUjit_option* options, void** optionValues);
CUresult cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut);
CUresult cuLinkDestroy(CUlinkState state);

// ---- libraries and kernels (cuda_library.cpp) ---------------------------
// A library is a module of the context current when it is loaded (device
// 0's primary context, retained for the library's life, when none is); a
// kernel is that module's function, usable wherever a CUfunction is.
typedef struct CUlib_st* CUlibrary;
typedef enum CUlibraryOption_enum {
    CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE = 0,
    CU_LIBRARY_BINARY_IS_PRESERVED = 1,
    CU_LIBRARY_NUM_OPTIONS
} CUlibraryOption;
CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions, void** jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues,
                           unsigned int numLibraryOptions);
CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                               void** jitOptionsValues, unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                               void** libraryOptionValues, unsigned int numLibraryOptions);
CUresult cuLibraryUnload(CUlibrary library);
CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name);
CUresult cuLibraryGetModule(CUmodule* pMod, CUlibrary library);
CUresult cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib);
CUresult cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary lib);
CUresult cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name);
CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel);
CUresult cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel);
typedef enum CUmoduleLoadingMode_enum {
    CU_MODULE_EAGER_LOADING = 0x1,
    CU_MODULE_LAZY_LOADING = 0x2,
} CUmoduleLoadingMode;
CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode* mode);
CUresult cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev);
CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev);
CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev);
CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset, size_t* paramSize);

// ---- shareable handles (cuda_vmm.cpp) -----------------------------------
// A VM's memory cannot be shared with another process: checked, then
// CUDA_ERROR_NOT_SUPPORTED.
CUresult cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType, unsigned long long flags);
CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                        CUmemAllocationHandleType shHandleType);

} // extern "C"
