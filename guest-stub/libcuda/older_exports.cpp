// Names the driver exports with an older signature than cuda.h now gives
// them (cuda.h's macros send a program built against it to the newer
// symbol), for libraries that look them up by name with dlsym: cuBLASLt
// resolves its driver calls so and refuses to start when one is missing.
// They are not in cuGetProcAddress's table, which answers by version.
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/libcuda/export_tables.h"
#include "guest-stub/platform/api_lock.h"

#undef cuGraphInstantiate
#undef cuGraphKernelNodeGetParams

extern "C" {

// CUDA 10.0's form: an error node and a log buffer beside the executable
// graph. Instantiation either works or returns its error; neither names a
// node nor writes a log here.
CUresult cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* logBuffer,
                            size_t bufferSize)
{
    GUEST_API_LOCK();
    if (phErrorNode != nullptr)
        *phErrorNode = nullptr;
    if (logBuffer != nullptr && bufferSize > 0)
        logBuffer[0] = '\0';
    return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}

// CUDA 11.3's form: no edge data.
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
                                   CUgraph* graph_out, const CUgraphNode** dependencies_out,
                                   size_t* numDependencies_out)
{
    return cuStreamGetCaptureInfo(hStream, captureStatus_out, id_out, graph_out, dependencies_out, nullptr,
                                  numDependencies_out);
}

// CUDA 10.0's form: the parameters without the kernel and context fields
// the 12.0 form added, written field by field into the caller's smaller struct.
struct KernelNodeParamsV1 {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void** kernelParams;
    void** extra;
};
CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, KernelNodeParamsV1* nodeParams)
{
    if (nodeParams == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS p = {};
    if (CUresult r = cuGraphKernelNodeGetParams_v2(hNode, &p))
        return r;
    *nodeParams = KernelNodeParamsV1{p.func,      p.gridDimX,  p.gridDimY,      p.gridDimZ,      p.blockDimX,
                                     p.blockDimY, p.blockDimZ, p.sharedMemBytes, p.kernelParams, p.extra};
    return CUDA_SUCCESS;
}

} // extern "C"
