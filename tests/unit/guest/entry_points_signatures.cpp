// Each entry of a guest cuGetProcAddress table (cuda_entry_points.h,
// generated from the markers of guest-stub/cuda/driver_entry.h: the static
// guest library's, or libcuda.so.1's with its older forms) names the
// version whose PFN type (cudaTypedefs.h) is the signature the driver gives
// the symbol: a program that casts the pointer to that type calls the
// function it meant. cuda.h is read as the driver's own build reads it
// (__CUDA_API_VERSION_INTERNAL): no macro renames a call to its versioned
// symbol, and each plain symbol is declared with its first signature, as
// the driver exports it (cuGraphGetEdges without edge data). So a marker
// must name the symbol that has its version's signature. Compile-time
// checks; the test below only says they were compiled.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaProfiler.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>
#include <gtest/gtest.h>

#include <type_traits>

#include "guest-stub/cuda/cuda_entry_points.h"

// The pre-11.0 forms NVIDIA's cudart 13 still asks for: cudaTypedefs.h
// declares their types only for the driver's own build
// (__CUDA_API_VERSION_INTERNAL); the signatures are its.
typedef CUresult(CUDAAPI* PFN_cuDevicePrimaryCtxRelease_v7000)(CUdevice_v1 dev);
typedef CUresult(CUDAAPI* PFN_cuDevicePrimaryCtxReset_v7000)(CUdevice_v1 dev);

#define KVMGPU_CHECK_ENTRY(name, version, symbol)                            \
    static_assert(std::is_same_v<PFN_##name##_v##version, decltype(&::symbol)>, \
                  #name " at " #version " is not the signature cuda.h declares for " #symbol);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" // cuDeviceComputeCapability is, and still offered
KVMGPU_GUEST_DRIVER_ENTRY_POINTS(KVMGPU_CHECK_ENTRY)
#pragma GCC diagnostic pop
#undef KVMGPU_CHECK_ENTRY

TEST(GuestEntryPoints, EveryVersionIsTheSignatureCudaHDeclares) {
#define KVMGPU_COUNT_ENTRY(name, version, symbol) +1
    constexpr int entries = 0 KVMGPU_GUEST_DRIVER_ENTRY_POINTS(KVMGPU_COUNT_ENTRY);
#undef KVMGPU_COUNT_ENTRY
    EXPECT_GT(entries, 100);
}
