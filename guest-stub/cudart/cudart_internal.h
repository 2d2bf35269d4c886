// What the guest CUDA runtime's files share: the runtime's error state
// (last error, sticky error), the current device and its primary context,
// and the registered kernels. Every entry point in this folder is the CUDA
// runtime's function of the same name, declared by the real
// cuda_runtime_api.h (so its signature is checked against NVIDIA's), built
// over the guest Driver API (guest-stub/cuda/guest_cuda.h).
#pragma once

#include <cuda_runtime_api.h>

#include "guest-stub/cuda/guest_cuda.h"

namespace guest::cudart {

constexpr int kMaxDevices = 16;

// CUresult -> cudaError_t: the runtime's numbers are the driver's for every
// status the vGPU returns (checked in errors.cpp).
cudaError_t from_driver(CUresult r);

// Records e as the last error (cudaGetLastError) unless it is cudaSuccess
// or cudaErrorNotReady (a query's answer, not an error); a sticky error
// (the context is unusable: a kernel fault, the ring broken) is kept for
// every later call. Returns e.
cudaError_t record(cudaError_t e);
inline cudaError_t record(CUresult r) { return record(from_driver(r)); }

// Start of every call that needs the device: the sticky error if there is
// one; otherwise makes the current device's primary context current
// (cuInit and cuDevicePrimaryCtxRetain on first use). cudaSuccess or the
// recorded error.
cudaError_t enter();
// The same without touching the context (calls that only read state).
cudaError_t sticky_error();

cudaError_t take_last_error(); // returns the last error and resets it
cudaError_t peek_last_error();
void clear_errors();           // cudaDeviceReset

// Device dev's primary context, retained if it was not (it does not become
// current): peer access and peer copies name contexts.
cudaError_t primary_context(int dev, CUcontext* out);

int current_device();
void set_current_device(int dev);

// Loads every registered fat binary's module for the device (the current
// one) now, with each kernel's function and the launch limits, as
// CUDA_MODULE_LOADING=EAGER asks (by default each loads at its first use).
void load_every_module(int dev);
bool eager_module_loading(); // CUDA_MODULE_LOADING=EAGER in the environment

// Forgets what the device's primary context held (modules, functions,
// cached attributes): cudaDeviceReset.
void forget_device_modules(int dev);
void forget_primary_context(int dev);

// The device address and size of a registered __device__/__constant__
// variable (cudaMemcpyToSymbol & co.), in the current device's context.
cudaError_t symbol_address(const void* symbol, CUdeviceptr* dptr, size_t* bytes);
// The driver function of a kernel, from the host stub's address.
cudaError_t function_of(const void* host_fn, CUfunction* f);
// enter(), then function_of (its error recorded): how a call about one
// kernel starts.
cudaError_t enter_with_function(const void* host_fn, CUfunction* f);

// The Driver API's memory type of a pointer side of a copy of `kind` (the
// source when `source`; cudaMemcpyDefault: UNIFIED); false for no kind
// (arrays.cpp). set_source/set_destination put the pointer where
// CUDA_MEMCPY2D wants a side of that type (UNIFIED: the device field).
bool memory_type_of(cudaMemcpyKind kind, bool source, CUmemorytype* out);
void set_source(CUDA_MEMCPY2D* c, CUmemorytype type, const void* p);
void set_destination(CUDA_MEMCPY2D* c, CUmemorytype type, void* p);

// Drops what cudaStreamSetAttribute kept for stream s (stream_attributes.cpp).
void forget_stream_attributes(cudaStream_t s);

} // namespace guest::cudart
