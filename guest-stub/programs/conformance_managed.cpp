// conformance, continued: the virtual memory management calls (reserve,
// create, map, set access; a kernel and copies in the mapping) and managed
// memory under the guest library's emulation (CPU and kernel share one
// pointer; copies, memsets, hints, attachment, pointer attributes), with
// their error and quota paths. `add` is vector_add(a, b, c, n).
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {

constexpr unsigned kN = 1024;

CUresult add_on(CUfunction add, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c)
{
    unsigned n = kN;
    void* params[] = {&a, &b, &c, &n};
    return cuLaunchKernel(add, kN / 256, 1, 1, 256, 1, 1, 0, 0, params, nullptr);
}

void vmm_calls(CUfunction add)
{
    CUdevice dev = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t g = 0;
    expect("cuMemGetAllocationGranularity", cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
           CUDA_SUCCESS);
    expect_true("a granule of a power of two pages", g >= 4096 && (g & (g - 1)) == 0);
    CUcontext current = nullptr;
    CU_CHECK(cuCtxPopCurrent(&current));
    size_t without = 0; // ggml asks before any context is current
    expect("cuMemGetAllocationGranularity(no current context)",
           cuMemGetAllocationGranularity(&without, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
    CU_CHECK(cuCtxPushCurrent(current));
    expect_true("the same granule", without == g);
    expect("cuMemGetAllocationGranularity(nullptr prop)",
           cuMemGetAllocationGranularity(&g, nullptr, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
    CUmemAllocationProp other = prop;
    other.location.id = 7;
    expect("cuMemCreate(another device's)", cuMemCreate(nullptr, g, &other, 0), CUDA_ERROR_INVALID_VALUE);
    CUmemGenericAllocationHandle h[2] = {};
    expect("cuMemCreate(device 7)", cuMemCreate(&h[0], g, &other, 0), CUDA_ERROR_INVALID_DEVICE);

    CUdeviceptr va = 0;
    expect("cuMemAddressReserve", cuMemAddressReserve(&va, 2 * g, 0, 0, 0), CUDA_SUCCESS);
    expect_true("a granule-aligned reservation", va != 0 && va % g == 0);
    expect("cuMemAddressReserve(flags)", cuMemAddressReserve(&va, 2 * g, 0, 0, 1), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAddressReserve(part of a granule)", cuMemAddressReserve(&va, g / 2, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemCreate", cuMemCreate(&h[0], g, &prop, 0), CUDA_SUCCESS);
    expect("cuMemCreate", cuMemCreate(&h[1], g, &prop, 0), CUDA_SUCCESS);
    CUmemAllocationProp made = {};
    expect("cuMemGetAllocationPropertiesFromHandle", cuMemGetAllocationPropertiesFromHandle(&made, h[0]), CUDA_SUCCESS);
    expect_true("pinned, this device, not compressible",
                made.type == CU_MEM_ALLOCATION_TYPE_PINNED && made.location.id == dev &&
                    made.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_NONE);
    // Compressible memory: granted where the device offers it, as the driver says.
    int compression = 0;
    CU_CHECK(cuDeviceGetAttribute(&compression, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, dev));
    CUmemAllocationProp compressible = prop;
    compressible.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
    CUmemGenericAllocationHandle ch = 0;
    expect("cuMemCreate(compressible)", cuMemCreate(&ch, g, &compressible, 0), CUDA_SUCCESS);
    expect("cuMemGetAllocationPropertiesFromHandle(compressible)", cuMemGetAllocationPropertiesFromHandle(&made, ch),
           CUDA_SUCCESS);
    expect_true("compressible where the device offers it",
                made.allocFlags.compressionType == (compression ? CU_MEM_ALLOCATION_COMP_GENERIC : CU_MEM_ALLOCATION_COMP_NONE));
    expect("cuMemRelease(compressible)", cuMemRelease(ch), CUDA_SUCCESS);
    expect("cuMemGetAllocationPropertiesFromHandle(released)", cuMemGetAllocationPropertiesFromHandle(&made, ch),
           CUDA_ERROR_INVALID_VALUE);
    compressible.allocFlags.compressionType = 7;
    expect("cuMemCreate(unknown compression)", cuMemCreate(&ch, g, &compressible, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemCreate(past the quota)", cuMemCreate(&h[1], size_t{1} << 50, &prop, 0) == CUDA_ERROR_OUT_OF_MEMORY
                                              ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, CUDA_SUCCESS);
    expect("cuMemMap(offset)", cuMemMap(va, g, g, h[0], 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemMap(unaligned)", cuMemMap(va + 4096, g, 0, h[0], 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemMap", cuMemMap(va, g, 0, h[0], 0), CUDA_SUCCESS);
    expect("cuMemMap(over a mapping)", cuMemMap(va, g, 0, h[1], 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemMap", cuMemMap(va + g, g, 0, h[1], 0), CUDA_SUCCESS);
    // The handles may go at once: the mappings keep the memory.
    expect("cuMemRelease", cuMemRelease(h[0]), CUDA_SUCCESS);
    expect("cuMemRelease", cuMemRelease(h[1]), CUDA_SUCCESS);
    expect("cuMemRelease(twice)", cuMemRelease(h[1]), CUDA_ERROR_INVALID_VALUE);
    CUmemAccessDesc access = {};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = dev;
    access.flags = static_cast<CUmemAccess_flags>(2);
    expect("cuMemSetAccess(unknown flags)", cuMemSetAccess(va, 2 * g, &access, 1), CUDA_ERROR_INVALID_VALUE);
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    expect("cuMemSetAccess(both mappings)", cuMemSetAccess(va, 2 * g, &access, 1), CUDA_SUCCESS);

    // A kernel over memory in the second mapping, and copies in and out.
    static float a[kN], b[kN], c[kN];
    for (unsigned i = 0; i < kN; ++i)
        a[i] = static_cast<float>(i), b[i] = 1.0f, c[i] = 0.0f;
    const CUdeviceptr da = va + g, db = da + sizeof a, dc = db + sizeof b;
    expect("cuMemcpyHtoD(mapped)", cuMemcpyHtoD(da, a, sizeof a), CUDA_SUCCESS);
    expect("cuMemcpy(to mapped)", cuMemcpy(db, reinterpret_cast<CUdeviceptr>(b), sizeof b), CUDA_SUCCESS);
    expect("cuLaunchKernel(on mapped memory)", add_on(add, da, db, dc), CUDA_SUCCESS);
    expect("cuMemcpyDtoH(mapped)", cuMemcpyDtoH(c, dc, sizeof c), CUDA_SUCCESS);
    bool sums = true;
    for (unsigned i = 0; i < kN; ++i)
        sums = sums && c[i] == static_cast<float>(i) + 1.0f;
    expect_true("the kernel's sums in mapped memory", sums);
    expect("cuMemAddressFree(still mapped)", cuMemAddressFree(va, 2 * g), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemUnmap(half a mapping)", cuMemUnmap(va, g / 2), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemUnmap", cuMemUnmap(va, 2 * g), CUDA_SUCCESS);
    expect("cuMemcpyHtoD(unmapped)", cuMemcpyHtoD(da, a, 4), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAddressFree", cuMemAddressFree(va, 2 * g), CUDA_SUCCESS);
    expect("cuMemAddressFree(twice)", cuMemAddressFree(va, 2 * g), CUDA_ERROR_INVALID_VALUE);
}

void managed_calls(CUfunction add)
{
    CUdevice dev = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    int v = -1;
    CU_CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev));
    if (v != 1) { // the backend cannot place device memory at guest addresses: refused, as a device without it
        CUdeviceptr none = 0;
        expect("cuMemAllocManaged(not offered)", cuMemAllocManaged(&none, 64, CU_MEM_ATTACH_GLOBAL),
               CUDA_ERROR_NOT_SUPPORTED);
        printf("conformance: managed memory not offered by this vGPU (MANAGED_MEMORY 0): its other checks skipped\n");
        return;
    }
    CU_CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
    expect_true("no concurrent managed access", v == 0);
    CU_CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev));
    expect_true("no pageable memory access", v == 0);

    CUdeviceptr m = 0;
    expect("cuMemAllocManaged(flags 0)", cuMemAllocManaged(&m, 64, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAllocManaged(0 bytes)", cuMemAllocManaged(&m, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAllocManaged(past the quota)", cuMemAllocManaged(&m, size_t{1} << 50, CU_MEM_ATTACH_GLOBAL),
           CUDA_ERROR_OUT_OF_MEMORY);
    expect("cuMemAllocManaged", cuMemAllocManaged(&m, 3 * kN * sizeof(float), CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
    if (m == 0)
        return; // the rest touches it
    float* p = reinterpret_cast<float*>(m);
    for (unsigned i = 0; i < kN; ++i)
        p[i] = static_cast<float>(i), p[kN + i] = 2.0f, p[2 * kN + i] = -1.0f; // written by the CPU
    const CUdeviceptr a = m, b = m + kN * 4, c = m + 2 * kN * 4;
    expect("cuLaunchKernel(on managed memory)", add_on(add, a, b, c), CUDA_SUCCESS);
    expect("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
    bool ok = true;
    for (unsigned i = 0; i < kN; ++i)
        ok = ok && p[2 * kN + i] == static_cast<float>(i) + 2.0f;
    expect_true("the CPU reads the kernel's sums through the same pointer", ok);
    // CPU writes after a launch reach the next one.
    p[kN + 5] = 100.0f;
    expect("cuLaunchKernel(again)", add_on(add, a, b, c), CUDA_SUCCESS);
    expect_true("a CPU write between launches is seen", p[2 * kN + 5] == 105.0f);
    // Copies and memsets work on the same bytes.
    static float host[kN];
    for (unsigned i = 0; i < kN; ++i)
        host[i] = 3.0f;
    expect("cuMemcpyHtoD(to managed)", cuMemcpyHtoD(b, host, sizeof host), CUDA_SUCCESS);
    expect_true("the CPU sees the copy", p[kN + 7] == 3.0f);
    expect("cuMemsetD32(managed)", cuMemsetD32(c, 0x40800000u /* 4.0f */, kN), CUDA_SUCCESS);
    expect_true("the CPU sees the memset", p[2 * kN + 9] == 4.0f);
    CUdeviceptr d = 0;
    CU_CHECK(cuMemAlloc(&d, sizeof host));
    expect("cuMemcpyDtoD(managed to device)", cuMemcpyDtoD(d, b, sizeof host), CUDA_SUCCESS);
    host[0] = 0.0f;
    expect("cuMemcpyDtoH(device)", cuMemcpyDtoH(host, d, sizeof host), CUDA_SUCCESS);
    expect_true("device memory got the managed bytes", host[0] == 3.0f);
    expect("cuMemcpy(managed to host)", cuMemcpy(reinterpret_cast<CUdeviceptr>(host), a, 8), CUDA_SUCCESS);
    expect_true("cuMemcpy from managed memory", host[1] == 1.0f);

    // Pointer attributes.
    unsigned managed = 0, type = 0;
    size_t range = 0;
    expect("cuPointerGetAttribute(IS_MANAGED)", cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, b),
           CUDA_SUCCESS);
    expect_true("IS_MANAGED", managed == 1);
    expect("cuPointerGetAttribute(RANGE_SIZE)", cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, b),
           CUDA_SUCCESS);
    expect_true("the allocation's size", range == 3 * kN * sizeof(float));
    expect("cuPointerGetAttribute(device memory)", cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d),
           CUDA_SUCCESS);
    expect("cuPointerGetAttribute(MEMORY_TYPE)", cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d),
           CUDA_SUCCESS);
    expect_true("cuMemAlloc memory: device, not managed", managed == 0 && type == CU_MEMORYTYPE_DEVICE);
    expect("cuPointerGetAttribute(unknown address)",
           cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CUdeviceptr{1} << 46), CUDA_ERROR_INVALID_VALUE);
    CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR};
    CUdeviceptr start = 0;
    void* data[2] = {&managed, &start};
    expect("cuPointerGetAttributes", cuPointerGetAttributes(2, attrs, data, c + 4), CUDA_SUCCESS);
    expect_true("IS_MANAGED and the range's start", managed == 1 && start == m);
    CU_CHECK(cuMemFree(d));

    // Hints and attachment: checked, accepted.
    CUmemLocation loc = {};
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = dev;
    expect("cuMemPrefetchAsync_v2(to the device)", cuMemPrefetchAsync_v2(a, kN * 4, loc, 0, 0), CUDA_SUCCESS);
    expect("cuMemPrefetchAsync(to the CPU)", cuMemPrefetchAsync(a, kN * 4, CU_DEVICE_CPU, 0), CUDA_SUCCESS);
    expect("cuMemPrefetchAsync_v2(not managed)", cuMemPrefetchAsync_v2(0x1000, 4, loc, 0, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemPrefetchAsync_v2(past the allocation)", cuMemPrefetchAsync_v2(a, 4 * kN * 4, loc, 0, 0),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAdvise_v2(read mostly)", cuMemAdvise_v2(a, kN * 4, CU_MEM_ADVISE_SET_READ_MOSTLY, loc), CUDA_SUCCESS);
    expect("cuMemAdvise_v2(unknown advice)", cuMemAdvise_v2(a, kN * 4, static_cast<CUmem_advise>(99), loc),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuStreamAttachMemAsync(host)", cuStreamAttachMemAsync(0, m, 0, CU_MEM_ATTACH_HOST), CUDA_SUCCESS);
    expect("cuStreamAttachMemAsync(part)", cuStreamAttachMemAsync(0, m, 4, CU_MEM_ATTACH_GLOBAL),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuStreamAttachMemAsync(flags)", cuStreamAttachMemAsync(0, m, 0, 8), CUDA_ERROR_INVALID_VALUE);
    expect("cuStreamAttachMemAsync(global)", cuStreamAttachMemAsync(0, m, 0, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);

    expect("cuMemFree(managed)", cuMemFree(m), CUDA_SUCCESS);
    expect("cuMemFree(managed, twice)", cuMemFree(m), CUDA_ERROR_INVALID_VALUE);
}

} // namespace

void vmm_and_managed_calls(CUfunction add)
{
    vmm_calls(add);
    managed_calls(add);
}
