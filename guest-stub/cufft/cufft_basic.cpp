// cuFFT's basic plans for guests: each entry point is cuFFT's function of
// the same name, declared by NVIDIA's cufft.h (so its signature is checked
// against NVIDIA's), sent as one vGPU command (VGPU_OP_FFT_*). A
// cufftHandle is an int: this file keeps which VM handle each one names.
// Execs are queued on the plan's stream (their errors come at the next
// synchronization, as a kernel's do); plans wait for their answer.
#include <cufft.h>

#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/cudart/cudart_internal.h"

using namespace guest;

namespace {

// The VM handles behind cufftHandle 0, 1, ... (0: a free slot).
constexpr int kMaxPlans = 1024;
uint64_t g_plans[kMaxPlans];

cufftResult result_of(CUresult r)
{
    switch (static_cast<uint32_t>(r)) {
    case VGPU_SUCCESS: return CUFFT_SUCCESS;
    case VGPU_ERROR_OUT_OF_MEMORY: return CUFFT_ALLOC_FAILED;
    case VGPU_ERROR_INVALID_VALUE: return CUFFT_INVALID_VALUE;
    case VGPU_ERROR_INVALID_HANDLE:
    case VGPU_ERROR_INVALID_CONTEXT: return CUFFT_INVALID_PLAN;
    case VGPU_ERROR_NOT_SUPPORTED: return CUFFT_NOT_SUPPORTED;
    case VGPU_ERROR_NOT_INITIALIZED: return CUFFT_SETUP_FAILED;
    default: return r >= 700 && r < 800 ? CUFFT_EXEC_FAILED : CUFFT_INTERNAL_ERROR;
    }
}

uint64_t vgpu_plan(cufftHandle h) { return h >= 0 && h < kMaxPlans ? g_plans[h] : 0; }

cufftResult plan(cufftHandle* out, int rank, int nx, int ny, int nz, cufftType type, int batch)
{
    if (!out)
        return CUFFT_INVALID_VALUE;
    if (nx < 1 || ny < 1 || nz < 1 || batch < 1)
        return CUFFT_INVALID_SIZE;
    int slot = 0;
    while (slot < kMaxPlans && g_plans[slot])
        ++slot;
    if (slot == kMaxPlans)
        return CUFFT_ALLOC_FAILED;
    if (cudart::enter() != cudaSuccess)
        return CUFFT_SETUP_FAILED;
    cuda::Call c;
    c.op = VGPU_OP_FFT_PLAN;
    c.arg[0] = static_cast<uint64_t>(rank);
    c.arg[1] = static_cast<uint64_t>(nx);
    c.arg[2] = static_cast<uint64_t>(ny);
    c.arg[3] = static_cast<uint64_t>(nz);
    c.arg[4] = static_cast<uint64_t>(type);
    c.arg[5] = static_cast<uint64_t>(batch);
    uint64_t vgpu = 0;
    const CUresult r = cuda::call_result(c, &vgpu);
    if (r != CUDA_SUCCESS)
        return result_of(r);
    g_plans[slot] = vgpu;
    *out = slot;
    return CUFFT_SUCCESS;
}

cufftResult exec(cufftHandle h, cufftType type, const void* in, const void* out, int direction)
{
    const uint64_t p = vgpu_plan(h);
    if (!p)
        return CUFFT_INVALID_PLAN;
    cuda::Call c;
    c.op = VGPU_OP_FFT_EXEC;
    c.arg[0] = p;
    c.arg[1] = reinterpret_cast<uintptr_t>(in);
    c.arg[2] = reinterpret_cast<uintptr_t>(out);
    c.arg[3] = static_cast<uint64_t>(type);
    c.arg[4] = static_cast<uint64_t>(static_cast<int64_t>(direction));
    return result_of(cuda::call_async(c));
}

} // namespace

cufftResult cufftPlan1d(cufftHandle* plan_out, int nx, cufftType type, int batch)
{
    return plan(plan_out, 1, nx, 1, 1, type, batch);
}
cufftResult cufftPlan2d(cufftHandle* plan_out, int nx, int ny, cufftType type)
{
    return plan(plan_out, 2, nx, ny, 1, type, 1);
}
cufftResult cufftPlan3d(cufftHandle* plan_out, int nx, int ny, int nz, cufftType type)
{
    return plan(plan_out, 3, nx, ny, nz, type, 1);
}

cufftResult cufftDestroy(cufftHandle h)
{
    const uint64_t p = vgpu_plan(h);
    if (!p)
        return CUFFT_INVALID_PLAN;
    cuda::Call c;
    c.op = VGPU_OP_FFT_DESTROY;
    c.arg[0] = p;
    g_plans[h] = 0;
    return result_of(cuda::call_sync(c));
}

cufftResult cufftSetStream(cufftHandle h, cudaStream_t stream)
{
    const uint64_t p = vgpu_plan(h);
    if (!p)
        return CUFFT_INVALID_PLAN;
    cuda::Call c;
    c.op = VGPU_OP_FFT_SET_STREAM;
    c.arg[0] = p;
    c.arg[1] = cuda::stream_arg(stream);
    return result_of(cuda::call_sync(c));
}

// The library this implements: the headers it was built with.
cufftResult cufftGetVersion(int* version)
{
    if (!version)
        return CUFFT_INVALID_VALUE;
    *version = CUFFT_VERSION;
    return CUFFT_SUCCESS;
}

cufftResult cufftExecC2C(cufftHandle h, cufftComplex* in, cufftComplex* out, int direction)
{
    return exec(h, CUFFT_C2C, in, out, direction);
}
cufftResult cufftExecZ2Z(cufftHandle h, cufftDoubleComplex* in, cufftDoubleComplex* out, int direction)
{
    return exec(h, CUFFT_Z2Z, in, out, direction);
}
cufftResult cufftExecR2C(cufftHandle h, cufftReal* in, cufftComplex* out) { return exec(h, CUFFT_R2C, in, out, 0); }
cufftResult cufftExecC2R(cufftHandle h, cufftComplex* in, cufftReal* out) { return exec(h, CUFFT_C2R, in, out, 0); }
cufftResult cufftExecD2Z(cufftHandle h, cufftDoubleReal* in, cufftDoubleComplex* out)
{
    return exec(h, CUFFT_D2Z, in, out, 0);
}
cufftResult cufftExecZ2D(cufftHandle h, cufftDoubleComplex* in, cufftDoubleReal* out)
{
    return exec(h, CUFFT_Z2D, in, out, 0);
}
