// The host backend's virtual memory management: physical blocks of host
// memory mapped at reserved addresses, so its CPU kernels and copies reach
// them by translate(). The device model checked every range and handle;
// these checks only keep the backend's own maps consistent.
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu/range.h"

namespace kvmgpu::vgpu {

namespace {
bool ranges_overlap(uint64_t a, uint64_t a_len, uint64_t b, uint64_t b_len) {
    return a < b + b_len && b < a + a_len; // callers' ranges do not wrap
}
} // namespace

bool HostBackend::vmm_overlaps(uint64_t va, uint64_t bytes) const {
    for (const auto& [base, r] : vmm_reserved_)
        if (ranges_overlap(va, bytes, base, r.bytes)) return true;
    for (const auto& [base, a] : allocs_)
        if (ranges_overlap(va, bytes, base, a.bytes)) return true;
    return false;
}

Status HostBackend::vmm_granularity(uint64_t* out) {
    *out = kVmmGranule;
    return VGPU_SUCCESS;
}

Status HostBackend::vmm_reserve(uint64_t bytes, uint64_t align, uint64_t fixed, uint64_t* va) {
    uint64_t end;
    if (bytes == 0 || __builtin_add_overflow(fixed, bytes, &end)) return VGPU_ERROR_INVALID_VALUE;
    // The address asked for where it is free (and canonical, as a CPU
    // pointer the guest may also hold), else any, as the driver does.
    if (fixed != 0 && end <= (1ull << 47) && !vmm_overlaps(fixed, bytes) && !ram_.host_of(fixed, 1)) {
        vmm_reserved_.emplace(fixed, VmmReservation{bytes, 0});
        *va = fixed;
        return VGPU_SUCCESS;
    }
    // Fake addresses come 64 KiB-aligned: take enough to align inside.
    const uint64_t extra = align > FakeAddressRange::kGranule ? align : 0;
    if (bytes > UINT64_MAX - extra) return VGPU_ERROR_OUT_OF_MEMORY;
    const uint64_t base = alloc_addresses_.reserve(bytes + extra);
    if (base == 0) return VGPU_ERROR_OUT_OF_MEMORY;
    const uint64_t start = extra ? (base + extra - 1) / extra * extra : base;
    vmm_reserved_.emplace(start, VmmReservation{bytes, base});
    *va = start;
    return VGPU_SUCCESS;
}

Status HostBackend::vmm_free_reservation(uint64_t va, uint64_t bytes) {
    auto it = vmm_reserved_.find(va);
    if (it == vmm_reserved_.end() || it->second.bytes != bytes) return VGPU_ERROR_INVALID_VALUE;
    if (it->second.fake_base) alloc_addresses_.release(it->second.fake_base);
    vmm_reserved_.erase(it);
    return VGPU_SUCCESS;
}

Status HostBackend::vmm_create(uint64_t bytes, bool* compressible, uint64_t* handle) {
    if (bytes == 0) return VGPU_ERROR_INVALID_VALUE;
    *compressible = false;
    if (bytes > opts_.total_bytes - used_) return VGPU_ERROR_OUT_OF_MEMORY;
    auto* raw = static_cast<uint8_t*>(std::calloc(1, bytes)); // fresh zero pages, touched lazily
    if (!raw) return VGPU_ERROR_OUT_OF_MEMORY;
    std::shared_ptr<uint8_t[]> block(raw, [](uint8_t* p) { std::free(p); });
    used_ += bytes;
    *handle = next_object();
    vmm_blocks_.emplace(*handle, std::make_pair(std::move(block), bytes));
    return VGPU_SUCCESS;
}

Status HostBackend::vmm_release(uint64_t handle) {
    auto it = vmm_blocks_.find(handle);
    if (it == vmm_blocks_.end()) return VGPU_ERROR_INVALID_VALUE;
    used_ -= it->second.second; // mappings may hold the memory a little longer
    vmm_blocks_.erase(it);
    return VGPU_SUCCESS;
}

Status HostBackend::vmm_map(uint64_t va, uint64_t bytes, uint64_t handle) {
    auto b = vmm_blocks_.find(handle);
    if (b == vmm_blocks_.end() || bytes > b->second.second) return VGPU_ERROR_INVALID_VALUE;
    vmm_maps_.emplace(va, VmmMapping{b->second.first, bytes});
    return VGPU_SUCCESS;
}

Status HostBackend::vmm_unmap(uint64_t va, uint64_t bytes) {
    uint64_t at = va, end = va + bytes;
    while (at < end) {
        auto it = vmm_maps_.find(at);
        if (it == vmm_maps_.end()) return VGPU_ERROR_INVALID_VALUE;
        at += it->second.bytes;
        vmm_maps_.erase(it);
    }
    return VGPU_SUCCESS;
}

Status HostBackend::vmm_set_access(uint64_t va, uint64_t bytes, uint32_t flags) {
    // The device model checked that whole mappings tile the range and keeps
    // which are accessible; here every mapping is reachable by translate().
    (void)va, (void)bytes, (void)flags;
    return VGPU_SUCCESS;
}

uint8_t* HostBackend::translate_vmm(uint64_t dptr, uint64_t bytes) const {
    if (vmm_maps_.empty()) return nullptr;
    auto it = vmm_maps_.upper_bound(dptr);
    if (it == vmm_maps_.begin()) return nullptr;
    --it;
    if (!range_inside(dptr, bytes, it->first, it->second.bytes)) return nullptr;
    return it->second.block.get() + (dptr - it->first);
}

void HostBackend::drop_vmm() {
    vmm_maps_.clear();
    for (auto& [h, b] : vmm_blocks_) used_ -= b.second;
    vmm_blocks_.clear();
    for (auto& [va, r] : vmm_reserved_)
        if (r.fake_base) alloc_addresses_.release(r.fake_base);
    vmm_reserved_.clear();
}

} // namespace kvmgpu::vgpu
