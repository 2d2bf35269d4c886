// Managed memory (docs/managed-memory.md), in one of two ways.
//
// Zero copy, where page-locked memory has unified addressing
// (unified_offset(), cuda_host_memory.cpp: the CUDA backend under a
// Linux-ABI guest): a managed allocation is a page-locked block, which the
// CPU and kernels reach at one address, coherent as host memory is: no
// copies, launches stay asynchronous, CPU and GPU may even touch it at once
// (but for system-scope atomics where the link has no native host atomics:
// managed_launch). Kernels read it across the bus, at host-memory speed.
//
// Copies otherwise (the host backend, or the guest option vgpu_managed=copy):
// page-locked guest RAM and device memory at one address D, which works on
// the CPU and in kernels: either the device places its memory at the guest
// RAM's own address (the host backend does), or the VMM gives the guest RAM
// a second name at the device's address (an alias: Linux-ABI guests). The
// guest's bytes are the truth between calls:
//   - a launch (kernel or graph) pushes every managed allocation of the
//     context that is not attached to the host to the device, runs, waits
//     for the device and pulls them back: the CPU may touch them whenever
//     it likes, before and after, as on a device with
//     concurrentManagedAccess = 0 whose kernels end before the call returns;
//     a launch while nothing moves (none, or all attached to the host) is
//     queued as any other;
//   - copies and memsets that name managed memory work on the guest's bytes
//     (cuda_memory.cpp), after the stream's earlier work;
//   - prefetches and advice are checked hints; cuStreamAttachMemAsync with
//     CU_MEM_ATTACH_HOST takes an allocation out of what moves.
// The device side counts against the VM's quota (cuMemCreate's). Aliases
// are for good (the VMM never changes one): a freed allocation's alias and
// its guest RAM wait in a slot for the next allocation the device places
// at that address.
#include <errno.h>
#include <string.h>

#include "guest-stub/platform/api_lock.h"
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/platform.h"

using namespace guest::cuda;

namespace {

constexpr int kMaxManaged = 512;

constexpr int kMaxSlots = 256; // the platform's alias limit

struct Managed {
    uint64_t start = 0, bytes = 0; // the pointer (device address), and the size rounded to granules
    uint64_t asked = 0;            // the size asked for (range size)
    uint64_t guest = 0;            // the same bytes' guest-physical address (== start unless aliased)
    void* block = nullptr;         // cuMemAllocHost's block holding them, when not a slot's
    int slot = -1;                 // the alias slot holding them, or -1
    bool zero_copy = false;        // a page-locked block (block) at its unified address: nothing moves
    uint64_t physical = 0;         // the vGPU's handle
    CUcontext ctx = nullptr;
    unsigned attach = CU_MEM_ATTACH_GLOBAL;
    uint64_t buffer_id = 0;
};
Managed g_managed[kMaxManaged];
int g_count = 0; // live entries are [0, g_count)

// An alias made for good: guest virtual [va, va + bytes) is the page-locked
// guest RAM at guest-physical `guest`.
struct Slot {
    uint64_t va = 0, guest = 0, bytes = 0;
    bool in_use = false;
};
Slot g_slots[kMaxSlots];
int g_slot_count = 0;

Managed* find_containing(uint64_t p, uint64_t bytes)
{
    for (int i = 0; i < g_count; ++i) {
        Managed& m = g_managed[i];
        if (p >= m.start && p - m.start < m.asked && bytes <= m.asked - (p - m.start))
            return &m;
    }
    return nullptr;
}

// One direction for every allocation of the current context that moves.
CUresult move_all(bool to_device)
{
    const CUcontext ctx = current_context();
    for (int i = 0; i < g_count; ++i) {
        const Managed& m = g_managed[i];
        if (m.ctx != ctx || m.attach == CU_MEM_ATTACH_HOST || m.zero_copy)
            continue;
        const Call c = to_device ? command<VGPU_OP_MEMCPY_HTOD>({m.start, m.guest, m.asked, 0})
                                 : command<VGPU_OP_MEMCPY_DTOH>({m.guest, m.start, m.asked, 0});
        if (CUresult r = call_sync(c))
            return r;
    }
    return CUDA_SUCCESS;
}

void release_guest_bytes(const Managed& m)
{
    if (m.slot >= 0)
        g_slots[m.slot].in_use = false;
    else if (m.block)
        cuMemFreeHost(m.block);
}

// Whether ctx holds managed memory a kernel may touch (not attached to the host).
bool any_reachable(CUcontext ctx)
{
    for (int i = 0; i < g_count; ++i)
        if (g_managed[i].ctx == ctx && g_managed[i].attach != CU_MEM_ATTACH_HOST)
            return true;
    return false;
}

// CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED of the current context's
// device, asked once per device (it is the link's: it never changes).
bool link_has_host_atomics()
{
    static signed char known[64]; // 0 not asked yet, 1 no, 2 yes
    CUdevice dev = 0;
    if (cuCtxGetDevice(&dev) != CUDA_SUCCESS || dev < 0)
        return false;
    if (dev < 64 && known[dev] != 0)
        return known[dev] == 2;
    int v = 0;
    const bool yes =
        cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, dev) == CUDA_SUCCESS && v != 0;
    if (dev < 64)
        known[dev] = yes ? 2 : 1;
    return yes;
}

// Whether a launch in ctx moves anything.
bool any_moving(CUcontext ctx)
{
    for (int i = 0; i < g_count; ++i)
        if (g_managed[i].ctx == ctx && !g_managed[i].zero_copy && g_managed[i].attach != CU_MEM_ATTACH_HOST)
            return true;
    return false;
}

// Undoes what cuMemAllocManaged made, as far as it got; the guest bytes of
// a slot stay with it for the next allocation there.
void teardown(const Managed& m, bool mapped, bool reserved)
{
    if (m.zero_copy) {
        cuMemFreeHost(m.block);
        return;
    }
    if (mapped)
        call<VGPU_OP_VMM_UNMAP>({m.start, m.bytes});
    if (m.physical)
        call<VGPU_OP_VMM_RELEASE>({m.physical});
    if (reserved)
        call<VGPU_OP_VMM_FREE_RESERVATION>({m.start, m.bytes});
    release_guest_bytes(m);
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
    const CUcontext ctx = current_context();
    if (g_count == 0 || capture_of(stream) != 0 || !any_reachable(ctx))
        return taken ? call_async_taken(c) : call_async(c);
    if (!any_moving(ctx)) { // zero copy
        // Where the link has no native host atomics, a kernel's system-scope
        // atomics on host memory are not atomic against the CPU's: a launch
        // on a stream with nothing queued waits for its kernel, so that the
        // CPU's accesses follow it (systemWideAtomics). Behind queued work it
        // does not: that work may wait for the CPU (a kernel spinning on a
        // host flag, UnifiedMemoryPerf), and waiting would never end.
        const bool wait = !link_has_host_atomics() && cuStreamQuery(stream) == CUDA_SUCCESS;
        if (CUresult r = taken ? call_async_taken(c) : call_async(c))
            return r;
        return wait ? cuStreamSynchronize(stream) : CUDA_SUCCESS;
    }
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
    const Managed* m = find_containing(p, bytes);
    return m ? reinterpret_cast<void*>(static_cast<uintptr_t>(m->guest + (p - m->start))) : nullptr;
}

bool managed_find(uint64_t p, uint64_t* start, uint64_t* bytes, uint64_t* buffer_id)
{
    const Managed* m = find_containing(p, 0);
    if (m == nullptr)
        return false;
    *start = m->start;
    *bytes = m->asked;
    if (buffer_id != nullptr)
        *buffer_id = m->buffer_id;
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
        release_guest_bytes(g_managed[i]); // the vGPU freed the device side with the context
        g_managed[i] = g_managed[--g_count];
    }
}

} // namespace guest::cuda

namespace {
// Zero copy where page-locked memory has unified addressing, unless the
// guest option vgpu_managed=copy asks for the copying emulation.
bool zero_copy_wanted()
{
    char buf[16];
    const char* mode = guest::platform::options().get_str("vgpu_managed", buf, sizeof buf, "auto");
    return strcmp(mode, "copy") != 0 && unified_offset() != 0;
}

// Where new guest memory at g asks the device for its addresses: g itself,
// or, with the guest option vgpu_managed_base=ADDR, ADDR upward (a test
// seam: the host backend then gives addresses apart from guest RAM, as the
// CUDA driver does, and the aliases are exercised without a GPU).
uint64_t asked_address(uint64_t g, uint64_t bytes)
{
    static uint64_t next = guest::platform::options().get_u64("vgpu_managed_base", 0);
    if (next == 0)
        return g;
    const uint64_t at = next;
    next += bytes;
    return at;
}

// A free slot of at least `bytes` not yet tried in this placement, or -1.
int free_slot(uint64_t bytes, const bool* tried)
{
    for (int i = 0; i < g_slot_count; ++i)
        if (!g_slots[i].in_use && !tried[i] && g_slots[i].bytes >= bytes)
            return i;
    return -1;
}

// Device addresses for m->bytes and guest bytes that one address reaches:
// a free slot's address, when the device gives it again; else new
// page-locked guest RAM at G, reserved at G where the device can, or at the
// address it gives, aliased to G. Reservations that did not fit are held
// while trying so that each try gets a new address.
CUresult place(Managed* m, uint64_t granule)
{
    constexpr int kTries = 4;
    uint64_t held[kTries] = {};
    bool slot_tried[kMaxSlots] = {};
    void* block = nullptr;
    uint64_t g = 0;
    int fresh_tries = 0, last_errno = 0;
    uint64_t last_va = 0;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    for (int t = 0; t < kTries; ++t) {
        const int slot = free_slot(m->bytes, slot_tried);
        if (slot < 0 && block == nullptr) {
            if (cuMemAllocHost(&block, m->bytes + granule) != CUDA_SUCCESS) {
                r = CUDA_ERROR_OUT_OF_MEMORY;
                break;
            }
            // Its guest-physical address, which is also its identity-mapped
            // one (the block may be handed out at its unified address).
            uint64_t raw;
            if (!guest::platform::virt_to_phys(block, &raw)) {
                r = CUDA_ERROR_INVALID_VALUE;
                break;
            }
            g = (raw + granule - 1) / granule * granule;
        }
        // New memory asks for its own address first (the host backend gives
        // it), then lets the device choose (the CUDA driver may give an
        // address near the one asked, inside guest RAM, which no alias can
        // take).
        const uint64_t want = slot >= 0 ? g_slots[slot].va : fresh_tries++ == 0 ? asked_address(g, m->bytes) : 0;
        uint64_t va = 0;
        if ((r = call<VGPU_OP_VMM_RESERVE>({m->bytes, granule, want}, &va)) != CUDA_SUCCESS)
            break;
        m->start = va;
        if (slot >= 0) {
            slot_tried[slot] = true;
            if (va == want) {
                m->guest = g_slots[slot].guest;
                m->slot = slot;
                break;
            }
        } else if (va == g) {
            m->guest = g;
            m->block = block;
            block = nullptr;
            break;
        } else {
            const int e = g_slot_count < kMaxSlots
                              ? guest::platform::map_alias(va, reinterpret_cast<void*>(g), m->bytes)
                              : ENOMEM;
            last_errno = e;
            last_va = va;
            if (e == 0) {
                g_slots[g_slot_count] = Slot{va, g, m->bytes, false};
                m->guest = g;
                m->slot = g_slot_count++;
                block = nullptr; // the slot's for good
                break;
            }
            if (e != EEXIST) { // no aliases here, or none left: another address will not help
                call<VGPU_OP_VMM_FREE_RESERVATION>({va, m->bytes});
                r = CUDA_ERROR_NOT_SUPPORTED;
                break;
            }
        }
        held[t] = va; // taken, or the device's address is already another name for guest memory
        r = CUDA_ERROR_NOT_SUPPORTED;
    }
    for (uint64_t va : held)
        if (va != 0)
            call<VGPU_OP_VMM_FREE_RESERVATION>({va, m->bytes});
    if (block != nullptr)
        cuMemFreeHost(block);
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        guest::platform::printf("cuMemAllocManaged: the device's addresses cannot reach guest memory (last: "
                                "0x%llx for 0x%llx bytes at guest 0x%llx, alias errno %d): managed memory is "
                                "not available here\n",
                                static_cast<unsigned long long>(last_va), static_cast<unsigned long long>(m->bytes),
                                static_cast<unsigned long long>(g), last_errno);
    return r;
}
} // namespace

KVMGPU_DRIVER_ENTRY(cuMemAllocManaged, 6000);
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
    CUdevice dev = 0;
    if (CUresult r = cuCtxGetDevice(&dev))
        return r;
    if (CUresult r = call<VGPU_OP_VMM_GRANULARITY>({static_cast<uint64_t>(dev)}, &granule))
        return r;
    if (bytes > UINT64_MAX / 2 - 2 * granule)
        return CUDA_ERROR_OUT_OF_MEMORY;
    Managed m;
    m.asked = bytes;
    m.bytes = (bytes + granule - 1) / granule * granule;
    m.ctx = current_context();
    m.attach = flags;
    if (zero_copy_wanted()) {
        if (cuMemHostAlloc(&m.block, bytes, 0) != CUDA_SUCCESS)
            return CUDA_ERROR_OUT_OF_MEMORY;
        m.zero_copy = true;
        m.start = m.guest = reinterpret_cast<uintptr_t>(m.block);
        m.bytes = m.asked;
        m.buffer_id = next_buffer_id();
        g_managed[g_count++] = m;
        *dptr = m.start;
        return CUDA_SUCCESS;
    }
    if (CUresult r = place(&m, granule))
        return r;
    CUresult r = call<VGPU_OP_VMM_CREATE>({m.bytes, 0}, &m.physical);
    if (r != CUDA_SUCCESS) {
        teardown(m, false, true);
        return r;
    }
    if ((r = call<VGPU_OP_VMM_MAP>({m.start, m.bytes, 0, m.physical})) != CUDA_SUCCESS) {
        teardown(m, false, true);
        return r;
    }
    if ((r = call<VGPU_OP_VMM_SET_ACCESS>({m.start, m.bytes, device_arg(dev), VGPU_VMM_ACCESS_READWRITE}))) {
        teardown(m, true, true);
        return r;
    }
    // The mapping keeps the memory: the handle goes now, as the driver's
    // cuMemAllocManaged has none to give back.
    call<VGPU_OP_VMM_RELEASE>({m.physical});
    m.physical = 0;
    if (m.slot >= 0)
        g_slots[m.slot].in_use = true;
    m.buffer_id = next_buffer_id();
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

KVMGPU_DRIVER_ENTRY(cuMemPrefetchAsync, 8000);
extern "C" CUresult cuMemPrefetchAsync(CUdeviceptr dptr, size_t count, CUdevice dst_device, CUstream)
{
    GUEST_API_LOCK();
    return prefetch(dptr, count, location_of(dst_device), 0);
}

KVMGPU_DRIVER_ENTRY_AS(cuMemPrefetchAsync, 12020, cuMemPrefetchAsync_v2);
extern "C" CUresult cuMemPrefetchAsync_v2(CUdeviceptr dptr, size_t count, CUmemLocation location, unsigned int flags,
                                          CUstream)
{
    GUEST_API_LOCK();
    return prefetch(dptr, count, location, flags);
}

KVMGPU_DRIVER_ENTRY(cuMemAdvise, 8000);
extern "C" CUresult cuMemAdvise(CUdeviceptr dptr, size_t count, CUmem_advise advice, CUdevice device)
{
    GUEST_API_LOCK();
    return advise(dptr, count, advice, location_of(device));
}

KVMGPU_DRIVER_ENTRY_AS(cuMemAdvise, 12020, cuMemAdvise_v2);
extern "C" CUresult cuMemAdvise_v2(CUdeviceptr dptr, size_t count, CUmem_advise advice, CUmemLocation location)
{
    GUEST_API_LOCK();
    return advise(dptr, count, advice, location);
}

// length 0 or the whole allocation, as the driver takes it for managed memory.
KVMGPU_DRIVER_ENTRY(cuStreamAttachMemAsync, 6000);
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
