// conformance, continued: cuGetProcAddress over the guest library's whole
// table, generated from its KVMGPU_DRIVER_ENTRY markers (each entry at its
// own version gives that very function), the statuses of names and versions
// it lacks, CUDA 13's context-naming forms, and cuModuleLoad in a guest
// without files.
#include "guest-stub/cuda/cuda_entry_points.h"
#include "guest-stub/programs/conformance.h"
#include "guest-stub/cuda/versioned_forms.h" // the table names older forms by their plain names

using namespace guest;

namespace {

bool resolves_to(const char* name, int version, void* fn)
{
    void* p = nullptr;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return cuGetProcAddress_v2(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &st) == CUDA_SUCCESS &&
           st == CU_GET_PROC_ADDRESS_SUCCESS && p == fn;
}

} // namespace

void entry_point_calls()
{
    unsigned wrong = 0, entries = 0;
#define KVMGPU_RESOLVE(name, version, symbol)                                   \
    ++entries;                                                                  \
    if (!resolves_to(#name, version, reinterpret_cast<void*>(&symbol))) {       \
        ++wrong;                                                                \
        printf("conformance: cuGetProcAddress(%s, %d) is not %s\n", #name, version, #symbol); \
    }
    KVMGPU_GUEST_DRIVER_ENTRY_POINTS(KVMGPU_RESOLVE)
#undef KVMGPU_RESOLVE
    expect_true("cuGetProcAddress: every table entry at its version", wrong == 0 && entries > 100);
    expect_true("cuGetProcAddress(cuCtxSynchronize, 12080): the (void) form",
                resolves_to("cuCtxSynchronize", 12080, reinterpret_cast<void*>(&cuCtxSynchronize)));

    void* p = &p;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    expect("cuGetProcAddress(unknown name)", cuGetProcAddress_v2("cuNoSuchCall", &p, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
    expect_true("unknown name: SYMBOL_NOT_FOUND, no pointer", st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && p == nullptr);
    expect("cuGetProcAddress(cuMemAlloc, 2000)", cuGetProcAddress_v2("cuMemAlloc", &p, 2000, 0, &st), CUDA_ERROR_NOT_FOUND);
    expect_true("the 32-bit cuMemAlloc: VERSION_NOT_SUFFICIENT", st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    expect("cuGetProcAddress(a version past the driver's)", cuGetProcAddress_v2("cuMemAlloc", &p, 99000, 0, &st),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuGetProcAddress(unknown flags)", cuGetProcAddress_v2("cuMemAlloc", &p, 13000, 0x10, &st),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuGetProcAddress(nullptr)", cuGetProcAddress_v2(nullptr, &p, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE);
    expect("cuGetProcAddress(per-thread stream, no status)",
           cuGetProcAddress_v2("cuMemcpyHtoDAsync", &p, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, nullptr),
           CUDA_SUCCESS);

    // Called through the pointers, as a program does.
    using Alloc = CUresult (*)(CUdeviceptr*, size_t);
    using Free = CUresult (*)(CUdeviceptr);
    using Sync = CUresult (*)(CUcontext);
    CUdeviceptr d = 0;
    CU_CHECK(cuGetProcAddress_v2("cuMemAlloc", &p, 13000, 0, nullptr));
    expect("cuMemAlloc through cuGetProcAddress", reinterpret_cast<Alloc>(p)(&d, 256), CUDA_SUCCESS);
    CU_CHECK(cuGetProcAddress_v2("cuMemFree", &p, 13000, 0, nullptr));
    expect("cuMemFree through cuGetProcAddress", reinterpret_cast<Free>(p)(d), CUDA_SUCCESS);
    CU_CHECK(cuGetProcAddress_v2("cuCtxSynchronize", &p, 13000, 0, nullptr));
    expect("cuCtxSynchronize(CUcontext) through cuGetProcAddress", reinterpret_cast<Sync>(p)(nullptr), CUDA_SUCCESS);
    CUcontext ctx = nullptr;
    CU_CHECK(cuCtxGetCurrent(&ctx));
    expect("cuCtxSynchronize_v2(current)", cuCtxSynchronize_v2(ctx), CUDA_SUCCESS);
    CUdevice dev = -1;
    expect("cuCtxGetDevice_v2", cuCtxGetDevice_v2(&dev, ctx), CUDA_SUCCESS);
    expect_true("cuCtxGetDevice_v2: device 0", dev == 0);

    // Files: a freestanding guest has none (a Linux-ABI guest reads its share).
    CUmodule m = nullptr;
    expect("cuModuleLoad(freestanding)", cuModuleLoad(&m, "/kernels.fatbin"), CUDA_ERROR_NOT_SUPPORTED);
    expect("cuModuleLoad(nullptr)", cuModuleLoad(&m, nullptr), CUDA_ERROR_INVALID_VALUE);
    CUjit_option opts[1] = {CU_JIT_WALL_TIME};
    expect("cuModuleLoadDataEx(options without values)", cuModuleLoadDataEx(&m, "x", 1, opts, nullptr),
           CUDA_ERROR_INVALID_VALUE);
}
