// cuFFT's extensible plans for guests: cufftCreate, cufftMakePlan1d/2d/3d,
// cufftMakePlanMany/Many64, cufftPlanMany, cufftXtMakePlanMany (single-GPU
// types: the input, output and execution types must name one cufftType),
// cufftGetSize, cufftSetAutoAllocation and cufftSetWorkArea. A created
// slot holds its settings until a MakePlan sends them with the shape
// (VGPU_OP_FFT_PLAN_MANY); the VMM checks the layout and every size.
#include <cufftXt.h>

#include <cstring>

#include "guest-stub/platform/api_lock.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/cufft/cufft_internal.h"

using namespace guest;
using namespace guest::cufft;

namespace guest::cufft {

cufftResult make_plan(cufftHandle h, int rank, const long long* n, const long long* inembed, long long istride,
                      long long idist, const long long* onembed, long long ostride, long long odist, cufftType type,
                      long long batch, size_t* work)
{
    PlanSlot* s = slot_of(h);
    if (!s || s->vgpu)
        return CUFFT_INVALID_PLAN; // not created, or planned already
    if (rank < 1 || rank > 3 || !n)
        return CUFFT_INVALID_SIZE;
    if (!inembed != !onembed)
        return CUFFT_INVALID_VALUE; // the advanced layout needs both
    if (cudart::enter() != cudaSuccess)
        return CUFFT_SETUP_FAILED;
    vgpu_fft_plan_many m{};
    m.rank = static_cast<uint32_t>(rank);
    m.type = static_cast<uint32_t>(type);
    for (int d = 0; d < 3; ++d) {
        m.n[d] = d < rank ? n[d] : 1;
        m.inembed[d] = inembed && d < rank ? inembed[d] : 1;
        m.onembed[d] = onembed && d < rank ? onembed[d] : 1;
    }
    m.istride = istride;
    m.idist = idist;
    m.ostride = ostride;
    m.odist = odist;
    m.batch = batch;
    m.flags = (inembed ? VGPU_FFT_ADVANCED : 0) | (s->auto_allocation ? 0 : VGPU_FFT_NO_AUTO_ALLOCATION);
    cuda::Call c = cuda::command<VGPU_OP_FFT_PLAN_MANY>();
    c.payload = &m;
    c.payload_len = sizeof m;
    uint64_t result[2] = {};
    const CUresult r = cuda::call_sync(c, result);
    if (r != CUDA_SUCCESS)
        return r == static_cast<CUresult>(VGPU_ERROR_INVALID_VALUE) ? CUFFT_INVALID_SIZE : result_of(r);
    s->vgpu = result[0];
    s->work = result[1];
    if (work)
        *work = s->work;
    return s->stream_set ? send_stream(*s) : CUFFT_SUCCESS;
}

} // namespace guest::cufft

namespace {

cufftResult make_int(cufftHandle h, int rank, const int* n, const int* inembed, int istride, int idist,
                     const int* onembed, int ostride, int odist, cufftType type, int batch, size_t* work)
{
    if (rank < 1 || rank > 3 || !n)
        return CUFFT_INVALID_SIZE;
    long long n64[3], in64[3], on64[3];
    for (int d = 0; d < rank; ++d) {
        n64[d] = n[d];
        in64[d] = inembed ? inembed[d] : 1;
        on64[d] = onembed ? onembed[d] : 1;
    }
    return make_plan(h, rank, n64, inembed ? in64 : nullptr, istride, idist, onembed ? on64 : nullptr, ostride, odist,
                     type, batch, work);
}

// cufftXtMakePlanMany's cudaDataType triple as one cufftType, or 0.
int xt_type(cudaDataType in, cudaDataType out, cudaDataType exec)
{
    if (in == CUDA_C_32F && out == CUDA_C_32F && exec == CUDA_C_32F) return CUFFT_C2C;
    if (in == CUDA_R_32F && out == CUDA_C_32F && exec == CUDA_C_32F) return CUFFT_R2C;
    if (in == CUDA_C_32F && out == CUDA_R_32F && exec == CUDA_C_32F) return CUFFT_C2R;
    if (in == CUDA_C_64F && out == CUDA_C_64F && exec == CUDA_C_64F) return CUFFT_Z2Z;
    if (in == CUDA_R_64F && out == CUDA_C_64F && exec == CUDA_C_64F) return CUFFT_D2Z;
    if (in == CUDA_C_64F && out == CUDA_R_64F && exec == CUDA_C_64F) return CUFFT_Z2D;
    return 0;
}

} // namespace

cufftResult cufftCreate(cufftHandle* handle)
{
    GUEST_API_LOCK();
    if (!handle)
        return CUFFT_INVALID_VALUE;
    const int slot = take_slot();
    if (slot < 0)
        return CUFFT_ALLOC_FAILED;
    *handle = slot;
    return CUFFT_SUCCESS;
}

cufftResult cufftMakePlan1d(cufftHandle plan, int nx, cufftType type, int batch, size_t* workSize)
{
    GUEST_API_LOCK();
    return make_int(plan, 1, &nx, nullptr, 1, 1, nullptr, 1, 1, type, batch, workSize);
}

cufftResult cufftMakePlan2d(cufftHandle plan, int nx, int ny, cufftType type, size_t* workSize)
{
    GUEST_API_LOCK();
    const int n[2] = {nx, ny};
    return make_int(plan, 2, n, nullptr, 1, 1, nullptr, 1, 1, type, 1, workSize);
}

cufftResult cufftMakePlan3d(cufftHandle plan, int nx, int ny, int nz, cufftType type, size_t* workSize)
{
    GUEST_API_LOCK();
    const int n[3] = {nx, ny, nz};
    return make_int(plan, 3, n, nullptr, 1, 1, nullptr, 1, 1, type, 1, workSize);
}

cufftResult cufftMakePlanMany(cufftHandle plan, int rank, int* n, int* inembed, int istride, int idist, int* onembed,
                              int ostride, int odist, cufftType type, int batch, size_t* workSize)
{
    GUEST_API_LOCK();
    return make_int(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, workSize);
}

cufftResult cufftMakePlanMany64(cufftHandle plan, int rank, long long int* n, long long int* inembed,
                                long long int istride, long long int idist, long long int* onembed,
                                long long int ostride, long long int odist, cufftType type, long long int batch,
                                size_t* workSize)
{
    GUEST_API_LOCK();
    return make_plan(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, workSize);
}

cufftResult cufftPlanMany(cufftHandle* plan, int rank, int* n, int* inembed, int istride, int idist, int* onembed,
                          int ostride, int odist, cufftType type, int batch)
{
    GUEST_API_LOCK();
    if (!plan)
        return CUFFT_INVALID_VALUE;
    cufftHandle h;
    if (const cufftResult r = cufftCreate(&h); r != CUFFT_SUCCESS)
        return r;
    size_t work = 0;
    const cufftResult r = make_int(h, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, &work);
    if (r != CUFFT_SUCCESS) {
        g_plans[h].taken = false;
        return r;
    }
    *plan = h;
    return CUFFT_SUCCESS;
}

cufftResult cufftXtMakePlanMany(cufftHandle plan, int rank, long long int* n, long long int* inembed,
                                long long int istride, long long int idist, cudaDataType inputtype,
                                long long int* onembed, long long int ostride, long long int odist,
                                cudaDataType outputtype, long long int batch, size_t* workSize,
                                cudaDataType executiontype)
{
    GUEST_API_LOCK();
    const int type = xt_type(inputtype, outputtype, executiontype);
    if (!type)
        return CUFFT_NOT_SUPPORTED; // half and bfloat16 transforms are not forwarded
    return make_plan(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, static_cast<cufftType>(type),
                     batch, workSize);
}

cufftResult cufftGetSize(cufftHandle handle, size_t* workSize)
{
    GUEST_API_LOCK();
    const PlanSlot* s = slot_of(handle);
    if (!s)
        return CUFFT_INVALID_PLAN;
    if (!workSize)
        return CUFFT_INVALID_VALUE;
    *workSize = s->work;
    return CUFFT_SUCCESS;
}

// Before the plan is made, as cuFFT requires.
cufftResult cufftSetAutoAllocation(cufftHandle plan, int autoAllocate)
{
    GUEST_API_LOCK();
    PlanSlot* s = slot_of(plan);
    if (!s)
        return CUFFT_INVALID_PLAN;
    if (s->vgpu)
        return CUFFT_INVALID_PLAN; // made already: the setting would not apply
    s->auto_allocation = autoAllocate != 0;
    return CUFFT_SUCCESS;
}

cufftResult cufftSetWorkArea(cufftHandle plan, void* workArea)
{
    GUEST_API_LOCK();
    const PlanSlot* s = slot_of(plan);
    if (!s || !s->vgpu)
        return CUFFT_INVALID_PLAN;
    cuda::Call c = cuda::command<VGPU_OP_FFT_SET_WORK_AREA>({s->vgpu, reinterpret_cast<uintptr_t>(workArea)});
    return result_of(cuda::call_sync(c));
}
