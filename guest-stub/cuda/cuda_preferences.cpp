// Preferences the driver may ignore, kept for the process: a context's
// cache split and shared-memory bank size (the bank size is fixed from
// compute capability 5.0 on; the VMM's GPU decides its own carve-out), and
// a function's bank size, checked and dropped. Then a device found by its
// PCI bus id, as cuDeviceGetPCIBusId writes it.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

CUfunc_cache g_cache_config = CU_FUNC_CACHE_PREFER_NONE;
CUsharedconfig g_bank_size = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;

template <typename T>
CUresult read_preference(T* out, T kept)
{
    if (out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    *out = kept;
    return CUDA_SUCCESS;
}

template <typename T>
CUresult keep_preference(T* kept, T value, bool known)
{
    if (!known)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    *kept = value;
    return CUDA_SUCCESS;
}

bool bank_size_known(CUsharedconfig c)
{
    return c >= CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE && c <= CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE;
}

// The hex number at *p, up to `stop` (a char, or end of string); false if none.
bool hex_field(const char*& p, char stop, unsigned* out)
{
    unsigned v = 0, digits = 0;
    for (; *p != '\0' && *p != stop; ++p, ++digits) {
        const char c = *p;
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0 || digits >= 8)
            return false;
        v = v * 16 + static_cast<unsigned>(d);
    }
    *out = v;
    return digits > 0;
}

// "domain:bus:device.function" or "bus:device.function" (hex), as NVML and
// the driver write them.
bool parse_bus_id(const char* s, unsigned* domain, unsigned* bus, unsigned* device)
{
    unsigned f[3] = {0, 0, 0}, function = 0;
    int fields = 0;
    const char* p = s;
    while (fields < 3) {
        const char* start = p;
        if (!hex_field(p, ':', &f[fields])) {
            p = start;
            break;
        }
        if (*p != ':')
            return false;
        ++p, ++fields;
    }
    if (fields < 1 || fields > 2 || !hex_field(p, '.', &f[fields]) || *p != '.')
        return false;
    ++p;
    if (!hex_field(p, '\0', &function) || *p != '\0')
        return false;
    *domain = fields == 2 ? f[0] : 0;
    *bus = f[fields - 1];
    *device = f[fields];
    return true;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuCtxGetCacheConfig, 3020);
extern "C" CUresult cuCtxGetCacheConfig(CUfunc_cache* pconfig)
{
    GUEST_API_LOCK();
    return read_preference(pconfig, g_cache_config);
}

KVMGPU_DRIVER_ENTRY(cuCtxSetCacheConfig, 3020);
extern "C" CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
    GUEST_API_LOCK();
    return keep_preference(&g_cache_config, config,
                           config >= CU_FUNC_CACHE_PREFER_NONE && config <= CU_FUNC_CACHE_PREFER_EQUAL);
}

KVMGPU_DRIVER_ENTRY(cuCtxGetSharedMemConfig, 4020);
extern "C" CUresult cuCtxGetSharedMemConfig(CUsharedconfig* pConfig)
{
    GUEST_API_LOCK();
    return read_preference(pConfig, g_bank_size);
}

KVMGPU_DRIVER_ENTRY(cuCtxSetSharedMemConfig, 4020);
extern "C" CUresult cuCtxSetSharedMemConfig(CUsharedconfig config)
{
    GUEST_API_LOCK();
    const CUsharedconfig kept =
        config == CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE ? CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE : config;
    return keep_preference(&g_bank_size, kept, bank_size_known(config));
}

KVMGPU_DRIVER_ENTRY(cuFuncSetSharedMemConfig, 4020);
extern "C" CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
    GUEST_API_LOCK();
    if (function_find(hfunc) == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    return bank_size_known(config) ? ready() : CUDA_ERROR_INVALID_VALUE;
}

KVMGPU_DRIVER_ENTRY(cuDeviceGetByPCIBusId, 4010);
extern "C" CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId)
{
    GUEST_API_LOCK();
    unsigned domain = 0, bus = 0, device = 0;
    if (dev == nullptr || pciBusId == nullptr || !parse_bus_id(pciBusId, &domain, &bus, &device))
        return CUDA_ERROR_INVALID_VALUE;
    int count = 0;
    if (CUresult r = cuDeviceGetCount(&count))
        return r;
    for (int d = 0; d < count; ++d) {
        int v[3] = {0, 0, 0};
        if (cuDeviceGetAttribute(&v[0], CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d) != CUDA_SUCCESS ||
            cuDeviceGetAttribute(&v[1], CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d) != CUDA_SUCCESS ||
            cuDeviceGetAttribute(&v[2], CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d) != CUDA_SUCCESS)
            continue;
        if (static_cast<unsigned>(v[0]) == domain && static_cast<unsigned>(v[1]) == bus &&
            static_cast<unsigned>(v[2]) == device) {
            *dev = d;
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_INVALID_DEVICE;
}
