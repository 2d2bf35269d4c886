// Device identity (compute capability, the legacy properties, PCI bus id,
// UUID), P2P attributes, context limits and the stream priority range.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/guest_cuda_more.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

// Writes `v` as `digits` lower-case hex digits at p.
void put_hex(char* p, unsigned v, int digits)
{
    for (int i = digits - 1; i >= 0; --i, v >>= 4)
        p[i] = "0123456789abcdef"[v & 0xf];
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuDeviceComputeCapability, 2000);
extern "C" CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev)
{
    GUEST_API_LOCK();
    if (major == nullptr || minor == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
        return r;
    return cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
}

// CUdevprop's 14 ints are attributes 1 to 14 (MAX_THREADS_PER_BLOCK ...
// TEXTURE_ALIGNMENT) in order, as cuda.h numbers them.
KVMGPU_DRIVER_ENTRY(cuDeviceGetProperties, 2000);
extern "C" CUresult cuDeviceGetProperties(CUdevprop* prop, CUdevice dev)
{
    GUEST_API_LOCK();
    static_assert(sizeof(CUdevprop) == 14 * sizeof(int));
    if (prop == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    int values[14];
    for (int i = 0; i < 14; ++i)
        if (CUresult r = cuDeviceGetAttribute(&values[i], static_cast<CUdevice_attribute>(i + 1), dev))
            return r;
    memcpy(prop, values, sizeof values);
    return CUDA_SUCCESS;
}

// "dddd:bb:dd.0": domain, bus and device as the VMM reports them.
KVMGPU_DRIVER_ENTRY(cuDeviceGetPCIBusId, 4010);
extern "C" CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev)
{
    GUEST_API_LOCK();
    constexpr int kChars = 12; // "0000:00:00.0"
    if (pciBusId == nullptr || len <= kChars)
        return CUDA_ERROR_INVALID_VALUE;
    int domain = 0, bus = 0, device = 0;
    if (CUresult r = cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev))
        return r;
    if (CUresult r = cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev))
        return r;
    if (CUresult r = cuDeviceGetAttribute(&device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev))
        return r;
    put_hex(pciBusId, static_cast<unsigned>(domain), 4);
    pciBusId[4] = ':';
    put_hex(pciBusId + 5, static_cast<unsigned>(bus), 2);
    pciBusId[7] = ':';
    put_hex(pciBusId + 8, static_cast<unsigned>(device), 2);
    pciBusId[10] = '.';
    pciBusId[11] = '0';
    pciBusId[12] = '\0';
    return CUDA_SUCCESS;
}

// "kvmtool-gpu vGPU" with the ordinal in the last byte, in the layout of a
// version-4 (random) UUID. 9020's form, which NVIDIA's cudart 13 asks for
// at initialisation, differs from 11040's only on MIG instances (none here).
KVMGPU_DRIVER_ENTRY(cuDeviceGetUuid, 9020);
KVMGPU_DRIVER_ENTRY(cuDeviceGetUuid, 11040);
extern "C" CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev)
{
    GUEST_API_LOCK();
    if (uuid == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    int count = 0;
    if (CUresult r = cuDeviceGetCount(&count))
        return r;
    if (dev < 0 || dev >= count)
        return CUDA_ERROR_INVALID_DEVICE;
    const char base[16] = {'k', 'v', 'm', 't', 'o', 'o', 'l', '-', 'g', 'p', 'u', ' ', 'v', 'G', 'P', 0};
    for (int i = 0; i < 16; ++i)
        uuid->bytes[i] = base[i];
    uuid->bytes[6] = static_cast<char>(0x40 | (uuid->bytes[6] & 0x0f)); // version 4
    uuid->bytes[8] = static_cast<char>(0x80 | (uuid->bytes[8] & 0x3f)); // variant 1
    uuid->bytes[15] = static_cast<char>(dev);
    return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev)
{
    GUEST_API_LOCK();
    return cuDeviceGetUuid(uuid, dev);
}

KVMGPU_DRIVER_ENTRY(cuDeviceGetP2PAttribute, 8000);
extern "C" CUresult cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                            CUdevice dstDevice)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    Call c = command<VGPU_OP_DEVICE_P2P_ATTRIBUTE>(
        {static_cast<uint64_t>(attrib), device_arg(srcDevice), device_arg(dstDevice)});
    uint64_t res[2];
    CUresult r = call_sync(c, res);
    if (r == CUDA_SUCCESS)
        *value = static_cast<int>(static_cast<int64_t>(res[0]));
    return r;
}

KVMGPU_DRIVER_ENTRY(cuCtxSetLimit, 3010);
extern "C" CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_CTX_LIMIT>({static_cast<uint64_t>(limit), value, 1});
    return call_sync(c);
}

KVMGPU_DRIVER_ENTRY(cuCtxGetLimit, 3010);
extern "C" CUresult cuCtxGetLimit(size_t* value, CUlimit limit)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_CTX_LIMIT>({static_cast<uint64_t>(limit), 0, 0});
    return call_result(c, value);
}

KVMGPU_DRIVER_ENTRY(cuCtxGetStreamPriorityRange, 5050);
extern "C" CUresult cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (leastPriority != nullptr) // either may be left out, as with the driver
        *leastPriority = 0;
    if (greatestPriority != nullptr)
        *greatestPriority = 0;
    return CUDA_SUCCESS;
}
