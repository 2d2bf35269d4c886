// The host backend's BLAS: a plain CPU reference of the forwarded cuBLAS
// calls, so that CI without a GPU checks the whole path (guest library,
// ring, checks, results) with real numbers. Column-major, cuBLAS's
// semantics, naive loops (small sizes only). Types S, D, C, Z; GEMM_EX
// when all three types and the compute type are one of those; half and
// bfloat16 are NOT_SUPPORTED (logged once). Streams are ignored: the host
// backend runs everything at once.
#pragma once

#include <map>

#include "kvmtool-gpu/devices/vgpu/backends/host_kernels.h"
#include "kvmtool-gpu/devices/vgpu/backends/blas_library.h"

namespace kvmgpu::vgpu {

class HostBlas final : public BlasLibrary {
public:
    // The cuBLAS API version whose calls this reference follows.
    static constexpr int kFollowsVersion = 130000;

    explicit HostBlas(const DeviceAddressSpace& memory) : mem_(memory) {}

    std::string describe() const override { return "the host backend's CPU reference BLAS"; }
    Status create(BackendBlas* out) override;
    Status destroy(BackendBlas h) override;
    Status set_stream(BackendBlas h, BackendStream s) override;
    Status set_math_mode(BackendBlas h, uint32_t mode) override;
    Status set_workspace(BackendBlas h, uint64_t dptr, uint64_t bytes) override;
    Status version(int* out) override {
        *out = kFollowsVersion;
        return VGPU_SUCCESS;
    }
    Status level1(BackendBlas h, const vgpu_blas_level1& c, BlasResult* host_result) override;
    Status level2(BackendBlas h, const vgpu_blas_level2& c) override;
    Status gemm(BackendBlas h, const vgpu_blas_gemm& c, const BlasPointers& pointers) override;
    Status level3(BackendBlas h, const vgpu_blas_level3& c) override;

    size_t live_handles() const { return handles_.size(); }
    void forget_all() override { handles_.clear(); }

private:
    Status unsupported(const char* what);
    const DeviceAddressSpace& mem_;
    std::map<BackendBlas, uint32_t> handles_; // id -> math mode
    BackendBlas next_ = 0x100;
    bool unsupported_logged_ = false;
};

} // namespace kvmgpu::vgpu
