// The guest's vGPU connection: probing, ring set-up (cuInit), submission
// helpers, the SG-list pool and the function table (see vgpu_client.h).
#include "guest-stub/cuda/vgpu_client.h"

#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/platform/platform.h"
#include "guest-stub/runtime/mmio.h"
#include "guest-stub/platform/api_lock.h"
#include "kvmtool-gpu/abi/platform_abi.h"

namespace guest::cuda {
namespace {

constexpr uint32_t kDefaultRingEntries = 1024;
constexpr uint64_t kDefaultTimeoutSeconds = 30; // below the VMM watchdog's 60 s default
constexpr uint64_t kDefaultSgEntries = 1u << 18; // 1 GiB of 4 KiB pages in one list
constexpr uint64_t kLayoutArenaBytes = 64u << 10; // parameter layouts, carved in order

uint64_t reg(uint32_t off) { return KVMGPU_VGPU_GPA + off; }

struct Client {
    bool initialized = false;
    CUresult init_result = CUDA_ERROR_NOT_INITIALIZED;
    RingProducer ring;
    VgpuGuestInfo info{};
    // SG pool: [0, sg_used) holds lists of submitted commands; sg_pending
    // while the device may still read some of them.
    vgpu_sg_entry* sg_pool = nullptr;
    uint64_t sg_capacity = 0;
    uint64_t sg_used = 0;
    bool sg_pending = false;
    // Function layouts: a list (newest first) in arenas of permanent pinned
    // memory; a forgotten module's records are not reused. A launch finds
    // its layout through an open-addressed index of the list (a library
    // that enumerates its modules' kernels makes thousands of layouts, and
    // a walk through them is paid on every launch); a power-of-two table kept
    // at most half full, rebuilt when it grows or a module is forgotten.
    FunctionLayout* functions = nullptr;
    FunctionLayout** function_index = nullptr;
    uint64_t function_index_slots = 0;
    uint64_t function_count = 0;
    uint8_t* arena = nullptr;
    uint64_t arena_left = 0;
    uint8_t* param_scratch = nullptr;
    // Live device allocations, a list of nodes from the same arenas; freed
    // nodes are kept for reuse.
    struct Allocation {
        uint64_t dptr, bytes;
        CUcontext ctx;
        CUmemoryPool pool; // cuMemAllocAsync's, else nullptr
        Allocation* next;
        uint64_t buffer_id;
        bool graph; // a graph allocation
    };
    Allocation* allocations = nullptr;
    Allocation* spare_allocations = nullptr;
};

Client g;

CUresult ring_failure_status()
{
    uint32_t f = g.ring.failure();
    if (f == RingProducer::kTimeout) {
        // A broken ring (device-side) explains a timeout better.
        uint32_t st = mmio_read32(reg(VGPU_REG_STATUS));
        if ((st & VGPU_STATUS_BROKEN) != 0) {
            g.ring.set_failure(RingProducer::kBrokenRing);
            platform::printf("vgpu: device marked the ring broken (error %u)\n", mmio_read32(reg(VGPU_REG_ERROR)));
        } else {
            platform::printf("vgpu: no completion within the timeout (producer %u consumer %u)\n",
                             g.ring.producer(), g.ring.consumer());
        }
    }
    return static_cast<CUresult>(g.ring.failure());
}

CUresult submit(const Call& c, uint16_t flags, RingProducer::Slot* slot)
{
    if (c.payload_len > VGPU_PAYLOAD_BYTES)
        return CUDA_ERROR_INVALID_VALUE;
    // Another thread's calls may have left the vGPU in its context.
    if (c.op != VGPU_OP_CTX_SET_CURRENT && c.op != VGPU_OP_CTX_CREATE)
        if (CUresult r = match_current())
            return r;
    if (g.ring.reserve(slot) != 0)
        return ring_failure_status();
    slot->cmd->opcode = c.op;
    slot->cmd->flags = static_cast<uint16_t>(flags | c.flags);
    slot->cmd->payload_len = c.payload_len;
    for (int i = 0; i < 6; ++i)
        slot->cmd->arg[i] = c.arg[i];
    if (c.payload_len != 0)
        memcpy(slot->payload, c.payload, c.payload_len);
    g.ring.submit(*slot);
    return CUDA_SUCCESS;
}

uint32_t round_down_pow2(uint32_t v)
{
    uint32_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return p;
}

CUresult init_device()
{
    uint32_t magic = mmio_read32(reg(VGPU_REG_MAGIC));
    uint32_t version = mmio_read32(reg(VGPU_REG_VERSION));
    if (magic != VGPU_MAGIC || version != VGPU_ABI_VERSION) {
        platform::printf("vgpu: no device (magic 0x%x version %u, want 0x%x version %u)\n", magic, version,
                         VGPU_MAGIC, VGPU_ABI_VERSION);
        return CUDA_ERROR_NO_DEVICE;
    }
    g.info.features = mmio_read64(reg(VGPU_REG_FEATURES));
    g.info.backend = mmio_read32(reg(VGPU_REG_BACKEND));
    g.info.doorbell_mode = mmio_read32(reg(VGPU_REG_DOORBELL_MODE));
    uint32_t max_ring = mmio_read32(reg(VGPU_REG_MAX_RING));

    const Cmdline& cl = platform::options();
    uint64_t want = cl.get_u64("vgpu_ring", kDefaultRingEntries);
    if (want > max_ring)
        want = max_ring;
    if (want < VGPU_MIN_RING)
        want = VGPU_MIN_RING;
    uint32_t entries = round_down_pow2(static_cast<uint32_t>(want));
    if (entries > max_ring) {
        platform::printf("vgpu: device accepts at most %u ring entries (< %u)\n", max_ring, VGPU_MIN_RING);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    uint64_t bytes = vgpu_ring_bytes(entries);
    void* mem = platform::try_pinned_alloc_permanent(bytes, 4096);
    if (mem == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memset(mem, 0, bytes);

    uint64_t timeout_s = cl.get_u64("vgpu_timeout_s", kDefaultTimeoutSeconds);
    RingProducer::Config rc;
    rc.mem = mem;
    rc.entries = entries;
    rc.doorbell = g.info.doorbell_mode == VGPU_DOORBELL_POLL
                      ? nullptr
                      : reinterpret_cast<volatile uint32_t*>(reg(VGPU_DOORBELL_OFFSET));
    rc.timeout_ticks = platform::seconds_to_tsc(timeout_s == 0 ? 1 : timeout_s);
    if (!g.ring.init(rc))
        return CUDA_ERROR_UNKNOWN;
    g.ring.set_deferred(cl.get_bool("vgpu_deferred", false));

    mmio_write64(reg(VGPU_REG_RING_GPA), reinterpret_cast<uintptr_t>(mem));
    mmio_write32(reg(VGPU_REG_RING_SIZE), entries);
    mmio_write32(reg(VGPU_REG_CONTROL), VGPU_CONTROL_ENABLE);
    uint32_t status = mmio_read32(reg(VGPU_REG_STATUS));
    if ((status & VGPU_STATUS_ENABLED) == 0) {
        uint32_t err = mmio_read32(reg(VGPU_REG_ERROR));
        platform::printf("vgpu: device refused the ring (status 0x%x error %u)\n", status, err);
        return err != 0 ? static_cast<CUresult>(err) : CUDA_ERROR_NOT_INITIALIZED;
    }
    g.info.ring_entries = entries;
    g.initialized = true; // call_sync needs it

    Call c = command<VGPU_OP_INIT>();
    uint64_t result[2];
    CUresult r = call_sync(c, result);
    if (r == CUDA_SUCCESS) {
        // The vGPU starts a VM in device 0's primary context; the driver
        // starts a thread with none current (cuCtxCreate or
        // cuDevicePrimaryCtxRetain + cuCtxSetCurrent come next).
        r = call_sync(command<VGPU_OP_CTX_SET_CURRENT>({0})); // no context
    }
    if (r != CUDA_SUCCESS) {
        g.initialized = false;
        return r;
    }
    return CUDA_SUCCESS;
}

} // namespace

CUresult ready()
{
    if (!g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (g.ring.failure() != 0)
        return static_cast<CUresult>(g.ring.failure());
    return CUDA_SUCCESS;
}

CUresult call_sync(const Call& c, uint64_t* result, void* payload_out, uint32_t payload_out_len)
{
    GUEST_API_LOCK(); // also for libraries that submit without taking it (cuRAND, cuFFT)
    if (CUresult r = ready())
        return r;
    RingProducer::Slot slot;
    if (CUresult r = submit(c, 0, &slot))
        return r;
    vgpu_completion done;
    if (g.ring.wait(slot, &done) != 0)
        return ring_failure_status();
    if (result != nullptr) {
        result[0] = done.result[0];
        result[1] = done.result[1];
    }
    if (payload_out != nullptr) {
        uint32_t n = payload_out_len < VGPU_PAYLOAD_BYTES ? payload_out_len : VGPU_PAYLOAD_BYTES;
        memcpy(payload_out, slot.payload, n);
    }
    return static_cast<CUresult>(done.status);
}

CUresult call_async(const Call& c)
{
    GUEST_API_LOCK(); // also for libraries that submit without taking it (cuRAND, cuFFT)
    if (!(vgpu_op_flags(c.op) & VGPU_OPF_ASYNC))
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    RingProducer::Slot slot;
    return submit(c, VGPU_CMD_FLAG_ASYNC, &slot);
}

CUresult call_async_taken(const Call& c)
{
    GUEST_API_LOCK(); // also for libraries that submit without taking it (cuRAND, cuFFT)
    if (!(vgpu_op_flags(c.op) & VGPU_OPF_ASYNC))
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    RingProducer::Slot slot;
    if (CUresult r = submit(c, VGPU_CMD_FLAG_ASYNC, &slot))
        return r;
    // Its error, as any queued call's, is held for the next sync point.
    if (g.ring.wait(slot, nullptr) != 0)
        return ring_failure_status();
    return CUDA_SUCCESS;
}

CUresult sync_point(CUresult own)
{
    uint32_t held = g.ring.take_async_error();
    if (own != CUDA_SUCCESS)
        return own;
    return static_cast<CUresult>(held);
}

CUresult sg_acquire(vgpu_sg_entry** entries, uint64_t* capacity)
{
    if (g.sg_pool == nullptr) {
        uint64_t n = platform::options().get_u64("vgpu_sg_entries", kDefaultSgEntries);
        if (n == 0 || n > VGPU_MAX_SG_ENTRIES)
            n = kDefaultSgEntries;
        g.sg_pool = static_cast<vgpu_sg_entry*>(platform::try_pinned_alloc_permanent(n * sizeof(vgpu_sg_entry), 0));
        if (g.sg_pool == nullptr)
            return CUDA_ERROR_OUT_OF_MEMORY;
        g.sg_capacity = n;
        g.sg_used = 0;
    }
    // Reuse the pool from the start once the device has read every list in
    // it. A device walk (VGPU_SG_DEVICE_WALK, or AUTO picking it) reads its
    // list on the GPU when the copy runs, which can be long after the
    // command's completion was written: so wait for every stream to drain,
    // with a context synchronize sent as an asynchronous command, so that
    // its status (a refused list, say) waits for the next sync point like
    // any other asynchronous error. Keep a list whole if 1/4 is left.
    if (g.sg_used != 0 && g.sg_capacity - g.sg_used < g.sg_capacity / 4) {
        if (g.sg_pending) {
            Call drain = command<VGPU_OP_CTX_SYNCHRONIZE>();
            RingProducer::Slot slot;
            vgpu_completion ignored;
            if (submit(drain, VGPU_CMD_FLAG_ASYNC, &slot) != CUDA_SUCCESS || g.ring.wait(slot, &ignored) != 0)
                return ring_failure_status();
            g.sg_pending = false;
        }
        g.sg_used = 0;
    }
    *entries = g.sg_pool + g.sg_used;
    *capacity = g.sg_capacity - g.sg_used;
    return CUDA_SUCCESS;
}

void sg_commit(uint64_t used)
{
    g.sg_used += used;
    g.sg_pending = true;
}

namespace {
// `bytes` from the permanent arenas (8-byte aligned); nullptr when out of memory.
void* arena_take(uint64_t bytes)
{
    const uint64_t need = (bytes + 7) & ~7ull;
    if (need > g.arena_left) {
        const uint64_t size = need > kLayoutArenaBytes ? need : kLayoutArenaBytes;
        g.arena = static_cast<uint8_t*>(platform::try_pinned_alloc_permanent(size, 0));
        if (g.arena == nullptr)
            return nullptr;
        g.arena_left = size;
    }
    void* p = g.arena;
    g.arena += need;
    g.arena_left -= need;
    return p;
}
uint64_t index_slot(CUfunction f, uint64_t mask)
{
    return (handle_bits(f) * 0x9e3779b97f4a7c15ull >> 17) & mask;
}

// The slot of f's layout, or the empty slot where it would go.
uint64_t probe(FunctionLayout** table, uint64_t slots, CUfunction f)
{
    uint64_t i = index_slot(f, slots - 1);
    while (table[i] != nullptr && table[i]->handle != f)
        i = (i + 1) & (slots - 1);
    return i;
}

// Puts l (the newest layout of its handle) in the index while it stays at
// most half full; false when it needs a larger table, or has none.
bool index_function(FunctionLayout* l)
{
    if (g.function_index == nullptr || 2 * g.function_count > g.function_index_slots)
        return false;
    g.function_index[probe(g.function_index, g.function_index_slots, l->handle)] = l;
    return true;
}

// Builds the index anew from the list: in the same table while it stays at
// most half full, else in one at least four times the count. An old table is
// permanent memory and is not given back (tables double, so together they
// stay under twice the last). Out of memory: no index, lookups walk the list.
void reindex_functions()
{
    uint64_t slots = g.function_index_slots;
    if (g.function_index == nullptr || 2 * g.function_count > slots) {
        slots = 256;
        while (slots < 4 * g.function_count)
            slots *= 2;
        g.function_index = static_cast<FunctionLayout**>(
            platform::try_pinned_alloc_permanent(slots * sizeof(FunctionLayout*), 0));
        g.function_index_slots = g.function_index != nullptr ? slots : 0;
        if (g.function_index == nullptr)
            return;
    }
    memset(g.function_index, 0, slots * sizeof(FunctionLayout*));
    for (FunctionLayout* l = g.functions; l != nullptr; l = l->next) {
        const uint64_t i = probe(g.function_index, slots, l->handle);
        if (g.function_index[i] == nullptr) // newest first: an older layout of a handle stays out
            g.function_index[i] = l;
    }
}
} // namespace

FunctionLayout* function_add(CUfunction f, CUmodule module, uint32_t count, uint32_t bytes)
{
    auto* l = static_cast<FunctionLayout*>(arena_take(sizeof(FunctionLayout) + 4ull * count));
    if (l == nullptr)
        return nullptr;
    l->handle = f;
    l->module = module;
    l->count = count;
    l->bytes = bytes;
    l->max_dynamic_shared = 48u << 10;
    l->attributes_known = 0;
    l->offsets = reinterpret_cast<uint16_t*>(l + 1);
    l->sizes = l->offsets + count;
    l->next = g.functions;
    g.functions = l;
    ++g.function_count;
    if (!index_function(l))
        reindex_functions();
    return l;
}

FunctionLayout* function_find(CUfunction f)
{
    if (g.function_index == nullptr) { // no memory for one: the list
        for (FunctionLayout* l = g.functions; l != nullptr; l = l->next)
            if (l->handle == f)
                return l;
        return nullptr;
    }
    const uint64_t mask = g.function_index_slots - 1;
    for (uint64_t i = index_slot(f, mask);; i = (i + 1) & mask) {
        FunctionLayout* l = g.function_index[i];
        if (l == nullptr || l->handle == f)
            return l;
    }
}

void module_forget(CUmodule module)
{
    FunctionLayout** link = &g.functions;
    while (*link != nullptr) {
        if ((*link)->module == module) {
            *link = (*link)->next;
            --g.function_count;
        } else {
            link = &(*link)->next;
        }
    }
    reindex_functions();
}


namespace {
Client::Allocation* record_allocation(CUdeviceptr dptr, uint64_t bytes, CUmemoryPool pool, bool graph)
{
    for (Client::Allocation** link = &g.allocations; *link != nullptr;) {
        Client::Allocation* old = *link;
        if (old->graph && old->dptr < dptr + bytes && dptr < old->dptr + old->bytes) {
            *link = old->next;
            old->next = g.spare_allocations;
            g.spare_allocations = old;
        } else {
            link = &old->next;
        }
    }
    Client::Allocation* a = g.spare_allocations;
    if (a != nullptr)
        g.spare_allocations = a->next;
    else if ((a = static_cast<Client::Allocation*>(arena_take(sizeof *a))) == nullptr)
        return nullptr; // cuMemcpy will not know this one: it says INVALID_VALUE for it
    *a = {dptr, bytes, current_context(), pool, g.allocations, next_buffer_id(), graph};
    g.allocations = a;
    return a;
}
} // namespace

void allocation_add(CUdeviceptr dptr, uint64_t bytes, CUmemoryPool pool)
{
    record_allocation(dptr, bytes, pool, false);
}

void graph_allocation_add(CUdeviceptr dptr, uint64_t bytes)
{
    record_allocation(dptr, bytes, nullptr, true);
}

bool graph_allocation(CUdeviceptr dptr)
{
    for (const Client::Allocation* a = g.allocations; a != nullptr; a = a->next)
        if (a->dptr == dptr)
            return a->graph;
    return false;
}

void allocation_remove(CUdeviceptr dptr)
{
    for (Client::Allocation** link = &g.allocations; *link != nullptr; link = &(*link)->next) {
        if ((*link)->dptr == dptr) {
            Client::Allocation* a = *link;
            *link = a->next;
            a->next = g.spare_allocations;
            g.spare_allocations = a;
            return;
        }
    }
}

void allocations_forget(CUcontext ctx)
{
    Client::Allocation** link = &g.allocations;
    while (*link != nullptr) {
        Client::Allocation* a = *link;
        if (a->ctx != ctx) {
            link = &a->next;
            continue;
        }
        *link = a->next;
        a->next = g.spare_allocations;
        g.spare_allocations = a;
    }
}

bool allocation_find(CUdeviceptr dptr, uint64_t* bytes, CUmemoryPool* pool)
{
    for (const Client::Allocation* a = g.allocations; a != nullptr; a = a->next) {
        if (a->dptr == dptr) {
            *bytes = a->bytes;
            *pool = a->pool;
            return true;
        }
    }
    return false;
}

bool allocation_contains(uint64_t p, uint64_t bytes)
{
    for (const Client::Allocation* a = g.allocations; a != nullptr; a = a->next)
        if (p >= a->dptr && p - a->dptr <= a->bytes && bytes <= a->bytes - (p - a->dptr))
            return true;
    return false;
}

uint64_t next_buffer_id()
{
    static uint64_t last = 0;
    return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

bool allocation_containing(uint64_t p, uint64_t* start, uint64_t* bytes, uint64_t* buffer_id)
{
    for (const Client::Allocation* a = g.allocations; a != nullptr; a = a->next)
        if (p >= a->dptr && p - a->dptr < a->bytes) {
            *start = a->dptr;
            *bytes = a->bytes;
            if (buffer_id != nullptr)
                *buffer_id = a->buffer_id;
            return true;
        }
    return false;
}

void allocations_remove_within(uint64_t start, uint64_t bytes)
{
    Client::Allocation** link = &g.allocations;
    while (*link != nullptr) {
        Client::Allocation* a = *link;
        if (a->dptr < start || a->dptr - start >= bytes) {
            link = &a->next;
            continue;
        }
        *link = a->next;
        a->next = g.spare_allocations;
        g.spare_allocations = a;
    }
}

uint8_t* param_scratch()
{
    if (g.param_scratch == nullptr)
        g.param_scratch = static_cast<uint8_t*>(platform::try_pinned_alloc_permanent(VGPU_MAX_PARAM_BYTES, 0));
    return g.param_scratch;
}

RingProducer& ring() { return g.ring; }
const VgpuGuestInfo& info() { return g.info; }

} // namespace guest::cuda

using namespace guest::cuda;

KVMGPU_DRIVER_ENTRY(cuInit, 2000);
extern "C" CUresult cuInit(unsigned int flags)
{
    GUEST_API_LOCK();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (g.initialized)
        return CUDA_SUCCESS;
    if (g.init_result != CUDA_ERROR_NOT_INITIALIZED)
        return g.init_result; // a failed probe is not retried
    if (!guest::platform::vmm_present()) {
        guest::platform::printf("vgpu: not running under kvmtool-gpu (no boot info in the auxiliary vector): no device\n");
        g.init_result = CUDA_ERROR_NO_DEVICE;
        return g.init_result;
    }
    g.init_result = init_device();
    return g.init_result;
}

extern "C" void vgpuSetDeferredSubmission(int enable)
{
    GUEST_API_LOCK();
    g.ring.set_deferred(enable != 0);
    if (enable == 0 && g.initialized)
        g.ring.flush();
}

extern "C" CUresult vgpuFlush(void)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    g.ring.flush();
    return CUDA_SUCCESS;
}

extern "C" CUresult vgpuGetInfo(VgpuGuestInfo* out)
{
    GUEST_API_LOCK();
    if (out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (!g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    *out = g.info;
    out->deferred = g.ring.deferred() ? 1 : 0;
    return CUDA_SUCCESS;
}

extern "C" void vgpuGetStats(VgpuGuestStats* out)
{
    GUEST_API_LOCK();
    const guest::RingProducer::Stats& s = g.ring.stats();
    out->commands = s.commands;
    out->doorbells = s.doorbells;
    out->waits = s.waits;
    out->ring_full = s.ring_full;
    out->spin_loops = s.spin_loops;
}

extern "C" const char* vgpuBackendName(uint32_t backend)
{
    switch (backend) {
    case VGPU_BACKEND_HOST: return "host (CPU reference kernels)";
    case VGPU_BACKEND_CUDA: return "cuda";
    default: return "unknown";
    }
}
