// CudaBackend: stream attributes, the driver's own (cuStreamSetAttribute,
// cuStreamGetAttribute) on this backend's streams, translated between the
// ABI's vgpu_stream_attr_value and CUstreamAttrValue.
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"

namespace kvmgpu::vgpu {

namespace {
CUstreamAttrValue to_cuda(uint32_t attribute, const vgpu_stream_attr_value& v) {
    CUstreamAttrValue out{};
    switch (attribute) {
    case VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW:
        out.accessPolicyWindow.base_ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(v.base));
        out.accessPolicyWindow.num_bytes = v.bytes;
        std::memcpy(&out.accessPolicyWindow.hitRatio, &v.hit_ratio_bits, sizeof(float));
        out.accessPolicyWindow.hitProp = static_cast<CUaccessProperty>(v.hit_prop);
        out.accessPolicyWindow.missProp = static_cast<CUaccessProperty>(v.miss_prop);
        break;
    case VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY: out.syncPolicy = static_cast<CUsynchronizationPolicy>(v.value); break;
    case VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN: out.memSyncDomain = static_cast<CUlaunchMemSyncDomain>(v.value); break;
    case VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP:
        out.memSyncDomainMap.default_ = static_cast<unsigned char>(v.value & 0xFF);
        out.memSyncDomainMap.remote = static_cast<unsigned char>(v.value >> 8 & 0xFF);
        break;
    }
    return out;
}

vgpu_stream_attr_value from_cuda(uint32_t attribute, const CUstreamAttrValue& in) {
    vgpu_stream_attr_value v{};
    switch (attribute) {
    case VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW:
        v.base = reinterpret_cast<uintptr_t>(in.accessPolicyWindow.base_ptr);
        v.bytes = in.accessPolicyWindow.num_bytes;
        std::memcpy(&v.hit_ratio_bits, &in.accessPolicyWindow.hitRatio, sizeof(float));
        v.hit_prop = static_cast<uint32_t>(in.accessPolicyWindow.hitProp);
        v.miss_prop = static_cast<uint32_t>(in.accessPolicyWindow.missProp);
        break;
    case VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY: v.value = static_cast<uint32_t>(in.syncPolicy); break;
    case VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN: v.value = static_cast<uint32_t>(in.memSyncDomain); break;
    case VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP:
        v.value = in.memSyncDomainMap.default_ | static_cast<uint32_t>(in.memSyncDomainMap.remote) << 8;
        break;
    }
    return v;
}
} // namespace

Status CudaBackend::stream_set_attribute(BackendStream s, uint32_t attribute, const vgpu_stream_attr_value& v) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuStreamSetAttribute, 11000);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    const CUstreamAttrValue value = to_cuda(attribute, v);
    return to_status(fn(stream(s), static_cast<CUstreamAttrID>(attribute), &value));
}

Status CudaBackend::stream_get_attribute(BackendStream s, uint32_t attribute, vgpu_stream_attr_value* out) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuStreamGetAttribute, 11000);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUstreamAttrValue value{};
    CU_TRY(fn(stream(s), static_cast<CUstreamAttrID>(attribute), &value));
    *out = from_cuda(attribute, value);
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
