// Managed memory, emulated (docs/managed-memory.md). An allocation is
// page-locked guest RAM at address G and device memory the vGPU maps at the
// same address G (VMM calls with G asked for), so one pointer works on the
// CPU and in kernels. The guest's bytes are the truth between calls:
//   - a launch (kernel or graph) pushes every managed allocation of the
//     context that is not attached to the host to the device, runs, waits
//     for the device and pulls them back: the CPU may touch them whenever
//     it likes, before and after, as on a device with
//     concurrentManagedAccess = 0 whose kernels end before the call returns;
//   - copies and memsets that name managed memory work on the guest's bytes
//     (cuda_memory.cpp), after the stream's earlier work;
//   - prefetches and advice are checked hints; cuStreamAttachMemAsync with
//     CU_MEM_ATTACH_HOST takes an allocation out of what moves.
// The device side counts against the VM's quota (cuMemCreate's).
#include <string.h>

#include "guest-stub/platform/api_lock.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/platform.h"

using namespace guest::cuda;

namespace {

constexpr int kMaxManaged = 512;

struct Managed {
    uint64_t start = 0, bytes = 0; // the pointer, and the size rounded to granules
    uint64_t asked = 0;            // the size asked for (range size)
    void* block = nullptr;         // cuMemAllocHost's block holding [start, start + bytes)
    uint64_t physical = 0;         // the vGPU's handle
    CUcontext ctx = nullptr;
    unsigned attach = CU_MEM_ATTACH_GLOBAL;
};
Managed g_managed[kMaxManaged];
int g_count = 0; // live entries are [0, g_count)

Managed* find_containing(uint64_t p, uint64_t bytes)
{
    for (int i = 0; i < g_count; ++i) {
        Managed& m = g_managed[i];
        if (p >= m.start && p - m.start < m.asked && bytes <= m.asked - (p - m.start))
            return &m;
    }
    return nullptr;
}

CUresult vmm_call(uint16_t op, uint64_t a0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0,
                  uint64_t* result = nullptr)
{
    Call c;
    c.op = op;
    c.arg[0] = a0;
    c.arg[1] = a1;
    c.arg[2] = a2;
    c.arg[3] = a3;
    return result ? call_result(c, result) : call_sync(c);
}

// One direction for every allocation of the current context that moves.
CUresult move_all(bool to_device)
{
    const CUcontext ctx = current_context();
    for (int i = 0; i < g_count; ++i) {
        const Managed& m = g_managed[i];
        if (m.ctx != ctx || m.attach == CU_MEM_ATTACH_HOST)
            continue;
        Call c;
        c.op = to_device ? VGPU_OP_MEMCPY_HTOD : VGPU_OP_MEMCPY_DTOH;
        c.arg[0] = m.start; // the device address and the guest-physical one are the same number
        c.arg[1] = m.start;
        c.arg[2] = m.asked;
        if (CUresult r = call_sync(c))
            return r;
    }
    return CUDA_SUCCESS;
}

bool any_in(CUcontext ctx)
{
    for (int i = 0; i < g_count; ++i)
        if (g_managed[i].ctx == ctx)
            return true;
    return false;
}

// Undoes what cuMemAllocManaged made, as far as it got.
void teardown(const Managed& m, bool mapped, bool reserved)
{
    if (mapped)
        vmm_call(VGPU_OP_VMM_UNMAP, m.start, m.bytes);
    if (m.physical)
        vmm_call(VGPU_OP_VMM_RELEASE, m.physical);
    if (reserved)
        vmm_call(VGPU_OP_VMM_FREE_RESERVATION, m.start, m.bytes);
    if (m.block)
        cuMemFreeHost(m.block);
}

bool location_ok(const CUmemLocation& l)
{
    CUdevice dev;
    switch (l.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        return cuCtxGetDevice(&dev) == CUDA_SUCCESS && l.id == dev;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        return true;
    default:
        return false;
    }
}

} // namespace

namespace guest::cuda {

CUresult managed_launch(const Call& c, CUstream stream, bool taken)
{
    if (g_count == 0 || capture_of(stream) != 0 || !any_in(current_context()))
        return taken ? call_async_taken(c) : call_async(c);
    if (CUresult r = move_all(true))
        return r;
    if (CUresult r = taken ? call_async_taken(c) : call_async(c))
        return r;
    if (CUresult r = cuCtxSynchronize())
        return r;
    return move_all(false);
}

void* managed_host_view(uint64_t p, uint64_t bytes)
{
    return find_containing(p, bytes) ? reinterpret_cast<void*>(static_cast<uintptr_t>(p)) : nullptr;
}

bool managed_find(uint64_t p, uint64_t* start, uint64_t* bytes)
{
    const Managed* m = find_containing(p, 0);
    if (m == nullptr)
        return false;
    *start = m->start;
    *bytes = m->asked;
    return true;
}

CUresult managed_free(CUdeviceptr dptr)
{
    for (int i = 0; i < g_count; ++i) {
        if (g_managed[i].start != dptr)
            continue;
        // The device's queued work may still use it (cuMemFree waits too).
        if (CUresult r = cuCtxSynchronize())
            return r;
        teardown(g_managed[i], true, true);
        g_managed[i] = g_managed[--g_count];
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_FOUND;
}

void managed_forget(CUcontext ctx)
{
    for (int i = 0; i < g_count;) {
        if (g_managed[i].ctx != ctx) {
            ++i;
            continue;
        }
        cuMemFreeHost(g_managed[i].block); // the vGPU freed the device side with the context
        g_managed[i] = g_managed[--g_count];
    }
}

} // namespace guest::cuda

extern "C" CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytes, unsigned int flags)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (dptr == nullptr || bytes == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    if (current_context() == nullptr)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (g_count == kMaxManaged)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t granule = 0;
    if (CUresult r = vmm_call(VGPU_OP_VMM_GRANULARITY, 0, 0, 0, 0, &granule))
        return r;
    if (bytes > UINT64_MAX / 2 - 2 * granule)
        return CUDA_ERROR_OUT_OF_MEMORY;
    Managed m;
    m.asked = bytes;
    m.bytes = (bytes + granule - 1) / granule * granule;
    m.ctx = current_context();
    m.attach = flags;
    // Guest bytes at a granule-aligned address G, and device addresses
    // reserved at G. The device may have G in use already (the worker's own
    // allocations): then another block of guest RAM, a few times; the blocks
    // tried meanwhile are held so that each try gets a new address.
    constexpr int kTries = 4;
    void* tried[kTries] = {};
    CUresult placed = CUDA_ERROR_NOT_SUPPORTED;
    for (int t = 0; t < kTries && placed == CUDA_ERROR_NOT_SUPPORTED; ++t) {
        if (cuMemAllocHost(&m.block, m.bytes + granule) != CUDA_SUCCESS) {
            placed = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        const uint64_t raw = reinterpret_cast<uintptr_t>(m.block);
        m.start = (raw + granule - 1) / granule * granule;
        uint64_t gpa, va = 0;
        if (!guest::platform::virt_to_phys(reinterpret_cast<void*>(m.start), &gpa) || gpa != m.start) {
            placed = CUDA_ERROR_INVALID_VALUE; // page-locked memory is identity-mapped on both platforms
            break;
        }
        if ((placed = vmm_call(VGPU_OP_VMM_RESERVE, m.bytes, granule, m.start, 0, &va)) != CUDA_SUCCESS)
            break;
        if (va != m.start) {
            vmm_call(VGPU_OP_VMM_FREE_RESERVATION, va, m.bytes);
            tried[t] = m.block;
            m.block = nullptr;
            placed = CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    for (void* b : tried)
        if (b != nullptr)
            cuMemFreeHost(b);
    if (placed != CUDA_SUCCESS) {
        if (m.block != nullptr)
            cuMemFreeHost(m.block);
        if (placed == CUDA_ERROR_NOT_SUPPORTED)
            guest::platform::printf("cuMemAllocManaged: the device cannot place memory at the guest's addresses "
                                    "(%d tried): managed memory is not available here\n",
                                    kTries);
        return placed;
    }
    CUresult r = vmm_call(VGPU_OP_VMM_CREATE, m.bytes, 0, 0, 0, &m.physical);
    if (r != CUDA_SUCCESS) {
        teardown(m, false, true);
        return r;
    }
    if ((r = vmm_call(VGPU_OP_VMM_MAP, m.start, m.bytes, 0, m.physical)) != CUDA_SUCCESS) {
        teardown(m, false, true);
        return r;
    }
    CUdevice dev = 0;
    cuCtxGetDevice(&dev);
    if ((r = vmm_call(VGPU_OP_VMM_SET_ACCESS, m.start, m.bytes, device_arg(dev), VGPU_VMM_ACCESS_READWRITE))) {
        teardown(m, true, true);
        return r;
    }
    // The mapping keeps the memory: the handle goes now, as the driver's
    // cuMemAllocManaged has none to give back.
    vmm_call(VGPU_OP_VMM_RELEASE, m.physical);
    m.physical = 0;
    g_managed[g_count++] = m;
    *dptr = m.start;
    return CUDA_SUCCESS;
}

namespace {
CUresult prefetch(CUdeviceptr dptr, size_t count, CUmemLocation location, unsigned flags)
{
    if (CUresult r = ready())
        return r;
    if (count == 0 || flags != 0 || find_containing(dptr, count) == nullptr || !location_ok(location))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS; // the bytes move at the next launch in any case
}

CUresult advise(CUdeviceptr dptr, size_t count, CUmem_advise advice, CUmemLocation location)
{
    if (CUresult r = ready())
        return r;
    if (count == 0 || advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY ||
        find_containing(dptr, count) == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    // The location matters where the advice names one.
    if (advice != CU_MEM_ADVISE_SET_READ_MOSTLY && advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY &&
        advice != CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION && !location_ok(location))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUmemLocation location_of(CUdevice d)
{
    CUmemLocation l;
    l.type = d == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
    l.id = d == CU_DEVICE_CPU ? 0 : d;
    return l;
}
} // namespace

extern "C" CUresult cuMemPrefetchAsync(CUdeviceptr dptr, size_t count, CUdevice dst_device, CUstream)
{
    GUEST_API_LOCK();
    return prefetch(dptr, count, location_of(dst_device), 0);
}

extern "C" CUresult cuMemPrefetchAsync_v2(CUdeviceptr dptr, size_t count, CUmemLocation location, unsigned int flags,
                                          CUstream)
{
    GUEST_API_LOCK();
    return prefetch(dptr, count, location, flags);
}

extern "C" CUresult cuMemAdvise(CUdeviceptr dptr, size_t count, CUmem_advise advice, CUdevice device)
{
    GUEST_API_LOCK();
    return advise(dptr, count, advice, location_of(device));
}

extern "C" CUresult cuMemAdvise_v2(CUdeviceptr dptr, size_t count, CUmem_advise advice, CUmemLocation location)
{
    GUEST_API_LOCK();
    return advise(dptr, count, advice, location);
}

// length 0 or the whole allocation, as the driver takes it for managed memory.
extern "C" CUresult cuStreamAttachMemAsync(CUstream, CUdeviceptr dptr, size_t length, unsigned int flags)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST && flags != CU_MEM_ATTACH_SINGLE)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < g_count; ++i) {
        Managed& m = g_managed[i];
        if (m.start != dptr)
            continue;
        if (length != 0 && length != m.asked)
            return CUDA_ERROR_INVALID_VALUE;
        m.attach = flags; // SINGLE: one stream's, which still moves at that stream's launches (all do)
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}
