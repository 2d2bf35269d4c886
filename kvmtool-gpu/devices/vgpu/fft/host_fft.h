// The host backend's cuFFT: a naive DFT in double precision with cuFFT's
// conventions (row-major, the last dimension fastest; forward e^-2πi,
// inverse e^+2πi, neither normalized; R2C keeps n/2 + 1 of the last
// dimension, C2R reads them), so CI checks the forwarding with real
// numbers. O(N · Σn) per exec: transforms past 2^30 such steps are
// NOT_SUPPORTED here. An advanced layout is gathered into a dense copy and
// scattered back. Needs no work area (reports 0 bytes).
#pragma once

#include <set>

#include "kvmtool-gpu/devices/vgpu/backends/host_kernels.h"
#include "kvmtool-gpu/devices/vgpu/backends/fft_library.h"

namespace kvmgpu::vgpu {

class HostFft final : public FftLibrary {
public:
    explicit HostFft(const DeviceAddressSpace& memory) : mem_(memory) {}

    Status plan(const FftShape& shape, bool auto_allocation, BackendFft* out, uint64_t* work) override;
    Status set_work_area(BackendFft p, uint64_t) override {
        return live_.count(p) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE;
    }
    Status destroy(BackendFft p) override { return live_.erase(p) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE; }
    Status set_stream(BackendFft p, BackendStream) override {
        return live_.count(p) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE;
    }
    Status exec(BackendFft p, const FftShape& shape, uint64_t in, uint64_t out, int direction) override;

    size_t live_plans() const { return live_.size(); }
    void forget_all() override { live_.clear(); }

private:
    const DeviceAddressSpace& mem_;
    std::set<BackendFft> live_;
    BackendFft next_ = 0x100;
};

} // namespace kvmgpu::vgpu
