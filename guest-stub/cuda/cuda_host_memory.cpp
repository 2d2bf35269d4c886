// Page-locked host memory as the driver offers it: cuMemAllocHost /
// cuMemHostAlloc blocks that cuMemFreeHost gives back for reuse, and the
// registration of buffers a program already has (cuMemHostRegister).
//
// Blocks come from pinned memory that heap_release never takes back, so a
// freed block can safely go to a later allocation. Freed blocks are kept
// by address, merged with free neighbours, and handed out first fit.
//
// Unified addressing: where the device reaches guest RAM at its own
// addresses (gpa + an offset: the CUDA backend, whose registered host
// memory keeps its host address) and the platform has aliases (Linux-ABI
// guests), the VMM gives all of guest RAM that second name too, and blocks
// are handed out at their device address: one pointer on the CPU and in
// kernels, as natively (a kernel may spin on a flag the CPU writes).
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/platform.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

constexpr uint64_t kBlockAlign = 4096;
constexpr int kMaxRanges = 1024; // live blocks + free blocks + registrations

struct Range {
    uint8_t* p;
    uint64_t bytes;
    Range* next;
    uint64_t registration = 0; // the vGPU's, for a registered pageable buffer
    CUdeviceptr dptr = 0;      // its device address (0: none, see cuMemHostGetDevicePointer)
    unsigned flags = 0;        // a block's, as cuMemHostAlloc was given them
};

struct HostMemory {
    Range nodes[kMaxRanges];
    Range* spare = nullptr;
    bool nodes_ready = false;
    Range* live = nullptr;        // handed out, any order
    Range* free_blocks = nullptr; // by address, no two adjacent
    Range* registered = nullptr;  // cuMemHostRegister'ed buffers
};

HostMemory g;

Range* take_node()
{
    if (!g.nodes_ready) {
        for (Range& n : g.nodes) {
            n.next = g.spare;
            g.spare = &n;
        }
        g.nodes_ready = true;
    }
    Range* n = g.spare;
    if (n != nullptr)
        g.spare = n->next;
    return n;
}

void give_node(Range* n)
{
    n->next = g.spare;
    g.spare = n;
}

// Unlinks and returns the range of `list` that starts at p.
Range* unlink_at(Range** list, const void* p)
{
    for (Range** link = list; *link != nullptr; link = &(*link)->next)
        if ((*link)->p == p) {
            Range* r = *link;
            *link = r->next;
            return r;
        }
    return nullptr;
}

// A free block of at least `bytes`, split if larger; nullptr if none.
uint8_t* reuse_free_block(uint64_t bytes)
{
    for (Range** link = &g.free_blocks; *link != nullptr; link = &(*link)->next) {
        Range* b = *link;
        if (b->bytes < bytes)
            continue;
        uint8_t* p = b->p;
        if (b->bytes == bytes) {
            *link = b->next;
            give_node(b);
        } else {
            b->p += bytes;
            b->bytes -= bytes;
        }
        return p;
    }
    return nullptr;
}

void add_free_block(Range* block)
{
    Range* prev = nullptr;
    Range* next = g.free_blocks;
    while (next != nullptr && next->p < block->p) {
        prev = next;
        next = next->next;
    }
    block->next = next;
    (prev != nullptr ? prev->next : g.free_blocks) = block;
    if (next != nullptr && block->p + block->bytes == next->p) {
        block->bytes += next->bytes;
        block->next = next->next;
        give_node(next);
    }
    if (prev != nullptr && prev->p + prev->bytes == block->p) {
        prev->bytes += block->bytes;
        prev->next = block->next;
        give_node(block);
    }
}

const Range* containing(const Range* list, const uint8_t* p)
{
    for (const Range* r = list; r != nullptr; r = r->next)
        if (p >= r->p && p < r->p + r->bytes)
            return r;
    return nullptr;
}

bool overlaps(const Range* list, const uint8_t* p, uint64_t bytes)
{
    for (const Range* r = list; r != nullptr; r = r->next)
        if (p < r->p + r->bytes && r->p < p + bytes)
            return true;
    return false;
}

constexpr uint64_t k2M = 2ull << 20;

} // namespace

namespace guest::cuda {
uint64_t unified_offset()
{
    static bool tried = false;
    static uint64_t offset = 0;
    if (tried || current_context() == nullptr) // the vGPU is asked once a context exists
        return offset;
    tried = true;
    if (!guest::platform::options().get_bool("vgpu_unified", true) || guest::platform::map_alias(0, nullptr, 0) != 0)
        return 0;
    const uint64_t ram = guest::platform::boot_info().ram_size & ~(k2M - 1);
    uint64_t dev = 0;
    Call c = command<VGPU_OP_GUEST_RAM_DEVICE_PTR>({k2M, 4096});
    if (ram <= k2M || call_result(c, &dev) != CUDA_SUCCESS || dev < k2M || (dev - k2M) % k2M != 0)
        return 0;
    // [0, 2 MiB) holds the boot structures, never a block: left out.
    if (guest::platform::map_alias(dev, reinterpret_cast<void*>(k2M), ram - k2M) != 0)
        return 0;
    offset = dev - k2M;
    return offset;
}

bool registered_device_address(const void* p, uint64_t bytes, CUdeviceptr* out)
{
    const auto* q = static_cast<const uint8_t*>(p);
    const Range* r = containing(g.registered, q);
    if (r == nullptr || r->dptr == 0 || bytes > r->bytes - static_cast<uint64_t>(q - r->p))
        return false;
    *out = r->dptr + static_cast<uint64_t>(q - r->p);
    return true;
}

bool page_locked(const void* p, uint64_t bytes)
{
    const auto* q = static_cast<const uint8_t*>(p);
    const Range* lists[] = {g.registered, g.live};
    for (const Range* list : lists) {
        const Range* r = containing(list, q);
        if (r != nullptr && bytes <= r->bytes - static_cast<uint64_t>(q - r->p))
            return true;
    }
    return guest::platform::platform_page_locked(p, bytes);
}
} // namespace guest::cuda

// CU_MEMHOSTALLOC_PORTABLE, _DEVICEMAP and _WRITECOMBINED: every block is
// all three here (guest RAM is mapped into the device's address space).
KVMGPU_DRIVER_ENTRY(cuMemHostAlloc, 2020);
extern "C" CUresult cuMemHostAlloc(void** pp, size_t bytes, unsigned int flags)
{
    GUEST_API_LOCK();
    if (pp == nullptr || bytes == 0 || (flags & ~0x7u) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    const uint64_t need = (bytes + kBlockAlign - 1) & ~(kBlockAlign - 1);
    Range* n = take_node();
    if (n == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint8_t* p = reuse_free_block(need);
    if (p == nullptr) {
        p = static_cast<uint8_t*>(guest::platform::try_pinned_alloc_permanent(need, 0));
        if (p != nullptr && unified_offset() != 0)
            p += unified_offset();
    }
    if (p == nullptr) {
        give_node(n);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *n = Range{p, need, g.live};
    n->flags = flags;
    g.live = n;
    *pp = p;
    // As the driver pins at allocation: the vGPU registers the block now, not
    // at its first copy (a timed one, often). Best effort: a copy would too.
    uint64_t gpa, window;
    if (ready() == CUDA_SUCCESS && current_context() != nullptr && guest::platform::phys_contiguous(p, need, &gpa)) {
        Call c = command<VGPU_OP_GUEST_RAM_DEVICE_PTR>({gpa, need});
        (void)call_result(c, &window);
    }
    return CUDA_SUCCESS;
}

extern "C" CUresult cuMemAllocHost(void** pp, size_t bytes)
{
    GUEST_API_LOCK();
    return cuMemHostAlloc(pp, bytes, 0);
}

KVMGPU_DRIVER_ENTRY(cuMemFreeHost, 2000);
extern "C" CUresult cuMemFreeHost(void* p)
{
    GUEST_API_LOCK();
    if (p == nullptr)
        return ready(); // nothing to free, as cuMemFree(0)
    Range* block = unlink_at(&g.live, p);
    if (block == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    add_free_block(block);
    return CUDA_SUCCESS;
}

namespace {

// A pageable buffer's pages (scattered frames) to the vGPU, which gives them
// one device address; *registration and *dptr come back.
CUresult register_pages(const uint8_t* p, uint64_t bytes, unsigned flags, uint64_t* registration, CUdeviceptr* dptr)
{
    const uint64_t max_entries = bytes / 4096 + 2;
    void* list = nullptr;
    if (CUresult r = cuMemAllocHost(&list, max_entries * sizeof(vgpu_sg_entry)))
        return r;
    uint64_t count = 0, list_gpa = 0;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (guest::platform::build_sg(p, bytes, static_cast<vgpu_sg_entry*>(list), max_entries, &count) == guest::SgResult::kOk &&
        guest::platform::phys_contiguous(list, max_entries * sizeof(vgpu_sg_entry), &list_gpa)) {
        Call c = command<VGPU_OP_HOST_REGISTER>({list_gpa, count, bytes, flags});
        uint64_t res[2];
        r = call_sync(c, res);
        if (r == CUDA_SUCCESS)
            *registration = res[0], *dptr = res[1];
    }
    cuMemFreeHost(list); // the vGPU read it during the call
    return r;
}

} // namespace

// CU_MEMHOSTREGISTER_PORTABLE, _DEVICEMAP (1, 2); READ_ONLY (8). IOMEMORY
// (4) names device memory, which guest RAM is not. Identity-mapped RAM is
// page-locked already; a pageable buffer's frames get one device address
// from the vGPU (none where guest RAM is on huge host pages).
KVMGPU_DRIVER_ENTRY(cuMemHostRegister, 6050);
extern "C" CUresult cuMemHostRegister(void* p, size_t bytes, unsigned int flags)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (p == nullptr || bytes == 0 || (flags & ~0xBu) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint8_t* base = static_cast<uint8_t*>(p);
    uint64_t gpa;
    for (uint64_t off = 0; off < bytes; off += 4096) // every page mapped
        if (!guest::platform::virt_to_phys(base + off, &gpa))
            return CUDA_ERROR_INVALID_VALUE;
    if (!guest::platform::virt_to_phys(base + bytes - 1, &gpa))
        return CUDA_ERROR_INVALID_VALUE;
    if (overlaps(g.registered, base, bytes) || overlaps(g.live, base, bytes))
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    Range* n = take_node();
    if (n == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *n = Range{base, bytes, g.registered};
    if (!guest::platform::is_identity_ram(base, bytes)) {
        if (CUresult r = register_pages(base, bytes, flags, &n->registration, &n->dptr)) {
            give_node(n);
            return r;
        }
    }
    g.registered = n;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuMemHostUnregister, 4000);
extern "C" CUresult cuMemHostUnregister(void* p)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    Range* r = unlink_at(&g.registered, p);
    if (r == nullptr)
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    CUresult result = CUDA_SUCCESS;
    if (r->registration != 0) {
        Call c = command<VGPU_OP_HOST_UNREGISTER>({r->registration});
        result = call_sync(c);
    }
    give_node(r);
    return result;
}

// The flags a block was allocated with; any other pointer is refused, as by the driver.
KVMGPU_DRIVER_ENTRY(cuMemHostGetFlags, 2030);
extern "C" CUresult cuMemHostGetFlags(unsigned int* flags, void* p)
{
    GUEST_API_LOCK();
    const Range* block = flags != nullptr ? containing(g.live, static_cast<const uint8_t*>(p)) : nullptr;
    if (block == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = block->flags;
    return CUDA_SUCCESS;
}

// Page-locked memory's device address (zero copy). Physically contiguous
// memory (cuMemHostAlloc blocks, registered identity-mapped RAM) has its
// window's; a registered pageable buffer the address the vGPU gave it, and
// none (CUDA_ERROR_NOT_SUPPORTED) where guest RAM is on huge host pages.
extern "C" CUresult cuMemHostGetDevicePointer(CUdeviceptr* dptr, void* p, unsigned int flags)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (dptr == nullptr || p == nullptr || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    const uint8_t* q = static_cast<const uint8_t*>(p);
    const Range* owner = containing(g.live, q);
    if (owner == nullptr)
        owner = containing(g.registered, q);
    if (owner == nullptr)
        return CUDA_ERROR_INVALID_VALUE; // not page-locked
    const uint64_t offset = static_cast<uint64_t>(q - owner->p), rest = owner->bytes - offset;
    uint64_t gpa;
    if (owner->registration == 0 && guest::platform::phys_contiguous(q, rest, &gpa))
        return vgpuGuestRamDevicePtr(dptr, q, rest); // a unified block's is its own address
    if (owner->dptr == 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    *dptr = owner->dptr + offset;
    return CUDA_SUCCESS;
}
