// cuRAND's host API for guests: each entry point is cuRAND's function of
// the same name, declared by NVIDIA's curand.h (so its signature is
// checked against NVIDIA's), sent as one vGPU command (VGPU_OP_RAND_*).
// Generations are queued on the generator's stream (their errors come at
// the next synchronization, as a kernel's do); cuRAND's own refusals (a
// null generator, an odd pseudo-random normal count, a count that is not a
// multiple of a quasi-random generator's dimensions, a call of the other
// family) come at the call. A host generator (curandCreateGeneratorHost)
// is a device generator whose numbers are copied to the program's memory.
// The Sobol tables live in this file's memory (curand_tables.cpp).
#include <curand.h>

#include <bit>
#include <cstdint>
#include <new>

#include "guest-stub/platform/api_lock.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/curand/curand_internal.h"

using namespace guest;

namespace guest::curand {

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

} // namespace guest::curand

using guest::curand::status_of;

namespace {

bool is_quasi(curandRngType_t t) { return t >= CURAND_RNG_QUASI_DEFAULT && t <= CURAND_RNG_QUASI_SCRAMBLED_SOBOL64; }
bool is_wide(curandRngType_t t) { return t == CURAND_RNG_QUASI_SOBOL64 || t == CURAND_RNG_QUASI_SCRAMBLED_SOBOL64; }

template <uint16_t Op, class... More>
curandStatus_t send(curandGenerator_t g, More... more)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    return status_of(cuda::call<Op>({g->vgpu, static_cast<uint64_t>(more)...}));
}

curandStatus_t queue(curandGenerator_t g, uint32_t kind, uintptr_t out, size_t n, double mean, double stddev)
{
    cuda::Call c = cuda::command<VGPU_OP_RAND_GENERATE>(vgpu_args_rand_generate{.generator = g->vgpu,
                                       .dptr = out,
                                       .count = n,
                                       .kind = kind,
                                       .mean_bits = std::bit_cast<uint64_t>(mean),
                                       .stddev_bits = std::bit_cast<uint64_t>(stddev)});
    return status_of(cuda::call_async(c));
}

// A host generator's numbers: generated into device memory on its stream,
// then copied to `out` (cuRAND's host generators return with them written).
curandStatus_t generate_to_host(curandGenerator_t g, uint32_t kind, void* out, size_t bytes, size_t n, double mean,
                                double stddev)
{
    void* scratch = nullptr;
    if (cudaMalloc(&scratch, bytes) != cudaSuccess)
        return CURAND_STATUS_ALLOCATION_FAILED;
    curandStatus_t s = queue(g, kind, reinterpret_cast<uintptr_t>(scratch), n, mean, stddev);
    if (s == CURAND_STATUS_SUCCESS &&
        (cudaMemcpyAsync(out, scratch, bytes, cudaMemcpyDeviceToHost, g->stream) != cudaSuccess ||
         cudaStreamSynchronize(g->stream) != cudaSuccess))
        s = CURAND_STATUS_LAUNCH_FAILURE;
    cudaFree(scratch);
    return s;
}

curandStatus_t generate(curandGenerator_t g, uint32_t kind, void* out, size_t n, double mean = 0, double stddev = 0)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    const bool normal = kind != VGPU_RAND_BITS && kind != VGPU_RAND_LONG_LONG && kind != VGPU_RAND_UNIFORM &&
                        kind != VGPU_RAND_UNIFORM_DOUBLE;
    if (is_quasi(g->type) ? n % g->dimensions != 0 : normal && n % 2)
        return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
    if ((kind == VGPU_RAND_LONG_LONG) != is_wide(g->type) && (kind == VGPU_RAND_LONG_LONG || kind == VGPU_RAND_BITS))
        return CURAND_STATUS_TYPE_ERROR; // 64-bit words from 64-bit Sobol only; 32-bit ones never from it
    const size_t element = kind == VGPU_RAND_BITS || kind == VGPU_RAND_UNIFORM || kind == VGPU_RAND_NORMAL ||
                                   kind == VGPU_RAND_LOG_NORMAL
                               ? 4
                               : 8;
    if (n == 0)
        return CURAND_STATUS_SUCCESS;
    if (n > SIZE_MAX / element)
        return CURAND_STATUS_OUT_OF_RANGE;
    if (g->host)
        return generate_to_host(g, kind, out, n * element, n, mean, stddev);
    return queue(g, kind, reinterpret_cast<uintptr_t>(out), n, mean, stddev);
}

curandStatus_t create(curandGenerator_t* generator, curandRngType_t rng_type, bool host)
{
    if (!generator)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (rng_type == CURAND_RNG_TEST || (rng_type > CURAND_RNG_PSEUDO_PHILOX4_32_10 && !is_quasi(rng_type)))
        return CURAND_STATUS_TYPE_ERROR;
    if (cudart::enter() != cudaSuccess)
        return CURAND_STATUS_INITIALIZATION_FAILED;
    cuda::Call c = cuda::command<VGPU_OP_RAND_CREATE>({static_cast<uint64_t>(rng_type)});
    uint64_t vgpu = 0;
    const CUresult r = cuda::call_result(c, &vgpu);
    if (r != CUDA_SUCCESS)
        return r == static_cast<CUresult>(VGPU_ERROR_INVALID_VALUE) ? CURAND_STATUS_TYPE_ERROR : status_of(r);
    curandGenerator_st* g = new (std::nothrow) curandGenerator_st;
    if (!g) {
        curandGenerator_st lost;
        lost.vgpu = vgpu;
        send<VGPU_OP_RAND_DESTROY>(&lost);
        return CURAND_STATUS_ALLOCATION_FAILED;
    }
    g->vgpu = vgpu;
    g->type = rng_type;
    g->host = host;
    *generator = g;
    return CURAND_STATUS_SUCCESS;
}

} // namespace

curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t rng_type)
{
    GUEST_API_LOCK();
    return create(generator, rng_type, false);
}

curandStatus_t curandCreateGeneratorHost(curandGenerator_t* generator, curandRngType_t rng_type)
{
    GUEST_API_LOCK();
    return create(generator, rng_type, true);
}

curandStatus_t curandDestroyGenerator(curandGenerator_t generator)
{
    GUEST_API_LOCK();
    const curandStatus_t s = send<VGPU_OP_RAND_DESTROY>(generator);
    delete generator;
    return s;
}

curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream)
{
    GUEST_API_LOCK();
    const curandStatus_t s = send<VGPU_OP_RAND_SET_STREAM>(generator, cuda::stream_arg(stream));
    if (s == CURAND_STATUS_SUCCESS)
        generator->stream = stream;
    return s;
}

curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed)
{
    GUEST_API_LOCK();
    if (generator && is_quasi(generator->type))
        return CURAND_STATUS_TYPE_ERROR;
    return send<VGPU_OP_RAND_SET_SEED>(generator, seed);
}

curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset)
{
    GUEST_API_LOCK();
    return send<VGPU_OP_RAND_SET_OFFSET>(generator, offset);
}

curandStatus_t curandSetGeneratorOrdering(curandGenerator_t generator, curandOrdering_t order)
{
    GUEST_API_LOCK();
    if (generator && (is_quasi(generator->type) ? order != CURAND_ORDERING_QUASI_DEFAULT
                                                : order < CURAND_ORDERING_PSEUDO_BEST || order > CURAND_ORDERING_PSEUDO_DYNAMIC))
        return CURAND_STATUS_OUT_OF_RANGE;
    return send<VGPU_OP_RAND_SET_ORDERING>(generator, static_cast<uint64_t>(order));
}

curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t generator, unsigned int num_dimensions)
{
    GUEST_API_LOCK();
    if (!generator)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (!is_quasi(generator->type))
        return CURAND_STATUS_TYPE_ERROR;
    if (num_dimensions < 1 || num_dimensions > VGPU_RAND_MAX_DIMENSIONS)
        return CURAND_STATUS_OUT_OF_RANGE;
    const curandStatus_t s = send<VGPU_OP_RAND_SET_DIMENSIONS>(generator, num_dimensions);
    if (s == CURAND_STATUS_SUCCESS)
        generator->dimensions = num_dimensions;
    return s;
}

// The library this implements: the headers it was built with.
curandStatus_t curandGetVersion(int* version)
{
    GUEST_API_LOCK();
    if (!version)
        return CURAND_STATUS_OUT_OF_RANGE;
    *version = CURAND_VERSION;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerate(curandGenerator_t g, unsigned int* out, size_t n)
{
    GUEST_API_LOCK();
    return generate(g, VGPU_RAND_BITS, out, n);
}
curandStatus_t curandGenerateLongLong(curandGenerator_t g, unsigned long long* out, size_t n)
{
    GUEST_API_LOCK();
    return generate(g, VGPU_RAND_LONG_LONG, out, n);
}
curandStatus_t curandGenerateUniform(curandGenerator_t g, float* out, size_t n)
{
    GUEST_API_LOCK();
    return generate(g, VGPU_RAND_UNIFORM, out, n);
}
curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double* out, size_t n)
{
    GUEST_API_LOCK();
    return generate(g, VGPU_RAND_UNIFORM_DOUBLE, out, n);
}
curandStatus_t curandGenerateNormal(curandGenerator_t g, float* out, size_t n, float mean, float stddev)
{
    GUEST_API_LOCK();
    return generate(g, VGPU_RAND_NORMAL, out, n, mean, stddev);
}
curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double* out, size_t n, double mean, double stddev)
{
    GUEST_API_LOCK();
    return generate(g, VGPU_RAND_NORMAL_DOUBLE, out, n, mean, stddev);
}
curandStatus_t curandGenerateLogNormal(curandGenerator_t g, float* out, size_t n, float mean, float stddev)
{
    GUEST_API_LOCK();
    return generate(g, VGPU_RAND_LOG_NORMAL, out, n, mean, stddev);
}
curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t g, double* out, size_t n, double mean, double stddev)
{
    GUEST_API_LOCK();
    return generate(g, VGPU_RAND_LOG_NORMAL_DOUBLE, out, n, mean, stddev);
}
