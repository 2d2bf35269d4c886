// Texture and surface objects: cuda.h's descriptors turned into the vGPU's
// (vgpu_array_abi.h). The object the guest gets is the VMM driver's value,
// so a kernel parameter carries it unchanged (see dispatch_textures.cpp).
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

CUresult resource_of(const CUDA_RESOURCE_DESC* in, vgpu_tex_resource* out)
{
    *out = vgpu_tex_resource{};
    out->type = static_cast<uint32_t>(in->resType);
    out->flags = in->flags;
    switch (in->resType) {
    case CU_RESOURCE_TYPE_ARRAY:
        out->handle = handle_bits(in->res.array.hArray);
        return CUDA_SUCCESS;
    case CU_RESOURCE_TYPE_LINEAR:
        out->handle = in->res.linear.devPtr;
        out->format = static_cast<uint32_t>(in->res.linear.format);
        out->channels = in->res.linear.numChannels;
        out->bytes = in->res.linear.sizeInBytes;
        return CUDA_SUCCESS;
    case CU_RESOURCE_TYPE_PITCH2D:
        out->handle = in->res.pitch2D.devPtr;
        out->format = static_cast<uint32_t>(in->res.pitch2D.format);
        out->channels = in->res.pitch2D.numChannels;
        out->width = in->res.pitch2D.width;
        out->height = in->res.pitch2D.height;
        out->pitch = in->res.pitch2D.pitchInBytes;
        return CUDA_SUCCESS;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
        return CUDA_ERROR_NOT_SUPPORTED;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult resource_desc(CUDA_RESOURCE_DESC* out, uint64_t object, bool surface)
{
    if (out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_SAMPLED_OBJECT_RESOURCE>({object, uint64_t{surface}});
    vgpu_tex_resource r;
    if (CUresult e = call_sync(c, nullptr, &r, sizeof r))
        return e;
    memset(out, 0, sizeof *out);
    out->resType = static_cast<CUresourcetype>(r.type);
    out->flags = r.flags;
    if (r.type == CU_RESOURCE_TYPE_ARRAY) {
        out->res.array.hArray = handle_of<CUarray>(r.handle);
    } else if (r.type == CU_RESOURCE_TYPE_LINEAR) {
        out->res.linear.devPtr = r.handle;
        out->res.linear.format = static_cast<CUarray_format>(r.format);
        out->res.linear.numChannels = r.channels;
        out->res.linear.sizeInBytes = r.bytes;
    } else {
        out->res.pitch2D.devPtr = r.handle;
        out->res.pitch2D.format = static_cast<CUarray_format>(r.format);
        out->res.pitch2D.numChannels = r.channels;
        out->res.pitch2D.width = r.width;
        out->res.pitch2D.height = r.height;
        out->res.pitch2D.pitchInBytes = r.pitch;
    }
    return CUDA_SUCCESS;
}

// TEX_OBJECT_CREATE or SURF_OBJECT_CREATE with its descriptor: *out the driver's object.
CUresult create(uint16_t op, const void* desc, uint32_t bytes, unsigned long long* out)
{
    Call c;
    c.op = op;
    c.payload = desc;
    c.payload_len = bytes;
    return call_result(c, out);
}

template <uint16_t Op>
CUresult destroy(uint64_t object)
{
    return call<Op>({object});
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuTexObjectCreate, 5000);
extern "C" CUresult cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
                                      const CUDA_TEXTURE_DESC* pTexDesc, const CUDA_RESOURCE_VIEW_DESC* pResViewDesc)
{
    GUEST_API_LOCK();
    if (pTexObject == nullptr || pResDesc == nullptr || pTexDesc == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (pResViewDesc != nullptr)
        return CUDA_ERROR_NOT_SUPPORTED; // resource views: not offered
    vgpu_tex_object o;
    if (CUresult r = resource_of(pResDesc, &o.resource))
        return r;
    vgpu_tex_desc& t = o.texture;
    for (int i = 0; i < 3; ++i)
        t.address_mode[i] = static_cast<uint32_t>(pTexDesc->addressMode[i]);
    t.filter_mode = static_cast<uint32_t>(pTexDesc->filterMode);
    t.flags = pTexDesc->flags;
    t.max_anisotropy = pTexDesc->maxAnisotropy;
    t.mipmap_filter_mode = static_cast<uint32_t>(pTexDesc->mipmapFilterMode);
    t.mipmap_level_bias = pTexDesc->mipmapLevelBias;
    t.min_mipmap_level_clamp = pTexDesc->minMipmapLevelClamp;
    t.max_mipmap_level_clamp = pTexDesc->maxMipmapLevelClamp;
    memcpy(t.border_color, pTexDesc->borderColor, sizeof t.border_color);
    return create(VGPU_OP_TEX_OBJECT_CREATE, &o, sizeof o, pTexObject);
}

KVMGPU_DRIVER_ENTRY(cuTexObjectDestroy, 5000);
extern "C" CUresult cuTexObjectDestroy(CUtexObject texObject)
{
    GUEST_API_LOCK();
    return destroy<VGPU_OP_TEX_OBJECT_DESTROY>(texObject);
}

KVMGPU_DRIVER_ENTRY(cuTexObjectGetResourceDesc, 5000);
extern "C" CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUtexObject texObject)
{
    GUEST_API_LOCK();
    return resource_desc(pResDesc, texObject, false);
}

KVMGPU_DRIVER_ENTRY(cuSurfObjectCreate, 5000);
extern "C" CUresult cuSurfObjectCreate(CUsurfObject* pSurfObject, const CUDA_RESOURCE_DESC* pResDesc)
{
    GUEST_API_LOCK();
    if (pSurfObject == nullptr || pResDesc == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    vgpu_tex_resource r;
    if (CUresult e = resource_of(pResDesc, &r))
        return e;
    return create(VGPU_OP_SURF_OBJECT_CREATE, &r, sizeof r, pSurfObject);
}

KVMGPU_DRIVER_ENTRY(cuSurfObjectDestroy, 5000);
extern "C" CUresult cuSurfObjectDestroy(CUsurfObject surfObject)
{
    GUEST_API_LOCK();
    return destroy<VGPU_OP_SURF_OBJECT_DESTROY>(surfObject);
}

KVMGPU_DRIVER_ENTRY(cuSurfObjectGetResourceDesc, 5000);
extern "C" CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUsurfObject surfObject)
{
    GUEST_API_LOCK();
    return resource_desc(pResDesc, surfObject, true);
}
