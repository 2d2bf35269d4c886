// The host backend's cuRAND: a CPU generator with cuRAND's host API's
// ranges (uniform in (0, 1], normal by Box-Muller, 32-bit words), seeded
// as set, so CI checks the forwarding with real numbers. Not cuRAND's
// sequences: every type is the same SplitMix64 stream here.
#pragma once

#include <map>

#include "kvmtool-gpu/devices/vgpu/backends/host_kernels.h"
#include "kvmtool-gpu/devices/vgpu/rand/rand_library.h"

namespace kvmgpu::vgpu {

class HostRand final : public RandLibrary {
public:
    explicit HostRand(const DeviceAddressSpace& memory) : mem_(memory) {}

    Status create(uint32_t rng_type, BackendRand* out) override;
    Status destroy(BackendRand g) override;
    Status set_stream(BackendRand g, BackendStream s) override;
    Status set_seed(BackendRand g, uint64_t seed) override;
    Status generate(BackendRand g, uint32_t kind, uint64_t dptr, uint64_t count, double mean, double stddev) override;

    size_t live_generators() const { return state_.size(); }
    void forget_all() { state_.clear(); } // the backend dropped its context

private:
    const DeviceAddressSpace& mem_;
    std::map<BackendRand, uint64_t> state_; // id -> SplitMix64 state
    BackendRand next_ = 0x100;
};

} // namespace kvmgpu::vgpu
