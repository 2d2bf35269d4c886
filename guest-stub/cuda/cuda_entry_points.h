// Every entry point of the guest Driver API that cuGetProcAddress hands
// out: (name, version, symbol). `name` is the base name a program asks for,
// `version` the CUDA version whose PFN_<name>_v<version> type
// (cudaTypedefs.h) is `symbol`'s signature; a name may have several
// entries, one per signature (cuCtxSynchronize changed in 13.0).
//
// Checked both ways (tests/unit/guest/entry_points_test.cpp): each PFN type
// is the signature cuda.h declares for the symbol, every name here is
// defined by the guest library and every cu* function it defines is here.
#pragma once

#define KVMGPU_GUEST_DRIVER_ENTRY_POINTS(X) \
    X(cuArray3DCreate, 3020, cuArray3DCreate) \
    X(cuArray3DGetDescriptor, 3020, cuArray3DGetDescriptor) \
    X(cuArrayCreate, 3020, cuArrayCreate) \
    X(cuArrayDestroy, 2000, cuArrayDestroy) \
    X(cuArrayGetDescriptor, 3020, cuArrayGetDescriptor) \
    X(cuCtxCreate, 12050, cuCtxCreate) \
    X(cuCtxDestroy, 4000, cuCtxDestroy) \
    X(cuCtxDisablePeerAccess, 4000, cuCtxDisablePeerAccess) \
    X(cuCtxEnablePeerAccess, 4000, cuCtxEnablePeerAccess) \
    X(cuCtxGetCurrent, 4000, cuCtxGetCurrent) \
    X(cuCtxGetDevice, 2000, cuCtxGetDevice) \
    X(cuCtxGetDevice, 13000, cuCtxGetDevice_v2) \
    X(cuCtxGetFlags, 7000, cuCtxGetFlags) \
    X(cuCtxGetLimit, 3010, cuCtxGetLimit) \
    X(cuCtxGetStreamPriorityRange, 5050, cuCtxGetStreamPriorityRange) \
    X(cuCtxPopCurrent, 4000, cuCtxPopCurrent) \
    X(cuCtxPushCurrent, 4000, cuCtxPushCurrent) \
    X(cuCtxSetCurrent, 4000, cuCtxSetCurrent) \
    X(cuCtxSetLimit, 3010, cuCtxSetLimit) \
    X(cuCtxSynchronize, 2000, cuCtxSynchronize) \
    X(cuCtxSynchronize, 13000, cuCtxSynchronize_v2) \
    X(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer) \
    X(cuDeviceComputeCapability, 2000, cuDeviceComputeCapability) \
    X(cuDeviceGet, 2000, cuDeviceGet) \
    X(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute) \
    X(cuDeviceGetCount, 2000, cuDeviceGetCount) \
    X(cuDeviceGetDefaultMemPool, 11020, cuDeviceGetDefaultMemPool) \
    X(cuDeviceGetMemPool, 11020, cuDeviceGetMemPool) \
    X(cuDeviceGetName, 2000, cuDeviceGetName) \
    X(cuDeviceGetP2PAttribute, 8000, cuDeviceGetP2PAttribute) \
    X(cuDeviceGetPCIBusId, 4010, cuDeviceGetPCIBusId) \
    X(cuDeviceGetUuid, 11040, cuDeviceGetUuid) \
    X(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState) \
    X(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease) \
    X(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset) \
    X(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain) \
    X(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags) \
    X(cuDeviceTotalMem, 3020, cuDeviceTotalMem) \
    X(cuDriverGetVersion, 2020, cuDriverGetVersion) \
    X(cuEventCreate, 2000, cuEventCreate) \
    X(cuEventDestroy, 4000, cuEventDestroy) \
    X(cuEventElapsedTime, 12080, cuEventElapsedTime) \
    X(cuEventQuery, 2000, cuEventQuery) \
    X(cuEventRecord, 2000, cuEventRecord) \
    X(cuEventRecordWithFlags, 11010, cuEventRecordWithFlags) \
    X(cuEventSynchronize, 2000, cuEventSynchronize) \
    X(cuFuncGetAttribute, 2020, cuFuncGetAttribute) \
    X(cuFuncSetAttribute, 9000, cuFuncSetAttribute) \
    X(cuFuncSetCacheConfig, 3000, cuFuncSetCacheConfig) \
    X(cuGetErrorName, 6000, cuGetErrorName) \
    X(cuGetErrorString, 6000, cuGetErrorString) \
    X(cuGetProcAddress, 12000, cuGetProcAddress) \
    X(cuInit, 2000, cuInit) \
    X(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel) \
    X(cuLaunchHostFunc, 10000, cuLaunchHostFunc) \
    X(cuLaunchKernel, 4000, cuLaunchKernel) \
    X(cuLaunchKernelEx, 11060, cuLaunchKernelEx) \
    X(cuMemAlloc, 3020, cuMemAlloc) \
    X(cuMemAllocAsync, 11020, cuMemAllocAsync) \
    X(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync) \
    X(cuMemAllocHost, 3020, cuMemAllocHost) \
    X(cuMemFree, 3020, cuMemFree) \
    X(cuMemFreeAsync, 11020, cuMemFreeAsync) \
    X(cuMemFreeHost, 2000, cuMemFreeHost) \
    X(cuMemGetInfo, 3020, cuMemGetInfo) \
    X(cuMemHostAlloc, 2020, cuMemHostAlloc) \
    X(cuMemHostGetDevicePointer, 3020, cuMemHostGetDevicePointer) \
    X(cuMemHostRegister, 6050, cuMemHostRegister) \
    X(cuMemHostUnregister, 4000, cuMemHostUnregister) \
    X(cuMemPoolGetAccess, 11020, cuMemPoolGetAccess) \
    X(cuMemPoolGetAttribute, 11020, cuMemPoolGetAttribute) \
    X(cuMemPoolSetAccess, 11020, cuMemPoolSetAccess) \
    X(cuMemPoolSetAttribute, 11020, cuMemPoolSetAttribute) \
    X(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo) \
    X(cuMemcpy, 4000, cuMemcpy) \
    X(cuMemcpy2D, 3020, cuMemcpy2D) \
    X(cuMemcpy2DAsync, 3020, cuMemcpy2DAsync) \
    X(cuMemcpy2DUnaligned, 3020, cuMemcpy2DUnaligned) \
    X(cuMemcpy3D, 3020, cuMemcpy3D) \
    X(cuMemcpy3DAsync, 3020, cuMemcpy3DAsync) \
    X(cuMemcpyAsync, 4000, cuMemcpyAsync) \
    X(cuMemcpyAtoH, 3020, cuMemcpyAtoH) \
    X(cuMemcpyDtoD, 3020, cuMemcpyDtoD) \
    X(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync) \
    X(cuMemcpyDtoH, 3020, cuMemcpyDtoH) \
    X(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync) \
    X(cuMemcpyHtoA, 3020, cuMemcpyHtoA) \
    X(cuMemcpyHtoD, 3020, cuMemcpyHtoD) \
    X(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync) \
    X(cuMemcpyPeer, 4000, cuMemcpyPeer) \
    X(cuMemcpyPeerAsync, 4000, cuMemcpyPeerAsync) \
    X(cuMemsetD16, 3020, cuMemsetD16) \
    X(cuMemsetD16Async, 3020, cuMemsetD16Async) \
    X(cuMemsetD32, 3020, cuMemsetD32) \
    X(cuMemsetD32Async, 3020, cuMemsetD32Async) \
    X(cuMemsetD8, 3020, cuMemsetD8) \
    X(cuMemsetD8Async, 3020, cuMemsetD8Async) \
    X(cuModuleGetFunction, 2000, cuModuleGetFunction) \
    X(cuModuleGetGlobal, 3020, cuModuleGetGlobal) \
    X(cuModuleLoad, 2000, cuModuleLoad) \
    X(cuModuleLoadData, 2000, cuModuleLoadData) \
    X(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx) \
    X(cuModuleUnload, 2000, cuModuleUnload) \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, cuOccupancyMaxActiveBlocksPerMultiprocessor) \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags) \
    X(cuOccupancyMaxPotentialBlockSize, 6050, cuOccupancyMaxPotentialBlockSize) \
    X(cuOccupancyMaxPotentialBlockSizeWithFlags, 7000, cuOccupancyMaxPotentialBlockSizeWithFlags) \
    X(cuStreamAddCallback, 5000, cuStreamAddCallback) \
    X(cuStreamCreate, 2000, cuStreamCreate) \
    X(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority) \
    X(cuStreamDestroy, 4000, cuStreamDestroy) \
    X(cuStreamGetPriority, 5050, cuStreamGetPriority) \
    X(cuStreamQuery, 2000, cuStreamQuery) \
    X(cuStreamSynchronize, 2000, cuStreamSynchronize) \
    X(cuStreamWaitEvent, 3020, cuStreamWaitEvent) \
    X(cuSurfObjectCreate, 5000, cuSurfObjectCreate) \
    X(cuSurfObjectDestroy, 5000, cuSurfObjectDestroy) \
    X(cuSurfObjectGetResourceDesc, 5000, cuSurfObjectGetResourceDesc) \
    X(cuTexObjectCreate, 5000, cuTexObjectCreate) \
    X(cuTexObjectDestroy, 5000, cuTexObjectDestroy) \
    X(cuTexObjectGetResourceDesc, 5000, cuTexObjectGetResourceDesc)
