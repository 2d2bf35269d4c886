// The tables NVIDIA's cudart asks for at start-up, besides context-local
// storage and the integrity check (their own files). Each entry that is
// implemented says what it is known to do; the rest are unknown_entry.
#include <stdarg.h>
#include <stdio.h>

#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/libcuda/export_tables.h"
#include "guest-stub/platform/platform.h"

namespace guest::libcuda {
namespace {

constexpr char kCudartName[] = "CUDART_INTERFACE";
constexpr char kToolsTlsName[] = "TOOLS_TLS";
constexpr char kHooksName[] = "TOOLS_RUNTIME_CALLBACK_HOOKS";
constexpr char kBypassName[] = "CTX_CREATE_BYPASS";
constexpr char kChecksName[] = "CONTEXT_CHECKS";
constexpr char kRequirementsName[] = "RUNTIME_REQUIREMENTS";
constexpr char kIdentityName[] = "CONTEXT_IDENTITY";

// nvcc's wrapper around a fat binary (__cudaFatCudaBinary2 in
// fatbinary_section.h): what __cudaRegisterFatBinary is given.
struct FatbinWrapper {
    uint32_t magic; // kFatbinWrapperMagic
    uint32_t version;
    const void* data; // the fat binary (its header first)
    const void* prelinked;
};
constexpr uint32_t kFatbinWrapperMagic = 0x466243b1u;

CUresult load_fatbin(CUmodule* module, const void* fatbin)
{
    if (module == nullptr || fatbin == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    return cuModuleLoadData(module, fatbin);
}

// [1]: the module of a registered fat binary (cudart's module loading).
CUresult module_from_fatbin_wrapper(CUmodule* module, const FatbinWrapper* wrapper)
{
    if (wrapper == nullptr || wrapper->magic != kFatbinWrapperMagic)
        return CUDA_ERROR_INVALID_IMAGE;
    return load_fatbin(module, wrapper->data);
}

// [6]: the same with three more arguments, null and 0 as cudart passes them;
// anything else is not understood and refused.
CUresult module_from_fatbin_wrapper_ex(CUmodule* module, const FatbinWrapper* wrapper, const void* a3,
                                       const void* a4, unsigned a5)
{
    if (a3 != nullptr || a4 != nullptr) {
        platform::printf("libcuda: CUDART_INTERFACE[6] with arguments %p %p %u: not supported\n", a3, a4, a5);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    return module_from_fatbin_wrapper(module, wrapper);
}

// [8]: a fat binary itself (not its wrapper), the module second.
CUresult module_from_fatbin_ex(const void* fatbin, CUmodule* module, const void* a3, const void* a4, unsigned a5)
{
    if (a3 != nullptr || a4 != nullptr) {
        platform::printf("libcuda: CUDART_INTERFACE[8] with arguments %p %p %u: not supported\n", a3, a4, a5);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    return load_fatbin(module, fatbin);
}

// [2]: a device's primary context, made if need be.
CUresult primary_context(CUcontext* pctx, CUdevice dev)
{
    return cuDevicePrimaryCtxRetain(pctx, dev);
}

// [7]: called with one word; its effect is not visible from outside.
CUresult cudart_fn7(size_t) { return CUDA_SUCCESS; }

// TOOLS_TLS[2]: the calling thread's current context.
CUresult tools_current_context(CUcontext* pctx) { return cuCtxGetCurrent(pctx); }

// TOOLS_RUNTIME_CALLBACK_HOOKS[2] and [6]: the arrays of 32-bit "a tool
// subscribed to this callback" flags that NVIDIA's libraries read before
// each call they report (runtime callback ids, then callback domains), and
// their lengths in entries, the driver's. cuBLASLt reads entry 0x111 of the
// first (it wants more than 0x20a entries); all zero: no tool listens, and
// the libraries call straight through.
uint32_t g_runtime_callback_enabled[1024];
uint32_t g_callback_domain_enabled[14];
void runtime_callback_flags(void** p, size_t* entries)
{
    if (p != nullptr)
        *p = g_runtime_callback_enabled;
    if (entries != nullptr)
        *entries = sizeof g_runtime_callback_enabled / sizeof g_runtime_callback_enabled[0];
}
void callback_domain_flags(void** p, size_t* entries)
{
    if (p != nullptr)
        *p = g_callback_domain_enabled;
    if (entries != nullptr)
        *entries = sizeof g_callback_domain_enabled / sizeof g_callback_domain_enabled[0];
}

// CTX_CREATE_BYPASS[1]: cuCtxCreate_v2's arguments.
CUresult ctx_create_bypass(CUcontext* pctx, unsigned flags, CUdevice dev)
{
    return cuCtxCreate(pctx, nullptr, flags, dev);
}

// CONTEXT_CHECKS[2]: flags and a detail of a context, never seen set;
// [3]: a global flag word, never seen set.
CUresult context_check(CUcontext, uint32_t* flags, const void** detail)
{
    if (flags != nullptr)
        *flags = 0;
    if (detail != nullptr)
        *detail = nullptr;
    return CUDA_SUCCESS;
}
uint32_t context_check_global() { return 0; }

// RUNTIME_REQUIREMENTS[1]: libraries (cuDNN) report errors through it.
void requirements_log(const char* domain, int severity, const char* fmt, va_list ap)
{
    char text[512] = "";
    if (fmt != nullptr)
        vsnprintf(text, sizeof text, fmt, ap);
    platform::printf("%s (severity %d): %s\n", domain != nullptr ? domain : "CUDA", severity, text);
}
// RUNTIME_REQUIREMENTS[25]: whether the runtime's requirements are met.
CUresult requirements_check(unsigned, const void*, const void*) { return CUDA_SUCCESS; }

// CONTEXT_IDENTITY[4]: a context's id, as cuCtxGetId (cuBLASLt asks it at
// cublasCreate, for the current context and for a null one).
CUresult context_identity(CUcontext ctx, unsigned long long* id) { return cuCtxGetId(ctx, id); }

// CONTEXT_IDENTITY[51]: a stream handle as the stream it stands for in
// `ctx` (cuBLAS asks it for its handle's stream, then [39] for that
// stream's id, the key of its per-stream workspace). Natively the driver's
// stream object comes back; here a default stream (null, or named by its
// special handle; per_thread: cuBLAS's handle was made for the per-thread
// default stream) comes back as its special handle, any other as itself:
// [39] and every cu* call take both.
CUresult stream_of(CUcontext, CUstream stream, CUstream* out, int per_thread)
{
    if (out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (stream == nullptr)
        stream = per_thread ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    *out = stream;
    return CUDA_SUCCESS;
}
// CONTEXT_IDENTITY[39]: a stream's id (cuStreamGetId), a default stream's
// that of `ctx`.
CUresult stream_identity(CUcontext ctx, CUstream stream, unsigned long long* id)
{
    return guest::cuda::stream_id_in(ctx, stream, id);
}

} // namespace

extern const Entry kCudartInterface[] = {
    KVMGPU_SIZE_WORD(13),
    KVMGPU_ENTRY(module_from_fatbin_wrapper),
    KVMGPU_ENTRY(primary_context),
    KVMGPU_UNKNOWN(kCudartName, 3),
    KVMGPU_UNKNOWN(kCudartName, 4),
    KVMGPU_UNKNOWN(kCudartName, 5),
    KVMGPU_ENTRY(module_from_fatbin_wrapper_ex),
    KVMGPU_ENTRY(cudart_fn7),
    KVMGPU_ENTRY(module_from_fatbin_ex),
    KVMGPU_UNKNOWN(kCudartName, 9),
    KVMGPU_UNKNOWN(kCudartName, 10),
    KVMGPU_UNKNOWN(kCudartName, 11),
    KVMGPU_UNKNOWN(kCudartName, 12),
};

extern const Entry kToolsTls[] = {
    KVMGPU_SIZE_WORD(4),
    KVMGPU_UNKNOWN(kToolsTlsName, 1),
    KVMGPU_ENTRY(tools_current_context),
    KVMGPU_UNKNOWN(kToolsTlsName, 3),
};

extern const Entry kToolsRuntimeCallbackHooks[] = {
    KVMGPU_SIZE_WORD(7),
    KVMGPU_UNKNOWN(kHooksName, 1),
    KVMGPU_ENTRY(runtime_callback_flags),
    KVMGPU_UNKNOWN(kHooksName, 3),
    KVMGPU_UNKNOWN(kHooksName, 4),
    KVMGPU_UNKNOWN(kHooksName, 5),
    KVMGPU_ENTRY(callback_domain_flags),
};

extern const Entry kCtxCreateBypass[] = {
    KVMGPU_SIZE_WORD(2),
    KVMGPU_ENTRY(ctx_create_bypass),
};

extern const Entry kContextChecks[] = {
    KVMGPU_SIZE_WORD(4),
    KVMGPU_UNKNOWN(kChecksName, 1),
    KVMGPU_ENTRY(context_check),
    KVMGPU_ENTRY(context_check_global),
};

// Sub-tables one after another, each headed by its size: 3, 2, 4, 2, ?, 7,
// ?, 15 entries (slots 0, 4, 6, 10, 14, 22 are sizes).
extern const Entry kRuntimeRequirements[] = {
    KVMGPU_SIZE_WORD(3),
    KVMGPU_ENTRY(requirements_log),
    KVMGPU_UNKNOWN(kRequirementsName, 2),
    KVMGPU_UNKNOWN(kRequirementsName, 3),
    KVMGPU_SIZE_WORD(2),
    KVMGPU_UNKNOWN(kRequirementsName, 5),
    KVMGPU_SIZE_WORD(4),
    KVMGPU_UNKNOWN(kRequirementsName, 7),
    KVMGPU_UNKNOWN(kRequirementsName, 8),
    KVMGPU_UNKNOWN(kRequirementsName, 9),
    KVMGPU_SIZE_WORD(2),
    KVMGPU_UNKNOWN(kRequirementsName, 11),
    KVMGPU_UNKNOWN(kRequirementsName, 12),
    KVMGPU_UNKNOWN(kRequirementsName, 13),
    KVMGPU_SIZE_WORD(7),
    KVMGPU_UNKNOWN(kRequirementsName, 15),
    KVMGPU_UNKNOWN(kRequirementsName, 16),
    KVMGPU_UNKNOWN(kRequirementsName, 17),
    KVMGPU_UNKNOWN(kRequirementsName, 18),
    KVMGPU_UNKNOWN(kRequirementsName, 19),
    KVMGPU_UNKNOWN(kRequirementsName, 20),
    KVMGPU_UNKNOWN(kRequirementsName, 21),
    KVMGPU_SIZE_WORD(15),
    KVMGPU_UNKNOWN(kRequirementsName, 23),
    KVMGPU_UNKNOWN(kRequirementsName, 24),
    KVMGPU_ENTRY(requirements_check),
    KVMGPU_UNKNOWN(kRequirementsName, 26),
    KVMGPU_UNKNOWN(kRequirementsName, 27),
    KVMGPU_UNKNOWN(kRequirementsName, 28),
    KVMGPU_UNKNOWN(kRequirementsName, 29),
    KVMGPU_UNKNOWN(kRequirementsName, 30),
    KVMGPU_UNKNOWN(kRequirementsName, 31),
    KVMGPU_UNKNOWN(kRequirementsName, 32),
    KVMGPU_UNKNOWN(kRequirementsName, 33),
    KVMGPU_UNKNOWN(kRequirementsName, 34),
    KVMGPU_UNKNOWN(kRequirementsName, 35),
    KVMGPU_UNKNOWN(kRequirementsName, 36),
};

// 93 entries (a size word of 744 bytes with CUDA 13.0's driver); [4], [39]
// and [51] are known.
extern const Entry kContextIdentity[] = {
    KVMGPU_SIZE_WORD(93),
    KVMGPU_UNKNOWN(kIdentityName, 1),
    KVMGPU_UNKNOWN(kIdentityName, 2),
    KVMGPU_UNKNOWN(kIdentityName, 3),
    KVMGPU_ENTRY(context_identity),
    KVMGPU_UNKNOWN(kIdentityName, 5),
    KVMGPU_UNKNOWN(kIdentityName, 6),
    KVMGPU_UNKNOWN(kIdentityName, 7),
    KVMGPU_UNKNOWN_8(kIdentityName, 8),
    KVMGPU_UNKNOWN_8(kIdentityName, 16),
    KVMGPU_UNKNOWN_8(kIdentityName, 24),
    KVMGPU_UNKNOWN(kIdentityName, 32),
    KVMGPU_UNKNOWN(kIdentityName, 33),
    KVMGPU_UNKNOWN(kIdentityName, 34),
    KVMGPU_UNKNOWN(kIdentityName, 35),
    KVMGPU_UNKNOWN(kIdentityName, 36),
    KVMGPU_UNKNOWN(kIdentityName, 37),
    KVMGPU_UNKNOWN(kIdentityName, 38),
    KVMGPU_ENTRY(stream_identity),
    KVMGPU_UNKNOWN_8(kIdentityName, 40),
    KVMGPU_UNKNOWN(kIdentityName, 48),
    KVMGPU_UNKNOWN(kIdentityName, 49),
    KVMGPU_UNKNOWN(kIdentityName, 50),
    KVMGPU_ENTRY(stream_of),
    KVMGPU_UNKNOWN(kIdentityName, 52),
    KVMGPU_UNKNOWN(kIdentityName, 53),
    KVMGPU_UNKNOWN(kIdentityName, 54),
    KVMGPU_UNKNOWN(kIdentityName, 55),
    KVMGPU_UNKNOWN_8(kIdentityName, 56),
    KVMGPU_UNKNOWN_8(kIdentityName, 64),
    KVMGPU_UNKNOWN_8(kIdentityName, 72),
    KVMGPU_UNKNOWN_8(kIdentityName, 80),
    KVMGPU_UNKNOWN(kIdentityName, 88),
    KVMGPU_UNKNOWN(kIdentityName, 89),
    KVMGPU_UNKNOWN(kIdentityName, 90),
    KVMGPU_UNKNOWN(kIdentityName, 91),
    KVMGPU_UNKNOWN(kIdentityName, 92),
};
static_assert(sizeof kContextIdentity / sizeof kContextIdentity[0] == 93);

} // namespace guest::libcuda
