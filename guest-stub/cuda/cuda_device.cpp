// Device queries, context synchronization and error names.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"
#include "guest-stub/platform/platform.h"

using namespace guest::cuda;

namespace {

CUresult check_device(CUdevice dev)
{
    int count = 0;
    if (CUresult r = cuDeviceGetCount(&count))
        return r;
    return dev >= 0 && dev < count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuDriverGetVersion, 2020);
extern "C" CUresult cuDriverGetVersion(int* version)
{
    GUEST_API_LOCK();
    if (version == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *version = kvmgpu_guest_driver_version;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuDeviceGetCount, 2000);
extern "C" CUresult cuDeviceGetCount(int* count)
{
    GUEST_API_LOCK();
    if (count == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    // A VM's devices are fixed when it starts: asked once (libraries ask on
    // every call: cuDNN).
    static int known = -1;
    if (known >= 0) {
        *count = known;
        return CUDA_SUCCESS;
    }
    Call c = command<VGPU_OP_DEVICE_GET_COUNT>();
    const CUresult r = call_result(c, count);
    if (r == CUDA_SUCCESS)
        known = *count;
    return r;
}

KVMGPU_DRIVER_ENTRY(cuDeviceGet, 2000);
extern "C" CUresult cuDeviceGet(CUdevice* device, int ordinal)
{
    GUEST_API_LOCK();
    if (device == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_device(ordinal))
        return r;
    *device = ordinal;
    return CUDA_SUCCESS;
}

namespace {
// A device's attributes are fixed while the VM runs: the first one asked
// brings its block of VGPU_ATTRIBUTES_PER_CALL in one command (a runtime
// reads a device's properties as a hundred of them); one the block lacks
// is asked alone, once.
constexpr int kCachedDevices = 16;
constexpr unsigned kCachedAttributes = 2 * VGPU_ATTRIBUTES_PER_CALL;
struct AttributeCache {
    uint64_t known[(kCachedAttributes + 63) / 64];
    bool block_asked[kCachedAttributes / VGPU_ATTRIBUTES_PER_CALL];
    int values[kCachedAttributes];
};
AttributeCache g_attributes[kCachedDevices];

void remember(AttributeCache& cache, unsigned a, int value)
{
    cache.values[a] = value;
    cache.known[a / 64] |= uint64_t{1} << (a % 64);
}

bool cached(const AttributeCache& cache, unsigned a, int* pi)
{
    if (!(cache.known[a / 64] >> (a % 64) & 1))
        return false;
    *pi = cache.values[a];
    return true;
}

// Attribute a's block, asked once; a device the vGPU does not know answers
// nothing here (the single question then says so).
void ask_block(AttributeCache& cache, unsigned a, CUdevice dev)
{
    const unsigned block = a / VGPU_ATTRIBUTES_PER_CALL;
    if (cache.block_asked[block])
        return;
    cache.block_asked[block] = true;
    const uint64_t first = uint64_t{block} * VGPU_ATTRIBUTES_PER_CALL;
    Call c = command<VGPU_OP_DEVICE_GET_ATTRIBUTES>({device_arg(dev), first});
    uint64_t mask[2] = {0, 0};
    int32_t values[VGPU_ATTRIBUTES_PER_CALL];
    if (call_sync(c, mask, values, sizeof values) != CUDA_SUCCESS)
        return;
    for (unsigned i = 0; i < VGPU_ATTRIBUTES_PER_CALL; ++i)
        if (mask[i / 64] >> (i % 64) & 1)
            remember(cache, static_cast<unsigned>(first) + i, values[i]);
}

CUresult device_attribute(int* pi, CUdevice_attribute attrib, CUdevice dev)
{
    const unsigned a = static_cast<unsigned>(attrib);
    AttributeCache* cache = dev < kCachedDevices && a < kCachedAttributes ? &g_attributes[dev] : nullptr;
    if (cache != nullptr) {
        if (cached(*cache, a, pi))
            return CUDA_SUCCESS;
        ask_block(*cache, a, dev);
        if (cached(*cache, a, pi))
            return CUDA_SUCCESS;
    }
    Call c = command<VGPU_OP_DEVICE_GET_ATTRIBUTE>({static_cast<uint64_t>(attrib), device_arg(dev)});
    const CUresult r = call_result(c, pi);
    if (r == CUDA_SUCCESS && cache != nullptr)
        remember(*cache, a, *pi);
    return r;
}
} // namespace

KVMGPU_DRIVER_ENTRY(cuDeviceGetAttribute, 2000);
extern "C" CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev)
{
    GUEST_API_LOCK();
    if (pi == nullptr || dev < 0)
        return CUDA_ERROR_INVALID_VALUE;
    const CUresult r = device_attribute(pi, attrib, dev);
    // Managed memory is the guest library's emulation (docs/managed-memory.md):
    // where the VMM says it is offered or aliases exist (MANAGED_MEMORY), never accessed
    // concurrently by CPU and GPU; access to pageable memory is the VMM's
    // host's, not this guest's. The library answers these for any device the
    // vGPU knows, whatever its backend says of them.
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_VALUE)
        return r;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
        // Where the device cannot place memory at guest addresses, the VMM
        // can give guest memory the device's (cuda_managed.cpp).
        if (r == CUDA_SUCCESS && *pi == 0 && guest::platform::map_alias(0, nullptr, 0) == 0)
            *pi = 1;
        return r;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS:
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES:
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST:
        *pi = 0;
        return CUDA_SUCCESS;
    default:
        break;
    }
    return r;
}

KVMGPU_DRIVER_ENTRY(cuDeviceGetName, 2000);
extern "C" CUresult cuDeviceGetName(char* name, int len, CUdevice dev)
{
    GUEST_API_LOCK();
    if (name == nullptr || len <= 0 || dev < 0)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_DEVICE_GET_NAME>({device_arg(dev)});
    char buf[VGPU_PAYLOAD_BYTES];
    CUresult r = call_sync(c, nullptr, buf, sizeof buf);
    if (r != CUDA_SUCCESS)
        return r;
    size_t n = 0;
    while (n < sizeof buf && buf[n] != '\0' && n + 1 < static_cast<size_t>(len)) {
        name[n] = buf[n];
        ++n;
    }
    name[n] = '\0';
    return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceTotalMem(size_t* bytes, CUdevice dev)
{
    GUEST_API_LOCK();
    if (bytes == nullptr || dev < 0)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_DEVICE_TOTAL_MEM>({device_arg(dev)});
    return call_result(c, bytes);
}

KVMGPU_DRIVER_ENTRY(cuCtxSynchronize, 2000);
extern "C" CUresult cuCtxSynchronize(void)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_CTX_SYNCHRONIZE>();
    return sync_point(call_sync(c));
}

namespace {

struct ErrorText {
    CUresult code;
    const char* name;
    const char* text; // nullptr: the name says it (see error_text)
};

// Texts where the name alone would not say enough; the rest are read off
// their names.
constexpr ErrorText kTexts[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error (cuInit not called or failed)"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no vGPU device found"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "vGPU command ring broken"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_TIMEOUT, "CUDA_ERROR_TIMEOUT", "vGPU did not complete a command in time"},
};

#define KVMGPU_CUDA_RESULT_ENTRY(name, value) {name, #name, nullptr},
constexpr ErrorText kNames[] = {KVMGPU_CUDA_RESULTS(KVMGPU_CUDA_RESULT_ENTRY)};
#undef KVMGPU_CUDA_RESULT_ENTRY

const ErrorText* find_error(CUresult error)
{
    for (const ErrorText& e : kNames)
        if (e.code == error)
            return &e;
    return nullptr;
}

// "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED" -> "peer access unsupported", in a
// buffer per status (the strings live as long as the program).
const char* error_text(const ErrorText& e)
{
    for (const ErrorText& t : kTexts)
        if (t.code == e.code)
            return t.text;
    constexpr size_t kMax = 64;
    static char texts[sizeof kNames / sizeof kNames[0]][kMax];
    char* out = texts[&e - kNames];
    if (out[0] == 0) {
        const char* n = e.name + (strncmp(e.name, "CUDA_ERROR_", 11) == 0 ? 11 : 5);
        size_t i = 0;
        for (; n[i] != 0 && i + 1 < kMax; ++i)
            out[i] = n[i] == '_' ? ' ' : (n[i] >= 'A' && n[i] <= 'Z' ? static_cast<char>(n[i] - 'A' + 'a') : n[i]);
        out[i] = 0;
    }
    return out;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuGetErrorName, 6000);
extern "C" CUresult cuGetErrorName(CUresult error, const char** str)
{
    GUEST_API_LOCK();
    if (str == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const ErrorText* e = find_error(error);
    *str = e != nullptr ? e->name : nullptr;
    return e != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

KVMGPU_DRIVER_ENTRY(cuGetErrorString, 6000);
extern "C" CUresult cuGetErrorString(CUresult error, const char** str)
{
    GUEST_API_LOCK();
    if (str == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const ErrorText* e = find_error(error);
    *str = e != nullptr ? error_text(*e) : nullptr;
    return e != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
