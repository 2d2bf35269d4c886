// Handlers for virtual memory management: cuMemAddressReserve/Free,
// cuMemCreate/Release, cuMemMap/Unmap, cuMemSetAccess and the allocation
// granularity, on the current context's device. Every size, address and
// offset must be whole granules; a mapping lies inside one reservation
// over nothing mapped; physical memory counts against the VM's quota from
// cuMemCreate until its last mapping goes after cuMemRelease; a range with
// access set is the VM's device memory (AllocationTable::add_mapped) for
// every other command. What a context made goes with it and at RESET.
#include <algorithm>
#include <bit>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
// What a backend without virtual memory management answers.
class NoVirtualMemory final : public VirtualMemoryBackend {
public:
    Status vmm_granularity(uint64_t*) override { return VGPU_ERROR_NOT_SUPPORTED; }
    Status vmm_reserve(uint64_t, uint64_t, uint64_t, uint64_t*) override { return VGPU_ERROR_NOT_SUPPORTED; }
    Status vmm_free_reservation(uint64_t, uint64_t) override { return VGPU_ERROR_NOT_SUPPORTED; }
    Status vmm_create(uint64_t, bool*, uint64_t*) override { return VGPU_ERROR_NOT_SUPPORTED; }
    Status vmm_release(uint64_t) override { return VGPU_ERROR_NOT_SUPPORTED; }
    Status vmm_map(uint64_t, uint64_t, uint64_t) override { return VGPU_ERROR_NOT_SUPPORTED; }
    Status vmm_unmap(uint64_t, uint64_t) override { return VGPU_ERROR_NOT_SUPPORTED; }
    Status vmm_set_access(uint64_t, uint64_t, uint32_t) override { return VGPU_ERROR_NOT_SUPPORTED; }
};
} // namespace

VirtualMemoryBackend& CommandDispatch::vmm_backend(GpuBackend* be) {
    static NoVirtualMemory none; // stateless
    VirtualMemoryBackend* v = (be ? *be : backend()).virtual_memory();
    return v ? *v : none;
}

bool CommandDispatch::vmm_granule(uint64_t* out, GpuBackend* be) {
    return vmm_backend(be).vmm_granularity(out) == VGPU_SUCCESS && *out != 0 && std::has_single_bit(*out);
}

// Of any device, with or without a current context (as the driver's).
CommandResult CommandDispatch::op_VMM_GRANULARITY(GuestCommand& c) {
    const uint64_t device = args_of<VGPU_OP_VMM_GRANULARITY>(c).device;
    if (!device_exists(device)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    uint64_t g = 0;
    if (!vmm_granule(&g, &devices_.at(static_cast<int>(device))))
        return fail(VGPU_ERROR_NOT_SUPPORTED, "the backend has no virtual memory management");
    return done(VGPU_SUCCESS, g);
}

// bytes, alignment and the address asked for (0: any).
CommandResult CommandDispatch::op_VMM_RESERVE(GuestCommand& c) {
    const auto [bytes, align, fixed] = args_of<VGPU_OP_VMM_RESERVE>(c);
    uint64_t g = 0, end = 0;
    if (!vmm_granule(&g)) return fail(VGPU_ERROR_NOT_SUPPORTED, "the backend has no virtual memory management");
    if (bytes == 0 || bytes % g != 0) return fail(VGPU_ERROR_INVALID_VALUE, "reservation size not whole granules");
    if (align != 0 && !std::has_single_bit(align)) return fail(VGPU_ERROR_INVALID_VALUE, "alignment not a power of two");
    if (fixed % g != 0 || __builtin_add_overflow(fixed, bytes, &end))
        return fail(VGPU_ERROR_INVALID_VALUE, "address asked for not granule-aligned, or the range wraps");
    if (vmm_reserved_.size() >= opts_.max_handles) return fail(VGPU_ERROR_OUT_OF_MEMORY, "reservation table full");
    uint64_t va = 0;
    const Status s = backend_result(vmm_backend().vmm_reserve(bytes, std::max(align, g), fixed, &va)); // 0: a granule
    if (s != VGPU_SUCCESS) return done(s);
    // A backend range overlapping what the VM holds is a bug; do not expose it.
    auto next = vmm_reserved_.lower_bound(va);
    const bool overlaps = (next != vmm_reserved_.end() && next->first - va < bytes) ||
                          (next != vmm_reserved_.begin() && std::prev(next)->first + std::prev(next)->second.bytes > va);
    if (va % g != 0 || va + bytes < va || overlaps || allocs_.in_allocation(va, 0) ||
        allocs_.in_allocation(va + bytes - 1, 0)) {
        vmm_backend().vmm_free_reservation(va, bytes);
        return fail(VGPU_ERROR_UNKNOWN, "backend returned an unaligned or overlapping reservation");
    }
    vmm_reserved_.emplace(va, VmmReservation{bytes, ctx_});
    return done(VGPU_SUCCESS, va);
}

// One whole reservation, any context's (unified addressing), as cuMemFree.
CommandResult CommandDispatch::op_VMM_FREE_RESERVATION(GuestCommand& c) {
    const auto [va, bytes] = args_of<VGPU_OP_VMM_FREE_RESERVATION>(c);
    auto it = vmm_reserved_.find(va);
    if (it == vmm_reserved_.end() || it->second.bytes != bytes)
        return fail(VGPU_ERROR_INVALID_VALUE, "not a reservation of this VM (start and size)");
    auto m = vmm_maps_.lower_bound(va);
    if (m != vmm_maps_.end() && m->first - va < bytes) return fail(VGPU_ERROR_INVALID_VALUE, "reservation still mapped");
    const Status s = backend_result(vmm_backend().vmm_free_reservation(va, bytes));
    if (s == VGPU_SUCCESS) vmm_reserved_.erase(it);
    return done(s);
}

CommandResult CommandDispatch::op_VMM_CREATE(GuestCommand& c) {
    const auto [bytes, compression] = args_of<VGPU_OP_VMM_CREATE>(c);
    if (compression > 1) return fail(VGPU_ERROR_INVALID_VALUE, "compression type");
    uint64_t g = 0;
    if (!vmm_granule(&g)) return fail(VGPU_ERROR_NOT_SUPPORTED, "the backend has no virtual memory management");
    if (bytes == 0 || bytes % g != 0) return fail(VGPU_ERROR_INVALID_VALUE, "size not whole granules");
    if (!allocs_.charge(bytes)) return fail(VGPU_ERROR_OUT_OF_MEMORY, "refused by the VM's device-memory quota");
    uint64_t backend_handle = 0;
    bool compressible = compression == 1;
    const Status s = backend_result(vmm_backend().vmm_create(bytes, &compressible, &backend_handle));
    if (s != VGPU_SUCCESS) {
        allocs_.uncharge(bytes);
        return done(s);
    }
    auto h = vmm_physical_.insert(PhysicalEntry{backend_handle, bytes, 0, false}, ctx_);
    if (!h) {
        vmm_backend().vmm_release(backend_handle);
        allocs_.uncharge(bytes);
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "physical memory handle table full");
    }
    return done(VGPU_SUCCESS, *h, compressible ? 1 : 0);
}

// A physical handle of the current context.
CommandResult CommandDispatch::op_VMM_RELEASE(GuestCommand& c) {
    const uint64_t handle = args_of<VGPU_OP_VMM_RELEASE>(c).handle;
    PhysicalEntry* p = vmm_physical_.find(handle, ctx_);
    if (!p || p->released) return fail(VGPU_ERROR_INVALID_VALUE, "physical memory handle");
    if (p->mappings > 0) {
        p->released = true; // the memory stays until its last mapping goes, as the driver keeps it
        return done(VGPU_SUCCESS);
    }
    const Status s = vmm_backend().vmm_release(p->backend);
    allocs_.uncharge(p->bytes);
    vmm_physical_.erase(handle, ctx_);
    return done(backend_result(s));
}

CommandResult CommandDispatch::op_VMM_MAP(GuestCommand& c) {
    const auto [va, bytes, offset, handle] = args_of<VGPU_OP_VMM_MAP>(c);
    uint64_t g = 0;
    if (!vmm_granule(&g)) return fail(VGPU_ERROR_NOT_SUPPORTED, "the backend has no virtual memory management");
    if (offset != 0) return fail(VGPU_ERROR_INVALID_VALUE, "offset into physical memory must be 0");
    if (bytes == 0 || bytes % g != 0 || va % g != 0) return fail(VGPU_ERROR_INVALID_VALUE, "range not whole granules");
    PhysicalEntry* p = vmm_physical_.find(handle, ctx_);
    if (!p || p->released) return fail(VGPU_ERROR_INVALID_HANDLE, "physical memory handle");
    if (bytes > p->bytes) return fail(VGPU_ERROR_INVALID_VALUE, "mapping larger than the physical memory");
    auto r = vmm_reserved_.upper_bound(va);
    if (r == vmm_reserved_.begin() || !range_inside(va, bytes, std::prev(r)->first, std::prev(r)->second.bytes))
        return fail(VGPU_ERROR_INVALID_VALUE, "range not inside one reservation of this VM");
    auto next = vmm_maps_.lower_bound(va);
    if ((next != vmm_maps_.end() && next->first - va < bytes) ||
        (next != vmm_maps_.begin() && std::prev(next)->first + std::prev(next)->second.bytes > va))
        return fail(VGPU_ERROR_INVALID_VALUE, "range already mapped");
    const Status s = backend_result(vmm_backend().vmm_map(va, bytes, p->backend));
    if (s != VGPU_SUCCESS) return done(s);
    // backend_result may have dropped every handle (a lost context): look again.
    if ((p = vmm_physical_.find(handle, ctx_)) == nullptr) return done(VGPU_ERROR_UNKNOWN);
    ++p->mappings;
    vmm_maps_.emplace(va, VmmMapping{bytes, handle, ctx_, VGPU_VMM_ACCESS_NONE});
    return done(VGPU_SUCCESS);
}

std::vector<uint64_t> CommandDispatch::vmm_tiling(uint64_t va, uint64_t bytes) const {
    std::vector<uint64_t> starts;
    uint64_t at = va, end;
    if (bytes == 0 || __builtin_add_overflow(va, bytes, &end)) return {};
    while (at < end) {
        auto it = vmm_maps_.find(at);
        if (it == vmm_maps_.end() || it->second.bytes > end - at) return {};
        starts.push_back(at);
        at += it->second.bytes;
    }
    return starts;
}

void CommandDispatch::vmm_unmap_one(uint64_t va) {
    auto it = vmm_maps_.find(va);
    if (it == vmm_maps_.end()) return;
    allocs_.remove_mapped(va);
    vmm_backend().vmm_unmap(va, it->second.bytes);
    const VmmMapping m = it->second;
    vmm_maps_.erase(it);
    PhysicalEntry* p = vmm_physical_.find(m.physical, m.physical_owner);
    if (!p || --p->mappings > 0 || !p->released) return;
    vmm_backend().vmm_release(p->backend);
    allocs_.uncharge(p->bytes);
    vmm_physical_.erase(m.physical, m.physical_owner);
}

// A range of whole mappings.
CommandResult CommandDispatch::op_VMM_UNMAP(GuestCommand& c) {
    const auto range = args_of<VGPU_OP_VMM_UNMAP>(c);
    const std::vector<uint64_t> starts = vmm_tiling(range.address, range.bytes);
    if (starts.empty()) return fail(VGPU_ERROR_INVALID_VALUE, "range is not whole mappings of this VM");
    // The device's queued work may still use the memory.
    const Status s = backend_result(backend().ctx_synchronize());
    if (s != VGPU_SUCCESS) return done(s);
    for (uint64_t va : starts) vmm_unmap_one(va);
    return done(VGPU_SUCCESS);
}

// A range of whole mappings, for a device, VGPU_VMM_ACCESS_* flags.
CommandResult CommandDispatch::op_VMM_SET_ACCESS(GuestCommand& c) {
    const auto [va, bytes, device, flags] = args_of<VGPU_OP_VMM_SET_ACCESS>(c);
    if (flags != VGPU_VMM_ACCESS_NONE && flags != VGPU_VMM_ACCESS_READ && flags != VGPU_VMM_ACCESS_READWRITE)
        return fail(VGPU_ERROR_INVALID_VALUE, "unknown access flags");
    if (device != static_cast<uint64_t>(device_of(ctx_)))
        return fail(VGPU_ERROR_INVALID_DEVICE, "access is set for the current context's device only");
    const std::vector<uint64_t> starts = vmm_tiling(va, bytes);
    if (starts.empty()) return fail(VGPU_ERROR_INVALID_VALUE, "range is not whole mappings of this VM");
    const Status s = backend_result(vmm_backend().vmm_set_access(va, bytes, static_cast<uint32_t>(flags)));
    if (s != VGPU_SUCCESS) return done(s);
    for (uint64_t at : starts) {
        auto it = vmm_maps_.find(at);
        if (it == vmm_maps_.end()) continue; // a lost context dropped it
        it->second.access = static_cast<uint32_t>(flags);
        if (flags == VGPU_VMM_ACCESS_NONE)
            allocs_.remove_mapped(at);
        else
            allocs_.add_mapped(at, it->second.bytes);
    }
    return done(VGPU_SUCCESS);
}

void CommandDispatch::vmm_free_owned_by(uint64_t ctx) {
    // Mappings in its reservations or of its memory, then its memory, then
    // its reservations.
    std::vector<uint64_t> doomed;
    for (const auto& [va, m] : vmm_maps_) {
        auto r = vmm_reserved_.upper_bound(va);
        const bool in_own = r != vmm_reserved_.begin() && std::prev(r)->second.owner == ctx;
        if (in_own || m.physical_owner == ctx) doomed.push_back(va);
    }
    for (uint64_t va : doomed) vmm_unmap_one(va);
    vmm_physical_.erase_owned_by(ctx, [&](const PhysicalEntry& p) {
        if (p.released) return; // uncharged already where its last mapping went
        vmm_backend().vmm_release(p.backend);
        allocs_.uncharge(p.bytes);
    });
    for (auto it = vmm_reserved_.begin(); it != vmm_reserved_.end();) {
        if (it->second.owner != ctx) {
            ++it;
            continue;
        }
        vmm_backend().vmm_free_reservation(it->first, it->second.bytes);
        it = vmm_reserved_.erase(it);
    }
}

} // namespace kvmgpu::vgpu
