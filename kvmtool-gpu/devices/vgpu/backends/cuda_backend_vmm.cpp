// CudaBackend: the driver's virtual memory management (cuMemAddressReserve,
// cuMemCreate, cuMemMap, cuMemSetAccess...) on this backend's device. The
// device model checked every range, size and handle first; the backend
// remembers what it holds so that a lost context gives it all back.
#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"

namespace kvmgpu::vgpu {

bool CudaBackend::vmm_ready() const {
    return ctx_ && api_.cuMemGetAllocationGranularity && api_.cuMemAddressReserve && api_.cuMemAddressFree &&
           api_.cuMemCreate && api_.cuMemRelease && api_.cuMemMap && api_.cuMemUnmap && api_.cuMemSetAccess;
}

namespace {
CUmemAllocationProp device_prop(CUdevice dev) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    return prop;
}
} // namespace

Status CudaBackend::vmm_granularity(uint64_t* out) {
    if (!vmm_ready()) return VGPU_ERROR_NOT_SUPPORTED;
    const CUmemAllocationProp prop = device_prop(dev_);
    size_t g = 0;
    CU_TRY(api_.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    *out = g;
    return VGPU_SUCCESS;
}

Status CudaBackend::vmm_reserve(uint64_t bytes, uint64_t align, uint64_t fixed, uint64_t* va) {
    if (!vmm_ready()) return VGPU_ERROR_NOT_SUPPORTED;
    CUdeviceptr p = 0;
    CU_TRY(api_.cuMemAddressReserve(&p, bytes, align, fixed, 0));
    vmm_reserved_.emplace(p, bytes);
    *va = p;
    return VGPU_SUCCESS;
}

Status CudaBackend::vmm_free_reservation(uint64_t va, uint64_t bytes) {
    if (!vmm_ready()) return VGPU_ERROR_NOT_SUPPORTED;
    CU_TRY(api_.cuMemAddressFree(va, bytes));
    vmm_reserved_.erase(va);
    return VGPU_SUCCESS;
}

// Compressible memory is asked for as the driver takes it; the driver may
// give plain memory instead, and says which.
Status CudaBackend::vmm_create(uint64_t bytes, bool* compressible, uint64_t* handle) {
    if (!vmm_ready()) return VGPU_ERROR_NOT_SUPPORTED;
    CUmemAllocationProp prop = device_prop(dev_);
    if (*compressible) prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
    CUmemGenericAllocationHandle h = 0;
    CU_TRY(api_.cuMemCreate(&h, bytes, &prop, 0));
    vmm_handles_.insert(h);
    *handle = h;
    if (*compressible) {
        const auto props_of = KVMGPU_CUDA_LATE(api_, cuMemGetAllocationPropertiesFromHandle, 10020);
        CUmemAllocationProp granted{};
        *compressible = props_of && props_of(&granted, h) == CUDA_SUCCESS &&
                        granted.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC;
    }
    return VGPU_SUCCESS;
}

Status CudaBackend::vmm_release(uint64_t handle) {
    if (!vmm_ready()) return VGPU_ERROR_NOT_SUPPORTED;
    CU_TRY(api_.cuMemRelease(handle));
    vmm_handles_.erase(handle);
    return VGPU_SUCCESS;
}

Status CudaBackend::vmm_map(uint64_t va, uint64_t bytes, uint64_t handle) {
    if (!vmm_ready()) return VGPU_ERROR_NOT_SUPPORTED;
    CU_TRY(api_.cuMemMap(va, bytes, 0, handle, 0));
    vmm_maps_.emplace(va, bytes);
    return VGPU_SUCCESS;
}

Status CudaBackend::vmm_unmap(uint64_t va, uint64_t bytes) {
    if (!vmm_ready()) return VGPU_ERROR_NOT_SUPPORTED;
    CU_TRY(api_.cuMemUnmap(va, bytes));
    // The device model unmaps whole mappings only.
    for (auto it = vmm_maps_.lower_bound(va); it != vmm_maps_.end() && it->first < va + bytes;)
        it = vmm_maps_.erase(it);
    return VGPU_SUCCESS;
}

Status CudaBackend::vmm_set_access(uint64_t va, uint64_t bytes, uint32_t flags) {
    if (!vmm_ready()) return VGPU_ERROR_NOT_SUPPORTED;
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = dev_;
    desc.flags = static_cast<CUmemAccess_flags>(flags);
    return to_status(api_.cuMemSetAccess(va, bytes, &desc, 1));
}

void CudaBackend::drop_vmm() {
    if (!vmm_ready()) return;
    for (const auto& [va, bytes] : vmm_maps_) api_.cuMemUnmap(va, bytes);
    for (uint64_t h : vmm_handles_) api_.cuMemRelease(h);
    for (const auto& [va, bytes] : vmm_reserved_) api_.cuMemAddressFree(va, bytes);
    vmm_maps_.clear();
    vmm_handles_.clear();
    vmm_reserved_.clear();
}

} // namespace kvmgpu::vgpu
