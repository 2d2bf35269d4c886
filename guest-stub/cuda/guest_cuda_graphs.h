// The guest Driver API's CUDA graphs and stream capture: cuda.h's names,
// types and signatures (CUDA 13), carried to the vGPU as the calls they are
// (vgpu_abi.h, "graphs"): the VMM's backend builds, captures and launches
// the graph (on CUDA, the driver's own graph). Differences from the driver:
//   * Host nodes (cuGraphAddHostNode, cuLaunchHostFunc while capturing):
//     the device's graph holds an empty node (or, captured, nothing) and
//     the guest runs the function itself: cuGraphLaunch of a graph with
//     host nodes waits for the stream and then calls them in the order they
//     were added, as cuLaunchHostFunc does. So a host node may have only
//     host nodes after it: instantiating a graph where device work depends
//     on a host node returns CUDA_ERROR_NOT_SUPPORTED (a capture where work
//     follows a host function: cuStreamEndCapture returns
//     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), with a line on the console.
//   * Copies while capturing go as one range of guest RAM (every buffer of
//     a Linux-ABI guest), which the device's graph names directly; a copy
//     that would need a scatter-gather list is refused
//     (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
//   * Memcpy nodes: 1D (Height = Depth = 1) between device memory and
//     host memory or device memory, by address (CU_MEMORYTYPE_HOST /
//     _DEVICE / _UNIFIED); memset nodes: one row (height 1). Others:
//     CUDA_ERROR_NOT_SUPPORTED.
//   * cuStreamGetCaptureInfo gives status and id; asking for the graph
//     under capture or its dependencies while capturing: NOT_SUPPORTED.
//   * Instantiate flags: auto-free-on-launch and node priority (upload: by
//     cuGraphInstantiateWithParams, after instantiating); device launch is
//     not offered (INVALID_VALUE).
//   * Memory nodes and cuMemAllocAsync/cuMemFreeAsync while capturing are
//     the driver's own (cuda_graph_memory.cpp): on the current context's
//     device, no peer access; GetParams knows the nodes added here, not
//     captured or cloned ones (NOT_SUPPORTED).
#pragma once

#include "guest-stub/cuda/guest_cuda_arrays.h" // CUmemorytype, CUDA_MEMCPY3D
#include "guest-stub/cuda/guest_cuda_vmm.h"    // CUmemAllocationType, CUmemAllocationHandleType

typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphNode_st* CUgraphNode;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUkern_st* CUkernel;

typedef enum CUstreamCaptureMode_enum {
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED = 2
} CUstreamCaptureMode;

typedef enum CUstreamCaptureStatus_enum {
    CU_STREAM_CAPTURE_STATUS_NONE = 0,
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2
} CUstreamCaptureStatus;

typedef enum CUgraphNodeType_enum {
    CU_GRAPH_NODE_TYPE_KERNEL = 0,
    CU_GRAPH_NODE_TYPE_MEMCPY = 1,
    CU_GRAPH_NODE_TYPE_MEMSET = 2,
    CU_GRAPH_NODE_TYPE_HOST = 3,
    CU_GRAPH_NODE_TYPE_GRAPH = 4,
    CU_GRAPH_NODE_TYPE_EMPTY = 5,
    CU_GRAPH_NODE_TYPE_WAIT_EVENT = 6,
    CU_GRAPH_NODE_TYPE_EVENT_RECORD = 7,
    CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL = 8,
    CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT = 9,
    CU_GRAPH_NODE_TYPE_MEM_ALLOC = 10,
    CU_GRAPH_NODE_TYPE_MEM_FREE = 11,
    CU_GRAPH_NODE_TYPE_BATCH_MEM_OP = 12,
    CU_GRAPH_NODE_TYPE_CONDITIONAL = 13
} CUgraphNodeType;

typedef enum CUgraphExecUpdateResult_enum {
    CU_GRAPH_EXEC_UPDATE_SUCCESS = 0x0,
    CU_GRAPH_EXEC_UPDATE_ERROR = 0x1,
    CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED = 0x2,
    CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED = 0x3,
    CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED = 0x4,
    CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED = 0x5,
    CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED = 0x6,
    CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE = 0x7,
    CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED = 0x8
} CUgraphExecUpdateResult;

typedef struct CUgraphExecUpdateResultInfo_st {
    CUgraphExecUpdateResult result;
    CUgraphNode errorNode;
    CUgraphNode errorFromNode;
} CUgraphExecUpdateResultInfo;

typedef struct CUgraphEdgeData_st {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} CUgraphEdgeData;

typedef struct CUDA_KERNEL_NODE_PARAMS_v2_st {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void** kernelParams;
    void** extra;
    CUkernel kern; // not offered: func must be set
    CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS;

typedef struct CUDA_MEMSET_NODE_PARAMS_st {
    CUdeviceptr dst;
    size_t pitch;
    unsigned int value;
    unsigned int elementSize;
    size_t width;
    size_t height;
} CUDA_MEMSET_NODE_PARAMS;

typedef struct CUDA_HOST_NODE_PARAMS_st {
    CUhostFn fn;
    void* userData;
} CUDA_HOST_NODE_PARAMS;

extern "C" {

// ---- stream capture -----------------------------------------------------
// Where cuda.h renames a call to a versioned symbol (#define X X_vN), so
// does this header: the plain symbols are the calls' oldest forms, as the
// driver exports them for dlsym (cuda_older_forms.cpp).
#define cuStreamBeginCapture cuStreamBeginCapture_v2
CUresult cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode);
// The calling thread's capture mode, exchanged for *mode. Kept per thread
// and handed back; a capture's work is checked by the VMM's driver, which
// captures in its own mode.
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode);
CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph);
CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus);
#define cuStreamGetCaptureInfo cuStreamGetCaptureInfo_v3
CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
                                CUgraph* graph_out, const CUgraphNode** dependencies_out,
                                const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out);

// ---- graphs ---------------------------------------------------------------
CUresult cuGraphCreate(CUgraph* phGraph, unsigned int flags);
CUresult cuGraphDestroy(CUgraph hGraph);
#define cuGraphAddKernelNode cuGraphAddKernelNode_v2
CUresult cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                              size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS* nodeParams);
#define cuGraphKernelNodeSetParams cuGraphKernelNodeSetParams_v2
CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams);
// As set (kernelParams into this library's copy of the packed buffer, extra
// null); a captured kernel node: CUDA_ERROR_NOT_SUPPORTED. cuda.h's name for
// it is the _v2 one; the plain name is CUDA 10.0's form (cuda_older_forms.cpp).
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams);
#define cuGraphKernelNodeGetParams cuGraphKernelNodeGetParams_v2
CUresult cuGraphAddMemcpyNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                              size_t numDependencies, const CUDA_MEMCPY3D* copyParams, CUcontext ctx);
CUresult cuGraphAddMemsetNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                              size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext ctx);
CUresult cuGraphAddHostNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                            size_t numDependencies, const CUDA_HOST_NODE_PARAMS* nodeParams);
CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS* nodeParams);
CUresult cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams);
CUresult cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                             size_t numDependencies);
#define cuGraphAddDependencies cuGraphAddDependencies_v2
CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                const CUgraphEdgeData* edgeData, size_t numDependencies);
#define cuGraphRemoveDependencies cuGraphRemoveDependencies_v2
CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                   const CUgraphEdgeData* edgeData, size_t numDependencies);
// nodes nullptr: *numNodes = the count; else up to *numNodes handles, and
// *numNodes = how many were written.
CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes);
CUresult cuGraphDestroyNode(CUgraphNode hNode);

// ---- a graph's shape, and copies (cuda_graph_topology.cpp) ----------------
// The query calls fill lists as cuGraphGetNodes does (null array: the count;
// room past the last entry nulled); edge data is always zeroed (default edges).
CUresult cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph);
CUresult cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph);
CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes, size_t* numRootNodes);
#define cuGraphGetEdges cuGraphGetEdges_v2
CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* edgeData,
                         size_t* numEdges);
#define cuGraphNodeGetDependencies cuGraphNodeGetDependencies_v2
CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies, CUgraphEdgeData* edgeData,
                                    size_t* numDependencies);
#define cuGraphNodeGetDependentNodes cuGraphNodeGetDependentNodes_v2
CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* dependentNodes, CUgraphEdgeData* edgeData,
                                      size_t* numDependentNodes);
// A host node answers CU_GRAPH_NODE_TYPE_HOST; others as the device's graph has them.
CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type);

// ---- executable graphs ----------------------------------------------------
// cuda.h's name for it, as cuda.h spells it.
#define cuGraphInstantiate cuGraphInstantiateWithFlags
CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags);
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream);
#define cuGraphExecUpdate cuGraphExecUpdate_v2
CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo* resultInfo);
#define cuGraphExecKernelNodeSetParams cuGraphExecKernelNodeSetParams_v2
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS* nodeParams);
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec);

// cuGraphInstantiateWithFlags' flags; cuGraphInstantiateWithParams also
// takes UPLOAD (an upload to hUploadStream after instantiating).
#define CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH 1ull
#define CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD 2ull
#define CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY 8ull
typedef enum CUgraphInstantiateResult_enum {
    CUDA_GRAPH_INSTANTIATE_SUCCESS = 0,
    CUDA_GRAPH_INSTANTIATE_ERROR = 1,
    CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE = 2,
    CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED = 3,
    CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED = 4,
    CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED = 5
} CUgraphInstantiateResult;
typedef struct CUDA_GRAPH_INSTANTIATE_PARAMS_st {
    cuuint64_t flags;
    CUstream hUploadStream;
    CUgraphNode hErrNode_out;
    CUgraphInstantiateResult result_out;
} CUDA_GRAPH_INSTANTIATE_PARAMS;
CUresult cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams);
// The exec's copy of a host node (the graph's keeps its own).
CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams);

// ---- event nodes, nodes switched off, an exec's flags (cuda_graph_node_controls.cpp)
// The event is one of the graph's context; destroying it while a node
// names it is allowed (the VMM keeps it until the context goes), and then
// the Get*Event calls answer CUDA_ERROR_INVALID_HANDLE. Exec flags: as
// instantiated, UPLOAD left out (the upload is done at instantiation).
CUresult cuGraphAddEventRecordNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                   size_t numDependencies, CUevent event);
CUresult cuGraphAddEventWaitNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                 size_t numDependencies, CUevent event);
CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent* event_out);
CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event);
CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent* event_out);
CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event);
CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event);
CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event);
CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled);
CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int* isEnabled);
CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t* flags);

} // extern "C"

// ---- nodes of any kind by one call (cuda_graph_generic_nodes.cpp) ---------
// CUDA 12.2's calls: each kind the calls above offer, by its parameters
// (kernel, memcpy, memset, host, empty, event record and wait); child
// graphs, memory, conditional, external semaphore and batch memop nodes:
// CUDA_ERROR_NOT_SUPPORTED. Set: kernel, host and event nodes (a memcpy or
// memset node's parameters cannot be changed: NOT_SUPPORTED).
typedef struct CUDA_MEMCPY_NODE_PARAMS_st {
    int flags; // 0
    int reserved;
    CUcontext copyCtx;
    CUDA_MEMCPY3D copyParams;
} CUDA_MEMCPY_NODE_PARAMS;
typedef struct CUDA_MEMSET_NODE_PARAMS_v2_st {
    CUdeviceptr dst;
    size_t pitch;
    unsigned int value;
    unsigned int elementSize;
    size_t width;
    size_t height;
    CUcontext ctx;
} CUDA_MEMSET_NODE_PARAMS_v2;
typedef struct CUDA_CHILD_GRAPH_NODE_PARAMS_st {
    CUgraph graph;
} CUDA_CHILD_GRAPH_NODE_PARAMS;
typedef struct CUDA_EVENT_RECORD_NODE_PARAMS_st {
    CUevent event;
} CUDA_EVENT_RECORD_NODE_PARAMS;
typedef struct CUDA_EVENT_WAIT_NODE_PARAMS_st {
    CUevent event;
} CUDA_EVENT_WAIT_NODE_PARAMS;
// Graph memory (cuGraphAddMemAllocNode...): allocations on the current
// context's device, pinned, without export handles; access descriptors may
// only name that device, read-write (no peer access to graph memory).
// CUmemPoolProps: guest_cuda_vmm.h.
typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_v1_st {
    CUmemPoolProps poolProps;
    const CUmemAccessDesc* accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    CUdeviceptr dptr; // out
} CUDA_MEM_ALLOC_NODE_PARAMS;
typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_v2_st {
    CUmemPoolProps poolProps;
    const CUmemAccessDesc* accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    CUdeviceptr dptr; // out
} CUDA_MEM_ALLOC_NODE_PARAMS_v2;
typedef struct CUDA_MEM_FREE_NODE_PARAMS_st {
    CUdeviceptr dptr;
} CUDA_MEM_FREE_NODE_PARAMS;
// The VM's graph allocations on the device are both the used and the
// reserved figures; the high marks may be set, to 0 only (a reset).
typedef enum CUgraphMem_attribute_enum {
    CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT,
    CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
    CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
    CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH
} CUgraphMem_attribute;

// Conditional nodes (CUDA 12.3): the conditional a kernel sets, the node
// that tests it, and the body graphs the driver makes for the node.
typedef uint64_t CUgraphConditionalHandle;
typedef enum CUgraphConditionalNodeType_enum {
    CU_GRAPH_COND_TYPE_IF = 0,
    CU_GRAPH_COND_TYPE_WHILE = 1,
    CU_GRAPH_COND_TYPE_SWITCH = 2
} CUgraphConditionalNodeType;
#define CU_GRAPH_COND_ASSIGN_DEFAULT 0x1
typedef struct CUDA_CONDITIONAL_NODE_PARAMS {
    CUgraphConditionalHandle handle;
    CUgraphConditionalNodeType type;
    unsigned int size;     // body graphs
    CUgraph* phGraph_out;  // written: the body graphs (the node's)
    CUcontext ctx;
} CUDA_CONDITIONAL_NODE_PARAMS;

typedef struct CUgraphNodeParams_st {
    CUgraphNodeType type;
    int reserved0[3]; // 0
    union {
        long long reserved1[29];
        CUDA_KERNEL_NODE_PARAMS kernel; // 12.0's layout is 12.2's v3
        CUDA_MEMCPY_NODE_PARAMS memcpy;
        CUDA_MEMSET_NODE_PARAMS_v2 memset;
        CUDA_HOST_NODE_PARAMS host;
        CUDA_CHILD_GRAPH_NODE_PARAMS graph;
        CUDA_EVENT_WAIT_NODE_PARAMS eventWait;
        CUDA_EVENT_RECORD_NODE_PARAMS eventRecord;
        CUDA_MEM_ALLOC_NODE_PARAMS_v2 alloc;
        CUDA_MEM_FREE_NODE_PARAMS free;
        CUDA_CONDITIONAL_NODE_PARAMS conditional;
    };
    long long reserved2;
} CUgraphNodeParams;

extern "C" {
#define cuGraphAddNode cuGraphAddNode_v2
CUresult cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                        const CUgraphEdgeData* dependencyData, size_t numDependencies, CUgraphNodeParams* nodeParams);
CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams* nodeParams);
CUresult cuGraphAddChildGraphNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                   size_t numDependencies, CUgraph childGraph);
CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph);
CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle* pHandle_out, CUgraph hGraph, CUcontext ctx,
                                        unsigned int defaultLaunchValue, unsigned int flags);
typedef enum CUstreamUpdateCaptureDependencies_flags_enum {
    CU_STREAM_ADD_CAPTURE_DEPENDENCIES = 0x0,
    CU_STREAM_SET_CAPTURE_DEPENDENCIES = 0x1
} CUstreamUpdateCaptureDependencies_flags;
#define cuStreamUpdateCaptureDependencies cuStreamUpdateCaptureDependencies_v2
CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode* dependencies,
                                           const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                           unsigned int flags);
CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode* dependencies,
                                     const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                     CUstreamCaptureMode mode);
CUresult cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams);
CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params_out);
CUresult cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                               size_t numDependencies, CUdeviceptr dptr);
CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out);
CUresult cuDeviceGraphMemTrim(CUdevice device);
CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value);
CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value);
CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams* nodeParams);
} // extern "C"
