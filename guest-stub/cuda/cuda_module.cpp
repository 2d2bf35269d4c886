// Modules, functions and kernel launches. A launch sends the kernel's
// parameter buffer laid out by the layout the module defines
// (VGPU_OP_LAUNCH_KERNEL_PACKED): in the ring slot when it fits, else from a
// pinned scratch buffer the call waits for the device to take.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/platform.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint64_t kMaxImageBytes = 256ull << 20;

// Image size as the driver would find it: fatbin header, ELF section/program
// header tables, or PTX text up to its NUL. 0 if it cannot tell.
uint64_t image_size(const void* image)
{
    const uint8_t* p = static_cast<const uint8_t*>(image);
    uint32_t magic;
    memcpy(&magic, p, 4);
    if (magic == kFatbinMagic) {
        uint16_t header;
        uint64_t fat;
        memcpy(&header, p + 6, 2);
        memcpy(&fat, p + 8, 8);
        return fat > kMaxImageBytes ? 0 : header + fat;
    }
    if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F' && p[4] == 2 /* ELFCLASS64 */) {
        uint64_t phoff, shoff;
        uint16_t phentsize, phnum, shentsize, shnum;
        memcpy(&phoff, p + 0x20, 8);
        memcpy(&shoff, p + 0x28, 8);
        memcpy(&phentsize, p + 0x36, 2);
        memcpy(&phnum, p + 0x38, 2);
        memcpy(&shentsize, p + 0x3A, 2);
        memcpy(&shnum, p + 0x3C, 2);
        if (phoff > kMaxImageBytes || shoff > kMaxImageBytes)
            return 0;
        uint64_t a = phoff + (uint64_t)phentsize * phnum;
        uint64_t b = shoff + (uint64_t)shentsize * shnum;
        return a > b ? a : b;
    }
    for (uint64_t n = 0; n < kMaxImageBytes; ++n) // PTX: text and its NUL
        if (p[n] == '\0')
            return n + 1;
    return 0;
}

// The launch shapes every CUDA GPU refuses, checked here so that
// cuLaunchKernel returns the error itself, as the driver does, instead of a
// later synchronization point: a zero dimension, dimensions beyond
// vgpu_launch_dims_ok, or more dynamic shared memory than the function
// allows (48 KiB unless cuFuncSetAttribute raised it).
bool launch_shape_ok(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                     unsigned max_shared)
{
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0)
        return false;
    return vgpu_launch_dims_ok(gx, gy, gz, bx, by, bz) && shmem <= max_shared;
}

// Sends the parameter buffer `params` (layout l's bytes) with the launch.
// The payload room a launch's parameter buffer has: less the cluster header.
uint32_t param_room(const vgpu_launch_cluster* cluster)
{
    return VGPU_PAYLOAD_BYTES - (cluster != nullptr ? VGPU_LAUNCH_CLUSTER_BYTES : 0);
}

// `params` is in the payload's room or, past it, the identity-mapped scratch.
CUresult launch_packed(const FunctionLayout& l, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, CUstream stream, const uint8_t* params,
                       uint16_t flags, const vgpu_launch_cluster* cluster)
{
    Call c;
    capture_note_work(stream);
    c.op = VGPU_OP_LAUNCH_KERNEL_PACKED;
    c.flags = flags;
    c.set_args(vgpu_launch_args{handle_bits(l.handle), stream_arg(stream), {gx, gy, gz}, {bx, by, bz}, shmem,
                                l.bytes});
    const bool inline_params = l.bytes <= param_room(cluster);
    const uint64_t gpa = reinterpret_cast<uintptr_t>(params);
    const void* tail = inline_params ? static_cast<const void*>(params) : &gpa;
    const uint32_t tail_len = inline_params ? l.bytes : sizeof gpa;
    alignas(16) uint8_t joined[VGPU_PAYLOAD_BYTES];
    if (cluster != nullptr) {
        c.flags |= VGPU_CMD_FLAG_CLUSTER;
        memcpy(joined, cluster, VGPU_LAUNCH_CLUSTER_BYTES);
        memcpy(joined + VGPU_LAUNCH_CLUSTER_BYTES, tail, tail_len);
        c.payload = joined;
        c.payload_len = VGPU_LAUNCH_CLUSTER_BYTES + tail_len;
    } else {
        c.payload = tail;
        c.payload_len = tail_len;
    }
    // Taken at once when the scratch holds the buffer: the next launch reuses it.
    return managed_launch(c, stream, !inline_params);
}

} // namespace

extern "C" CUresult vgpuModuleLoadDataSized(CUmodule* module, const void* image, size_t bytes)
{
    GUEST_API_LOCK();
    if (module == nullptr || image == nullptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    uint64_t gpa;
    void* bounce = nullptr;
    if (!guest::platform::phys_contiguous(image, bytes, &gpa)) {
        // A pageable image: the device takes one contiguous range, so copy
        // it to page-locked memory, given back once the vGPU has its copy.
        if (CUresult r = cuMemAllocHost(&bounce, bytes))
            return r;
        memcpy(bounce, image, bytes);
        if (!guest::platform::phys_contiguous(bounce, bytes, &gpa)) {
            cuMemFreeHost(bounce);
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    Call c = command<VGPU_OP_MODULE_LOAD_DATA>({gpa, bytes});
    const CUresult r = call_result(c, module);
    if (bounce != nullptr)
        cuMemFreeHost(bounce);
    return r;
}

KVMGPU_DRIVER_ENTRY(cuModuleLoadData, 2000);
extern "C" CUresult cuModuleLoadData(CUmodule* module, const void* image)
{
    GUEST_API_LOCK();
    if (module == nullptr || image == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t bytes = image_size(image);
    if (bytes == 0)
        return CUDA_ERROR_INVALID_IMAGE;
    return vgpuModuleLoadDataSized(module, image, bytes);
}

// The fat binary's own header gives its size, as cuModuleLoadData reads it.
KVMGPU_DRIVER_ENTRY(cuModuleLoadFatBinary, 2000);
extern "C" CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin)
{
    GUEST_API_LOCK();
    return cuModuleLoadData(module, fatCubin);
}

KVMGPU_DRIVER_ENTRY(cuModuleLoad, 2000);
extern "C" CUresult cuModuleLoad(CUmodule* module, const char* fname)
{
    GUEST_API_LOCK();
    if (module == nullptr || fname == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    void* image = nullptr;
    size_t bytes = 0;
    switch (guest::platform::read_file(fname, &image, &bytes)) {
    case guest::platform::FileResult::kOk: break;
    case guest::platform::FileResult::kNotFound: return CUDA_ERROR_FILE_NOT_FOUND;
    case guest::platform::FileResult::kNoFiles: return CUDA_ERROR_NOT_SUPPORTED;
    case guest::platform::FileResult::kNoMemory: return CUDA_ERROR_OUT_OF_MEMORY;
    case guest::platform::FileResult::kReadError: return CUDA_ERROR_INVALID_VALUE;
    }
    // The file's own bytes: a fatbin or ELF is sized by its header, PTX by its NUL, as in cuModuleLoadData.
    const CUresult r = bytes == 0 ? CUDA_ERROR_INVALID_IMAGE : cuModuleLoadData(module, image);
    guest::platform::release_file(image);
    return r;
}

// JIT options are hints to a compiler the vGPU's driver runs with its own:
// none is acted on; the ones the driver writes back (the logs' sizes, the
// wall time) read as 0, an empty log.
KVMGPU_DRIVER_ENTRY(cuModuleLoadDataEx, 2010);
extern "C" CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                       CUjit_option* options, void** optionValues)
{
    GUEST_API_LOCK();
    if (numOptions > 0 && (options == nullptr || optionValues == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numOptions; ++i) {
        switch (options[i]) {
        case CU_JIT_WALL_TIME:
            *reinterpret_cast<float*>(&optionValues[i]) = 0.0f;
            break;
        case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
            optionValues[i] = nullptr; // 0 bytes written
            break;
        default:
            break;
        }
    }
    return cuModuleLoadData(module, image);
}

KVMGPU_DRIVER_ENTRY(cuModuleUnload, 2000);
extern "C" CUresult cuModuleUnload(CUmodule module)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_MODULE_UNLOAD>({handle_bits(module)});
    CUresult r = call_sync(c);
    if (r == CUDA_SUCCESS)
        module_forget(module);
    return r;
}

namespace {
// A lookup by name in a module (a function, a global): the name travels in
// the payload without its NUL, or, longer than the payload, in the
// identity-mapped scratch whose address the payload holds (`gpa` keeps it
// for the call). False for a name the vGPU would refuse.
template <uint16_t Op>
bool name_lookup(CUmodule module, const char* name, Call* c, uint64_t* gpa)
{
    size_t len = 0; // at most one past the limit: a name need not end where the limit does
    while (name != nullptr && len <= VGPU_MAX_NAME_BYTES && name[len] != '\0')
        ++len;
    if (len == 0 || len > VGPU_MAX_NAME_BYTES)
        return false;
    *c = command<Op>({handle_bits(module), 0});
    if (len <= VGPU_PAYLOAD_BYTES) {
        c->payload = name;
        c->payload_len = static_cast<uint32_t>(len);
        return true;
    }
    uint8_t* scratch = param_scratch();
    if (scratch == nullptr)
        return false;
    memcpy(scratch, name, len);
    *gpa = reinterpret_cast<uintptr_t>(scratch);
    *c = command<Op>({handle_bits(module), len});
    c->payload = gpa;
    c->payload_len = sizeof *gpa;
    return true;
}
} // namespace

extern "C" CUresult cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule module, const char* name)
{
    GUEST_API_LOCK();
    Call c;
    uint64_t gpa;
    if (!name_lookup<VGPU_OP_MODULE_GET_GLOBAL>(module, name, &c, &gpa))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t res[2];
    if (CUresult r = call_sync(c, res))
        return r;
    if (dptr != nullptr) // either output may be left out, as with the driver
        *dptr = res[0];
    if (bytes != nullptr)
        *bytes = res[1];
    return CUDA_SUCCESS;
}

namespace {
CUresult no_reference(const void* out, CUmodule module, const char* name)
{
    unsigned functions = 0;
    if (out == nullptr || name == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = cuModuleGetFunctionCount(&functions, module)) // the module is checked
        return r;
    return CUDA_ERROR_NOT_FOUND;
}
} // namespace

KVMGPU_DRIVER_ENTRY(cuModuleGetTexRef, 2000);
extern "C" CUresult cuModuleGetTexRef(CUtexref* texref, CUmodule module, const char* name)
{
    GUEST_API_LOCK();
    return no_reference(texref, module, name);
}

KVMGPU_DRIVER_ENTRY(cuModuleGetSurfRef, 3000);
extern "C" CUresult cuModuleGetSurfRef(CUsurfref* surfref, CUmodule module, const char* name)
{
    GUEST_API_LOCK();
    return no_reference(surfref, module, name);
}

namespace {
constexpr uint32_t kDescsPerCall = VGPU_PAYLOAD_BYTES / sizeof(vgpu_param_desc);

// A function handle the device issued for `module`: its parameter layout
// learnt once, as the module defines it. `first` holds the count and size
// (vgpu_result_function's params) and the first descriptors when the
// lookup brought them; the rest, or all when it did not, in as many calls
// as it takes.
struct FirstDescs {
    uint32_t count, bytes;
    const vgpu_param_desc* descs;
};
CUresult learn_function(CUfunction handle, CUmodule module, const FirstDescs* first = nullptr)
{
    if (function_find(handle) != nullptr) // asked before: the device gives the same handle
        return CUDA_SUCCESS;
    vgpu_param_desc descs[kDescsPerCall];
    uint64_t res[2];
    if (first != nullptr) {
        res[0] = first->count, res[1] = first->bytes;
        __builtin_memcpy(descs, first->descs, sizeof descs);
    } else if (CUresult r = call_sync(command<VGPU_OP_FUNC_GET_PARAM_INFO>({handle_bits(handle), 0}), res, descs,
                                      sizeof descs)) {
        return r;
    }
    FunctionLayout* l = function_add(handle, module, static_cast<uint32_t>(res[0]), static_cast<uint32_t>(res[1]));
    if (l == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < l->count; ++i) {
        if (i > 0 && i % kDescsPerCall == 0) {
            if (CUresult r = call_sync(command<VGPU_OP_FUNC_GET_PARAM_INFO>({handle_bits(handle), i}), res, descs,
                                       sizeof descs))
                return r;
        }
        l->offsets[i] = descs[i % kDescsPerCall].offset;
        l->sizes[i] = descs[i % kDescsPerCall].size;
    }
    return CUDA_SUCCESS;
}
} // namespace

KVMGPU_DRIVER_ENTRY(cuModuleGetFunction, 2000);
extern "C" CUresult cuModuleGetFunction(CUfunction* f, CUmodule module, const char* name)
{
    GUEST_API_LOCK();
    Call c;
    uint64_t gpa;
    if (f == nullptr || !name_lookup<VGPU_OP_MODULE_GET_FUNCTION>(module, name, &c, &gpa))
        return CUDA_ERROR_INVALID_VALUE;
    // One round trip: the handle, and the layout a first launch needs.
    uint64_t res[2];
    vgpu_param_desc descs[kDescsPerCall];
    if (CUresult r = call_sync(c, res, descs, sizeof descs))
        return r;
    const CUfunction handle = handle_of<CUfunction>(res[0]);
    const FirstDescs first{static_cast<uint32_t>(res[1]), static_cast<uint32_t>(res[1] >> 32), descs};
    if (CUresult r = learn_function(handle, module, &first))
        return r;
    *f = handle;
    return CUDA_SUCCESS;
}

namespace guest::cuda {
CUresult module_functions(CUmodule module, CUfunction* functions, unsigned capacity, unsigned* count)
{
    constexpr uint32_t kPerCall = VGPU_PAYLOAD_BYTES / sizeof(uint64_t);
    uint64_t handles[kPerCall];
    uint64_t res[2] = {};
    unsigned done = 0;
    do {
        Call c = command<VGPU_OP_MODULE_FUNCTIONS>({handle_bits(module), done});
        if (CUresult r = call_sync(c, res, handles, sizeof handles))
            return r;
        *count = static_cast<unsigned>(res[0]);
        for (uint64_t i = 0; i < res[1] && done < capacity; ++i, ++done) {
            const CUfunction f = reinterpret_cast<CUfunction>(handles[i]);
            if (CUresult r = learn_function(f, module))
                return r;
            functions[done] = f;
        }
    } while (done < capacity && done < res[0] && res[1] > 0);
    return CUDA_SUCCESS;
}
} // namespace guest::cuda

KVMGPU_DRIVER_ENTRY(cuModuleGetFunctionCount, 12040);
extern "C" CUresult cuModuleGetFunctionCount(unsigned int* count, CUmodule mod)
{
    GUEST_API_LOCK();
    if (count == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    return module_functions(mod, nullptr, 0, count);
}

KVMGPU_DRIVER_ENTRY(cuModuleEnumerateFunctions, 12040);
extern "C" CUresult cuModuleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions, CUmodule mod)
{
    GUEST_API_LOCK();
    if (functions == nullptr && numFunctions > 0)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned count = 0;
    return module_functions(mod, functions, numFunctions, &count);
}

KVMGPU_DRIVER_ENTRY(cuFuncGetAttribute, 2020);
extern "C" CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    GUEST_API_LOCK();
    if (pi == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    FunctionLayout* l = function_find(hfunc);
    const unsigned a = static_cast<unsigned>(attrib);
    const bool cacheable = l != nullptr && a < FunctionLayout::kCachedAttributes;
    if (cacheable && (l->attributes_known & (1u << a))) {
        *pi = l->attributes[a];
        return CUDA_SUCCESS;
    }
    Call c = command<VGPU_OP_FUNC_GET_ATTRIBUTE>({handle_bits(hfunc), static_cast<uint64_t>(attrib)});
    uint64_t res[2];
    CUresult r = call_sync(c, res);
    if (r == CUDA_SUCCESS) {
        *pi = static_cast<int>(static_cast<int64_t>(res[0]));
        if (cacheable) {
            l->attributes[a] = *pi;
            l->attributes_known |= 1u << a;
        }
    }
    return r;
}

KVMGPU_DRIVER_ENTRY(cuFuncSetAttribute, 9000);
extern "C" CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_FUNC_SET_ATTRIBUTE>(
        {handle_bits(hfunc), static_cast<uint64_t>(attrib), static_cast<uint64_t>(static_cast<int64_t>(value))});
    CUresult r = call_sync(c);
    if (FunctionLayout* l = function_find(hfunc)) {
        // Set or refused, the next read asks the device (a set attribute may
        // move others with it, as the cluster ones do).
        l->attributes_known = 0;
        if (r == CUDA_SUCCESS && attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
            l->max_dynamic_shared = static_cast<uint32_t>(value);
    }
    return r;
}

// A preference the driver may ignore: checked (a known function, a known
// value) and kept by nobody, as the VMM's GPU decides its own carve-out.
KVMGPU_DRIVER_ENTRY(cuFuncSetCacheConfig, 3000);
extern "C" CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    GUEST_API_LOCK();
    if (function_find(hfunc) == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    return ready();
}

extern "C" CUresult vgpuFuncGetParamLayout(CUfunction f, unsigned int* count, const uint16_t** offsets,
                                           const uint16_t** sizes, size_t* bytes)
{
    GUEST_API_LOCK();
    const FunctionLayout* l = function_find(f);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (count != nullptr)
        *count = l->count;
    if (offsets != nullptr)
        *offsets = l->offsets;
    if (sizes != nullptr)
        *sizes = l->sizes;
    if (bytes != nullptr)
        *bytes = l->bytes;
    return CUDA_SUCCESS;
}

namespace {

// A cooperative grid must be resident at once: at most the occupancy's
// blocks on every multiprocessor, else the call itself refuses it, as the
// driver's does (two questions to the VMM: cooperative launches are rare).
CUresult cooperative_fits(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned threads, unsigned shmem)
{
    int per_sm = 0, sms = 0;
    CUdevice dev = 0;
    if (CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, static_cast<int>(threads), shmem))
        return r;
    if (CUresult r = cuCtxGetDevice(&dev))
        return r;
    if (CUresult r = cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
        return r;
    const uint64_t blocks = static_cast<uint64_t>(gx) * gy * gz;
    return blocks > static_cast<uint64_t>(per_sm) * static_cast<uint64_t>(sms) ? CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
                                                                              : CUDA_SUCCESS;
}

// cuLaunchKernel and its cooperative and Ex forms; flags: VGPU_CMD_FLAG_COOPERATIVE or 0.
CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                unsigned shmem, CUstream stream, void** kernelParams, void** extra, uint16_t flags,
                const vgpu_launch_cluster* cluster = nullptr)
{
    const FunctionLayout* l = function_find(f);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (kernelParams != nullptr && extra != nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (!launch_shape_ok(gx, gy, gz, bx, by, bz, shmem, l->max_dynamic_shared))
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & VGPU_CMD_FLAG_COOPERATIVE) {
        if (CUresult r = cooperative_fits(f, gx, gy, gz, bx * by * bz, shmem))
            return r;
    }
    alignas(16) uint8_t inline_buffer[VGPU_PAYLOAD_BYTES];
    uint8_t* buffer = inline_buffer;
    if (l->bytes > param_room(cluster) && (buffer = param_scratch()) == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (CUresult r = pack_kernel_params(*l, kernelParams, extra, buffer))
        return r;
    return launch_packed(*l, gx, gy, gz, bx, by, bz, shmem, stream, buffer, flags, cluster);
}

} // namespace

namespace guest::cuda {

CUresult pack_kernel_params(const FunctionLayout& l, void** kernelParams, void** extra, uint8_t* buffer)
{
    if (extra != nullptr) {
        // {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, END}, in any
        // order: the buffer is already laid out by the kernel's layout, and exactly its size.
        const uint8_t* buf = nullptr;
        const size_t* buf_size = nullptr;
        for (unsigned i = 0; i < 8 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = static_cast<const uint8_t*>(extra[i + 1]);
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                buf_size = static_cast<const size_t*>(extra[i + 1]);
            else
                return CUDA_ERROR_INVALID_VALUE;
        }
        if ((l.bytes > 0 && buf == nullptr) || buf_size == nullptr || *buf_size != l.bytes)
            return CUDA_ERROR_INVALID_VALUE;
        memcpy(buffer, buf, l.bytes);
    } else {
        if (l.count > 0 && kernelParams == nullptr)
            return CUDA_ERROR_INVALID_VALUE;
        memset(buffer, 0, l.bytes); // padding between parameters
        for (uint32_t i = 0; i < l.count; ++i) {
            if (kernelParams[i] == nullptr)
                return CUDA_ERROR_INVALID_VALUE;
            memcpy(buffer + l.offsets[i], kernelParams[i], l.sizes[i]);
        }
    }
    return CUDA_SUCCESS;
}

bool kernel_shape_ok(const FunctionLayout& l, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                     unsigned bz, unsigned shmem)
{
    return launch_shape_ok(gx, gy, gz, bx, by, bz, shmem, l.max_dynamic_shared);
}

} // namespace guest::cuda

KVMGPU_DRIVER_ENTRY(cuLaunchKernel, 4000);
extern "C" CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                   unsigned int bx, unsigned int by, unsigned int bz,
                                   unsigned int shmem, CUstream stream, void** kernelParams,
                                   void** extra)
{
    GUEST_API_LOCK();
    return launch(f, gx, gy, gz, bx, by, bz, shmem, stream, kernelParams, extra, 0);
}

KVMGPU_DRIVER_ENTRY(cuLaunchCooperativeKernel, 9000);
extern "C" CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                              unsigned int bx, unsigned int by, unsigned int bz,
                                              unsigned int shmem, CUstream stream, void** kernelParams)
{
    GUEST_API_LOCK();
    return launch(f, gx, gy, gz, bx, by, bz, shmem, stream, kernelParams, nullptr, VGPU_CMD_FLAG_COOPERATIVE);
}

KVMGPU_DRIVER_ENTRY(cuLaunchKernelEx, 11060);
extern "C" CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra)
{
    GUEST_API_LOCK();
    if (config == nullptr || (config->numAttrs > 0 && config->attrs == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    uint16_t flags = 0;
    vgpu_launch_cluster cluster{{1, 1, 1}, 0};
    bool clustered = false;
    for (unsigned i = 0; i < config->numAttrs; ++i) {
        const CUlaunchAttribute& a = config->attrs[i];
        switch (a.id) {
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
            flags = a.value.cooperative != 0 ? VGPU_CMD_FLAG_COOPERATIVE : 0;
            break;
        case CU_LAUNCH_ATTRIBUTE_IGNORE:
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
            break; // hints (guest_cuda.h)
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            cluster.dim[0] = a.value.clusterDim.x, cluster.dim[1] = a.value.clusterDim.y;
            cluster.dim[2] = a.value.clusterDim.z;
            clustered = true;
            break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
            // A hint, sent only with a cluster.
            cluster.scheduling = static_cast<uint32_t>(a.value.clusterSchedulingPolicyPreference);
            break;
        default:
            return CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    if (clustered && (cluster.dim[0] == 0 || cluster.dim[1] == 0 || cluster.dim[2] == 0 ||
                      config->gridDimX % cluster.dim[0] != 0 || config->gridDimY % cluster.dim[1] != 0 ||
                      config->gridDimZ % cluster.dim[2] != 0))
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    return launch(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX, config->blockDimY,
                  config->blockDimZ, config->sharedMemBytes, config->hStream, kernelParams, extra, flags,
                  clustered ? &cluster : nullptr);
}

KVMGPU_DRIVER_ENTRY(cuFuncGetParamInfo, 12040);
extern "C" CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset, size_t* paramSize)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    const FunctionLayout* l = func != nullptr ? function_find(func) : nullptr;
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (paramIndex >= l->count)
        return CUDA_ERROR_INVALID_VALUE;
    if (paramOffset != nullptr)
        *paramOffset = l->offsets[paramIndex];
    if (paramSize != nullptr)
        *paramSize = l->sizes[paramIndex];
    return CUDA_SUCCESS;
}
