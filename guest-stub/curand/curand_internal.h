// What the guest cuRAND's files share: a generator's guest side and the
// status a vGPU result maps to.
#pragma once

#include <curand.h>

#include "guest-stub/cuda/vgpu_client.h"

// The guest's side of a curandGenerator_t (opaque in curand.h).
struct curandGenerator_st {
    uint64_t vgpu = 0; // the VMM's handle
    curandRngType_t type = CURAND_RNG_PSEUDO_DEFAULT;
    unsigned dimensions = 1;      // a quasi-random generator's
    bool host = false;            // curandCreateGeneratorHost: numbers go to host memory
    cudaStream_t stream = nullptr; // a host generator copies on it
};

namespace guest::curand {
curandStatus_t status_of(CUresult r);
}
