#include "kvmtool-gpu/devices/vgpu/rand/host_rand.h"

#include <cmath>
#include <cstring>

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kDefaultSeed = 0; // cuRAND's default seed

uint64_t splitmix64(uint64_t* s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
// In (0, 1], as cuRAND's uniform distributions are.
double uniform01(uint64_t* s) { return (double((splitmix64(s) >> 11)) + 1.0) / 9007199254740992.0; }

template <class T>
void put(uint8_t* at, uint64_t i, T v) {
    std::memcpy(at + i * sizeof v, &v, sizeof v);
}
} // namespace

Status HostRand::create(uint32_t, BackendRand* out) {
    *out = next_++;
    state_[*out] = kDefaultSeed;
    return VGPU_SUCCESS;
}

Status HostRand::destroy(BackendRand g) { return state_.erase(g) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE; }

Status HostRand::set_stream(BackendRand g, BackendStream) {
    return state_.count(g) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE;
}

Status HostRand::set_seed(BackendRand g, uint64_t seed) {
    const auto it = state_.find(g);
    if (it == state_.end()) return VGPU_ERROR_INVALID_HANDLE;
    it->second = seed;
    return VGPU_SUCCESS;
}

Status HostRand::generate(BackendRand g, uint32_t kind, uint64_t dptr, uint64_t count, double mean, double stddev) {
    const auto it = state_.find(g);
    if (it == state_.end()) return VGPU_ERROR_INVALID_HANDLE;
    uint64_t* s = &it->second;
    uint8_t* out = count ? mem_.translate(dptr, count * rand_element_bytes(kind)) : nullptr;
    if (count && !out) return VGPU_ERROR_INVALID_VALUE; // the device model checked it: a bug if so
    for (uint64_t i = 0; i < count; ++i) {
        switch (kind) {
        case VGPU_RAND_BITS: put(out, i, static_cast<uint32_t>(splitmix64(s) >> 32)); break;
        case VGPU_RAND_UNIFORM: put(out, i, static_cast<float>(uniform01(s))); break;
        case VGPU_RAND_UNIFORM_DOUBLE: put(out, i, uniform01(s)); break;
        default: { // a normal pair (count is even): Box-Muller
            const double r = std::sqrt(-2.0 * std::log(uniform01(s))), t = 2.0 * M_PI * uniform01(s);
            const double a = mean + stddev * r * std::cos(t), b = mean + stddev * r * std::sin(t);
            if (kind == VGPU_RAND_NORMAL) put(out, i, float(a)), put(out, i + 1, float(b));
            else put(out, i, a), put(out, i + 1, b);
            ++i;
        }
        }
    }
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
