// The CUDA backend's cuRAND host API: the host's libcurand.so.10, found at
// the first generator (backends/host_library.h: the loader's path, then
// the CUDA toolkit's lib64), every entry point typed by NVIDIA's curand.h.
// Missing: one error line, and create() answers VGPU_ERROR_NOT_INITIALIZED
// (the guest's CURAND_STATUS_INITIALIZATION_FAILED). Generators work in the
// backend's context, current on the calling thread. Not thread-safe.
#pragma once

#include <set>

#include "kvmtool-gpu/devices/vgpu/backends/rand_library.h"

namespace kvmgpu::vgpu {

struct CurandApi; // cuda_rand.cpp

class CudaRand final : public RandLibrary {
public:
    ~CudaRand() override; // destroys its generators (the context is still there)
    Status create(uint32_t rng_type, BackendRand* out) override;
    Status destroy(BackendRand g) override;
    Status set_stream(BackendRand g, BackendStream s) override;
    Status set_seed(BackendRand g, uint64_t seed) override;
    Status generate(BackendRand g, uint32_t kind, uint64_t dptr, uint64_t count, double mean, double stddev) override;
    Status set_offset(BackendRand g, uint64_t offset) override;
    Status set_ordering(BackendRand g, uint32_t ordering) override;
    Status set_dimensions(BackendRand g, uint32_t dimensions) override;
    // The context is gone (a sticky error): its generators with it.
    void forget_all() override { live_.clear(); }

private:
    const CurandApi* api(); // loads on first use; nullptr when missing
    const CurandApi* api_ = nullptr;
    std::set<BackendRand> live_;
};

} // namespace kvmgpu::vgpu
