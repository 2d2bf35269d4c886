// Stream attributes on the host backend: nothing here caches or spins, so
// each attribute is kept as set and read back, with the driver's checks of
// the values and its defaults for a stream never set.
#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint32_t kSyncPolicyAuto = 1; // CU_SYNC_POLICY_AUTO

// A stream's value before any set (assumed as the driver's: no window,
// CU_SYNC_POLICY_AUTO, domain DEFAULT, the map {default_ 0, remote 1}).
vgpu_stream_attr_value default_value(uint32_t attribute) {
    vgpu_stream_attr_value v{};
    if (attribute == VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY) v.value = kSyncPolicyAuto;
    if (attribute == VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP) v.value = 1u << 8;
    return v;
}

bool known(uint32_t attribute) {
    return attribute == VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW || attribute == VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY ||
           attribute == VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP || attribute == VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN;
}
} // namespace

Status HostBackend::stream_set_attribute(BackendStream s, uint32_t attribute, const vgpu_stream_attr_value& v) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (!known(attribute)) return VGPU_ERROR_INVALID_VALUE;
    if (attribute == VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW && v.bytes > static_cast<uint64_t>(kMaxAccessPolicyWindow))
        return VGPU_ERROR_INVALID_VALUE; // past MAX_ACCESS_POLICY_WINDOW_SIZE, as the driver refuses it
    stream_attributes_[{s, attribute}] = v;
    return VGPU_SUCCESS;
}

Status HostBackend::stream_get_attribute(BackendStream s, uint32_t attribute, vgpu_stream_attr_value* out) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (!known(attribute)) return VGPU_ERROR_INVALID_VALUE;
    const auto it = stream_attributes_.find({s, attribute});
    *out = it != stream_attributes_.end() ? it->second : default_value(attribute);
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
