// cuFFT's basic plans for guests: each entry point is cuFFT's function of
// the same name, declared by NVIDIA's cufft.h (so its signature is checked
// against NVIDIA's), sent as one vGPU command (VGPU_OP_FFT_*). A
// cufftHandle is an int: cufft_internal.h keeps which VM plan each names.
// Execs are queued on the plan's stream (their errors come at the next
// synchronization, as a kernel's do); plans wait for their answer.
#include <cufft.h>

#include "guest-stub/platform/api_lock.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/cufft/cufft_internal.h"

using namespace guest;

namespace guest::cufft {

PlanSlot g_plans[kMaxPlans];

int take_slot()
{
    for (int i = 0; i < kMaxPlans; ++i)
        if (!g_plans[i].taken) {
            g_plans[i] = PlanSlot{};
            g_plans[i].taken = true;
            return i;
        }
    return -1;
}

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

cufftResult send_stream(const PlanSlot& s)
{
    cuda::Call c = cuda::command<VGPU_OP_FFT_SET_STREAM>({s.vgpu, cuda::stream_arg(s.stream)});
    return result_of(cuda::call_sync(c));
}

} // namespace guest::cufft

using namespace guest::cufft;

namespace {

uint64_t vgpu_plan(cufftHandle h)
{
    const PlanSlot* s = slot_of(h);
    return s ? s->vgpu : 0;
}

cufftResult plan(cufftHandle* out, int rank, int nx, int ny, int nz, cufftType type, int batch)
{
    if (!out)
        return CUFFT_INVALID_VALUE;
    if (nx < 1 || ny < 1 || nz < 1 || batch < 1)
        return CUFFT_INVALID_SIZE;
    if (cudart::enter() != cudaSuccess)
        return CUFFT_SETUP_FAILED;
    const int slot = take_slot();
    if (slot < 0)
        return CUFFT_ALLOC_FAILED;
    cuda::Call c = cuda::command<VGPU_OP_FFT_PLAN>(vgpu_args_fft_plan{.rank = static_cast<uint64_t>(rank),
                                  .nx = static_cast<uint64_t>(nx),
                                  .ny = static_cast<uint64_t>(ny),
                                  .nz = static_cast<uint64_t>(nz),
                                  .type = static_cast<uint64_t>(type),
                                  .batch = static_cast<uint64_t>(batch)});
    vgpu_result_fft_plan result{};
    const CUresult r = cuda::call_sync_typed(c, &result);
    if (r != CUDA_SUCCESS) {
        g_plans[slot].taken = false;
        return result_of(r);
    }
    g_plans[slot].vgpu = result.plan;
    g_plans[slot].work = result.work_bytes;
    *out = slot;
    return CUFFT_SUCCESS;
}

cufftResult exec(cufftHandle h, cufftType type, const void* in, const void* out, int direction)
{
    const uint64_t p = vgpu_plan(h);
    if (!p)
        return CUFFT_INVALID_PLAN;
    cuda::Call c = cuda::command<VGPU_OP_FFT_EXEC>(vgpu_args_fft_exec{.plan = p,
                                  .input = reinterpret_cast<uintptr_t>(in),
                                  .output = reinterpret_cast<uintptr_t>(out),
                                  .type = static_cast<uint64_t>(type),
                                  .direction = static_cast<uint64_t>(static_cast<int64_t>(direction))});
    return result_of(cuda::call_async(c));
}

} // namespace

cufftResult cufftPlan1d(cufftHandle* plan_out, int nx, cufftType type, int batch)
{
    GUEST_API_LOCK();
    return plan(plan_out, 1, nx, 1, 1, type, batch);
}
cufftResult cufftPlan2d(cufftHandle* plan_out, int nx, int ny, cufftType type)
{
    GUEST_API_LOCK();
    return plan(plan_out, 2, nx, ny, 1, type, 1);
}
cufftResult cufftPlan3d(cufftHandle* plan_out, int nx, int ny, int nz, cufftType type)
{
    GUEST_API_LOCK();
    return plan(plan_out, 3, nx, ny, nz, type, 1);
}

// A created slot with no plan yet is the guest's alone.
cufftResult cufftDestroy(cufftHandle h)
{
    GUEST_API_LOCK();
    PlanSlot* s = slot_of(h);
    if (!s)
        return CUFFT_INVALID_PLAN;
    const uint64_t p = s->vgpu;
    s->taken = false;
    if (!p)
        return CUFFT_SUCCESS;
    cuda::Call c = cuda::command<VGPU_OP_FFT_DESTROY>({p});
    return result_of(cuda::call_sync(c));
}

// On a created plan not made yet the stream is kept and set once it is made.
cufftResult cufftSetStream(cufftHandle h, cudaStream_t stream)
{
    GUEST_API_LOCK();
    PlanSlot* s = slot_of(h);
    if (!s)
        return CUFFT_INVALID_PLAN;
    s->stream = stream;
    s->stream_set = true;
    if (!s->vgpu)
        return CUFFT_SUCCESS;
    return send_stream(*s);
}

// The library this implements: the headers it was built with.
cufftResult cufftGetVersion(int* version)
{
    GUEST_API_LOCK();
    if (!version)
        return CUFFT_INVALID_VALUE;
    *version = CUFFT_VERSION;
    return CUFFT_SUCCESS;
}

cufftResult cufftExecC2C(cufftHandle h, cufftComplex* in, cufftComplex* out, int direction)
{
    GUEST_API_LOCK();
    return exec(h, CUFFT_C2C, in, out, direction);
}
cufftResult cufftExecZ2Z(cufftHandle h, cufftDoubleComplex* in, cufftDoubleComplex* out, int direction)
{
    GUEST_API_LOCK();
    return exec(h, CUFFT_Z2Z, in, out, direction);
}
cufftResult cufftExecR2C(cufftHandle h, cufftReal* in, cufftComplex* out) { return exec(h, CUFFT_R2C, in, out, 0); }
cufftResult cufftExecC2R(cufftHandle h, cufftComplex* in, cufftReal* out) { return exec(h, CUFFT_C2R, in, out, 0); }
cufftResult cufftExecD2Z(cufftHandle h, cufftDoubleReal* in, cufftDoubleComplex* out)
{
    GUEST_API_LOCK();
    return exec(h, CUFFT_D2Z, in, out, 0);
}
cufftResult cufftExecZ2D(cufftHandle h, cufftDoubleComplex* in, cufftDoubleReal* out)
{
    GUEST_API_LOCK();
    return exec(h, CUFFT_Z2D, in, out, 0);
}
