// Internal to the guest CUDA API: the symbols cuGetProcAddress's tables
// name besides those guest_cuda*.h declare. The versioned names cuda.h gives
// calls whose plain name is a 32-bit form of CUDA 2.x (cuda_versioned_names.cpp),
// and the calls' older forms (cuda_older_forms.cpp).
// It undoes guest_cuda*.h's renaming macros: after it, cuGraphGetEdges is
// the plain symbol, the call's first form, as the driver exports it. So only
// the tables' file (cuda_proc_address.cpp) and those two include it.
#pragma once

#include "guest-stub/cuda/guest_cuda.h"

#undef cuCtxCreate
#undef cuGetProcAddress
#undef cuStreamBeginCapture
#undef cuStreamGetCaptureInfo
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeGetParams
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams
#undef cuGraphAddDependencies
#undef cuGraphRemoveDependencies
#undef cuGraphGetEdges
#undef cuGraphNodeGetDependencies
#undef cuGraphNodeGetDependentNodes
#undef cuGraphAddNode
#undef cuStreamUpdateCaptureDependencies

// CUDA 10.0's kernel node parameters: 12.0's without the kernel and context
// fields at their end.
typedef struct CUDA_KERNEL_NODE_PARAMS_v1_st {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void** kernelParams;
    void** extra;
} CUDA_KERNEL_NODE_PARAMS_v1;

extern "C" {

// ---- the versioned names of the 64-bit forms (cuda_versioned_names.cpp) ----
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev);
CUresult cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule module, const char* name);
CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr);
CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height, unsigned int element);
CUresult cuMemsetD2D8_v2(CUdeviceptr dst, size_t pitch, unsigned char value, size_t width, size_t height);
CUresult cuMemsetD2D16_v2(CUdeviceptr dst, size_t pitch, unsigned short value, size_t width, size_t height);
CUresult cuMemsetD2D32_v2(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width, size_t height);
CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemGetInfo_v2(size_t* free, size_t* total);
CUresult cuMemAllocHost_v2(void** pp, size_t bytes);
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* dptr, void* p, unsigned int flags);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes);
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count);
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count);
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count);
CUresult cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* d);
CUresult cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d);
CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* d, CUarray a);
CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* d, CUarray a);
CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D* p);
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* p);
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* p, CUstream s);
CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D* p);
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* p, CUstream s);
CUresult cuMemcpyHtoA_v2(CUarray a, size_t offset, const void* src, size_t bytes);
CUresult cuMemcpyAtoH_v2(void* dst, CUarray a, size_t offset, size_t bytes);
CUresult cuMemcpyDtoA_v2(CUarray a, size_t offset, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyAtoD_v2(CUdeviceptr dst, CUarray a, size_t offset, size_t bytes);
CUresult cuMemcpyAtoA_v2(CUarray dst, size_t dst_offset, CUarray src, size_t src_offset, size_t bytes);
CUresult cuMemcpyHtoAAsync_v2(CUarray a, size_t offset, const void* src, size_t bytes, CUstream s);
CUresult cuMemcpyAtoHAsync_v2(void* dst, CUarray a, size_t offset, size_t bytes, CUstream s);

// ---- older forms (cuda_older_forms.cpp) -------------------------------------
CUresult cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags,
                        CUdevice dev);
CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags);
CUresult cuStreamBeginCapture(CUstream hStream);
CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out);
CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode* dependencies, size_t numDependencies,
                                           unsigned int flags);
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
                                   CUgraph* graph_out, const CUgraphNode** dependencies_out,
                                   size_t* numDependencies_out);
CUresult cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* logBuffer,
                            size_t bufferSize);
CUresult cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* logBuffer,
                               size_t bufferSize);
CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
                           CUgraphExecUpdateResult* updateResult_out);
CUresult cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                              size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams);
CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams);
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams);
CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1* nodeParams);
CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                size_t numDependencies);
CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                   size_t numDependencies);
CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, size_t* numEdges);
CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies, size_t* numDependencies);
CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* dependentNodes, size_t* numDependentNodes);
CUresult cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                        size_t numDependencies, CUgraphNodeParams* nodeParams);

} // extern "C"
