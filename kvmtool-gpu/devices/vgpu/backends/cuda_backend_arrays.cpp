// CudaBackend: arrays, 3-D copies, texture and surface objects, each one
// driver call on this backend's context with what the device model checked.
#include <cstring>

#include "kvmtool-gpu/util/log.h"

#include "kvmtool-gpu/devices/vgpu/backends/copy_boxes.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"

namespace kvmgpu::vgpu {

namespace {

CUarray cu_array(BackendArray a) { return reinterpret_cast<CUarray>(a); }

// One side of CUDA_MEMCPY3D, as pointers to its src* or dst* fields.
struct Side3D {
    size_t *x, *y, *z;
    CUmemorytype* type;
    CUdeviceptr* device;
    CUarray* array;
    size_t *pitch, *height;
};

void fill_side(const CopySide& c, const Side3D& s, const void** host_field) {
    switch (c.kind) {
    case VGPU_COPY_HOST:
        *s.type = CU_MEMORYTYPE_HOST;
        *host_field = c.host;
        *s.pitch = c.pitch;
        *s.height = c.height;
        break;
    case VGPU_COPY_DEVICE:
        *s.type = CU_MEMORYTYPE_DEVICE;
        *s.device = c.dptr;
        *s.pitch = c.pitch;
        *s.height = c.height;
        break;
    default: // VGPU_COPY_ARRAY
        *s.type = CU_MEMORYTYPE_ARRAY;
        *s.array = cu_array(c.array);
        *s.x = c.x_bytes;
        *s.y = c.y;
        *s.z = c.z;
    }
}

} // namespace

Status CudaBackend::array_create(const ArrayShape& shape, BackendArray* out) {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = shape.width;
    d.Height = shape.height;
    d.Depth = shape.depth;
    d.Format = static_cast<CUarray_format>(shape.format);
    d.NumChannels = shape.channels;
    d.Flags = shape.flags;
    CUarray a = nullptr;
    CU_TRY(api_.cuArray3DCreate(&a, &d));
    *out = reinterpret_cast<BackendArray>(a);
    return VGPU_SUCCESS;
}

Status CudaBackend::array_destroy(BackendArray a) { return to_status(api_.cuArrayDestroy(cu_array(a))); }

// Box by box where guest RAM is registered in pieces (copy_boxes.h). A
// refusal is logged with the box's shape: the guest sees only the status.
Status CudaBackend::memcpy_3d(const Copy3D& copy, BackendStream s, bool async) {
    const PieceBytes piece_bytes = [this](const uint8_t* host, uint64_t left) { return lazy_.piece_bytes(host, left); };
    CUresult refused = CUDA_SUCCESS;
    for_each_registered_box(copy, piece_bytes, [&](const Copy3D& box) {
        refused = copy_box(box, stream(s));
        if (refused != CUDA_SUCCESS && copy_refusals_logged_.allow())
            log_warn("cuda backend: the driver refused a copy box (%s): kinds %u->%u, width %llu bytes, height %llu, "
                     "depth %llu, pitches %llu/%llu, slice heights %llu/%llu", api_.describe(refused).c_str(),
                     box.src.kind, box.dst.kind, static_cast<unsigned long long>(box.width_bytes),
                     static_cast<unsigned long long>(box.height), static_cast<unsigned long long>(box.depth),
                     static_cast<unsigned long long>(box.src.pitch), static_cast<unsigned long long>(box.dst.pitch),
                     static_cast<unsigned long long>(box.src.height), static_cast<unsigned long long>(box.dst.height));
        return static_cast<int>(refused);
    });
    return finish(refused, stream(s), async);
}

// One slice between host and device memory goes as the driver's 2-D copy,
// which the driver checks by its 2-D rules as it checks a program's own
// cuMemcpy2D natively; arrays and several slices as the 3-D copy (it
// carries the arrays' z offset).
CUresult CudaBackend::copy_box(const Copy3D& copy, CUstream s) {
    const bool two_d = copy.depth == 1 && copy.src.kind != VGPU_COPY_ARRAY && copy.dst.kind != VGPU_COPY_ARRAY;
    const void* src_host = nullptr;
    const void* dst_host = nullptr;
    if (two_d) {
        CUDA_MEMCPY2D m{};
        size_t unused_z = 0, unused_height = 0; // host and device sides: offsets folded in, one slice
        CUarray unused_array = nullptr;
        fill_side(copy.src, {&m.srcXInBytes, &m.srcY, &unused_z, &m.srcMemoryType, &m.srcDevice, &unused_array,
                             &m.srcPitch, &unused_height}, &src_host);
        fill_side(copy.dst, {&m.dstXInBytes, &m.dstY, &unused_z, &m.dstMemoryType, &m.dstDevice, &unused_array,
                             &m.dstPitch, &unused_height}, &dst_host);
        m.srcHost = src_host;
        m.dstHost = const_cast<void*>(dst_host); // guest RAM the VMM may write
        m.WidthInBytes = copy.width_bytes;
        m.Height = copy.height;
        return api_.cuMemcpy2DAsync(&m, s);
    }
    CUDA_MEMCPY3D m{};
    fill_side(copy.src, {&m.srcXInBytes, &m.srcY, &m.srcZ, &m.srcMemoryType, &m.srcDevice, &m.srcArray, &m.srcPitch,
                         &m.srcHeight}, &src_host);
    fill_side(copy.dst, {&m.dstXInBytes, &m.dstY, &m.dstZ, &m.dstMemoryType, &m.dstDevice, &m.dstArray, &m.dstPitch,
                         &m.dstHeight}, &dst_host);
    m.srcHost = src_host;
    m.dstHost = const_cast<void*>(dst_host); // guest RAM the VMM may write
    m.WidthInBytes = copy.width_bytes;
    m.Height = copy.height;
    m.Depth = copy.depth;
    return api_.cuMemcpy3DAsync(&m, s);
}

Status CudaBackend::sampled_object_create(const TextureSpec& spec, bool surface, uint64_t* out) {
    CUDA_RESOURCE_DESC r{};
    const vgpu_tex_resource& in = spec.resource;
    r.resType = static_cast<CUresourcetype>(in.type);
    r.flags = in.flags;
    if (in.type == CU_RESOURCE_TYPE_ARRAY) {
        r.res.array.hArray = cu_array(in.handle);
    } else if (in.type == CU_RESOURCE_TYPE_LINEAR) {
        r.res.linear.devPtr = in.handle;
        r.res.linear.format = static_cast<CUarray_format>(in.format);
        r.res.linear.numChannels = in.channels;
        r.res.linear.sizeInBytes = in.bytes;
    } else {
        r.res.pitch2D.devPtr = in.handle;
        r.res.pitch2D.format = static_cast<CUarray_format>(in.format);
        r.res.pitch2D.numChannels = in.channels;
        r.res.pitch2D.width = in.width;
        r.res.pitch2D.height = in.height;
        r.res.pitch2D.pitchInBytes = in.pitch;
    }
    if (surface) {
        CUsurfObject o = 0;
        CU_TRY(api_.cuSurfObjectCreate(&o, &r));
        *out = o;
        return VGPU_SUCCESS;
    }
    CUDA_TEXTURE_DESC t{};
    const vgpu_tex_desc& d = spec.texture;
    for (int i = 0; i < 3; ++i) t.addressMode[i] = static_cast<CUaddress_mode>(d.address_mode[i]);
    t.filterMode = static_cast<CUfilter_mode>(d.filter_mode);
    t.flags = d.flags;
    t.maxAnisotropy = d.max_anisotropy;
    t.mipmapFilterMode = static_cast<CUfilter_mode>(d.mipmap_filter_mode);
    t.mipmapLevelBias = d.mipmap_level_bias;
    t.minMipmapLevelClamp = d.min_mipmap_level_clamp;
    t.maxMipmapLevelClamp = d.max_mipmap_level_clamp;
    std::memcpy(t.borderColor, d.border_color, sizeof t.borderColor);
    CUtexObject o = 0;
    CU_TRY(api_.cuTexObjectCreate(&o, &r, &t, nullptr));
    *out = o;
    return VGPU_SUCCESS;
}

Status CudaBackend::sampled_object_destroy(uint64_t object, bool surface) {
    return to_status(surface ? api_.cuSurfObjectDestroy(object) : api_.cuTexObjectDestroy(object));
}

} // namespace kvmgpu::vgpu
