// The cuda.h structures the guest Driver API declares itself
// (guest-stub/cuda/guest_cuda_arrays.h, guest_cuda_graphs.h, guest_cuda.h): every field whose
// offset must be NVIDIA's, and every size. Expanded once against the
// guest's header and once against cuda.h (two translation units).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#define KVMGPU_CUDA_LAYOUT_FIELDS(X)                                                                               \
    X(CUDA_ARRAY_DESCRIPTOR, Width) X(CUDA_ARRAY_DESCRIPTOR, Height) X(CUDA_ARRAY_DESCRIPTOR, Format)            \
    X(CUDA_ARRAY_DESCRIPTOR, NumChannels) X(CUDA_ARRAY3D_DESCRIPTOR, Depth) X(CUDA_ARRAY3D_DESCRIPTOR, Format)  \
    X(CUDA_ARRAY3D_DESCRIPTOR, Flags) X(CUDA_MEMCPY2D, srcMemoryType) X(CUDA_MEMCPY2D, srcHost)                  \
    X(CUDA_MEMCPY2D, srcArray) X(CUDA_MEMCPY2D, srcPitch) X(CUDA_MEMCPY2D, dstXInBytes)                          \
    X(CUDA_MEMCPY2D, dstMemoryType) X(CUDA_MEMCPY2D, dstHost) X(CUDA_MEMCPY2D, dstDevice)                        \
    X(CUDA_MEMCPY2D, dstArray) X(CUDA_MEMCPY2D, dstPitch) X(CUDA_MEMCPY2D, WidthInBytes) X(CUDA_MEMCPY2D, Height) \
    X(CUDA_MEMCPY3D, srcLOD) X(CUDA_MEMCPY3D, srcMemoryType) X(CUDA_MEMCPY3D, srcArray)                          \
    X(CUDA_MEMCPY3D, reserved0) X(CUDA_MEMCPY3D, srcHeight) X(CUDA_MEMCPY3D, dstZ) X(CUDA_MEMCPY3D, dstLOD)      \
    X(CUDA_MEMCPY3D, dstHost) X(CUDA_MEMCPY3D, reserved1) X(CUDA_MEMCPY3D, dstHeight) X(CUDA_MEMCPY3D, Depth)    \
    X(CUDA_RESOURCE_DESC, res.array.hArray) X(CUDA_RESOURCE_DESC, res.linear.format)                             \
    X(CUDA_RESOURCE_DESC, res.linear.sizeInBytes) X(CUDA_RESOURCE_DESC, res.pitch2D.numChannels)                 \
    X(CUDA_RESOURCE_DESC, res.pitch2D.pitchInBytes) X(CUDA_RESOURCE_DESC, flags)                                 \
    X(CUDA_TEXTURE_DESC, filterMode) X(CUDA_TEXTURE_DESC, flags) X(CUDA_TEXTURE_DESC, mipmapFilterMode)          \
    X(CUDA_TEXTURE_DESC, maxMipmapLevelClamp) X(CUDA_TEXTURE_DESC, borderColor)                                  \
    X(CUDA_RESOURCE_VIEW_DESC, width) X(CUDA_RESOURCE_VIEW_DESC, lastLayer) X(CUlaunchConfig, hStream)           \
    X(CUlaunchConfig, attrs) X(CUlaunchConfig, numAttrs) X(CUlaunchAttribute, value)                             \
    X(CUlaunchAttribute, value.clusterDim.z) X(CUlaunchAttribute, value.priority)                                \
    X(CUDA_KERNEL_NODE_PARAMS, gridDimZ) X(CUDA_KERNEL_NODE_PARAMS, sharedMemBytes)                              \
    X(CUDA_KERNEL_NODE_PARAMS, kernelParams) X(CUDA_KERNEL_NODE_PARAMS, extra) X(CUDA_KERNEL_NODE_PARAMS, kern) \
    X(CUDA_KERNEL_NODE_PARAMS, ctx) X(CUDA_MEMSET_NODE_PARAMS, pitch) X(CUDA_MEMSET_NODE_PARAMS, value)          \
    X(CUDA_MEMSET_NODE_PARAMS, elementSize) X(CUDA_MEMSET_NODE_PARAMS, width) X(CUDA_MEMSET_NODE_PARAMS, height) \
    X(CUDA_HOST_NODE_PARAMS, userData) X(CUgraphEdgeData, to_port) X(CUgraphEdgeData, type)                      \
    X(CUgraphExecUpdateResultInfo, errorNode) X(CUgraphExecUpdateResultInfo, errorFromNode)                      \
    X(CUstreamBatchMemOpParams, waitValue.address) X(CUstreamBatchMemOpParams, waitValue.value64)                \
    X(CUstreamBatchMemOpParams, waitValue.flags) X(CUstreamBatchMemOpParams, writeValue.value)                   \
    X(CUstreamBatchMemOpParams, writeValue.flags) X(CUstreamBatchMemOpParams, flushRemoteWrites.flags)           \
    X(CUstreamBatchMemOpParams, memoryBarrier.flags) X(CUaccessPolicyWindow, num_bytes)                          \
    X(CUaccessPolicyWindow, hitRatio) X(CUaccessPolicyWindow, hitProp) X(CUaccessPolicyWindow, missProp)         \
    X(CUstreamAttrValue, syncPolicy) X(CUstreamAttrValue, memSyncDomainMap.remote)                               \
    X(CUstreamAttrValue, memSyncDomain) X(CUDA_GRAPH_INSTANTIATE_PARAMS, hUploadStream)                          \
    X(CUDA_GRAPH_INSTANTIATE_PARAMS, hErrNode_out) X(CUDA_GRAPH_INSTANTIATE_PARAMS, result_out)                \
    X(CUgraphNodeParams, reserved0) X(CUgraphNodeParams, kernel.kernelParams) X(CUgraphNodeParams, kernel.ctx)   \
    X(CUgraphNodeParams, memcpy.copyCtx) X(CUgraphNodeParams, memcpy.copyParams.Depth)                         \
    X(CUgraphNodeParams, memset.height) X(CUgraphNodeParams, memset.ctx) X(CUgraphNodeParams, host.userData)     \
    X(CUgraphNodeParams, graph.graph) X(CUgraphNodeParams, eventWait.event)                                      \
    X(CUgraphNodeParams, eventRecord.event) X(CUgraphNodeParams, reserved2) X(CUgraphNodeParams, alloc.dptr)     \
    X(CUgraphNodeParams, free.dptr) X(CUgraphNodeParams, conditional.ctx) X(CUDA_CONDITIONAL_NODE_PARAMS, size) X(CUDA_CONDITIONAL_NODE_PARAMS, phGraph_out) X(CUmemPoolProps, handleTypes) X(CUmemPoolProps, location)                  \
    X(CUmemPoolProps, win32SecurityAttributes) X(CUmemPoolProps, maxSize) X(CUmemPoolProps, usage)               \
    X(CUmemPoolProps, reserved) X(CUDA_MEM_ALLOC_NODE_PARAMS, accessDescs)                                      \
    X(CUDA_MEM_ALLOC_NODE_PARAMS, accessDescCount) X(CUDA_MEM_ALLOC_NODE_PARAMS, bytesize)                      \
    X(CUDA_MEM_ALLOC_NODE_PARAMS, dptr) X(CUDA_MEM_ALLOC_NODE_PARAMS_v2, dptr)

#define KVMGPU_CUDA_LAYOUT_SIZES(X)                                                                                \
    X(CUDA_ARRAY_DESCRIPTOR) X(CUDA_ARRAY3D_DESCRIPTOR) X(CUDA_MEMCPY2D) X(CUDA_MEMCPY3D) X(CUDA_RESOURCE_DESC)  \
    X(CUDA_TEXTURE_DESC) X(CUDA_RESOURCE_VIEW_DESC) X(CUlaunchConfig) X(CUlaunchAttribute) X(CUtexObject)       \
    X(CUarray_format) X(CUmemorytype) X(CUDA_KERNEL_NODE_PARAMS) X(CUDA_MEMSET_NODE_PARAMS)                   \
    X(CUDA_HOST_NODE_PARAMS) X(CUaccessPolicyWindow) X(CUstreamAttrValue) X(CUDA_GRAPH_INSTANTIATE_PARAMS) X(CUgraphEdgeData) X(CUgraphExecUpdateResultInfo) X(CUstreamCaptureStatus)         \
    X(CUstreamCaptureMode) X(CUstreamBatchMemOpParams) X(CUgraphNodeParams) X(CUDA_MEMCPY_NODE_PARAMS)            \
    X(CUDA_MEMSET_NODE_PARAMS_v2) X(CUmemPoolProps) X(CUDA_MEM_ALLOC_NODE_PARAMS) X(CUDA_MEM_ALLOC_NODE_PARAMS_v2)  \
    X(CUDA_MEM_FREE_NODE_PARAMS) X(CUDA_CONDITIONAL_NODE_PARAMS) X(CUgraphMem_attribute)

#define KVMGPU_CUDA_LAYOUT_BODY                                                                               \
    std::vector<std::pair<std::string, size_t>> out;                                                          \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Winvalid-offsetof\"")                  \
    KVMGPU_CUDA_LAYOUT_FIELDS(KVMGPU_LAYOUT_FIELD) KVMGPU_CUDA_LAYOUT_SIZES(KVMGPU_LAYOUT_SIZE)                \
    _Pragma("GCC diagnostic pop") return out;
#define KVMGPU_LAYOUT_FIELD(type, field) out.emplace_back(#type "." #field, offsetof(type, field));
#define KVMGPU_LAYOUT_SIZE(type) out.emplace_back("sizeof " #type, sizeof(type));

namespace kvmgpu::guest_layout {
std::vector<std::pair<std::string, size_t>> guest_layout(); // guest_cuda.h
std::vector<std::pair<std::string, size_t>> cuda_layout();  // cuda.h
} // namespace kvmgpu::guest_layout
