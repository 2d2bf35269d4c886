// The launch calls before cuLaunchKernel (deprecated, still in the driver):
// a function's block shape, dynamic shared memory and parameter bytes set
// one call at a time, then cuLaunch / cuLaunchGrid / cuLaunchGridAsync,
// each one cuLaunchKernel with those bytes as its parameter buffer.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/platform/api_lock.h"

namespace {

constexpr unsigned kMaxParamBytes = 4096; // the driver's parameter limit
constexpr int kMaxLegacyFunctions = 32;

struct LegacyLaunch {
    CUfunction f;
    unsigned block[3];
    unsigned shared_bytes;
    unsigned param_bytes;
    unsigned char params[kMaxParamBytes];
};

LegacyLaunch g_legacy[kMaxLegacyFunctions];
int g_legacy_next; // the slot reused when every one is taken

// f's state, made on first use (block 1x1x1, no shared memory, no parameters).
LegacyLaunch* state_of(CUfunction f)
{
    if (f == nullptr)
        return nullptr;
    for (LegacyLaunch& l : g_legacy)
        if (l.f == f)
            return &l;
    for (LegacyLaunch& l : g_legacy)
        if (l.f == nullptr) {
            l = LegacyLaunch{f, {1, 1, 1}, 0, 0, {}};
            return &l;
        }
    LegacyLaunch& l = g_legacy[g_legacy_next];
    g_legacy_next = (g_legacy_next + 1) % kMaxLegacyFunctions;
    l = LegacyLaunch{f, {1, 1, 1}, 0, 0, {}};
    return &l;
}

CUresult set_param(CUfunction f, int offset, const void* value, unsigned bytes)
{
    LegacyLaunch* l = state_of(f);
    if (l == nullptr || offset < 0 || value == nullptr || bytes > kMaxParamBytes ||
        static_cast<unsigned>(offset) > kMaxParamBytes - bytes)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(l->params + offset, value, bytes);
    return CUDA_SUCCESS;
}

CUresult launch_grid(CUfunction f, int width, int height, CUstream stream)
{
    LegacyLaunch* l = state_of(f);
    if (l == nullptr || width <= 0 || height <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t size = l->param_bytes;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, l->params, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    return cuLaunchKernel(f, static_cast<unsigned>(width), static_cast<unsigned>(height), 1, l->block[0], l->block[1],
                          l->block[2], l->shared_bytes, stream, nullptr, size ? extra : nullptr);
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuFuncSetBlockShape, 2000);
extern "C" CUresult cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z)
{
    GUEST_API_LOCK();
    LegacyLaunch* l = state_of(hfunc);
    if (l == nullptr || x <= 0 || y <= 0 || z <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    l->block[0] = static_cast<unsigned>(x), l->block[1] = static_cast<unsigned>(y), l->block[2] = static_cast<unsigned>(z);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuFuncSetSharedSize, 2000);
extern "C" CUresult cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes)
{
    GUEST_API_LOCK();
    LegacyLaunch* l = state_of(hfunc);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    l->shared_bytes = bytes;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuParamSetSize, 2000);
extern "C" CUresult cuParamSetSize(CUfunction hfunc, unsigned int numbytes)
{
    GUEST_API_LOCK();
    LegacyLaunch* l = state_of(hfunc);
    if (l == nullptr || numbytes > kMaxParamBytes)
        return CUDA_ERROR_INVALID_VALUE;
    l->param_bytes = numbytes;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuParamSeti, 2000);
extern "C" CUresult cuParamSeti(CUfunction hfunc, int offset, unsigned int value)
{
    GUEST_API_LOCK();
    return set_param(hfunc, offset, &value, sizeof value);
}

KVMGPU_DRIVER_ENTRY(cuParamSetf, 2000);
extern "C" CUresult cuParamSetf(CUfunction hfunc, int offset, float value)
{
    GUEST_API_LOCK();
    return set_param(hfunc, offset, &value, sizeof value);
}

KVMGPU_DRIVER_ENTRY(cuParamSetv, 2000);
extern "C" CUresult cuParamSetv(CUfunction hfunc, int offset, void* ptr, unsigned int numbytes)
{
    GUEST_API_LOCK();
    return set_param(hfunc, offset, ptr, numbytes);
}

KVMGPU_DRIVER_ENTRY(cuLaunch, 2000);
extern "C" CUresult cuLaunch(CUfunction f)
{
    GUEST_API_LOCK();
    return launch_grid(f, 1, 1, nullptr);
}

KVMGPU_DRIVER_ENTRY(cuLaunchGrid, 2000);
extern "C" CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height)
{
    GUEST_API_LOCK();
    return launch_grid(f, grid_width, grid_height, nullptr);
}

KVMGPU_DRIVER_ENTRY(cuLaunchGridAsync, 2000);
extern "C" CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream)
{
    GUEST_API_LOCK();
    return launch_grid(f, grid_width, grid_height, hStream);
}
