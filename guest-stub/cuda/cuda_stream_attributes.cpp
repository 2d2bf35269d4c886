// Stream attributes: the vGPU's STREAM_SET_ATTRIBUTE / STREAM_GET_ATTRIBUTE
// (vgpu_abi.h, VGPU_STREAM_ATTR_*), but priority, which this library
// answers: the range is [0, 0] (cuCtxGetStreamPriorityRange), so every
// stream's priority is 0, as the driver clamps one outside its range.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/guest_cuda_more.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

vgpu_stream_attr_value to_vgpu(CUstreamAttrID attr, const CUstreamAttrValue& in)
{
    vgpu_stream_attr_value v{};
    switch (attr) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        v.base = reinterpret_cast<uintptr_t>(in.accessPolicyWindow.base_ptr);
        v.bytes = in.accessPolicyWindow.num_bytes;
        memcpy(&v.hit_ratio_bits, &in.accessPolicyWindow.hitRatio, sizeof v.hit_ratio_bits);
        v.hit_prop = static_cast<uint32_t>(in.accessPolicyWindow.hitProp);
        v.miss_prop = static_cast<uint32_t>(in.accessPolicyWindow.missProp);
        break;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: v.value = static_cast<uint32_t>(in.syncPolicy); break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: v.value = static_cast<uint32_t>(in.memSyncDomain); break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        v.value = in.memSyncDomainMap.default_ | static_cast<uint32_t>(in.memSyncDomainMap.remote) << 8;
        break;
    default: break; // the vGPU refuses the attribute
    }
    return v;
}

void from_vgpu(CUstreamAttrID attr, const vgpu_stream_attr_value& v, CUstreamAttrValue* out)
{
    memset(out, 0, sizeof *out);
    switch (attr) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        out->accessPolicyWindow.base_ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(v.base));
        out->accessPolicyWindow.num_bytes = v.bytes;
        memcpy(&out->accessPolicyWindow.hitRatio, &v.hit_ratio_bits, sizeof v.hit_ratio_bits);
        out->accessPolicyWindow.hitProp = static_cast<CUaccessProperty>(v.hit_prop);
        out->accessPolicyWindow.missProp = static_cast<CUaccessProperty>(v.miss_prop);
        break;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: out->syncPolicy = static_cast<CUsynchronizationPolicy>(v.value); break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: out->memSyncDomain = static_cast<CUlaunchMemSyncDomain>(v.value); break;
    default: // the map
        out->memSyncDomainMap.default_ = static_cast<unsigned char>(v.value & 0xFF);
        out->memSyncDomainMap.remote = static_cast<unsigned char>(v.value >> 8 & 0xFF);
        break;
    }
}

// The attributes cuStreamCopyAttributes copies: every one a stream takes here.
constexpr CUstreamAttrID kCopied[] = {CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                                      CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY,
                                      CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN};

} // namespace

KVMGPU_DRIVER_ENTRY(cuStreamSetAttribute, 11000);
extern "C" CUresult cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue* value)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (attr == CU_LAUNCH_ATTRIBUTE_PRIORITY) { // kept at 0: the stream only needs to exist
        CUcontext owner = nullptr;
        return cuStreamGetCtx(hStream, &owner);
    }
    Call c = command<VGPU_OP_STREAM_SET_ATTRIBUTE>(vgpu_args_stream_attribute{stream_arg(hStream), static_cast<uint64_t>(attr), to_vgpu(attr, *value)});
    return call_sync(c);
}

KVMGPU_DRIVER_ENTRY(cuStreamGetAttribute, 11000);
extern "C" CUresult cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value_out)
{
    GUEST_API_LOCK();
    if (value_out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (attr == CU_LAUNCH_ATTRIBUTE_PRIORITY) {
        CUcontext owner = nullptr;
        if (CUresult r = cuStreamGetCtx(hStream, &owner))
            return r;
        memset(value_out, 0, sizeof *value_out);
        return CUDA_SUCCESS;
    }
    Call c = command<VGPU_OP_STREAM_GET_ATTRIBUTE>(vgpu_args_attribute{stream_arg(hStream), static_cast<uint64_t>(attr)});
    vgpu_stream_attr_value v{};
    if (CUresult r = call_sync(c, nullptr, &v, sizeof v))
        return r;
    from_vgpu(attr, v, value_out);
    return CUDA_SUCCESS;
}

// Each attribute read from src and set on dst (priority is 0 on both). A
// failure part way leaves dst with the attributes copied before it.
KVMGPU_DRIVER_ENTRY(cuStreamCopyAttributes, 11000);
extern "C" CUresult cuStreamCopyAttributes(CUstream dst, CUstream src)
{
    GUEST_API_LOCK();
    CUcontext owner = nullptr;
    if (CUresult r = cuStreamGetCtx(dst, &owner))
        return r;
    for (CUstreamAttrID attr : kCopied) {
        CUstreamAttrValue v;
        if (CUresult r = cuStreamGetAttribute(src, attr, &v))
            return r;
        if (CUresult r = cuStreamSetAttribute(dst, attr, &v))
            return r;
    }
    return CUDA_SUCCESS;
}

// No L2 is set aside for persisting accesses on a GPU other VMs share
// (CU_LIMIT_PERSISTING_L2_CACHE_SIZE is a hint the VMM keeps), so no line
// persists and there is nothing to reset: the context only has to exist.
KVMGPU_DRIVER_ENTRY(cuCtxResetPersistingL2Cache, 11000);
extern "C" CUresult cuCtxResetPersistingL2Cache(void)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    return current_context() != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
