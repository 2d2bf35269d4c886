// The CUDA backend's cuFFT basic plans: the host's libcufft.so.12, found at
// the first plan (backends/host_library.h), every entry point typed by
// NVIDIA's cufft.h. Missing: one error line, and plan() answers
// VGPU_ERROR_NOT_INITIALIZED (the guest's CUFFT_SETUP_FAILED). Plans work
// in the backend's context, current on the calling thread. Not thread-safe.
#pragma once

#include <set>

#include "kvmtool-gpu/devices/vgpu/backends/fft_library.h"

namespace kvmgpu::vgpu {

struct CufftApi; // cuda_fft.cpp

class CudaFft final : public FftLibrary {
public:
    ~CudaFft() override; // destroys its plans (the context is still there)
    Status plan(const FftShape& shape, bool auto_allocation, BackendFft* out, uint64_t* work) override;
    Status set_work_area(BackendFft p, uint64_t dptr) override;
    Status destroy(BackendFft p) override;
    Status set_stream(BackendFft p, BackendStream s) override;
    Status exec(BackendFft p, const FftShape& shape, uint64_t in, uint64_t out, int direction) override;
    // The context is gone (a sticky error): its plans with it.
    void forget_all() override { live_.clear(); }

private:
    const CufftApi* api(); // loads on first use; nullptr when missing
    const CufftApi* api_ = nullptr;
    std::set<BackendFft> live_;
};

} // namespace kvmgpu::vgpu
