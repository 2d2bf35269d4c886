// Modules, functions and kernel launches.
//
// Launch payload (vgpu_abi.h): nparams vgpu_param_desc, then the parameter
// bytes; each parameter starts at a multiple of its natural alignment
// (its size's lowest set bit, at most 8), after the descriptors rounded up
// to 8. Everything must fit VGPU_PAYLOAD_BYTES (448): e.g. 32 pointers do
// not (32*4 + 32*8 = 384 fits; more bytes of structs may not).
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/kernels/kernel_signatures.h"
#include "guest-stub/runtime/heap.h"
#include "guest-stub/runtime/mem.h"

using namespace guest::cuda;

namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint64_t kMaxImageBytes = 256ull << 20;

uint32_t align_of_param(uint16_t size)
{
    uint32_t a = size & (0u - size); // lowest set bit
    return a > 8 ? 8 : a;
}

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

CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned shmem, CUstream stream, void* const* params,
                const uint16_t* sizes, unsigned n)
{
    if (n > VGPU_MAX_KERNEL_PARAMS || (n > 0 && (params == nullptr || sizes == nullptr)))
        return CUDA_ERROR_INVALID_VALUE;
    alignas(8) uint8_t payload[VGPU_PAYLOAD_BYTES];
    uint32_t off = (n * sizeof(vgpu_param_desc) + 7u) & ~7u;
    for (unsigned i = 0; i < n; ++i) {
        uint16_t size = sizes[i];
        if (size == 0 || params[i] == nullptr)
            return CUDA_ERROR_INVALID_VALUE;
        uint32_t a = align_of_param(size);
        off = (off + a - 1) & ~(a - 1);
        if (off + size > VGPU_PAYLOAD_BYTES)
            return CUDA_ERROR_INVALID_VALUE; // parameters do not fit one slot
        memcpy(payload + off, params[i], size);
        vgpu_param_desc d{static_cast<uint16_t>(off), size};
        memcpy(payload + i * sizeof d, &d, sizeof d);
        off += size;
    }
    Call c;
    c.op = VGPU_OP_LAUNCH_KERNEL;
    c.arg[0] = f;
    c.arg[1] = stream;
    c.arg[2] = gx | (uint64_t)gy << 32;
    c.arg[3] = gz | (uint64_t)bx << 32;
    c.arg[4] = by | (uint64_t)bz << 32;
    c.arg[5] = shmem | (uint64_t)n << 32;
    c.payload = payload;
    c.payload_len = off;
    return call_async(c);
}

} // namespace

extern "C" CUresult vgpuModuleLoadDataSized(CUmodule* module, const void* image, size_t bytes)
{
    if (module == nullptr || image == nullptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    uint64_t gpa;
    if (!guest::phys_contiguous(image, bytes, &gpa)) {
        // A pageable image: the device takes one contiguous range, so copy
        // it to pinned memory (kept: it is as large as the image, once).
        void* bounce = guest::try_pinned_alloc_permanent(bytes, 0);
        if (bounce == nullptr)
            return CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(bounce, image, bytes);
        gpa = reinterpret_cast<uintptr_t>(bounce);
    }
    Call c;
    c.op = VGPU_OP_MODULE_LOAD_DATA;
    c.arg[0] = gpa;
    c.arg[1] = bytes;
    return call_result(c, module);
}

extern "C" CUresult cuModuleLoadData(CUmodule* module, const void* image)
{
    if (module == nullptr || image == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t bytes = image_size(image);
    if (bytes == 0)
        return CUDA_ERROR_INVALID_IMAGE;
    return vgpuModuleLoadDataSized(module, image, bytes);
}

extern "C" CUresult cuModuleUnload(CUmodule module)
{
    Call c;
    c.op = VGPU_OP_MODULE_UNLOAD;
    c.arg[0] = module;
    CUresult r = call_sync(c);
    if (r == CUDA_SUCCESS)
        module_forget(module);
    return r;
}

extern "C" CUresult cuModuleGetFunction(CUfunction* f, CUmodule module, const char* name)
{
    if (f == nullptr || name == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    size_t len = strlen(name);
    if (len == 0 || len > VGPU_PAYLOAD_BYTES)
        return CUDA_ERROR_INVALID_VALUE;
    Call c;
    c.op = VGPU_OP_MODULE_GET_FUNCTION;
    c.arg[0] = module;
    c.payload = name;
    c.payload_len = static_cast<uint32_t>(len);
    uint64_t res[2];
    CUresult r = call_sync(c, res);
    if (r != CUDA_SUCCESS)
        return r;
    *f = res[0];
    for (const guest::KernelSignature& k : guest::kKernelSignatures) {
        if (strcmp(k.name, name) == 0) {
            function_remember(*f, module, k.sizes, k.nparams, true);
            return CUDA_SUCCESS;
        }
    }
    function_remember(*f, module, nullptr, 0, false); // sizes unknown
    return CUDA_SUCCESS;
}

extern "C" CUresult vgpuFuncSetParamSizes(CUfunction f, const uint16_t* sizes, unsigned int nparams)
{
    if (nparams > VGPU_MAX_KERNEL_PARAMS || (nparams > 0 && sizes == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    function_remember(f, 0, sizes, nparams, true);
    const uint16_t* check;
    unsigned n;
    return function_sizes(f, &check, &n) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

extern "C" CUresult vgpuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                     unsigned int bx, unsigned int by, unsigned int bz,
                                     unsigned int shmem, CUstream stream, void** params,
                                     const uint16_t* sizes, unsigned int nparams)
{
    return launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, sizes, nparams);
}

extern "C" CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                   unsigned int bx, unsigned int by, unsigned int bz,
                                   unsigned int shmem, CUstream stream, void** kernelParams,
                                   void** extra)
{
    const uint16_t* sizes;
    unsigned n;
    if (!function_sizes(f, &sizes, &n))
        return CUDA_ERROR_INVALID_VALUE; // sizes unknown: see guest_cuda.h
    if (kernelParams != nullptr && extra != nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (extra == nullptr)
        return launch(f, gx, gy, gz, bx, by, bz, shmem, stream, kernelParams, sizes, n);

    // extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, END}
    // in any order: split the packed buffer at the parameters' natural offsets.
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
    if (buf == nullptr || buf_size == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    void* params[VGPU_MAX_KERNEL_PARAMS];
    size_t off = 0;
    for (unsigned i = 0; i < n; ++i) {
        uint32_t a = align_of_param(sizes[i]);
        off = (off + a - 1) & ~(size_t)(a - 1);
        if (off + sizes[i] > *buf_size)
            return CUDA_ERROR_INVALID_VALUE;
        params[i] = const_cast<uint8_t*>(buf + off);
        off += sizes[i];
    }
    return launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, sizes, n);
}
