// The guest's CUDA Driver API: the same names, types and meanings as
// cuda.h, so CUDA code reads the same here, carried to the VMM's vGPU over
// the command ring (kvmtool-gpu/abi/vgpu_abi.h). Differences from the real
// Driver API, all deliberate:
//   * Contexts as the driver has them (cuCtxCreate, the context stack,
//     primary contexts); objects belong to the context they were made in.
//     Every context of a device shares one CUDA context in the VMM, so a
//     kernel could reach memory another context of this VM allocated,
//     where the driver would fault. The vGPU shows as many devices as the
//     VMM gives the VM.
//   * CUresult values are the vGPU status codes (= CUresult numbers), plus
//     two the guest itself detects: CUDA_ERROR_ILLEGAL_STATE (the device
//     marked the ring broken) and CUDA_ERROR_TIMEOUT (no completion within
//     vgpu_timeout_s). After either, every call returns it.
//   * Kernel parameters: cuModuleGetFunction asks the vGPU for the
//     kernel's parameter layout as the module defines it (the driver's
//     cuFuncGetParamInfo), and cuLaunchKernel lays kernelParams (void**) or
//     the `extra` buffer (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE, exactly the
//     kernel's size) out by it, as the driver does: any parameter types, up
//     to the driver's 32,764 bytes. A launch whose parameters exceed one
//     ring slot (448 bytes) returns once the vGPU has taken them.
//   * Host memory: cuMemAllocHost gives identity-mapped, physically
//     contiguous guest RAM; cuMemFreeHost gives it back. Copies to/from
//     pageable memory (the heap region) are sent as scatter-gather lists
//     automatically.
//
// Synchronous vs asynchronous: calls named *Async, cuLaunchKernel and
// cuEventRecord are queued (VGPU_CMD_FLAG_ASYNC) and return at once; their
// errors are held and reported by the next synchronization point
// (cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize, or a
// synchronous copy/memset), then cleared. Every other call waits for its
// completion. With deferred submission on (vgpuSetDeferredSubmission(1), or
// cmdline vgpu_deferred=1) queued calls do not ring the doorbell; the next
// waiting call (or vgpuFlush) rings it once for the whole batch.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "guest-stub/cuda/cuda_device_attributes.h"
#include "guest-stub/cuda/cuda_results.h"
#include "kvmtool-gpu/abi/vgpu_abi.h"

// Every status the driver defines (cuda_results.h); those the vGPU's ABI
// names have the same numbers (checked below).
#define KVMGPU_CUDA_RESULT_ENUMERATOR(name, value) name = value,
typedef enum cudaError_enum { KVMGPU_CUDA_RESULTS(KVMGPU_CUDA_RESULT_ENUMERATOR) } CUresult;
#undef KVMGPU_CUDA_RESULT_ENUMERATOR
#define KVMGPU_SAME_STATUS(x) (static_cast<int>(CUDA_##x) == static_cast<int>(VGPU_##x))
static_assert(KVMGPU_SAME_STATUS(ERROR_INVALID_VALUE) && KVMGPU_SAME_STATUS(ERROR_OUT_OF_MEMORY) &&
                  KVMGPU_SAME_STATUS(ERROR_NOT_INITIALIZED) && KVMGPU_SAME_STATUS(ERROR_NO_DEVICE) &&
                  KVMGPU_SAME_STATUS(ERROR_INVALID_DEVICE) && KVMGPU_SAME_STATUS(ERROR_INVALID_IMAGE) &&
                  KVMGPU_SAME_STATUS(ERROR_INVALID_CONTEXT) && KVMGPU_SAME_STATUS(ERROR_INVALID_HANDLE) &&
                  KVMGPU_SAME_STATUS(ERROR_PEER_ACCESS_UNSUPPORTED) && KVMGPU_SAME_STATUS(ERROR_PEER_ACCESS_ALREADY_ENABLED) &&
                  KVMGPU_SAME_STATUS(ERROR_PEER_ACCESS_NOT_ENABLED) &&
                  KVMGPU_SAME_STATUS(ERROR_ILLEGAL_STATE) && KVMGPU_SAME_STATUS(ERROR_NOT_FOUND) &&
                  KVMGPU_SAME_STATUS(ERROR_NOT_READY) && KVMGPU_SAME_STATUS(ERROR_ILLEGAL_ADDRESS) &&
                  KVMGPU_SAME_STATUS(ERROR_LAUNCH_OUT_OF_RESOURCES) && KVMGPU_SAME_STATUS(ERROR_LAUNCH_FAILED) &&
                  KVMGPU_SAME_STATUS(ERROR_NOT_SUPPORTED) && KVMGPU_SAME_STATUS(ERROR_TIMEOUT) &&
                  KVMGPU_SAME_STATUS(ERROR_UNKNOWN) && KVMGPU_SAME_STATUS(SUCCESS),
              "guest CUresult numbers are the vGPU's");
#undef KVMGPU_SAME_STATUS

typedef uint64_t CUdeviceptr; // device address in this VM's context
typedef int CUdevice;         // device ordinal, as in cuda.h
// Opaque handles, typed as in cuda.h (the vGPU's handle numbers inside).
typedef struct CUmod_st* CUmodule;
typedef struct CUtexref_st* CUtexref;
typedef struct CUsurfref_st* CUsurfref;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream; // nullptr (0) = the default stream
typedef struct CUevent_st* CUevent;
typedef struct CUctx_st* CUcontext;

// cuCtxCreate's flags (CUctx_flags), kept and reported back: the VMM's
// context was made with its own.
#define CU_CTX_SCHED_AUTO 0x0u
#define CU_CTX_SCHED_SPIN 0x1u
#define CU_CTX_SCHED_YIELD 0x2u
#define CU_CTX_SCHED_BLOCKING_SYNC 0x4u
#define CU_CTX_MAP_HOST 0x8u
#define CU_CTX_LMEM_RESIZE_TO_MAX 0x10u
// cuCtxCreate's parameters (CUDA 13's cuCtxCreate_v4), laid out as in
// cuda.h: execution affinity and CIG are not offered, so only nullptr or
// parameters that ask for neither are accepted.
typedef struct CUexecAffinityParam_st CUexecAffinityParam;
typedef struct CUctxCigParam_st CUctxCigParam;
typedef struct CUctxCreateParams_st {
    CUexecAffinityParam* execAffinityParams;
    int numExecAffinityParams;
    CUctxCigParam* cigParams;
} CUctxCreateParams;

// cuLaunchKernelEx, as in cuda.h (the attribute value is a 64-byte union
// there; the fields offered here sit where cuda.h has them).
typedef enum CUlaunchAttributeID_enum {
    CU_LAUNCH_ATTRIBUTE_IGNORE = 0,
    CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1,
    CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
    CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY = 3,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5,
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
    CU_LAUNCH_ATTRIBUTE_PRIORITY = 8,
    CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP = 9,
    CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN = 10,
    CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 14,
} CUlaunchAttributeID;
typedef enum CUaccessProperty_enum {
    CU_ACCESS_PROPERTY_NORMAL = 0,
    CU_ACCESS_PROPERTY_STREAMING = 1,
    CU_ACCESS_PROPERTY_PERSISTING = 2
} CUaccessProperty;
typedef struct CUaccessPolicyWindow_st {
    void* base_ptr;
    size_t num_bytes;
    float hitRatio;
    CUaccessProperty hitProp;
    CUaccessProperty missProp;
} CUaccessPolicyWindow;
typedef enum CUsynchronizationPolicy_enum {
    CU_SYNC_POLICY_AUTO = 1,
    CU_SYNC_POLICY_SPIN = 2,
    CU_SYNC_POLICY_YIELD = 3,
    CU_SYNC_POLICY_BLOCKING_SYNC = 4
} CUsynchronizationPolicy;
typedef struct CUlaunchMemSyncDomainMap_st {
    unsigned char default_;
    unsigned char remote;
} CUlaunchMemSyncDomainMap;
typedef enum CUlaunchMemSyncDomain_enum {
    CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT = 0,
    CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE = 1
} CUlaunchMemSyncDomain;
typedef enum CUclusterSchedulingPolicy_enum {
    CU_CLUSTER_SCHEDULING_POLICY_DEFAULT = 0,
    CU_CLUSTER_SCHEDULING_POLICY_SPREAD = 1,
    CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING = 2,
} CUclusterSchedulingPolicy;
typedef union CUlaunchAttributeValue_union {
    char pad[64];
    CUaccessPolicyWindow accessPolicyWindow;
    int cooperative;
    CUsynchronizationPolicy syncPolicy;
    struct {
        unsigned int x, y, z;
    } clusterDim;
    CUclusterSchedulingPolicy clusterSchedulingPolicyPreference;
    int programmaticStreamSerializationAllowed;
    int priority;
    CUlaunchMemSyncDomainMap memSyncDomainMap;
    CUlaunchMemSyncDomain memSyncDomain;
    unsigned int sharedMemCarveout;
} CUlaunchAttributeValue;
// Stream attributes are launch attributes (cuda.h's names for them).
typedef CUlaunchAttributeID CUstreamAttrID;
typedef CUlaunchAttributeValue CUstreamAttrValue;
#define CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW
#define CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY
#define CU_STREAM_ATTRIBUTE_PRIORITY CU_LAUNCH_ATTRIBUTE_PRIORITY
#define CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP
#define CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN
typedef struct CUlaunchAttribute_st {
    CUlaunchAttributeID id;
    char pad[8 - sizeof(CUlaunchAttributeID)];
    CUlaunchAttributeValue value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig_st {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute* attrs;
    unsigned int numAttrs;
} CUlaunchConfig;


typedef enum CUfunction_attribute_enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
    CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
    CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
} CUfunction_attribute;

// cuLaunchKernel's `extra` array, as in cuda.h.
#define CU_LAUNCH_PARAM_END ((void*)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void*)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void*)0x02)

// cuda.h's special streams: the legacy default stream and the per-thread
// one. A guest runs one thread, so both are the default stream (0) here;
// work on the per-thread one is then ordered with other streams as the
// legacy stream's is (stricter than CUDA, never less correct).
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
#define CU_STREAM_DEFAULT 0x0u
#define CU_STREAM_NON_BLOCKING 0x1u
#define CU_EVENT_DEFAULT 0x0u
#define CU_EVENT_DISABLE_TIMING 0x2u

// Occupancy (cuOccupancy*), as in cuda.h.
typedef size_t (*CUoccupancyB2DSize)(int blockSize);
#define CU_OCCUPANCY_DEFAULT 0x0u
#define CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE 0x1u

// Context limits (CUlimit numbers = VGPU_LIMIT_*, vgpu_abi.h says what each costs).
typedef enum CUlimit_enum {
    CU_LIMIT_STACK_SIZE = 0x00,
    CU_LIMIT_PRINTF_FIFO_SIZE = 0x01,
    CU_LIMIT_MALLOC_HEAP_SIZE = 0x02,
    CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 0x03,
    CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 0x04,
    CU_LIMIT_MAX_L2_FETCH_GRANULARITY = 0x05,
    CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06,
    CU_LIMIT_SHMEM_SIZE = 0x07,
    CU_LIMIT_CIG_ENABLED = 0x08,
    CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED = 0x09,
} CUlimit;

typedef enum CUdevice_P2PAttribute_enum {
    CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK = 0x01,
    CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = 0x02,
    CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED = 0x03,
    CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED = 0x04,
    CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED = 0x05,
} CUdevice_P2PAttribute;

#ifndef CU_UUID_HAS_BEEN_DEFINED // as cuda.h and driver_types.h guard it
#define CU_UUID_HAS_BEEN_DEFINED
typedef struct CUuuid_st {
    char bytes[16];
} CUuuid;
#endif

typedef enum CUfunc_cache_enum {
    CU_FUNC_CACHE_PREFER_NONE = 0x00,
    CU_FUNC_CACHE_PREFER_SHARED = 0x01,
    CU_FUNC_CACHE_PREFER_L1 = 0x02,
    CU_FUNC_CACHE_PREFER_EQUAL = 0x03,
} CUfunc_cache;

// Stream-ordered allocation: a device's default pool (cuda.h's types).
typedef struct CUmemPoolHandle_st* CUmemoryPool;
typedef uint64_t cuuint64_t;
typedef enum CUmemPool_attribute_enum {
    CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
    CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
    CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
    CU_MEMPOOL_ATTR_USED_MEM_HIGH,
} CUmemPool_attribute;
typedef enum CUmemLocationType_enum {
    CU_MEM_LOCATION_TYPE_INVALID = 0x0,
    CU_MEM_LOCATION_TYPE_DEVICE = 0x1,
    CU_MEM_LOCATION_TYPE_HOST = 0x2,
    CU_MEM_LOCATION_TYPE_HOST_NUMA = 0x3,
    CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 0x4,
} CUmemLocationType;
typedef struct CUmemLocation_st {
    CUmemLocationType type;
    int id;
} CUmemLocation;
typedef enum CUmemAccess_flags_enum {
    CU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
    CU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
} CUmemAccess_flags;
typedef struct CUmemAccessDesc_st {
    CUmemLocation location;
    CUmemAccess_flags flags;
} CUmemAccessDesc;

#define CU_EVENT_RECORD_DEFAULT 0x0u
#define CU_EVENT_RECORD_EXTERNAL 0x1u
typedef void (*CUhostFn)(void* userData);
typedef void (*CUstreamCallback)(CUstream hStream, CUresult status, void* userData);

extern "C" {

// ---- initialization, device, context ------------------------------------
CUresult cuInit(unsigned int flags);
// The CUDA version this API follows (13000: CUDA 13.0); the vGPU does not
// tell the guest its driver's.
CUresult cuDriverGetVersion(int* version);
CUresult cuDeviceGetCount(int* count);
CUresult cuDeviceGet(CUdevice* device, int ordinal);
CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDeviceGetName(char* name, int len, CUdevice dev);
CUresult cuDeviceTotalMem(size_t* bytes, CUdevice dev);
CUresult cuCtxSynchronize(void);

// ---- contexts: a stack per thread (the guest has one), as in the driver --
// cuda.h's names: the plain ones are their oldest forms (cuda_older_forms.cpp).
#define cuCtxCreate cuCtxCreate_v4
CUresult cuCtxCreate(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev);
CUresult cuCtxDestroy(CUcontext ctx);
CUresult cuCtxAttach(CUcontext* pctx, unsigned int flags); // deprecated: a usage count (cuda_context_attach.cpp)
CUresult cuCtxDetach(CUcontext ctx);
CUresult cuCtxPushCurrent(CUcontext ctx);
CUresult cuCtxPopCurrent(CUcontext* pctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxGetCurrent(CUcontext* pctx);
CUresult cuCtxGetDevice(CUdevice* device);
CUresult cuCtxGetFlags(unsigned int* flags);
CUresult cuCtxGetId(CUcontext ctx, unsigned long long* id);
// 3020, as the driver answers for every context made since CUDA 3.2.
CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version);
// CUDA 13's forms naming the context (nullptr: the current one).
CUresult cuCtxSynchronize_v2(CUcontext ctx);
CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx);
CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active);
CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags);
CUresult cuDevicePrimaryCtxReset(CUdevice dev);
// Peer access between devices: whether dev's contexts can map peer's
// memory, and mapping it for the current context (peer copies work
// either way: the VMM's driver stages them where there is no path).
CUresult cuDeviceCanAccessPeer(int* can_access, CUdevice dev, CUdevice peer);
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags);
CUresult cuCtxDisablePeerAccess(CUcontext peer);
// Compute capability from the device's attributes (the host backend: 0.0).
CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev);
// "dddd:bb:dd.0" from the PCI attributes the VMM reports (len >= 13).
CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev);
// A UUID of this VM's device ordinal, the same every run: not the GPU's
// (a guest learns nothing of the host's hardware from it).
CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev);
// The driver's private tables by UUID: only in the shared libcuda.so.1
// (guest-stub/libcuda/), where NVIDIA's cudart asks for them.
CUresult cuGetExportTable(const void** table, const CUuuid* id);
// Between two distinct devices (the same one: CUDA_ERROR_INVALID_DEVICE).
CUresult cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice, CUdevice dstDevice);
// Limits of the current context's device (see VGPU_LIMIT_* for what each
// costs against the VM's quota; persisting L2 is a hint kept by the VMM).
CUresult cuCtxSetLimit(CUlimit limit, size_t value);
CUresult cuCtxGetLimit(size_t* value, CUlimit limit);
// Stream priorities are hints: the range offered is [0, 0], so every
// stream has priority 0, as the driver clamps priorities into its range.
CUresult cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority);
CUresult cuGetErrorName(CUresult error, const char** str);
// The guest library's own entry points by base name (each marked
// KVMGPU_DRIVER_ENTRY beside its definition, cuda/driver_entry.h):
// the newest signature not newer than cudaVersion. A name the library does
// not have, or only in a newer signature: CUDA_ERROR_NOT_FOUND, *pfn
// nullptr, *symbolStatus SYMBOL_NOT_FOUND or VERSION_NOT_SUFFICIENT (older
// ABI variants, such as cuMemAlloc's 32-bit one, are not offered).
// cudaVersion past the driver's (13000): CUDA_ERROR_INVALID_VALUE. The
// legacy and per-thread stream flags give the same functions (one thread).
typedef enum CUdriverProcAddressQueryResult_enum {
    CU_GET_PROC_ADDRESS_SUCCESS = 0,
    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} CUdriverProcAddressQueryResult;
#define CU_GET_PROC_ADDRESS_DEFAULT 0
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM (1 << 0)
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (1 << 1)
#define cuGetProcAddress cuGetProcAddress_v2
CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* symbolStatus);
CUresult cuGetErrorString(CUresult error, const char** str);

// ---- memory -------------------------------------------------------------
CUresult cuMemAlloc(CUdeviceptr* dptr, size_t bytes);
CUresult cuMemFree(CUdeviceptr dptr);
CUresult cuMemGetInfo(size_t* free, size_t* total);
// Page-locked memory: physically contiguous, identity-mapped guest RAM
// that cuMemFreeHost gives back for reuse. Every block is portable,
// device-mapped and write-combined (the flags are accepted and checked).
#define CU_MEMHOSTALLOC_PORTABLE 0x01u
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02u
#define CU_MEMHOSTALLOC_WRITECOMBINED 0x04u
CUresult cuMemAllocHost(void** pp, size_t bytes);
CUresult cuMemHostAlloc(void** pp, size_t bytes, unsigned int flags);
CUresult cuMemFreeHost(void* p);
// Registering a buffer the program has: every page must be mapped; a range
// overlapping a registered one or a cuMemHostAlloc block is refused
// (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED). The guest must not remap a
// registered buffer's pages until it unregisters it.
#define CU_MEMHOSTREGISTER_PORTABLE 0x01u
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02u
#define CU_MEMHOSTREGISTER_READ_ONLY 0x08u
CUresult cuMemHostRegister(void* p, size_t bytes, unsigned int flags);
CUresult cuMemHostUnregister(void* p);
// The device address of page-locked memory (flags 0). For a registered
// buffer of scattered pageable pages: CUDA_ERROR_NOT_SUPPORTED for now.
CUresult cuMemHostGetDevicePointer(CUdeviceptr* dptr, void* p, unsigned int flags);
// The flags a cuMemHostAlloc block was given (cuMemAllocHost's: 0).
CUresult cuMemHostGetFlags(unsigned int* flags, void* p);
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t bytes);
CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
// Unified addressing: either side may be device memory from cuMemAlloc or a
// guest address (pinned or pageable).
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
// Between contexts (of one device or, with several, of two).
CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dstContext, CUdeviceptr src, CUcontext srcContext, size_t bytes);
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dstContext, CUdeviceptr src, CUcontext srcContext,
                           size_t bytes, CUstream stream);
CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t count);
CUresult cuMemsetD16(CUdeviceptr dst, unsigned short value, size_t count);
CUresult cuMemsetD32(CUdeviceptr dst, unsigned int value, size_t count);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream);
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream);
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream);

// ---- stream-ordered allocation (cuda_memory_pool.cpp) -------------------
// Over the vGPU's ordinary allocations, so every byte counts against the
// VM's quota and RESET frees it: cuMemAllocAsync allocates at once (memory
// that is valid for work on any stream satisfies stream order);
// cuMemFreeAsync waits for the stream's earlier work, then frees (the
// driver returns at once; later work on the stream is never affected).
// Each device has its default pool, and pools the program makes
// (guest_cuda_vmm.h); the release threshold and reuse policies are kept and reported: memory
// goes back to the VMM at every free, as with threshold 0. On a capturing
// stream both are the driver's own (cuda_graph_memory.cpp): the capture's
// allocation and free nodes, a graph allocation the VMM keeps with the graph.
CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytes, CUstream stream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream stream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice dev);
CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev);
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value);
CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value);
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
// Another device's access to the pool's memory is peer access between the
// devices' primary contexts (cuCtxEnablePeerAccess there).
CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count);
CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool pool, CUmemLocation* location);

// ---- modules and launches -----------------------------------------------
// image: a fatbin, cubin (ELF) or NUL-terminated PTX; its size is read from
// its header (fatbin, ELF) or its NUL (PTX), as the driver does.
CUresult cuModuleLoadData(CUmodule* module, const void* image);
CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin);
// Texture and surface references (deprecated; CUDA 12's compilers make
// none): a module's are never looked up, every name is CUDA_ERROR_NOT_FOUND.
CUresult cuModuleGetTexRef(CUtexref* texref, CUmodule module, const char* name);
CUresult cuModuleGetSurfRef(CUsurfref* surfref, CUmodule module, const char* name);
// The launch calls before cuLaunchKernel (cuda_legacy_launch.cpp): a
// function's block shape, shared bytes and parameter bytes, then a launch
// on a grid (cuLaunch: 1x1) through cuLaunchKernel's parameter buffer.
CUresult cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z);
CUresult cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes);
CUresult cuParamSetSize(CUfunction hfunc, unsigned int numbytes);
CUresult cuParamSeti(CUfunction hfunc, int offset, unsigned int value);
CUresult cuParamSetf(CUfunction hfunc, int offset, float value);
CUresult cuParamSetv(CUfunction hfunc, int offset, void* ptr, unsigned int numbytes);
CUresult cuLaunch(CUfunction f);
CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height);
CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream);
// A file the guest reads itself (a Linux-ABI guest: through the VMM's file
// calls, e.g. from its --share), then loaded as cuModuleLoadData; no such
// file: CUDA_ERROR_FILE_NOT_FOUND; a freestanding guest has no files:
// CUDA_ERROR_NOT_SUPPORTED.
CUresult cuModuleLoad(CUmodule* module, const char* fname);
// JIT options (cuda.h's numbers): hints, not acted on; WALL_TIME and the
// logs' sizes, which the driver writes back, read as 0.
typedef enum CUjit_option_enum {
    CU_JIT_MAX_REGISTERS = 0,
    CU_JIT_THREADS_PER_BLOCK = 1,
    CU_JIT_WALL_TIME = 2,
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_OPTIMIZATION_LEVEL = 7,
    CU_JIT_NUM_OPTIONS_MAX_ = 0x7fffffff
} CUjit_option;
CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options,
                            void** optionValues);
CUresult cuModuleUnload(CUmodule module);
CUresult cuModuleGetFunction(CUfunction* f, CUmodule module, const char* name);
// A __device__ variable: its address is device memory (copies, memsets,
// kernel parameters) while the module is loaded.
CUresult cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule module, const char* name);
CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc);
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES lets later launches of
// hfunc ask for more than 48 KiB of dynamic shared memory.
CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream stream,
                        void** kernelParams, void** extra);
// Every block resident at once (grid-wide synchronisation): the grid must
// fit the device (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE otherwise).
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                   unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream stream,
                                   void** kernelParams);
// A cache preference, as the driver takes it: a hint, checked and kept.
CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config);
// Occupancy: the driver's answer for the kernel as the VMM's GPU runs it.
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func, int blockSize,
                                                              size_t dynamicSMemSize, unsigned int flags);
// The most dynamic shared memory a block of blockSize threads may use for
// numBlocks of them to fit on one multiprocessor (the driver's answer).
CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, CUfunction func, int numBlocks,
                                                 int blockSize);
// The block size with the most resident threads per multiprocessor: asks
// the occupancy of each candidate (the block limit, then each multiple of
// the warp size below it; blockSizeToDynamicSMemSize, when given, runs in
// the guest for each). *minGridSize fills every multiprocessor.
CUresult cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                          int blockSizeLimit);
CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, CUfunction func,
                                                   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                   size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags);
// Attributes offered: IGNORE, COOPERATIVE and CLUSTER_DIMENSION (with
// CLUSTER_SCHEDULING_POLICY_PREFERENCE, sent with a cluster: the driver
// launches thread-block clusters); the hints
// PROGRAMMATIC_STREAM_SERIALIZATION (the launch may overlap the previous
// kernel: it never does here, which is always correct), PRIORITY and
// PREFERRED_SHARED_MEMORY_CARVEOUT are accepted and not acted on. Any
// other: CUDA_ERROR_NOT_SUPPORTED.
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra);
// The driver's answers for the config's shape and cluster attribute (its
// other attributes ignored, as the driver ignores them).
CUresult cuOccupancyMaxActiveClusters(int* numClusters, CUfunction func, const CUlaunchConfig* config);
CUresult cuOccupancyMaxPotentialClusterSize(int* clusterSize, CUfunction func, const CUlaunchConfig* config);

// ---- streams and events -------------------------------------------------
CUresult cuStreamCreate(CUstream* stream, unsigned int flags);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuStreamDestroy(CUstream stream);
CUresult cuStreamQuery(CUstream stream);
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags);
CUresult cuEventCreate(CUevent* event, unsigned int flags);
CUresult cuEventRecord(CUevent event, CUstream stream);
CUresult cuEventSynchronize(CUevent event);
CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end);
CUresult cuEventDestroy(CUevent event);
CUresult cuEventQuery(CUevent event);
// flags CU_EVENT_RECORD_DEFAULT; _EXTERNAL belongs to graph event nodes (not offered).
CUresult cuEventRecordWithFlags(CUevent event, CUstream stream, unsigned int flags);
// Priorities are hints (see cuCtxGetStreamPriorityRange).
CUresult cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int priority);
CUresult cuStreamGetPriority(CUstream stream, int* priority);
// Host functions on a stream run after its earlier work and before its
// later work. The guest has one thread: the call waits for the stream and
// runs the function before it returns (the driver returns at once and runs
// it on a thread of its own).
CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* userData);
CUresult cuStreamAddCallback(CUstream stream, CUstreamCallback callback, void* userData, unsigned int flags);

// ---- vGPU extras --------------------------------------------------------
// Copies between device memory and a guest buffer described by a
// scatter-gather list built from the guest page tables (any mapped buffer:
// pageable heap or identity). Queued on stream (asynchronous); the buffer
// must stay untouched until the stream is synchronized. strategy: a
// vgpu_sg_strategy. Large lists are split into several commands.
CUresult vgpuMemcpyHtoDScattered(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream,
                                 unsigned strategy);
CUresult vgpuMemcpyDtoHScattered(void* dst, CUdeviceptr src, size_t bytes, CUstream stream,
                                 unsigned strategy);
// A device address for physically contiguous guest RAM (pinned memory),
// mapped into the device's address space: zero copy.
CUresult vgpuGuestRamDevicePtr(CUdeviceptr* dptr, const void* p, size_t bytes);
// The parameter layout of f, as its module defines it (cf. the driver's
// cuFuncGetParamInfo): *count parameters, the i-th at offsets[i] with
// sizes[i] bytes (pointers valid while f's module is loaded), *bytes the
// whole buffer.
CUresult vgpuFuncGetParamLayout(CUfunction f, unsigned int* count, const uint16_t** offsets,
                                const uint16_t** sizes, size_t* bytes);
// Module load with an explicit image size (no header parsing).
CUresult vgpuModuleLoadDataSized(CUmodule* module, const void* image, size_t bytes);

// Deferred submission: queued calls publish to the ring without a doorbell
// write; the next waiting call or vgpuFlush() kicks once for the batch.
void vgpuSetDeferredSubmission(int enable);
CUresult vgpuFlush(void);

struct VgpuGuestInfo {
    uint32_t backend;       // VGPU_BACKEND_*
    uint32_t doorbell_mode; // VGPU_DOORBELL_*
    uint64_t features;      // VGPU_FEATURE_*
    uint32_t ring_entries;
    uint32_t deferred;      // deferred submission on?
};
struct VgpuGuestStats {
    uint64_t commands;      // published to the ring
    uint64_t doorbells;     // doorbell writes (each is a VM exit in trap mode)
    uint64_t waits;         // calls that waited for a completion
    uint64_t ring_full;     // times a submit found the ring full
    uint64_t spin_loops;    // pause-loop iterations spent waiting
};
CUresult vgpuGetInfo(VgpuGuestInfo* info);
void vgpuGetStats(VgpuGuestStats* stats);
const char* vgpuBackendName(uint32_t backend);

} // extern "C"

#include "guest-stub/cuda/guest_cuda_arrays.h"
#include "guest-stub/cuda/guest_cuda_graphs.h"
#include "guest-stub/cuda/guest_cuda_vmm.h"
#include "guest-stub/cuda/guest_cuda_more.h"
#include "guest-stub/cuda/guest_cuda_not_offered.h"
