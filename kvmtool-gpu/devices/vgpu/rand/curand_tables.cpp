#include "kvmtool-gpu/devices/vgpu/rand/curand_tables.h"

#include <dlfcn.h>

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_library.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kDims = VGPU_RAND_MAX_DIMENSIONS;

// curand.h's getters, typed here without it (this file builds without the
// CUDA toolkit): curandStatus_t f(T** out[, curandDirectionVectorSet_t]).
using GetVectors = int (*)(void** out, int set);
using GetConstants = int (*)(void** out);

struct Getters {
    GetVectors vectors32 = nullptr, vectors64 = nullptr;
    GetConstants constants32 = nullptr, constants64 = nullptr;
};

const Getters* getters() {
    static const Getters* once = [] () -> const Getters* {
        const HostLibrary lib = open_host_library("cuRAND tables", "libcurand.so.10", "", "(no option)",
                                                  "Sobol generators and direction vectors are refused");
        if (!lib.handle) return nullptr;
        auto* g = new Getters; // one per process, never unloaded
        g->vectors32 = reinterpret_cast<GetVectors>(dlsym(lib.handle, "curandGetDirectionVectors32"));
        g->vectors64 = reinterpret_cast<GetVectors>(dlsym(lib.handle, "curandGetDirectionVectors64"));
        g->constants32 = reinterpret_cast<GetConstants>(dlsym(lib.handle, "curandGetScrambleConstants32"));
        g->constants64 = reinterpret_cast<GetConstants>(dlsym(lib.handle, "curandGetScrambleConstants64"));
        if (!g->vectors32 || !g->vectors64 || !g->constants32 || !g->constants64) {
            delete g;
            return nullptr;
        }
        return g;
    }();
    return once;
}
} // namespace

uint64_t curand_table_bytes(uint64_t id) {
    switch (id) {
    case 101:
    case 102: return kDims * 32 * 4;
    case 103:
    case 104: return kDims * 64 * 8;
    case VGPU_RAND_TABLE_SCRAMBLE_32: return kDims * 4;
    case VGPU_RAND_TABLE_SCRAMBLE_64: return kDims * 8;
    default: return 0;
    }
}

std::span<const uint8_t> curand_table(uint64_t id) {
    const uint64_t bytes = curand_table_bytes(id);
    if (bytes == 0) return {};
    const Getters* g = getters();
    if (!g) return {};
    void* p = nullptr;
    const int status = id >= 101 && id <= 102   ? g->vectors32(&p, int(id))
                       : id >= 103 && id <= 104 ? g->vectors64(&p, int(id))
                       : id == VGPU_RAND_TABLE_SCRAMBLE_32 ? g->constants32(&p)
                                                           : g->constants64(&p);
    if (status != 0 || !p) return {};
    return {static_cast<const uint8_t*>(p), bytes};
}

} // namespace kvmgpu::vgpu
