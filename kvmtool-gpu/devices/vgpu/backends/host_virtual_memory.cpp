#include "kvmtool-gpu/devices/vgpu/backends/host_virtual_memory.h"

#include <cstdlib>

#include "kvmtool-gpu/devices/vgpu/range.h"

namespace kvmgpu::vgpu {

bool HostVirtualMemory::reservation_overlaps(uint64_t va, uint64_t bytes) const {
    for (const auto& [base, r] : reserved_)
        if (ranges_overlap(va, bytes, base, r.bytes)) return true;
    return false;
}

Status HostVirtualMemory::vmm_granularity(uint64_t* out) {
    *out = kGranule;
    return VGPU_SUCCESS;
}

Status HostVirtualMemory::vmm_reserve(uint64_t bytes, uint64_t align, uint64_t fixed, uint64_t* va) {
    uint64_t end;
    if (bytes == 0 || __builtin_add_overflow(fixed, bytes, &end)) return VGPU_ERROR_INVALID_VALUE;
    // The address asked for where it is free (and canonical, as a CPU
    // pointer the guest may also hold), else any, as the driver does.
    if (fixed != 0 && end <= (1ull << 47) && !reservation_overlaps(fixed, bytes) &&
        !(memory_.in_use && memory_.in_use(fixed, bytes))) {
        reserved_.emplace(fixed, Reservation{bytes, 0});
        *va = fixed;
        return VGPU_SUCCESS;
    }
    // Fake addresses come 64 KiB-aligned: take enough to align inside.
    const uint64_t extra = align > FakeAddressRange::kGranule ? align : 0;
    if (bytes > UINT64_MAX - extra) return VGPU_ERROR_OUT_OF_MEMORY;
    const uint64_t base = memory_.addresses().reserve(bytes + extra);
    if (base == 0) return VGPU_ERROR_OUT_OF_MEMORY;
    const uint64_t start = extra ? (base + extra - 1) / extra * extra : base;
    reserved_.emplace(start, Reservation{bytes, base});
    *va = start;
    return VGPU_SUCCESS;
}

Status HostVirtualMemory::vmm_free_reservation(uint64_t va, uint64_t bytes) {
    auto it = reserved_.find(va);
    if (it == reserved_.end() || it->second.bytes != bytes) return VGPU_ERROR_INVALID_VALUE;
    if (it->second.fake_base) memory_.addresses().release(it->second.fake_base);
    reserved_.erase(it);
    return VGPU_SUCCESS;
}

Status HostVirtualMemory::vmm_create(uint64_t bytes, bool* compressible, uint64_t* handle) {
    if (bytes == 0) return VGPU_ERROR_INVALID_VALUE;
    *compressible = false;
    if (!memory_.take(bytes)) return VGPU_ERROR_OUT_OF_MEMORY;
    auto* raw = static_cast<uint8_t*>(std::calloc(1, bytes)); // fresh zero pages, touched lazily
    if (!raw) {
        memory_.give(bytes);
        return VGPU_ERROR_OUT_OF_MEMORY;
    }
    std::shared_ptr<uint8_t[]> memory(raw, [](uint8_t* p) { std::free(p); });
    *handle = memory_.next_object();
    blocks_.emplace(*handle, Block{std::move(memory), bytes});
    return VGPU_SUCCESS;
}

Status HostVirtualMemory::vmm_release(uint64_t handle) {
    auto it = blocks_.find(handle);
    if (it == blocks_.end()) return VGPU_ERROR_INVALID_VALUE;
    memory_.give(it->second.bytes); // mappings may hold the memory a little longer
    blocks_.erase(it);
    return VGPU_SUCCESS;
}

Status HostVirtualMemory::vmm_map(uint64_t va, uint64_t bytes, uint64_t handle) {
    auto b = blocks_.find(handle);
    if (b == blocks_.end() || bytes > b->second.bytes) return VGPU_ERROR_INVALID_VALUE;
    maps_.emplace(va, Block{b->second.memory, bytes});
    return VGPU_SUCCESS;
}

Status HostVirtualMemory::vmm_unmap(uint64_t va, uint64_t bytes) {
    uint64_t at = va, end = va + bytes;
    while (at < end) {
        auto it = maps_.find(at);
        if (it == maps_.end()) return VGPU_ERROR_INVALID_VALUE;
        at += it->second.bytes;
        maps_.erase(it);
    }
    return VGPU_SUCCESS;
}

Status HostVirtualMemory::vmm_set_access(uint64_t va, uint64_t bytes, uint32_t flags) {
    // The device model checked that whole mappings tile the range and keeps
    // which are accessible; here every mapping is reachable by translate().
    (void)va, (void)bytes, (void)flags;
    return VGPU_SUCCESS;
}

uint8_t* HostVirtualMemory::translate(uint64_t dptr, uint64_t bytes) const {
    if (maps_.empty()) return nullptr;
    auto it = maps_.upper_bound(dptr);
    if (it == maps_.begin()) return nullptr;
    --it;
    if (!range_inside(dptr, bytes, it->first, it->second.bytes)) return nullptr;
    return it->second.memory.get() + (dptr - it->first);
}

void HostVirtualMemory::clear() {
    maps_.clear();
    for (auto& [h, b] : blocks_) memory_.give(b.bytes);
    blocks_.clear();
    for (auto& [va, r] : reserved_)
        if (r.fake_base) memory_.addresses().release(r.fake_base);
    reserved_.clear();
}

} // namespace kvmgpu::vgpu
