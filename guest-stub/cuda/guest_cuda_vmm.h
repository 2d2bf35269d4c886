// The guest Driver API's virtual memory management (cuMemAddressReserve,
// cuMemCreate, cuMemMap, cuMemSetAccess...), managed memory
// (cuMemAllocManaged and its hints) and pointer attributes: types laid out
// as CUDA 13's cuda.h lays them out, and the calls (cuda_vmm.cpp,
// cuda_managed.cpp, cuda_pointer.cpp). Included by guest_cuda.h.
//
// VMM: on the current context's device; sizes, addresses and mappings in
// whole granules (cuMemGetAllocationGranularity), a device range used by a
// copy or launch lies inside one mapping. Offered: pinned device memory,
// no shareable handles, access for the current context's device.
//
// Managed memory is emulated (docs/managed-memory.md): guest RAM at the
// same address as device memory, the two made equal around every launch.
#pragma once

#include <stddef.h>

typedef unsigned long long CUmemGenericAllocationHandle;
typedef enum CUmemAllocationType_enum {
    CU_MEM_ALLOCATION_TYPE_INVALID = 0x0,
    CU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
} CUmemAllocationType;
typedef enum CUmemAllocationHandleType_enum {
    CU_MEM_HANDLE_TYPE_NONE = 0x0,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
} CUmemAllocationHandleType;
typedef enum CUmemAllocationGranularity_flags_enum {
    CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1,
} CUmemAllocationGranularity_flags;
typedef struct CUmemAllocationProp_st {
    CUmemAllocationType type;
    CUmemAllocationHandleType requestedHandleTypes;
    CUmemLocation location;
    void* win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} CUmemAllocationProp;
// allocFlags.compressionType: compressible memory where the device offers
// it (CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED); the driver may
// give plain memory, as cuMemGetAllocationPropertiesFromHandle then says.
#define CU_MEM_ALLOCATION_COMP_NONE 0x0
#define CU_MEM_ALLOCATION_COMP_GENERIC 0x1

// cuMemAllocManaged / cuStreamAttachMemAsync flags.
#define CU_MEM_ATTACH_GLOBAL 0x1u
#define CU_MEM_ATTACH_HOST 0x2u
#define CU_MEM_ATTACH_SINGLE 0x4u

typedef enum CUmem_advise_enum {
    CU_MEM_ADVISE_SET_READ_MOSTLY = 1,
    CU_MEM_ADVISE_UNSET_READ_MOSTLY = 2,
    CU_MEM_ADVISE_SET_PREFERRED_LOCATION = 3,
    CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 4,
    CU_MEM_ADVISE_SET_ACCESSED_BY = 5,
    CU_MEM_ADVISE_UNSET_ACCESSED_BY = 6,
} CUmem_advise;

typedef enum CUpointer_attribute_enum {
    CU_POINTER_ATTRIBUTE_CONTEXT = 1,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
    CU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
    CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
    CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
    CU_POINTER_ATTRIBUTE_MAPPED = 13,
} CUpointer_attribute;

extern "C" {
CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option);
// addr: an address asked for, a hint (0: any); flags must be 0.
CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags);
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                     unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count);

CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytes, unsigned int flags);
// Hints under the emulation: checked, then nothing moves until a launch.
// The unversioned names are CUDA 8's signatures (a device ordinal, or
// CU_DEVICE_CPU), the _v2 names CUDA 12.2's (a location), as cuda.h's
// macros pick them.
#define CU_DEVICE_CPU ((CUdevice)-1)
CUresult cuMemPrefetchAsync(CUdeviceptr dptr, size_t count, CUdevice dst_device, CUstream stream);
CUresult cuMemPrefetchAsync_v2(CUdeviceptr dptr, size_t count, CUmemLocation location, unsigned int flags,
                               CUstream stream);
CUresult cuMemAdvise(CUdeviceptr dptr, size_t count, CUmem_advise advice, CUdevice device);
CUresult cuMemAdvise_v2(CUdeviceptr dptr, size_t count, CUmem_advise advice, CUmemLocation location);
// A host attachment keeps the allocation out of what moves at a launch.
CUresult cuStreamAttachMemAsync(CUstream stream, CUdeviceptr dptr, size_t length, unsigned int flags);

// Memory pools the program makes (cuda_memory_pool.cpp): device memory,
// without export handles (NOT_SUPPORTED); one may be a device's current
// pool, which cuMemAllocAsync uses. CUDA 13's location forms name device
// pools only.
typedef struct CUmemPoolProps_st {
    CUmemAllocationType allocType;
    CUmemAllocationHandleType handleTypes;
    CUmemLocation location;
    void* win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} CUmemPoolProps;
CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props);
CUresult cuMemPoolDestroy(CUmemoryPool pool);
CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool);
CUresult cuMemGetDefaultMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type);
CUresult cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type);
CUresult cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool);

CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr);
CUresult cuPointerGetAttributes(unsigned int count, CUpointer_attribute* attributes, void** data, CUdeviceptr ptr);
}
