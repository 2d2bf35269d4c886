// cuRAND's host API for guests: each entry point is cuRAND's function of
// the same name, declared by NVIDIA's curand.h (so its signature is
// checked against NVIDIA's), sent as one vGPU command (VGPU_OP_RAND_*).
// Generations are queued on the generator's stream (their errors come at
// the next synchronization, as a kernel's do); cuRAND's own refusals (a
// null generator, an odd normal count, a quasi-random type) come at the call.
#include <curand.h>

#include <bit>
#include <new>

#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/cudart/cudart_internal.h"

// The guest's side of a curandGenerator_t (opaque in curand.h).
struct curandGenerator_st {
    uint64_t vgpu = 0; // the VMM's handle
};

using namespace guest;

namespace {

curandStatus_t status_of(CUresult r)
{
    switch (static_cast<uint32_t>(r)) {
    case VGPU_SUCCESS: return CURAND_STATUS_SUCCESS;
    case VGPU_ERROR_OUT_OF_MEMORY: return CURAND_STATUS_ALLOCATION_FAILED;
    case VGPU_ERROR_INVALID_VALUE: return CURAND_STATUS_OUT_OF_RANGE;
    case VGPU_ERROR_NOT_SUPPORTED: return CURAND_STATUS_ARCH_MISMATCH;
    case VGPU_ERROR_NOT_INITIALIZED: return CURAND_STATUS_INITIALIZATION_FAILED;
    case VGPU_ERROR_INVALID_HANDLE:
    case VGPU_ERROR_INVALID_CONTEXT: return CURAND_STATUS_NOT_INITIALIZED;
    default: return r >= 700 && r < 800 ? CURAND_STATUS_LAUNCH_FAILURE : CURAND_STATUS_INTERNAL_ERROR;
    }
}

curandStatus_t send(uint16_t op, curandGenerator_t g, uint64_t a1 = 0, bool queued = false)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    cuda::Call c;
    c.op = op;
    c.arg[0] = g->vgpu;
    c.arg[1] = a1;
    return status_of(queued ? cuda::call_async(c) : cuda::call_sync(c));
}

curandStatus_t generate(curandGenerator_t g, uint32_t kind, const void* out, size_t n, double mean = 0,
                        double stddev = 0)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    if ((kind == VGPU_RAND_NORMAL || kind == VGPU_RAND_NORMAL_DOUBLE) && n % 2)
        return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
    cuda::Call c;
    c.op = VGPU_OP_RAND_GENERATE;
    c.arg[0] = g->vgpu;
    c.arg[1] = reinterpret_cast<uintptr_t>(out);
    c.arg[2] = n;
    c.arg[3] = kind;
    c.arg[4] = std::bit_cast<uint64_t>(mean);
    c.arg[5] = std::bit_cast<uint64_t>(stddev);
    return status_of(cuda::call_async(c));
}

} // namespace

curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t rng_type)
{
    if (!generator)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (rng_type == CURAND_RNG_TEST || rng_type >= CURAND_RNG_QUASI_DEFAULT)
        return CURAND_STATUS_TYPE_ERROR; // quasi-random generators are not forwarded
    if (cudart::enter() != cudaSuccess)
        return CURAND_STATUS_INITIALIZATION_FAILED;
    cuda::Call c;
    c.op = VGPU_OP_RAND_CREATE;
    c.arg[0] = static_cast<uint64_t>(rng_type);
    uint64_t vgpu = 0;
    const CUresult r = cuda::call_result(c, &vgpu);
    if (r != CUDA_SUCCESS)
        return r == static_cast<CUresult>(VGPU_ERROR_INVALID_VALUE) ? CURAND_STATUS_TYPE_ERROR : status_of(r);
    curandGenerator_st* g = new (std::nothrow) curandGenerator_st;
    if (!g) {
        curandGenerator_st lost;
        lost.vgpu = vgpu;
        send(VGPU_OP_RAND_DESTROY, &lost);
        return CURAND_STATUS_ALLOCATION_FAILED;
    }
    g->vgpu = vgpu;
    *generator = g;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandDestroyGenerator(curandGenerator_t generator)
{
    const curandStatus_t s = send(VGPU_OP_RAND_DESTROY, generator);
    delete generator;
    return s;
}

curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream)
{
    return send(VGPU_OP_RAND_SET_STREAM, generator, cuda::stream_arg(stream));
}

curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed)
{
    return send(VGPU_OP_RAND_SET_SEED, generator, seed);
}

// The library this implements: the headers it was built with.
curandStatus_t curandGetVersion(int* version)
{
    if (!version)
        return CURAND_STATUS_OUT_OF_RANGE;
    *version = CURAND_VERSION;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerate(curandGenerator_t g, unsigned int* out, size_t n)
{
    return generate(g, VGPU_RAND_BITS, out, n);
}
curandStatus_t curandGenerateUniform(curandGenerator_t g, float* out, size_t n)
{
    return generate(g, VGPU_RAND_UNIFORM, out, n);
}
curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double* out, size_t n)
{
    return generate(g, VGPU_RAND_UNIFORM_DOUBLE, out, n);
}
curandStatus_t curandGenerateNormal(curandGenerator_t g, float* out, size_t n, float mean, float stddev)
{
    return generate(g, VGPU_RAND_NORMAL, out, n, mean, stddev);
}
curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double* out, size_t n, double mean, double stddev)
{
    return generate(g, VGPU_RAND_NORMAL_DOUBLE, out, n, mean, stddev);
}
