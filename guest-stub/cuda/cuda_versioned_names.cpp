// The names NVIDIA's cuda.h gives these calls: its macros turn cuMemAlloc
// into cuMemAlloc_v2, cuCtxCreate into cuCtxCreate_v4 and so on, so a
// program built against cuda.h links against the versioned symbols. The
// guest's functions already have those versions' signatures (CUDA 13); each
// versioned name calls its unversioned one. Where the plain name is a 32-bit
// form of CUDA 2.x (cuMemAlloc), cuGetProcAddress hands out the versioned
// one, whose marker follows it.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/versioned_forms.h"

extern "C" {

CUresult cuCtxDestroy_v2(CUcontext ctx) { return cuCtxDestroy(ctx); }
CUresult cuCtxPushCurrent_v2(CUcontext ctx) { return cuCtxPushCurrent(ctx); }
CUresult cuCtxPopCurrent_v2(CUcontext* pctx) { return cuCtxPopCurrent(pctx); }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return cuDevicePrimaryCtxRelease(dev); }
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) { return cuDevicePrimaryCtxReset(dev); }
CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    return cuDevicePrimaryCtxSetFlags(dev, flags);
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) { return cuDeviceTotalMem(bytes, dev); }
KVMGPU_DRIVER_ENTRY_AS(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2);
CUresult cuEventDestroy_v2(CUevent event) { return cuEventDestroy(event); }
CUresult cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) { return cuEventElapsedTime(ms, start, end); }
CUresult cuStreamDestroy_v2(CUstream stream) { return cuStreamDestroy(stream); }
CUresult cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule module, const char* name)
{
    return cuModuleGetGlobal(dptr, bytes, module, name);
}
KVMGPU_DRIVER_ENTRY_AS(cuModuleGetGlobal, 3020, cuModuleGetGlobal_v2);

CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr)
{
    return cuMemGetAddressRange(pbase, psize, dptr);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2);
CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height, unsigned int element)
{
    return cuMemAllocPitch(dptr, pitch, width, height, element);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemAllocPitch, 3020, cuMemAllocPitch_v2);
CUresult cuMemsetD2D8_v2(CUdeviceptr dst, size_t pitch, unsigned char value, size_t width, size_t height)
{
    return cuMemsetD2D8(dst, pitch, value, width, height);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemsetD2D8, 3020, cuMemsetD2D8_v2);
CUresult cuMemsetD2D16_v2(CUdeviceptr dst, size_t pitch, unsigned short value, size_t width, size_t height)
{
    return cuMemsetD2D16(dst, pitch, value, width, height);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemsetD2D16, 3020, cuMemsetD2D16_v2);
CUresult cuMemsetD2D32_v2(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width, size_t height)
{
    return cuMemsetD2D32(dst, pitch, value, width, height);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemsetD2D32, 3020, cuMemsetD2D32_v2);
CUresult cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
    return cuStreamWriteValue32(stream, addr, value, flags);
}
CUresult cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags)
{
    return cuStreamWriteValue64(stream, addr, value, flags);
}
CUresult cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
    return cuStreamWaitValue32(stream, addr, value, flags);
}
CUresult cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags)
{
    return cuStreamWaitValue64(stream, addr, value, flags);
}
CUresult cuLinkCreate_v2(unsigned int n, CUjit_option* options, void** values, CUlinkState* state)
{
    return cuLinkCreate(n, options, values, state);
}
CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                          unsigned int n, CUjit_option* options, void** values)
{
    return cuLinkAddData(state, type, data, size, name, n, options, values);
}
CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path, unsigned int n,
                          CUjit_option* options, void** values)
{
    return cuLinkAddFile(state, type, path, n, options, values);
}


CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes) { return cuMemAlloc(dptr, bytes); }
KVMGPU_DRIVER_ENTRY_AS(cuMemAlloc, 3020, cuMemAlloc_v2);
CUresult cuMemFree_v2(CUdeviceptr dptr) { return cuMemFree(dptr); }
KVMGPU_DRIVER_ENTRY_AS(cuMemFree, 3020, cuMemFree_v2);
CUresult cuMemGetInfo_v2(size_t* free, size_t* total) { return cuMemGetInfo(free, total); }
KVMGPU_DRIVER_ENTRY_AS(cuMemGetInfo, 3020, cuMemGetInfo_v2);
CUresult cuMemAllocHost_v2(void** pp, size_t bytes) { return cuMemAllocHost(pp, bytes); }
KVMGPU_DRIVER_ENTRY_AS(cuMemAllocHost, 3020, cuMemAllocHost_v2);
CUresult cuMemHostRegister_v2(void* p, size_t bytes, unsigned int flags) { return cuMemHostRegister(p, bytes, flags); }
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* dptr, void* p, unsigned int flags)
{
    return cuMemHostGetDevicePointer(dptr, p, flags);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemHostGetDevicePointer, 3020, cuMemHostGetDevicePointer_v2);

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) { return cuMemcpyHtoD(dst, src, bytes); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2);
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) { return cuMemcpyDtoH(dst, src, bytes); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) { return cuMemcpyDtoD(dst, src, bytes); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream)
{
    return cuMemcpyHtoDAsync(dst, src, bytes, stream);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2);
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    return cuMemcpyDtoHAsync(dst, src, bytes, stream);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    return cuMemcpyDtoDAsync(dst, src, bytes, stream);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2);
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) { return cuMemsetD8(dst, value, count); }
KVMGPU_DRIVER_ENTRY_AS(cuMemsetD8, 3020, cuMemsetD8_v2);
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count) { return cuMemsetD16(dst, value, count); }
KVMGPU_DRIVER_ENTRY_AS(cuMemsetD16, 3020, cuMemsetD16_v2);
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count) { return cuMemsetD32(dst, value, count); }
KVMGPU_DRIVER_ENTRY_AS(cuMemsetD32, 3020, cuMemsetD32_v2);

} // extern "C"

extern "C" {

CUresult cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* d) { return cuArrayCreate(pHandle, d); }
KVMGPU_DRIVER_ENTRY_AS(cuArrayCreate, 3020, cuArrayCreate_v2);
CUresult cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d) { return cuArray3DCreate(pHandle, d); }
KVMGPU_DRIVER_ENTRY_AS(cuArray3DCreate, 3020, cuArray3DCreate_v2);
CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* d, CUarray a) { return cuArrayGetDescriptor(d, a); }
KVMGPU_DRIVER_ENTRY_AS(cuArrayGetDescriptor, 3020, cuArrayGetDescriptor_v2);
CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* d, CUarray a) { return cuArray3DGetDescriptor(d, a); }
KVMGPU_DRIVER_ENTRY_AS(cuArray3DGetDescriptor, 3020, cuArray3DGetDescriptor_v2);
CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D* p) { return cuMemcpy2D(p); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpy2D, 3020, cuMemcpy2D_v2);
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* p) { return cuMemcpy2DUnaligned(p); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpy2DUnaligned, 3020, cuMemcpy2DUnaligned_v2);
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* p, CUstream s) { return cuMemcpy2DAsync(p, s); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpy2DAsync, 3020, cuMemcpy2DAsync_v2);
CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D* p) { return cuMemcpy3D(p); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpy3D, 3020, cuMemcpy3D_v2);
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* p, CUstream s) { return cuMemcpy3DAsync(p, s); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpy3DAsync, 3020, cuMemcpy3DAsync_v2);
CUresult cuMemcpyHtoA_v2(CUarray a, size_t offset, const void* src, size_t bytes) { return cuMemcpyHtoA(a, offset, src, bytes); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyHtoA, 3020, cuMemcpyHtoA_v2);
CUresult cuMemcpyAtoH_v2(void* dst, CUarray a, size_t offset, size_t bytes) { return cuMemcpyAtoH(dst, a, offset, bytes); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyAtoH, 3020, cuMemcpyAtoH_v2);
CUresult cuMemcpyDtoA_v2(CUarray a, size_t offset, CUdeviceptr src, size_t bytes) { return cuMemcpyDtoA(a, offset, src, bytes); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyDtoA, 3020, cuMemcpyDtoA_v2);
CUresult cuMemcpyAtoD_v2(CUdeviceptr dst, CUarray a, size_t offset, size_t bytes) { return cuMemcpyAtoD(dst, a, offset, bytes); }
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyAtoD, 3020, cuMemcpyAtoD_v2);
CUresult cuMemcpyAtoA_v2(CUarray dst, size_t dst_offset, CUarray src, size_t src_offset, size_t bytes)
{
    return cuMemcpyAtoA(dst, dst_offset, src, src_offset, bytes);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyAtoA, 3020, cuMemcpyAtoA_v2);
CUresult cuMemcpyHtoAAsync_v2(CUarray a, size_t offset, const void* src, size_t bytes, CUstream s)
{
    return cuMemcpyHtoAAsync(a, offset, src, bytes, s);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyHtoAAsync, 3020, cuMemcpyHtoAAsync_v2);
CUresult cuMemcpyAtoHAsync_v2(void* dst, CUarray a, size_t offset, size_t bytes, CUstream s)
{
    return cuMemcpyAtoHAsync(dst, a, offset, bytes, s);
}
KVMGPU_DRIVER_ENTRY_AS(cuMemcpyAtoHAsync, 3020, cuMemcpyAtoHAsync_v2);

} // extern "C"
