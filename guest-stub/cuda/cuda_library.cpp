// Libraries and kernels (CUDA 12's context-independent loading), over
// modules: a library is one module, loaded in the context current at the
// load, or in device 0's primary context (retained until the unload) when
// none is; a kernel is that module's CUfunction, the same value, so a
// CUkernel also launches where a CUfunction is taken, as the driver allows.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"
#include "guest-stub/platform/platform.h"

using namespace guest::cuda;

namespace {

struct Library {
    CUmodule module;
    bool retained_primary; // device 0's primary context retained for the load
};
constexpr int kLibraries = 256;
Library g_libraries[kLibraries];

// NVIDIA's cudart hands its registered fat binaries over as nvcc's wrapper
// (__fatBinC_Wrapper_t: magic, version, the fat binary's address, ...), as
// the driver takes them; the image is the fat binary it points to.
const void* image_of(const void* code)
{
    constexpr uint32_t kFatbinWrapperMagic = 0x466243b1u;
    uint32_t magic = 0;
    memcpy(&magic, code, sizeof magic);
    if (magic != kFatbinWrapperMagic)
        return code;
    const void* fatbin = nullptr;
    memcpy(&fatbin, static_cast<const uint8_t*>(code) + 8, sizeof fatbin);
    return fatbin;
}

Library* library_of(CUlibrary handle)
{
    for (Library& l : g_libraries)
        if (l.module != nullptr && reinterpret_cast<CUlibrary>(&l) == handle)
            return &l;
    return nullptr;
}

CUresult load(CUlibrary* library, const void* code, unsigned numJitOptions, CUjit_option* jitOptions,
              void** jitOptionsValues, unsigned numLibraryOptions, CUlibraryOption* libraryOptions,
              void** libraryOptionValues)
{
    if (library == nullptr || code == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (numLibraryOptions > 0 && (libraryOptions == nullptr || libraryOptionValues == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numLibraryOptions; ++i)
        if (libraryOptions[i] >= CU_LIBRARY_NUM_OPTIONS) // both known options are hints here
            return CUDA_ERROR_INVALID_VALUE;
    Library* slot = nullptr;
    for (Library& l : g_libraries)
        if (l.module == nullptr) {
            slot = &l;
            break;
        }
    if (slot == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    const bool own_context = current_context() == nullptr;
    if (own_context) {
        CUcontext primary = nullptr;
        if (CUresult r = cuDevicePrimaryCtxRetain(&primary, 0))
            return r;
        if (CUresult r = cuCtxPushCurrent(primary)) {
            cuDevicePrimaryCtxRelease(0);
            return r;
        }
    }
    CUmodule module = nullptr;
    const void* image = image_of(code);
    const CUresult r = image == nullptr ? CUDA_ERROR_INVALID_IMAGE
                                        : cuModuleLoadDataEx(&module, image, numJitOptions, jitOptions, jitOptionsValues);
    if (own_context) {
        CUcontext popped;
        cuCtxPopCurrent(&popped);
        if (r != CUDA_SUCCESS)
            cuDevicePrimaryCtxRelease(0);
    }
    if (r != CUDA_SUCCESS)
        return r;
    *slot = Library{module, own_context};
    *library = reinterpret_cast<CUlibrary>(slot);
    return CUDA_SUCCESS;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuLibraryLoadData, 12000);
extern "C" CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                      void** jitOptionsValues, unsigned int numJitOptions,
                                      CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                      unsigned int numLibraryOptions)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    return load(library, code, numJitOptions, jitOptions, jitOptionsValues, numLibraryOptions, libraryOptions,
                libraryOptionValues);
}

KVMGPU_DRIVER_ENTRY(cuLibraryLoadFromFile, 12000);
extern "C" CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                                          void** jitOptionsValues, unsigned int numJitOptions,
                                          CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                          unsigned int numLibraryOptions)
{
    GUEST_API_LOCK();
    if (library == nullptr || fileName == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    void* image = nullptr;
    size_t bytes = 0;
    switch (guest::platform::read_file(fileName, &image, &bytes)) {
    case guest::platform::FileResult::kOk: break;
    case guest::platform::FileResult::kNotFound: return CUDA_ERROR_FILE_NOT_FOUND;
    case guest::platform::FileResult::kNoFiles: return CUDA_ERROR_NOT_SUPPORTED;
    case guest::platform::FileResult::kNoMemory: return CUDA_ERROR_OUT_OF_MEMORY;
    case guest::platform::FileResult::kReadError: return CUDA_ERROR_INVALID_VALUE;
    }
    const CUresult r = bytes == 0 ? CUDA_ERROR_INVALID_IMAGE
                                  : load(library, image, numJitOptions, jitOptions, jitOptionsValues,
                                         numLibraryOptions, libraryOptions, libraryOptionValues);
    guest::platform::release_file(image);
    return r;
}

KVMGPU_DRIVER_ENTRY(cuLibraryUnload, 12000);
extern "C" CUresult cuLibraryUnload(CUlibrary library)
{
    GUEST_API_LOCK();
    Library* l = library_of(library);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    const CUresult r = cuModuleUnload(l->module);
    if (r != CUDA_SUCCESS)
        return r;
    if (l->retained_primary)
        cuDevicePrimaryCtxRelease(0);
    *l = Library{};
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuLibraryGetModule, 12000);
extern "C" CUresult cuLibraryGetModule(CUmodule* pMod, CUlibrary library)
{
    GUEST_API_LOCK();
    if (pMod == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const Library* l = library_of(library);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    *pMod = l->module;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuLibraryGetKernel, 12000);
extern "C" CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name)
{
    GUEST_API_LOCK();
    if (pKernel == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const Library* l = library_of(library);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    CUfunction f = nullptr;
    if (CUresult r = cuModuleGetFunction(&f, l->module, name))
        return r;
    *pKernel = reinterpret_cast<CUkernel>(f);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuLibraryGetGlobal, 12000);
extern "C" CUresult cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name)
{
    GUEST_API_LOCK();
    const Library* l = library_of(library);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    return cuModuleGetGlobal(dptr, bytes, l->module, name);
}

KVMGPU_DRIVER_ENTRY(cuKernelGetFunction, 12000);
extern "C" CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel)
{
    GUEST_API_LOCK();
    if (pFunc == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const CUfunction f = reinterpret_cast<CUfunction>(kernel);
    if (f == nullptr || function_find(f) == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    *pFunc = f;
    return CUDA_SUCCESS;
}
