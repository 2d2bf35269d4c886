// cuRAND's Sobol tables for guests (curandGetDirectionVectors32/64,
// curandGetScrambleConstants32/64): the host library's, copied once into
// this library's memory (VGPU_OP_RAND_GET_TABLE writes a device buffer;
// the program reads the table from host memory, as cuRAND returns it).
// Each table is fetched at its first request and kept for the process.
#include <cuda_runtime.h>
#include <curand.h>

#include <cstdlib>

#include "guest-stub/platform/api_lock.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/curand/curand_internal.h"

using namespace guest;

namespace {

// Table ids as the VMM numbers them (the direction-vector sets: theirs).
constexpr uint64_t kScramble32 = VGPU_RAND_TABLE_SCRAMBLE_32, kScramble64 = VGPU_RAND_TABLE_SCRAMBLE_64;

uint64_t table_bytes(uint64_t id)
{
    const uint64_t dims = VGPU_RAND_MAX_DIMENSIONS;
    if (id == 101 || id == 102)
        return dims * 32 * 4;
    if (id == 103 || id == 104)
        return dims * 64 * 8;
    return id == kScramble32 ? dims * 4 : dims * 8;
}

curandStatus_t fetch(uint64_t id, void** out)
{
    static void* cached[105] = {};
    if (cached[id]) {
        *out = cached[id];
        return CURAND_STATUS_SUCCESS;
    }
    if (cudart::enter() != cudaSuccess)
        return CURAND_STATUS_INITIALIZATION_FAILED;
    const uint64_t bytes = table_bytes(id);
    void* host = std::malloc(bytes);
    void* dev = nullptr;
    if (!host || cudaMalloc(&dev, bytes) != cudaSuccess) {
        std::free(host);
        return CURAND_STATUS_ALLOCATION_FAILED;
    }
    cuda::Call c = cuda::command<VGPU_OP_RAND_GET_TABLE>({id, reinterpret_cast<uintptr_t>(dev), bytes});
    curandStatus_t s = guest::curand::status_of(cuda::call_sync(c));
    if (s == CURAND_STATUS_SUCCESS && cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        s = CURAND_STATUS_INTERNAL_ERROR;
    cudaFree(dev);
    if (s != CURAND_STATUS_SUCCESS) {
        std::free(host);
        return s;
    }
    cached[id] = host;
    *out = host;
    return CURAND_STATUS_SUCCESS;
}

} // namespace

curandStatus_t curandGetDirectionVectors32(curandDirectionVectors32_t* vectors[], curandDirectionVectorSet_t set)
{
    GUEST_API_LOCK();
    if (!vectors)
        return CURAND_STATUS_OUT_OF_RANGE;
    if (set != CURAND_DIRECTION_VECTORS_32_JOEKUO6 && set != CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6)
        return CURAND_STATUS_OUT_OF_RANGE;
    return fetch(set, reinterpret_cast<void**>(vectors));
}

curandStatus_t curandGetDirectionVectors64(curandDirectionVectors64_t* vectors[], curandDirectionVectorSet_t set)
{
    GUEST_API_LOCK();
    if (!vectors)
        return CURAND_STATUS_OUT_OF_RANGE;
    if (set != CURAND_DIRECTION_VECTORS_64_JOEKUO6 && set != CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6)
        return CURAND_STATUS_OUT_OF_RANGE;
    return fetch(set, reinterpret_cast<void**>(vectors));
}

curandStatus_t curandGetScrambleConstants32(unsigned int** constants)
{
    GUEST_API_LOCK();
    if (!constants)
        return CURAND_STATUS_OUT_OF_RANGE;
    return fetch(kScramble32, reinterpret_cast<void**>(constants));
}

curandStatus_t curandGetScrambleConstants64(unsigned long long** constants)
{
    GUEST_API_LOCK();
    if (!constants)
        return CURAND_STATUS_OUT_OF_RANGE;
    return fetch(kScramble64, reinterpret_cast<void**>(constants));
}
