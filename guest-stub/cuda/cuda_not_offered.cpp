// Entry points of features a VM's GPU does not offer, present so that a
// program resolving every name it might use at start (NVIDIA's
// matrixMulDynlinkJIT sample resolves ~200) starts, each answering as the
// driver does where the feature is unavailable:
//  - texture and surface references (deprecated since CUDA 11; compilers
//    since CUDA 12 emit none, so cuModuleGetTexRef finds none): no
//    reference can be made, so every one named is an invalid handle;
//  - mipmapped arrays: not offered (cuArrayCreate's arrays are);
//  - IPC between processes: memory and events stay inside the VM;
//  - graphics interop: no graphics API registers a resource in a VM, so
//    every resource named is an invalid handle.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda_not_offered.h"

namespace {
// A handle of a kind no call here can make.
template <class... Out>
CUresult no_such_handle(Out*... out)
{
    return ((out == nullptr) || ...) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
}
} // namespace

extern "C" {

KVMGPU_DRIVER_ENTRY(cuTexRefCreate, 2000);
CUresult cuTexRefCreate(CUtexref* pTexRef) { return pTexRef == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED; }
KVMGPU_DRIVER_ENTRY(cuTexRefDestroy, 2000);
CUresult cuTexRefDestroy(CUtexref) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuTexRefSetArray, 2000);
CUresult cuTexRefSetArray(CUtexref, CUarray, unsigned int) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuTexRefSetFormat, 2000);
CUresult cuTexRefSetFormat(CUtexref, CUarray_format, int) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuTexRefSetAddressMode, 2000);
CUresult cuTexRefSetAddressMode(CUtexref, int, CUaddress_mode) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuTexRefSetFilterMode, 2000);
CUresult cuTexRefSetFilterMode(CUtexref, CUfilter_mode) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuTexRefSetFlags, 2000);
CUresult cuTexRefSetFlags(CUtexref, unsigned int) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY_AS(cuTexRefSetAddress, 3020, cuTexRefSetAddress_v2);
CUresult cuTexRefSetAddress_v2(size_t* offset, CUtexref, CUdeviceptr, size_t) { return no_such_handle(offset); }
KVMGPU_DRIVER_ENTRY_AS(cuTexRefSetAddress2D, 4010, cuTexRefSetAddress2D_v3);
CUresult cuTexRefSetAddress2D_v3(CUtexref, const CUDA_ARRAY_DESCRIPTOR* desc, CUdeviceptr, size_t)
{
    return no_such_handle(desc);
}
KVMGPU_DRIVER_ENTRY(cuTexRefGetArray, 2000);
CUresult cuTexRefGetArray(CUarray* out, CUtexref) { return no_such_handle(out); }
KVMGPU_DRIVER_ENTRY_AS(cuTexRefGetAddress, 3020, cuTexRefGetAddress_v2);
CUresult cuTexRefGetAddress_v2(CUdeviceptr* out, CUtexref) { return no_such_handle(out); }
KVMGPU_DRIVER_ENTRY(cuTexRefGetAddressMode, 2000);
CUresult cuTexRefGetAddressMode(CUaddress_mode* out, CUtexref, int) { return no_such_handle(out); }
KVMGPU_DRIVER_ENTRY(cuTexRefGetFilterMode, 2000);
CUresult cuTexRefGetFilterMode(CUfilter_mode* out, CUtexref) { return no_such_handle(out); }
KVMGPU_DRIVER_ENTRY(cuTexRefGetFormat, 2000);
CUresult cuTexRefGetFormat(CUarray_format* format, int* channels, CUtexref) { return no_such_handle(format, channels); }
KVMGPU_DRIVER_ENTRY(cuTexRefGetFlags, 2000);
CUresult cuTexRefGetFlags(unsigned int* out, CUtexref) { return no_such_handle(out); }
KVMGPU_DRIVER_ENTRY(cuParamSetTexRef, 2000);
CUresult cuParamSetTexRef(CUfunction, int, CUtexref) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuSurfRefSetArray, 3000);
CUresult cuSurfRefSetArray(CUsurfref, CUarray, unsigned int) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuSurfRefGetArray, 3000);
CUresult cuSurfRefGetArray(CUarray* out, CUsurfref) { return no_such_handle(out); }

KVMGPU_DRIVER_ENTRY(cuMipmappedArrayCreate, 5000);
CUresult cuMipmappedArrayCreate(CUmipmappedArray* out, const CUDA_ARRAY3D_DESCRIPTOR* desc, unsigned int)
{
    return out == nullptr || desc == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}
KVMGPU_DRIVER_ENTRY(cuMipmappedArrayDestroy, 5000);
CUresult cuMipmappedArrayDestroy(CUmipmappedArray) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuMipmappedArrayGetLevel, 5000);
CUresult cuMipmappedArrayGetLevel(CUarray* out, CUmipmappedArray, unsigned int) { return no_such_handle(out); }

KVMGPU_DRIVER_ENTRY(cuIpcGetMemHandle, 4010);
CUresult cuIpcGetMemHandle(CUipcMemHandle* out, CUdeviceptr)
{
    return out == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}
KVMGPU_DRIVER_ENTRY(cuIpcOpenMemHandle, 4010);
CUresult cuIpcOpenMemHandle(CUdeviceptr* out, CUipcMemHandle, unsigned int)
{
    return out == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}
KVMGPU_DRIVER_ENTRY_AS(cuIpcOpenMemHandle, 11000, cuIpcOpenMemHandle_v2);
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* out, CUipcMemHandle handle, unsigned int flags)
{
    return cuIpcOpenMemHandle(out, handle, flags);
}
KVMGPU_DRIVER_ENTRY(cuIpcCloseMemHandle, 4010);
CUresult cuIpcCloseMemHandle(CUdeviceptr) { return CUDA_ERROR_INVALID_VALUE; } // none was opened
KVMGPU_DRIVER_ENTRY(cuIpcGetEventHandle, 4010);
CUresult cuIpcGetEventHandle(CUipcEventHandle* out, CUevent)
{
    return out == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}
KVMGPU_DRIVER_ENTRY(cuIpcOpenEventHandle, 4010);
CUresult cuIpcOpenEventHandle(CUevent* out, CUipcEventHandle)
{
    return out == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}

KVMGPU_DRIVER_ENTRY(cuGraphicsUnregisterResource, 3000);
CUresult cuGraphicsUnregisterResource(CUgraphicsResource) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuGraphicsSubResourceGetMappedArray, 3000);
CUresult cuGraphicsSubResourceGetMappedArray(CUarray* out, CUgraphicsResource, unsigned int, unsigned int)
{
    return no_such_handle(out);
}
KVMGPU_DRIVER_ENTRY_AS(cuGraphicsResourceGetMappedPointer, 3020, cuGraphicsResourceGetMappedPointer_v2);
CUresult cuGraphicsResourceGetMappedPointer_v2(CUdeviceptr* out, size_t* bytes, CUgraphicsResource)
{
    return no_such_handle(out, bytes);
}
KVMGPU_DRIVER_ENTRY(cuGraphicsResourceSetMapFlags, 3000);
CUresult cuGraphicsResourceSetMapFlags(CUgraphicsResource, unsigned int) { return no_such_handle(); }
KVMGPU_DRIVER_ENTRY(cuGraphicsMapResources, 3000);
CUresult cuGraphicsMapResources(unsigned int count, CUgraphicsResource* resources, CUstream)
{
    return count == 0 || resources == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
}
KVMGPU_DRIVER_ENTRY(cuGraphicsUnmapResources, 3000);
CUresult cuGraphicsUnmapResources(unsigned int count, CUgraphicsResource* resources, CUstream)
{
    return count == 0 || resources == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
}

} // extern "C"
