// Stream attributes (cuStreamSetAttribute, cuStreamGetAttribute): the
// attributes a stream takes, each value checked before the backend sees it.
// The access policy window is a caching hint over memory the stream's
// kernels read, so it must lie inside one of this VM's allocations on the
// context's device: another VM's memory is never named to the driver.
#include <cmath>
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint32_t kAccessPersisting = 2;     // CU_ACCESS_PROPERTY_PERSISTING, the largest CUaccessProperty
constexpr uint32_t kAccessStreaming = 1;      // a miss may be NORMAL or STREAMING only
constexpr uint32_t kSyncPolicyBlocking = 4;   // CUsynchronizationPolicy: AUTO 1 .. BLOCKING_SYNC 4
constexpr uint32_t kDomainRemote = 1;         // CUlaunchMemSyncDomain: DEFAULT 0, REMOTE 1
constexpr int kAttrMemSyncDomainCount = 126;  // CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT

// A stream attribute this device offers: 0; else the status its refusal
// has (priority is kept by the guest library: its range is [0, 0]).
uint32_t refusal(uint64_t attribute) {
    switch (attribute) {
    case VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW:
    case VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY:
    case VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP:
    case VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN: return VGPU_SUCCESS;
    case VGPU_STREAM_ATTR_NVLINK_UTIL_CENTRIC_SCHEDULING: return VGPU_ERROR_NOT_SUPPORTED;
    default: return VGPU_ERROR_INVALID_VALUE; // launch- or node-only, or no attribute
    }
}
} // namespace

// A window's range, or a value in its enum's range; fields the attribute
// does not use must be 0 (the backend sees only what the guest meant).
const char* CommandDispatch::stream_attribute_why(uint32_t attribute, const vgpu_stream_attr_value& v) {
    if (attribute != VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW) {
        if (v.base || v.bytes || v.hit_ratio_bits || v.hit_prop || v.miss_prop) return "fields the attribute has not set";
        if (attribute == VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY)
            return v.value >= 1 && v.value <= kSyncPolicyBlocking ? nullptr : "synchronization policy";
        if (attribute == VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN) return v.value <= kDomainRemote ? nullptr : "memory sync domain";
        int domains = 0;
        if (backend().device_attribute(kAttrMemSyncDomainCount, &domains) != VGPU_SUCCESS || domains < 1) domains = 1;
        const uint32_t limit = static_cast<uint32_t>(domains);
        if (v.value >> 16 || (v.value & 0xFF) >= limit || (v.value >> 8 & 0xFF) >= limit)
            return "memory sync domain map names a domain the device lacks";
        return nullptr;
    }
    if (v.value) return "fields the attribute has not set";
    float ratio;
    std::memcpy(&ratio, &v.hit_ratio_bits, sizeof ratio);
    if (!(ratio >= 0.0f && ratio <= 1.0f)) return "hitRatio outside [0, 1]"; // NaN too
    if (v.hit_prop > kAccessPersisting || v.miss_prop > kAccessStreaming) return "access property";
    if (v.bytes == 0 && v.base == 0) return nullptr; // no window
    const uint64_t bytes = v.bytes ? v.bytes : 1;
    if (!allocs_.contains(v.base, bytes)) return "window not this VM's device memory";
    if (device_of(allocs_.owner_containing(v.base)) != selected_device_) return "window in another device's memory";
    return nullptr;
}

CommandResult CommandDispatch::op_STREAM_SET_ATTRIBUTE(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_STREAM_SET_ATTRIBUTE>(c);
    BackendStream s;
    if (!stream_of(a.stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (const uint32_t st = refusal(a.attribute)) return fail(st, "stream attribute not offered");
    const auto attribute = static_cast<uint32_t>(a.attribute);
    if (const char* why = stream_attribute_why(attribute, a.v)) return fail(VGPU_ERROR_INVALID_VALUE, why);
    return done(backend_result(backend().stream_set_attribute(s, attribute, a.v)));
}

CommandResult CommandDispatch::op_STREAM_GET_ATTRIBUTE(GuestCommand& c) {
    const auto [stream, attribute] = args_of<VGPU_OP_STREAM_GET_ATTRIBUTE>(c);
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (const uint32_t st = refusal(attribute)) return fail(st, "stream attribute not offered");
    vgpu_stream_attr_value v{};
    const Status st = backend_result(backend().stream_get_attribute(s, static_cast<uint32_t>(attribute), &v));
    if (st != VGPU_SUCCESS) return done(st);
    c.payload.fill(0);
    std::memcpy(c.payload.data(), &v, sizeof v);
    CommandResult r = done(VGPU_SUCCESS);
    r.write_payload = true;
    return r;
}

} // namespace kvmgpu::vgpu
