// What nvcc's generated host code calls: fat binary and kernel registration
// (from a static constructor, before the runtime has its heap or the vGPU
// is touched: they only record) and launches (the <<<...>>> configuration
// is call_configuration.cpp's). A fat binary is loaded as a module into the
// current device's primary context on the first launch of one of its
// kernels; a kernel is looked up by its (mangled) device name, once per
// device.
//
// The tables are written by registration, before main and so before any
// second thread; after that, what a first launch fills in (each fat
// binary's module and each kernel's function per device, each device's
// launch limits) is read and written only under the API lock (api_lock.h):
// every entry point that reaches it takes the lock, nvcc's
// __cudaLaunchKernel, __cudaGetKernel and __cudaUnregisterFatBinary too.
#include <stdint.h>

#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/platform.h"
#include "guest-stub/platform/api_lock.h"

namespace {

using guest::cudart::kMaxDevices;

constexpr uint32_t kFatbinWrapperMagic = 0x466243b1; // nvcc's __fatDeviceText
constexpr int kMaxFatbins = 64;
constexpr int kMaxKernels = 512;
constexpr int kMaxVars = 256;

// nvcc's wrapper around the embedded fat binary (.nvFatBinSegment).
struct FatbinWrapper {
    uint32_t magic;
    uint32_t version;
    const void* data;
    const void* unused;
};

// A registered fat binary. The handle nvcc keeps is &handle_slot: the
// runtime hands it back in every later registration call.
struct Fatbin {
    void* handle_slot;
    const void* image;
    CUmodule module[kMaxDevices];
};

// A registered kernel; cudaKernel_t handles point at these.
struct Kernel {
    const void* host_fn; // the host stub whose address the program uses
    const char* device_name;
    int fatbin;
    CUfunction function[kMaxDevices];
};

// A registered __device__ / __constant__ variable.
struct Var {
    const void* host_var;
    const char* device_name;
    int fatbin;
};

// constinit: nvcc's registration constructors run before (or after) this
// file's dynamic initializers in no promised order, so the tables they
// write must need none.
constinit Fatbin g_fatbins[kMaxFatbins] = {};
constinit int g_fatbin_count = 0;
constinit Kernel g_kernels[kMaxKernels] = {};
constinit int g_kernel_count = 0;
constinit Var g_vars[kMaxVars] = {};
constinit int g_var_count = 0;

int fatbin_of(void** handle)
{
    for (int i = 0; i < g_fatbin_count; ++i)
        if (handle == &g_fatbins[i].handle_slot)
            return i;
    return -1;
}

// Registration runs before main, where nothing can report an error: a
// table overflow ends the run with a clear line instead.
[[noreturn]] void registration_full(const char* what, int limit)
{
    guest::platform::printf("cudart: more than %d registered %s (raise the limit in cudart/registration.cpp)\n", limit, what);
    guest::platform::exit(guest::kExitPanic);
}

cudaError_t module_for(int fatbin, int dev, CUmodule* out)
{
    Fatbin& fb = g_fatbins[fatbin];
    if (fb.module[dev] == nullptr) {
        if (CUresult r = cuModuleLoadData(&fb.module[dev], fb.image)) {
            fb.module[dev] = nullptr;
            return guest::cudart::from_driver(r);
        }
    }
    *out = fb.module[dev];
    return cudaSuccess;
}

cudaError_t function_for(Kernel& k, CUfunction* out)
{
    const int dev = guest::cudart::current_device();
    if (k.function[dev] == nullptr) {
        CUmodule m;
        if (cudaError_t e = module_for(k.fatbin, dev, &m))
            return e;
        if (CUresult r = cuModuleGetFunction(&k.function[dev], m, k.device_name)) {
            k.function[dev] = nullptr;
            if (r == CUDA_ERROR_NOT_FOUND) {
                guest::platform::printf("cudart: kernel %s is not in its module on this vGPU (the host backend runs only "
                              "its reference kernels)\n", k.device_name);
                return cudaErrorInvalidDeviceFunction;
            }
            return guest::cudart::from_driver(r);
        }
    }
    *out = k.function[dev];
    return cudaSuccess;
}

Kernel* kernel_of_host_fn(const void* fn)
{
    for (int i = 0; i < g_kernel_count; ++i)
        if (g_kernels[i].host_fn == fn)
            return &g_kernels[i];
    return nullptr;
}

// Launch limits of the current device, asked once: a bad configuration is
// refused at the launch, as the runtime does, instead of surfacing at the
// next synchronization. With cudaErrorInvalidValue: CUDA 13's runtime on
// driver 580 gives that (not cudaErrorInvalidConfiguration) for every bad
// shape, measured on the H100 2026-11-25 (a zero or too large grid or block
// dimension, too many threads per block, too much shared memory).
struct Limits {
    bool known;
    int threads_per_block;
    int block[3];
    int grid[3];
};
constinit Limits g_limits[kMaxDevices] = {};

// The current device's launch limits, asked once.
cudaError_t launch_limits(Limits** out)
{
    Limits& l = g_limits[guest::cudart::current_device()];
    if (!l.known) {
        const CUdevice dev = guest::cudart::current_device();
        const CUdevice_attribute attrs[7] = {
            CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
            CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
            CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
            CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
        int v[7];
        for (int i = 0; i < 7; ++i)
            if (CUresult r = cuDeviceGetAttribute(&v[i], attrs[i], dev))
                return guest::cudart::from_driver(r);
        l = Limits{true, v[0], {v[1], v[2], v[3]}, {v[4], v[5], v[6]}};
    }
    *out = &l;
    return cudaSuccess;
}

cudaError_t check_config(dim3 grid, dim3 block)
{
    Limits* lp;
    if (cudaError_t e = launch_limits(&lp))
        return e;
    const Limits& l = *lp;
    const unsigned b[3] = {block.x, block.y, block.z}, g[3] = {grid.x, grid.y, grid.z};
    uint64_t threads = 1;
    for (int i = 0; i < 3; ++i) {
        if (b[i] == 0 || g[i] == 0 || b[i] > (unsigned)l.block[i] || g[i] > (unsigned)l.grid[i])
            return cudaErrorInvalidValue;
        threads *= b[i];
    }
    return threads > (uint64_t)l.threads_per_block ? cudaErrorInvalidValue : cudaSuccess;
}

cudaError_t launch(Kernel* k, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream,
                   bool cooperative = false)
{
    using namespace guest::cudart;
    if (cudaError_t e = enter())
        return e;
    if (k == nullptr)
        return record(cudaErrorInvalidDeviceFunction);
    if (cudaError_t e = check_config(grid, block))
        return record(e);
    if (shared > 0xffffffffu)
        return record(cudaErrorInvalidValue);
    CUfunction f;
    if (cudaError_t e = function_for(*k, &f))
        return record(e);
    if (cooperative)
        return record(cuLaunchCooperativeKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                                static_cast<unsigned>(shared), stream, args));
    return record(cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                 static_cast<unsigned>(shared), stream, args, nullptr));
}

} // namespace

namespace guest::cudart {

void load_every_module(int dev)
{
    // Best effort, quietly: what fails here fails again, and says so, at
    // the first use, as with lazy loading. Each kernel's function (and its
    // parameter layout) and the launch limits are what a first launch would
    // ask for.
    for (int i = 0; i < g_fatbin_count; ++i) {
        CUmodule m;
        (void)module_for(i, dev, &m);
    }
    for (int i = 0; i < g_kernel_count; ++i) {
        Kernel& k = g_kernels[i];
        CUmodule m = g_fatbins[k.fatbin].module[dev];
        if (m != nullptr && k.function[dev] == nullptr && cuModuleGetFunction(&k.function[dev], m, k.device_name) != CUDA_SUCCESS)
            k.function[dev] = nullptr;
    }
    Limits* l;
    (void)launch_limits(&l);
}

void forget_device_modules(int dev)
{
    if (dev < 0 || dev >= kMaxDevices)
        return;
    for (int i = 0; i < g_fatbin_count; ++i)
        g_fatbins[i].module[dev] = nullptr;
    for (int i = 0; i < g_kernel_count; ++i)
        g_kernels[i].function[dev] = nullptr;
    g_limits[dev] = Limits{};
}

// cudaMemcpyToSymbol & co.: the device address of a registered variable.
cudaError_t symbol_address(const void* symbol, CUdeviceptr* dptr, size_t* bytes)
{
    for (int i = 0; i < g_var_count; ++i) {
        if (g_vars[i].host_var != symbol)
            continue;
        CUmodule m;
        if (cudaError_t e = module_for(g_vars[i].fatbin, current_device(), &m))
            return e;
        CUresult r = cuModuleGetGlobal(dptr, bytes, m, g_vars[i].device_name);
        return r == CUDA_SUCCESS ? cudaSuccess : r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidSymbol : from_driver(r);
    }
    return cudaErrorInvalidSymbol;
}

// cudaFuncSetAttribute & co.: the driver function of a kernel's host stub.
cudaError_t function_of(const void* host_fn, CUfunction* f)
{
    Kernel* k = kernel_of_host_fn(host_fn);
    if (k == nullptr)
        return cudaErrorInvalidDeviceFunction;
    return function_for(*k, f);
}

cudaError_t enter_with_function(const void* host_fn, CUfunction* f)
{
    if (cudaError_t e = enter())
        return e;
    if (cudaError_t e = function_of(host_fn, f))
        return record(e);
    return cudaSuccess;
}

} // namespace guest::cudart

extern "C" {

void** __cudaRegisterFatBinary(void* fat_cubin)
{
    const auto* w = static_cast<const FatbinWrapper*>(fat_cubin);
    if (w == nullptr || w->magic != kFatbinWrapperMagic) {
        guest::platform::printf("cudart: __cudaRegisterFatBinary: not an nvcc fat binary wrapper (magic 0x%x)\n",
                      w != nullptr ? w->magic : 0u);
        guest::platform::exit(guest::kExitPanic);
    }
    if (g_fatbin_count == kMaxFatbins)
        registration_full("fat binaries", kMaxFatbins);
    Fatbin& fb = g_fatbins[g_fatbin_count++];
    fb = Fatbin{};
    fb.image = w->data;
    return &fb.handle_slot;
}

void __cudaRegisterFatBinaryEnd(void**) {}

// At exit (nvcc registers it with atexit): unloads the modules still loaded.
void __cudaUnregisterFatBinary(void** handle)
{
    GUEST_API_LOCK();
    const int i = fatbin_of(handle);
    if (i < 0 || guest::cudart::sticky_error() != cudaSuccess)
        return;
    for (int dev = 0; dev < kMaxDevices; ++dev)
        if (g_fatbins[i].module[dev] != nullptr) {
            cuModuleUnload(g_fatbins[i].module[dev]);
            g_fatbins[i].module[dev] = nullptr;
        }
}

void __cudaRegisterFunction(void** handle, const char* host_fn, char* device_fn, const char*, int, uint3*,
                            uint3*, dim3*, dim3*, int*)
{
    const int fb = fatbin_of(handle);
    if (fb < 0) {
        guest::platform::printf("cudart: __cudaRegisterFunction(%s): unknown fat binary handle\n", device_fn);
        guest::platform::exit(guest::kExitPanic);
    }
    if (g_kernel_count == kMaxKernels)
        registration_full("kernels", kMaxKernels);
    g_kernels[g_kernel_count++] = Kernel{host_fn, device_fn, fb, {}};
}

void __cudaRegisterVar(void** handle, char* host_var, char* device_address, const char* device_name, int,
                       size_t, int, int)
{
    const int fb = fatbin_of(handle);
    if (fb < 0) {
        guest::platform::printf("cudart: __cudaRegisterVar(%s): unknown fat binary handle\n", device_name);
        guest::platform::exit(guest::kExitPanic);
    }
    if (g_var_count == kMaxVars)
        registration_full("device variables", kMaxVars);
    g_vars[g_var_count++] = Var{host_var, device_address, fb};
}

// Managed variables need the runtime to set up managed memory: none here.
char __cudaInitModule(void**) { return 1; }

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_fn)
{
    GUEST_API_LOCK();
    Kernel* k = kernel_of_host_fn(host_fn);
    if (k == nullptr)
        return guest::cudart::record(cudaErrorInvalidDeviceFunction);
    *kernel = reinterpret_cast<cudaKernel_t>(k);
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                               cudaStream_t stream)
{
    GUEST_API_LOCK();
    return launch(reinterpret_cast<Kernel*>(kernel), grid, block, args, shared, stream);
}

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                             cudaStream_t stream)
{
    GUEST_API_LOCK();
    return launch(kernel_of_host_fn(func), grid, block, args, shared, stream);
}

// Every block resident at once (grid-wide synchronisation).
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                        cudaStream_t stream)
{
    GUEST_API_LOCK();
    return launch(kernel_of_host_fn(func), grid, block, args, shared, stream, true);
}

} // extern "C"
