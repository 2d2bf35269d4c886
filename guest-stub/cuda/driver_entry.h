// The marker written just above the definition of each guest Driver API
// function that cuGetProcAddress hands out:
//   KVMGPU_DRIVER_ENTRY(cuMemAlloc, 3020);
//   KVMGPU_DRIVER_ENTRY_AS(cuCtxSynchronize, 13000, cuCtxSynchronize_v2);
// `name` is the base name a program asks for, `version` the CUDA version
// whose PFN_<name>_v<version> type (cudaTypedefs.h) is the function's
// signature; the _AS form names a function called otherwise (a name may
// have several entries, one per signature: cuCtxSynchronize changed in 13.0).
//
// Why markers: cuGetProcAddress's table (cuda_entry_points.h, the X-macro
// KVMGPU_GUEST_DRIVER_ENTRY_POINTS, sorted by name, then version) is
// generated at build time from them (driver_entry_table.cmake), so a new
// call is named once, beside its code, and no hand-kept list can drift. The
// generator fails the build on a malformed marker or a repeated (name,
// version). Tests in tests/unit/guest check each version against cuda.h and
// that every cu* function the library defines has a marker.
//
// Each marker checks at compile time that its function is declared (a
// guest_cuda*.h header), returns CUresult, and has a version that
// cuGetProcAddress can be asked for.
#pragma once

#include "guest-stub/cuda/guest_cuda.h"

// cuDriverGetVersion's answer: cuGetProcAddress refuses later versions.
inline constexpr int kvmgpu_guest_driver_version = 13000;

namespace kvmgpu_driver_entry {

template <typename... Args>
constexpr bool returns_curesult(CUresult (*)(Args...))
{
    return true;
}
template <typename R, typename... Args>
constexpr bool returns_curesult(R (*)(Args...))
{
    return false;
}

// CUDA writes versions as 1000 * major + 10 * minor; the oldest is 2.0.
constexpr bool offered_version(int version)
{
    return version >= 2000 && version <= kvmgpu_guest_driver_version && version % 10 == 0;
}

} // namespace kvmgpu_driver_entry

#define KVMGPU_DRIVER_ENTRY_AS(name, version, symbol)                                                 \
    static_assert(kvmgpu_driver_entry::returns_curesult(&::symbol), #symbol " does not return CUresult"); \
    static_assert(kvmgpu_driver_entry::offered_version(version),                                      \
                  #name " at " #version ": not a CUDA version (2000 to 13000, a multiple of 10)")
#define KVMGPU_DRIVER_ENTRY(name, version) KVMGPU_DRIVER_ENTRY_AS(name, version, name)
