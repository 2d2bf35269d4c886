// What the device model needs from cuRAND's host API on one device: a
// backend offers it through GpuBackend::rand(): the CUDA backend the
// host's libcurand (cuda_rand.h), the host backend a CPU generator
// (host_rand.h). Every argument has been checked by the device model: the
// generator type is one cuRAND has, the kind known, [dptr, dptr +
// count * element) inside one of the VM's allocations, a pseudo-random
// generator's normal count even. A quasi-random generation's count is a
// multiple of its dimensions: the backend checks that (cuRAND does too).
#pragma once

#include <cstdint>
#include <string>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

using BackendRand = uintptr_t; // a curandGenerator_t, or the reference's id

// What each generator costs the VM's device-memory quota: its state on the
// device (an estimate: cuRAND does not say; XORWOW and Philox keep a few MiB).
constexpr uint64_t kRandGeneratorCharge = 4ull << 20;

// Bytes of one element of a VGPU_RAND_* kind; 0 for an unknown kind.
inline uint64_t rand_element_bytes(uint64_t kind) {
    switch (kind) {
    case VGPU_RAND_BITS:
    case VGPU_RAND_UNIFORM:
    case VGPU_RAND_NORMAL:
    case VGPU_RAND_LOG_NORMAL: return 4;
    case VGPU_RAND_UNIFORM_DOUBLE:
    case VGPU_RAND_NORMAL_DOUBLE:
    case VGPU_RAND_LOG_NORMAL_DOUBLE:
    case VGPU_RAND_LONG_LONG: return 8;
    default: return 0;
    }
}
// The kinds drawn in pairs by a pseudo-random generator (Box-Muller): cuRAND wants an even count.
inline bool rand_is_normal(uint64_t kind) {
    return kind == VGPU_RAND_NORMAL || kind == VGPU_RAND_NORMAL_DOUBLE || kind == VGPU_RAND_LOG_NORMAL ||
           kind == VGPU_RAND_LOG_NORMAL_DOUBLE;
}
// Pseudo-random: CURAND_RNG_PSEUDO_DEFAULT, XORWOW, MRG32K3A, MTGP32, MT19937, PHILOX4_32_10.
inline bool rand_is_pseudo(uint64_t t) { return t == 100 || t == 101 || t == 121 || t == 141 || t == 142 || t == 161; }
// Quasi-random: CURAND_RNG_QUASI_DEFAULT (Sobol32), SOBOL32, SCRAMBLED_SOBOL32, SOBOL64, SCRAMBLED_SOBOL64.
inline bool rand_is_quasi(uint64_t t) { return t >= 200 && t <= 204; }
inline bool rand_type_ok(uint64_t t) { return rand_is_pseudo(t) || rand_is_quasi(t); }
// curandOrdering_t: PSEUDO_BEST .. PSEUDO_DYNAMIC (100..104) for pseudo-random
// generators, QUASI_DEFAULT (201) for quasi-random ones (cuRAND's pairing).
inline bool rand_ordering_ok(uint64_t type, uint64_t ordering) {
    return rand_is_quasi(type) ? ordering == 201 : ordering >= 100 && ordering <= 104;
}

class RandLibrary {
public:
    virtual ~RandLibrary() = default;
    // The backend's context went and took every generator with it.
    virtual void forget_all() = 0;
    virtual Status create(uint32_t rng_type, BackendRand* out) = 0;
    virtual Status destroy(BackendRand g) = 0;
    virtual Status set_stream(BackendRand g, BackendStream s) = 0;
    virtual Status set_seed(BackendRand g, uint64_t seed) = 0;
    virtual Status generate(BackendRand g, uint32_t kind, uint64_t dptr, uint64_t count, double mean, double stddev) = 0;
    // Checked by the device model: the ordering fits the generator's type,
    // dimensions 1..VGPU_RAND_MAX_DIMENSIONS on a quasi-random generator.
    virtual Status set_offset(BackendRand g, uint64_t offset) = 0;
    virtual Status set_ordering(BackendRand g, uint32_t ordering) = 0;
    virtual Status set_dimensions(BackendRand g, uint32_t dimensions) = 0;
};

} // namespace kvmgpu::vgpu
