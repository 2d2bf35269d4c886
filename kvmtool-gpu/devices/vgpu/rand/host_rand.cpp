#include "kvmtool-gpu/devices/vgpu/rand/host_rand.h"

#include <cmath>
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/rand/sobol.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull; // SplitMix64's increment

uint64_t splitmix64(uint64_t* s) {
    uint64_t z = (*s += kGamma);
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
bool is_log(uint32_t kind) { return kind == VGPU_RAND_LOG_NORMAL || kind == VGPU_RAND_LOG_NORMAL_DOUBLE; }
bool is_double(uint32_t kind) { return rand_element_bytes(kind) == 8; }
} // namespace

Status HostRand::create(uint32_t type, BackendRand* out) {
    if (rand_is_quasi(type) && !Sobol(type).valid()) {
        static bool told = false; // curand_tables.cpp said why, once; this says what it costs, once
        if (!told) log_error("host backend: no cuRAND tables on this host: quasi-random generators are refused");
        told = true;
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    *out = next_++;
    state_[*out] = Generator{.type = type}; // cuRAND's default seed and offset are 0
    return VGPU_SUCCESS;
}

Status HostRand::destroy(BackendRand g) { return state_.erase(g) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE; }

Status HostRand::set_stream(BackendRand g, BackendStream) {
    return state_.count(g) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE;
}

// Seed and offset restart the sequence: SplitMix64's state after `offset` draws.
Status HostRand::set_seed(BackendRand g, uint64_t seed) {
    const auto it = state_.find(g);
    if (it == state_.end()) return VGPU_ERROR_INVALID_HANDLE;
    if (rand_is_quasi(it->second.type)) return VGPU_ERROR_INVALID_VALUE; // CURAND_STATUS_TYPE_ERROR
    it->second.seed = seed;
    it->second.next = seed + it->second.offset * kGamma;
    return VGPU_SUCCESS;
}

Status HostRand::set_offset(BackendRand g, uint64_t offset) {
    const auto it = state_.find(g);
    if (it == state_.end()) return VGPU_ERROR_INVALID_HANDLE;
    Generator& s = it->second;
    s.offset = offset;
    s.next = rand_is_quasi(s.type) ? offset : s.seed + offset * kGamma;
    return VGPU_SUCCESS;
}

// One sequence per type here: every ordering of the right family gives it.
Status HostRand::set_ordering(BackendRand g, uint32_t ordering) {
    const auto it = state_.find(g);
    if (it == state_.end()) return VGPU_ERROR_INVALID_HANDLE;
    return rand_ordering_ok(it->second.type, ordering) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_VALUE;
}

Status HostRand::set_dimensions(BackendRand g, uint32_t dimensions) {
    const auto it = state_.find(g);
    if (it == state_.end()) return VGPU_ERROR_INVALID_HANDLE;
    if (!rand_is_quasi(it->second.type) || dimensions < 1 || dimensions > VGPU_RAND_MAX_DIMENSIONS)
        return VGPU_ERROR_INVALID_VALUE;
    it->second.dimensions = dimensions;
    it->second.next = it->second.offset; // cuRAND restarts the sequence too
    return VGPU_SUCCESS;
}

Status HostRand::generate(BackendRand g, uint32_t kind, uint64_t dptr, uint64_t count, double mean, double stddev) {
    const auto it = state_.find(g);
    if (it == state_.end()) return VGPU_ERROR_INVALID_HANDLE;
    uint8_t* out = count ? mem_.translate(dptr, count * rand_element_bytes(kind)) : nullptr;
    if (count && !out) return VGPU_ERROR_INVALID_VALUE; // the device model checked it: a bug if so
    if (rand_is_quasi(it->second.type)) return generate_quasi(it->second, kind, out, count, mean, stddev);
    if (kind == VGPU_RAND_LONG_LONG) return VGPU_ERROR_INVALID_VALUE; // cuRAND: 64-bit Sobol only
    uint64_t* s = &it->second.next;
    for (uint64_t i = 0; i < count; ++i) {
        switch (kind) {
        case VGPU_RAND_BITS: put(out, i, static_cast<uint32_t>(splitmix64(s) >> 32)); break;
        case VGPU_RAND_UNIFORM: put(out, i, static_cast<float>(uniform01(s))); break;
        case VGPU_RAND_UNIFORM_DOUBLE: put(out, i, uniform01(s)); break;
        default: { // a normal or log-normal pair (count is even): Box-Muller
            const double r = std::sqrt(-2.0 * std::log(uniform01(s))), t = 2.0 * M_PI * uniform01(s);
            double a = mean + stddev * r * std::cos(t), b = mean + stddev * r * std::sin(t);
            if (is_log(kind)) a = std::exp(a), b = std::exp(b);
            if (!is_double(kind)) put(out, i, float(a)), put(out, i + 1, float(b));
            else put(out, i, a), put(out, i + 1, b);
            ++i;
        }
        }
    }
    return VGPU_SUCCESS;
}

// cuRAND's quasi-random layout: count / dimensions points of dimension 0,
// then as many of dimension 1, and so on; each dimension goes on from the
// same index. A float normal is computed in float, as cuRAND's is.
Status HostRand::generate_quasi(Generator& g, uint32_t kind, uint8_t* out, uint64_t count, double mean, double stddev) {
    const Sobol sobol(g.type);
    if (count % g.dimensions) return VGPU_ERROR_INVALID_VALUE; // CURAND_STATUS_LENGTH_NOT_MULTIPLE
    if ((kind == VGPU_RAND_BITS && sobol.wide()) || (kind == VGPU_RAND_LONG_LONG && !sobol.wide()))
        return VGPU_ERROR_INVALID_VALUE; // CURAND_STATUS_TYPE_ERROR
    const uint64_t per = count / g.dimensions;
    for (uint32_t d = 0; d < g.dimensions && per; ++d)
        for (uint64_t i = 0; i < per; ++i) {
            const uint64_t x = sobol.value(d, g.next + i), at = d * per + i;
            switch (kind) {
            case VGPU_RAND_BITS: put(out, at, static_cast<uint32_t>(x)); break;
            case VGPU_RAND_LONG_LONG: put(out, at, x); break;
            case VGPU_RAND_UNIFORM: put(out, at, sobol.uniform(x)); break;
            case VGPU_RAND_UNIFORM_DOUBLE: put(out, at, sobol.uniform_double(x)); break;
            case VGPU_RAND_NORMAL:
            case VGPU_RAND_LOG_NORMAL: {
                float v = float(mean) + float(stddev) * float(normal_quantile(sobol.normal_uniform(x)));
                put(out, at, kind == VGPU_RAND_LOG_NORMAL ? std::exp(v) : v);
                break;
            }
            default: {
                const double v = mean + stddev * normal_quantile(sobol.normal_uniform(x));
                put(out, at, kind == VGPU_RAND_LOG_NORMAL_DOUBLE ? std::exp(v) : v);
            }
            }
        }
    g.next += per;
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
