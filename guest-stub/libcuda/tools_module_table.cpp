// TOOLS_MODULE, 6e163fbe-b958-444d-835c-e182aff1991e (the name is the
// symbol NVIDIA's libcuxtra gives this UUID, CU_ETID_ToolsModule; 99 entries
// with CUDA 13.0's driver). Only [7] is known: cuFFT loads a module of one
// kernel, then finds that kernel through it (libcufft.so.12: it takes a
// return of 1 for success, anything else for its CUFFT_INTERNAL_ERROR).
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/libcuda/export_tables.h"
#include "guest-stub/platform/api_lock.h"

namespace guest::libcuda {
namespace {

constexpr char kToolsModuleName[] = "TOOLS_MODULE";
constexpr unsigned kMostKernels = 1024;

// [7]: calls visit(cookie, kernel) for each kernel of `module` (a CUmodule,
// or a CUlibrary's module) and returns how many it visited; 0 when it could
// not tell (a handle that is neither). The context is the caller's current.
unsigned visit_kernels(CUcontext, const void* module, void (*visit)(void* cookie, CUfunction kernel), void* cookie)
{
    GUEST_API_LOCK();
    CUmodule m = nullptr;
    static CUfunction kernels[kMostKernels];
    unsigned count = 0;
    if (visit == nullptr || guest::cuda::module_of_library_or_module(module, &m) != CUDA_SUCCESS ||
        guest::cuda::module_functions(m, kernels, kMostKernels, &count) != CUDA_SUCCESS)
        return 0;
    const unsigned n = count < kMostKernels ? count : kMostKernels;
    for (unsigned i = 0; i < n; ++i)
        visit(cookie, kernels[i]);
    return n;
}

} // namespace

extern const Entry kToolsModule[] = {
    KVMGPU_SIZE_WORD(99),
    KVMGPU_UNKNOWN(kToolsModuleName, 1),
    KVMGPU_UNKNOWN(kToolsModuleName, 2),
    KVMGPU_UNKNOWN(kToolsModuleName, 3),
    KVMGPU_UNKNOWN(kToolsModuleName, 4),
    KVMGPU_UNKNOWN(kToolsModuleName, 5),
    KVMGPU_UNKNOWN(kToolsModuleName, 6),
    KVMGPU_ENTRY(visit_kernels),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 8),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 16),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 24),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 32),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 40),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 48),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 56),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 64),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 72),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 80),
    KVMGPU_UNKNOWN_8(kToolsModuleName, 88),
    KVMGPU_UNKNOWN(kToolsModuleName, 96),
    KVMGPU_UNKNOWN(kToolsModuleName, 97),
    KVMGPU_UNKNOWN(kToolsModuleName, 98),
};
static_assert(sizeof kToolsModule / sizeof kToolsModule[0] == 99);

} // namespace guest::libcuda
