// Libraries and kernels (CUDA 12's context-independent loading), over
// modules: a library is one module, loaded in the context current at the
// load (a lazy one's: at its first use), or in device 0's primary context (retained until the unload) when
// none is; a kernel is that module's CUfunction, the same value, so a
// CUkernel also launches where a CUfunction is taken, as the driver allows.
// A fat binary that NVIDIA's cudart registers (nvcc's wrapper: it lives in
// the program's image as long as the program) loads lazily, as the driver's
// lazy loading does: its module is made when a kernel, a global or the
// module is first asked for, so a program that registers thousands (PyTorch)
// loads only those it uses.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"
#include "guest-stub/platform/platform.h"

using namespace guest::cuda;

namespace {

struct Library {
    bool in_use;
    bool retained_primary; // device 0's primary context retained for the load
    CUmodule module;       // null until a lazy library is first used
    const void* lazy_image; // the fat binary a lazy library loads from
    CUcontext context;     // the one its module was loaded in
};
constexpr int kLibraries = 16384;
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
    const uintptr_t at = reinterpret_cast<uintptr_t>(handle), first = reinterpret_cast<uintptr_t>(g_libraries);
    if (at < first || at >= first + sizeof g_libraries || (at - first) % sizeof(Library) != 0)
        return nullptr;
    Library* l = reinterpret_cast<Library*>(handle);
    return l->in_use ? l : nullptr;
}

// The module of `image` in the current context, or in device 0's primary
// context when none is current (then retained: *retained_primary).
CUresult load_module(CUmodule* module, const void* image, unsigned numJitOptions, CUjit_option* jitOptions,
                     void** jitOptionsValues, bool* retained_primary, CUcontext* loaded_in)
{
    const bool own_context = current_context() == nullptr;
    *loaded_in = current_context();
    if (own_context) {
        CUcontext primary = nullptr;
        if (CUresult r = cuDevicePrimaryCtxRetain(&primary, 0))
            return r;
        if (CUresult r = cuCtxPushCurrent(primary)) {
            cuDevicePrimaryCtxRelease(0);
            return r;
        }
        *loaded_in = primary;
    }
    const CUresult r = image == nullptr ? CUDA_ERROR_INVALID_IMAGE
                                        : cuModuleLoadDataEx(module, image, numJitOptions, jitOptions, jitOptionsValues);
    if (own_context) {
        CUcontext popped;
        cuCtxPopCurrent(&popped);
        if (r != CUDA_SUCCESS)
            cuDevicePrimaryCtxRelease(0);
    }
    *retained_primary = own_context && r == CUDA_SUCCESS;
    return r;
}

// `look_up` in the library's module: in the current context, or, where a
// thread has none (a library is context-independent: NVIDIA's cudart looks
// kernels up before it sets a new thread's context), in the one the module
// was loaded in, current for the call.
template <typename LookUp>
CUresult in_library_context(const Library& l, LookUp look_up)
{
    if (current_context() != nullptr || l.context == nullptr)
        return look_up();
    if (CUresult r = cuCtxPushCurrent(l.context))
        return r;
    const CUresult r = look_up();
    CUcontext popped;
    cuCtxPopCurrent(&popped);
    return r;
}

// The library's module, made now if a lazy one has none yet.
CUresult module_of(CUlibrary handle, CUmodule* module)
{
    Library* l = library_of(handle);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (l->module == nullptr) {
        if (CUresult r = load_module(&l->module, l->lazy_image, 0, nullptr, nullptr, &l->retained_primary, &l->context))
            return r;
    }
    *module = l->module;
    return CUDA_SUCCESS;
}

CUresult load(CUlibrary* library, const void* code, unsigned numJitOptions, CUjit_option* jitOptions,
              void** jitOptionsValues, unsigned numLibraryOptions, CUlibraryOption* libraryOptions,
              void** libraryOptionValues)
{
    if (library == nullptr || code == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    // Both known options are hints here, so their values are not read: the
    // driver takes CU_LIBRARY_BINARY_IS_PRESERVED with no values at all
    // (cuBLASLt loads its kernels so).
    (void)libraryOptionValues;
    if (numLibraryOptions > 0 && libraryOptions == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numLibraryOptions; ++i)
        if (libraryOptions[i] >= CU_LIBRARY_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
    Library* slot = nullptr;
    for (Library& l : g_libraries)
        if (!l.in_use) {
            slot = &l;
            break;
        }
    if (slot == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    const void* image = image_of(code);
    if (image == nullptr)
        return CUDA_ERROR_INVALID_IMAGE;
    if (image != code) { // cudart's registration: loaded at first use
        *slot = Library{true, false, nullptr, image, nullptr};
        *library = reinterpret_cast<CUlibrary>(slot);
        return CUDA_SUCCESS;
    }
    Library made{true, false, nullptr, nullptr, nullptr};
    if (CUresult r = load_module(&made.module, image, numJitOptions, jitOptions, jitOptionsValues,
                                 &made.retained_primary, &made.context))
        return r;
    *slot = made;
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

// A library's kernels are its module's functions, the same values (see the top).
KVMGPU_DRIVER_ENTRY(cuLibraryGetKernelCount, 12040);
extern "C" CUresult cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib)
{
    GUEST_API_LOCK();
    CUmodule module = nullptr;
    if (CUresult r = module_of(lib, &module))
        return r;
    return cuModuleGetFunctionCount(count, module);
}

KVMGPU_DRIVER_ENTRY(cuLibraryEnumerateKernels, 12040);
extern "C" CUresult cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary lib)
{
    GUEST_API_LOCK();
    CUmodule module = nullptr;
    if (CUresult r = module_of(lib, &module))
        return r;
    return cuModuleEnumerateFunctions(reinterpret_cast<CUfunction*>(kernels), numKernels, module);
}

namespace guest::cuda {
CUresult module_of_library_or_module(const void* handle, CUmodule* module)
{
    if (library_of(static_cast<CUlibrary>(const_cast<void*>(handle))) != nullptr)
        return module_of(static_cast<CUlibrary>(const_cast<void*>(handle)), module);
    *module = static_cast<CUmodule>(const_cast<void*>(handle));
    return CUDA_SUCCESS;
}
} // namespace guest::cuda

KVMGPU_DRIVER_ENTRY(cuLibraryUnload, 12000);
extern "C" CUresult cuLibraryUnload(CUlibrary library)
{
    GUEST_API_LOCK();
    Library* l = library_of(library);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (l->module != nullptr) {
        if (CUresult r = cuModuleUnload(l->module))
            return r;
    }
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
    return module_of(library, pMod);
}

KVMGPU_DRIVER_ENTRY(cuLibraryGetKernel, 12000);
extern "C" CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name)
{
    GUEST_API_LOCK();
    if (pKernel == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUmodule module = nullptr;
    if (CUresult r = module_of(library, &module))
        return r;
    CUfunction f = nullptr;
    if (CUresult r = in_library_context(*library_of(library), [&] { return cuModuleGetFunction(&f, module, name); }))
        return r;
    *pKernel = reinterpret_cast<CUkernel>(f);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuKernelGetLibrary, 12050);
extern "C" CUresult cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel)
{
    GUEST_API_LOCK();
    if (pLib == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const FunctionLayout* f = kernel != nullptr ? function_find(reinterpret_cast<CUfunction>(kernel)) : nullptr;
    if (f == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    for (Library& l : g_libraries) {
        if (l.in_use && l.module != nullptr && l.module == f->module) {
            *pLib = reinterpret_cast<CUlibrary>(&l);
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_INVALID_HANDLE; // a module's function, not a library's kernel
}

KVMGPU_DRIVER_ENTRY(cuLibraryGetGlobal, 12000);
extern "C" CUresult cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name)
{
    GUEST_API_LOCK();
    CUmodule module = nullptr;
    if (CUresult r = module_of(library, &module))
        return r;
    return in_library_context(*library_of(library), [&] { return cuModuleGetGlobal(dptr, bytes, module, name); });
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

// A kernel's attributes, cache preference and parameters are its function's:
// the function in the context its library was loaded in, whichever device
// is named (cudart 13's cudaFuncGetAttributes, cudaFuncSetAttribute and
// cudaFuncSetCacheConfig come here for every kernel it registered).
namespace {
// op(the kernel's function), once `dev` is known to be a device.
template <class Op>
CUresult on_kernel_function(CUkernel kernel, CUdevice dev, Op op)
{
    int count = 0;
    if (CUresult r = cuDeviceGetCount(&count))
        return r;
    if (dev < 0 || dev >= count)
        return CUDA_ERROR_INVALID_DEVICE;
    CUfunction f = nullptr;
    if (CUresult r = cuKernelGetFunction(&f, kernel))
        return r;
    return op(f);
}
} // namespace

KVMGPU_DRIVER_ENTRY(cuKernelGetAttribute, 12000);
extern "C" CUresult cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
    GUEST_API_LOCK();
    return on_kernel_function(kernel, dev, [&](CUfunction f) { return cuFuncGetAttribute(pi, attrib, f); });
}

KVMGPU_DRIVER_ENTRY(cuKernelSetAttribute, 12000);
extern "C" CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
    GUEST_API_LOCK();
    return on_kernel_function(kernel, dev, [&](CUfunction f) { return cuFuncSetAttribute(f, attrib, val); });
}

KVMGPU_DRIVER_ENTRY(cuKernelSetCacheConfig, 12000);
extern "C" CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
    GUEST_API_LOCK();
    return on_kernel_function(kernel, dev, [&](CUfunction f) { return cuFuncSetCacheConfig(f, config); });
}

KVMGPU_DRIVER_ENTRY(cuKernelGetParamInfo, 12040);
extern "C" CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset, size_t* paramSize)
{
    GUEST_API_LOCK();
    CUfunction f = nullptr;
    if (CUresult r = cuKernelGetFunction(&f, kernel))
        return r;
    return cuFuncGetParamInfo(f, paramIndex, paramOffset, paramSize);
}

// Lazy: the fat binaries NVIDIA's runtime registers load at their first use
// (above), as the driver's default lazy loading does. NVIDIA's libraries ask
// it to choose how they load their kernels (cuBLAS and cuBLASLt at
// cublasCreate).
KVMGPU_DRIVER_ENTRY(cuModuleGetLoadingMode, 11070);
extern "C" CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode* mode)
{
    if (mode == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}
