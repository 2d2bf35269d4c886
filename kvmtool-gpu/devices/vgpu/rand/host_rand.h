// The host backend's cuRAND: pseudo-random generators are a CPU generator
// with cuRAND's host API's ranges (uniform in (0, 1], normal by
// Box-Muller, 32-bit words), seeded and offset as set, so CI checks the
// forwarding with real numbers; not cuRAND's sequences (every pseudo type
// is the same SplitMix64 stream here). Quasi-random generators are
// cuRAND's Sobol sequences (sobol.h), where the host has cuRAND's tables;
// else creating one is refused (NOT_SUPPORTED, one log line).
#pragma once

#include <map>

#include "kvmtool-gpu/devices/vgpu/backends/host_kernels.h"
#include "kvmtool-gpu/devices/vgpu/backends/rand_library.h"

namespace kvmgpu::vgpu {

class HostRand final : public RandLibrary {
public:
    explicit HostRand(const DeviceAddressSpace& memory) : mem_(memory) {}

    Status create(uint32_t rng_type, BackendRand* out) override;
    Status destroy(BackendRand g) override;
    Status set_stream(BackendRand g, BackendStream s) override;
    Status set_seed(BackendRand g, uint64_t seed) override;
    Status generate(BackendRand g, uint32_t kind, uint64_t dptr, uint64_t count, double mean, double stddev) override;
    Status set_offset(BackendRand g, uint64_t offset) override;
    Status set_ordering(BackendRand g, uint32_t ordering) override;
    Status set_dimensions(BackendRand g, uint32_t dimensions) override;

    size_t live_generators() const { return state_.size(); }
    void forget_all() override { state_.clear(); }

private:
    struct Generator {
        uint32_t type = 0;
        uint64_t seed = 0, offset = 0;
        uint32_t dimensions = 1;
        uint64_t next = 0; // pseudo: the SplitMix64 state; quasi: the next point's index
    };
    Status generate_quasi(Generator& g, uint32_t kind, uint8_t* out, uint64_t count, double mean, double stddev);
    const DeviceAddressSpace& mem_;
    std::map<BackendRand, Generator> state_;
    BackendRand next_ = 0x100;
};

} // namespace kvmgpu::vgpu
