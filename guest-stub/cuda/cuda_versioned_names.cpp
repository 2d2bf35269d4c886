// The names NVIDIA's cuda.h gives these calls: its macros turn cuMemAlloc
// into cuMemAlloc_v2, cuCtxCreate into cuCtxCreate_v4 and so on, so a
// program built against cuda.h links against the versioned symbols. The
// guest's functions already have those versions' signatures (CUDA 13); each
// versioned name calls its unversioned one.
#include "guest-stub/cuda/guest_cuda.h"

extern "C" {

CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate(pctx, params, flags, dev);
}
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
CUresult cuEventDestroy_v2(CUevent event) { return cuEventDestroy(event); }
CUresult cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) { return cuEventElapsedTime(ms, start, end); }
CUresult cuStreamDestroy_v2(CUstream stream) { return cuStreamDestroy(stream); }
CUresult cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule module, const char* name)
{
    return cuModuleGetGlobal(dptr, bytes, module, name);
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr)
{
    return cuMemGetAddressRange(pbase, psize, dptr);
}
CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height, unsigned int element)
{
    return cuMemAllocPitch(dptr, pitch, width, height, element);
}
CUresult cuMemsetD2D8_v2(CUdeviceptr dst, size_t pitch, unsigned char value, size_t width, size_t height)
{
    return cuMemsetD2D8(dst, pitch, value, width, height);
}
CUresult cuMemsetD2D16_v2(CUdeviceptr dst, size_t pitch, unsigned short value, size_t width, size_t height)
{
    return cuMemsetD2D16(dst, pitch, value, width, height);
}
CUresult cuMemsetD2D32_v2(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width, size_t height)
{
    return cuMemsetD2D32(dst, pitch, value, width, height);
}
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

CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode) { return cuStreamBeginCapture(stream, mode); }
CUresult cuStreamGetCaptureInfo_v3(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                                   const CUgraphNode** deps, const CUgraphEdgeData** edge_data, size_t* num_deps)
{
    return cuStreamGetCaptureInfo(stream, status, id, graph, deps, edge_data, num_deps);
}
CUresult cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo* info)
{
    return cuGraphExecUpdate(exec, graph, info);
}
CUresult cuGraphAddKernelNode_v2(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n,
                                 const CUDA_KERNEL_NODE_PARAMS* params)
{
    return cuGraphAddKernelNode(node, graph, deps, n, params);
}
CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS* params)
{
    return cuGraphKernelNodeSetParams(node, params);
}
CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS* params)
{
    return cuGraphExecKernelNodeSetParams(exec, node, params);
}
CUresult cuGraphAddDependencies_v2(CUgraph graph, const CUgraphNode* from, const CUgraphNode* to,
                                   const CUgraphEdgeData* edge_data, size_t n)
{
    return cuGraphAddDependencies(graph, from, to, edge_data, n);
}
CUresult cuGraphGetEdges_v2(CUgraph graph, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* edge_data, size_t* n)
{
    return cuGraphGetEdges(graph, from, to, edge_data, n);
}
CUresult cuGraphNodeGetDependencies_v2(CUgraphNode node, CUgraphNode* deps, CUgraphEdgeData* edge_data, size_t* n)
{
    return cuGraphNodeGetDependencies(node, deps, edge_data, n);
}
CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode node, CUgraphNode* deps, CUgraphEdgeData* edge_data, size_t* n)
{
    return cuGraphNodeGetDependentNodes(node, deps, edge_data, n);
}
CUresult cuGraphRemoveDependencies_v2(CUgraph graph, const CUgraphNode* from, const CUgraphNode* to,
                                      const CUgraphEdgeData* edge_data, size_t n)
{
    return cuGraphRemoveDependencies(graph, from, to, edge_data, n);
}

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes) { return cuMemAlloc(dptr, bytes); }
CUresult cuMemFree_v2(CUdeviceptr dptr) { return cuMemFree(dptr); }
CUresult cuMemGetInfo_v2(size_t* free, size_t* total) { return cuMemGetInfo(free, total); }
CUresult cuMemAllocHost_v2(void** pp, size_t bytes) { return cuMemAllocHost(pp, bytes); }
CUresult cuMemHostRegister_v2(void* p, size_t bytes, unsigned int flags) { return cuMemHostRegister(p, bytes, flags); }
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* dptr, void* p, unsigned int flags)
{
    return cuMemHostGetDevicePointer(dptr, p, flags);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) { return cuMemcpyHtoD(dst, src, bytes); }
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) { return cuMemcpyDtoH(dst, src, bytes); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) { return cuMemcpyDtoD(dst, src, bytes); }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream)
{
    return cuMemcpyHtoDAsync(dst, src, bytes, stream);
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    return cuMemcpyDtoHAsync(dst, src, bytes, stream);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    return cuMemcpyDtoDAsync(dst, src, bytes, stream);
}
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) { return cuMemsetD8(dst, value, count); }
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count) { return cuMemsetD16(dst, value, count); }
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count) { return cuMemsetD32(dst, value, count); }

} // extern "C"

extern "C" {

CUresult cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* d) { return cuArrayCreate(pHandle, d); }
CUresult cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d) { return cuArray3DCreate(pHandle, d); }
CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* d, CUarray a) { return cuArrayGetDescriptor(d, a); }
CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* d, CUarray a) { return cuArray3DGetDescriptor(d, a); }
CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D* p) { return cuMemcpy2D(p); }
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* p) { return cuMemcpy2DUnaligned(p); }
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* p, CUstream s) { return cuMemcpy2DAsync(p, s); }
CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D* p) { return cuMemcpy3D(p); }
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* p, CUstream s) { return cuMemcpy3DAsync(p, s); }
CUresult cuMemcpyHtoA_v2(CUarray a, size_t offset, const void* src, size_t bytes) { return cuMemcpyHtoA(a, offset, src, bytes); }
CUresult cuMemcpyAtoH_v2(void* dst, CUarray a, size_t offset, size_t bytes) { return cuMemcpyAtoH(dst, a, offset, bytes); }

} // extern "C"
