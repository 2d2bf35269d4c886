// Texture and surface objects in the runtime, over the guest Driver API's
// cuTexObjectCreate and cuSurfObjectCreate (cuda_texture.cpp): the runtime's
// descriptors turned into the driver's, as NVIDIA's runtime documents them.
#include "guest-stub/cudart/array_formats.h"
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

cudaError_t resource_of(const cudaResourceDesc& in, CUDA_RESOURCE_DESC* out)
{
    *out = CUDA_RESOURCE_DESC{};
    out->flags = in.flags;
    switch (in.resType) {
    case cudaResourceTypeArray:
        out->resType = CU_RESOURCE_TYPE_ARRAY;
        out->res.array.hArray = reinterpret_cast<CUarray>(in.res.array.array);
        return cudaSuccess;
    case cudaResourceTypeLinear:
        out->resType = CU_RESOURCE_TYPE_LINEAR;
        out->res.linear.devPtr = reinterpret_cast<CUdeviceptr>(in.res.linear.devPtr);
        out->res.linear.sizeInBytes = in.res.linear.sizeInBytes;
        return format_of(in.res.linear.desc, &out->res.linear.format, &out->res.linear.numChannels)
                   ? cudaSuccess
                   : cudaErrorInvalidChannelDescriptor;
    case cudaResourceTypePitch2D:
        out->resType = CU_RESOURCE_TYPE_PITCH2D;
        out->res.pitch2D.devPtr = reinterpret_cast<CUdeviceptr>(in.res.pitch2D.devPtr);
        out->res.pitch2D.width = in.res.pitch2D.width;
        out->res.pitch2D.height = in.res.pitch2D.height;
        out->res.pitch2D.pitchInBytes = in.res.pitch2D.pitchInBytes;
        return format_of(in.res.pitch2D.desc, &out->res.pitch2D.format, &out->res.pitch2D.numChannels)
                   ? cudaSuccess
                   : cudaErrorInvalidChannelDescriptor;
    case cudaResourceTypeMipmappedArray:
        return cudaErrorNotSupported; // mipmapped arrays: not offered
    }
    return cudaErrorInvalidValue;
}

CUDA_TEXTURE_DESC texture_of(const cudaTextureDesc& in)
{
    CUDA_TEXTURE_DESC t{};
    for (int i = 0; i < 3; ++i)
        t.addressMode[i] = static_cast<CUaddress_mode>(in.addressMode[i]); // the same numbers
    t.filterMode = static_cast<CUfilter_mode>(in.filterMode);
    t.mipmapFilterMode = static_cast<CUfilter_mode>(in.mipmapFilterMode);
    // cudaReadModeElementType: integers are read as integers.
    if (in.readMode == cudaReadModeElementType)
        t.flags |= CU_TRSF_READ_AS_INTEGER;
    if (in.normalizedCoords)
        t.flags |= CU_TRSF_NORMALIZED_COORDINATES;
    if (in.sRGB)
        t.flags |= CU_TRSF_SRGB;
    if (in.disableTrilinearOptimization)
        t.flags |= CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION;
    if (in.seamlessCubemap)
        t.flags |= CU_TRSF_SEAMLESS_CUBEMAP;
    t.maxAnisotropy = in.maxAnisotropy;
    t.mipmapLevelBias = in.mipmapLevelBias;
    t.minMipmapLevelClamp = in.minMipmapLevelClamp;
    t.maxMipmapLevelClamp = in.maxMipmapLevelClamp;
    for (int i = 0; i < 4; ++i)
        t.borderColor[i] = in.borderColor[i];
    return t;
}

} // namespace

extern "C" {

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* pTexObject, const struct cudaResourceDesc* pResDesc,
                                    const struct cudaTextureDesc* pTexDesc,
                                    const struct cudaResourceViewDesc* pResViewDesc)
{
    GUEST_API_LOCK();
    if (pTexObject == nullptr || pResDesc == nullptr || pTexDesc == nullptr)
        return record(cudaErrorInvalidValue);
    if (pResViewDesc != nullptr)
        return record(cudaErrorNotSupported); // resource views: not offered
    if (cudaError_t e = enter())
        return e;
    CUDA_RESOURCE_DESC r;
    if (cudaError_t e = resource_of(*pResDesc, &r))
        return record(e);
    const CUDA_TEXTURE_DESC t = texture_of(*pTexDesc);
    CUtexObject o = 0;
    if (CUresult e = cuTexObjectCreate(&o, &r, &t, nullptr))
        return record(e);
    *pTexObject = o;
    return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (texObject == 0)
        return cudaSuccess; // as the runtime: destroying no object does nothing
    return record(cuTexObjectDestroy(texObject));
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* pSurfObject, const struct cudaResourceDesc* pResDesc)
{
    GUEST_API_LOCK();
    if (pSurfObject == nullptr || pResDesc == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    CUDA_RESOURCE_DESC r;
    if (cudaError_t e = resource_of(*pResDesc, &r))
        return record(e);
    CUsurfObject o = 0;
    if (CUresult e = cuSurfObjectCreate(&o, &r))
        return record(e);
    *pSurfObject = o;
    return cudaSuccess;
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (surfObject == 0)
        return cudaSuccess;
    return record(cuSurfObjectDestroy(surfObject));
}

} // extern "C"
