// Handlers for texture and surface objects. The guest sees the driver's own
// value: a kernel takes a CUtexObject/CUsurfObject as a parameter, and
// kernel parameters are bytes the VMM does not interpret, so no VMM handle
// could be swapped for the driver's value on the way. Such a value names an
// entry of the driver's texture table of this VM's own context (every VM
// has a context, and a GPU worker, of its own): a guest that forges one can
// only reach its own objects. The VMM keeps the values it handed out, by
// device, with the context that made them: destroy is checked, and a
// context's objects go with it (and at RESET).
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint32_t kResourceArray = 0, kResourceMipmapped = 1, kResourceLinear = 2, kResourcePitch2D = 3;
// CU_TRSF_READ_AS_INTEGER, NORMALIZED_COORDINATES, SRGB, DISABLE_TRILINEAR_OPTIMIZATION, SEAMLESS_CUBEMAP.
constexpr uint32_t kTextureFlags = 0x01 | 0x02 | 0x10 | 0x20 | 0x40;

bool texture_desc_ok(const vgpu_tex_desc& t) {
    for (uint32_t m : t.address_mode)
        if (m > 3) return false; // WRAP, CLAMP, MIRROR, BORDER
    return t.filter_mode <= 1 && t.mipmap_filter_mode <= 1 && (t.flags & ~kTextureFlags) == 0;
}
} // namespace

uint32_t CommandDispatch::check_resource(vgpu_tex_resource* r, bool surface, const char** why) {
    if (r->flags != 0) {
        *why = "resource flags not 0";
        return VGPU_ERROR_INVALID_VALUE;
    }
    if (r->type == kResourceArray) {
        const ArrayEntry* a = arrays_.find(r->handle, ctx_);
        if (!a) {
            *why = "resource array handle";
            return VGPU_ERROR_INVALID_HANDLE;
        }
        if (surface && !(a->shape.flags & kArrayFlagSurface)) {
            *why = "a surface needs an array made with CUDA_ARRAY3D_SURFACE_LDST";
            return VGPU_ERROR_INVALID_VALUE;
        }
        r->handle = a->array;
        return VGPU_SUCCESS;
    }
    if (r->type == kResourceMipmapped) {
        *why = "mipmapped arrays are not offered";
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    if (surface || (r->type != kResourceLinear && r->type != kResourcePitch2D)) {
        *why = surface ? "a surface's resource is an array" : "unknown resource type";
        return VGPU_ERROR_INVALID_VALUE;
    }
    const uint32_t channel = format_channel_bytes(r->format);
    if (channel == 0) {
        *why = "resource format not offered";
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    if (r->channels != 1 && r->channels != 2 && r->channels != 4) {
        *why = "resource channels not 1, 2 or 4";
        return VGPU_ERROR_INVALID_VALUE;
    }
    uint64_t bytes = r->bytes;
    if (r->type == kResourcePitch2D) {
        // The rows a 2-D fetch may read: pitch * (height - 1) + a row.
        uint64_t row = 0, before_last = 0;
        if (r->width == 0 || r->height == 0 || __builtin_mul_overflow(r->width, uint64_t{channel} * r->channels, &row) ||
            r->pitch < row || __builtin_mul_overflow(r->pitch, r->height - 1, &before_last) ||
            __builtin_add_overflow(before_last, row, &bytes)) {
            *why = "pitch-2D resource: width, height or pitch impossible";
            return VGPU_ERROR_INVALID_VALUE;
        }
    }
    // A linear resource declared past the end of the memory it starts in is
    // cut there, to whole elements: the driver takes it as declared (reads
    // past the allocation's end are whatever lies there), the VMM keeps
    // every fetch inside the VM's memory, and one past the cut reads zero,
    // as past a texture's end. convolutionFFT2D declares more than it
    // allocated and reads only what it wrote.
    const uint64_t element = uint64_t{channel} * r->channels;
    if (r->type == kResourceLinear && bytes >= element && allocs_.contains(r->handle, element) &&
        !allocs_.contains(r->handle, bytes)) {
        uint64_t inside = element, outside = bytes; // contains(inside) holds, contains(outside) does not
        while (outside - inside > 1) {
            const uint64_t mid = inside + (outside - inside) / 2;
            (allocs_.contains(r->handle, mid) ? inside : outside) = mid;
        }
        bytes = r->bytes = inside / element * element;
    }
    if (bytes == 0 || !allocs_.contains(r->handle, bytes) ||
        device_of(allocs_.owner_containing(r->handle)) != selected_device_) {
        *why = "resource memory not this VM's on this device";
        return VGPU_ERROR_INVALID_VALUE;
    }
    return VGPU_SUCCESS;
}

// TEX_OBJECT_CREATE: payload vgpu_tex_object. SURF_OBJECT_CREATE: payload
// vgpu_tex_resource. -> result0 the driver's object.
CommandResult CommandDispatch::create_sampled_object(GuestCommand& c) {
    const bool surface = c.desc.opcode == VGPU_OP_SURF_OBJECT_CREATE;
    TextureSpec spec;
    const uint32_t size = surface ? sizeof(vgpu_tex_resource) : sizeof(vgpu_tex_object);
    if (c.desc.payload_len != size) return fail(VGPU_ERROR_INVALID_VALUE, "texture or surface descriptor size");
    std::memcpy(&spec.resource, c.payload.data(), sizeof spec.resource);
    if (!surface) {
        std::memcpy(&spec.texture, c.payload.data() + sizeof spec.resource, sizeof spec.texture);
        if (!texture_desc_ok(spec.texture)) return fail(VGPU_ERROR_INVALID_VALUE, "texture descriptor");
    }
    if (sampled_.size() >= opts_.max_handles) return fail(VGPU_ERROR_OUT_OF_MEMORY, "texture and surface table full");
    const char* why = nullptr;
    const vgpu_tex_resource as_given = spec.resource;
    if (const uint32_t st = check_resource(&spec.resource, surface, &why)) return fail(st, why);
    ArrayBackend* ab = backend().arrays();
    if (!ab) return fail(VGPU_ERROR_NOT_SUPPORTED, "the backend has no texture or surface objects");
    uint64_t object = 0;
    const Status s = backend_result(ab->sampled_object_create(spec, surface, &object));
    if (s != VGPU_SUCCESS) return done(s);
    if (!sampled_.emplace(std::pair{selected_device_, object}, SampledObject{ctx_, surface, as_given}).second) {
        ab->sampled_object_destroy(object, surface); // the value of a live object: a backend bug
        return fail(VGPU_ERROR_UNKNOWN, "backend returned a live object's value");
    }
    return done(VGPU_SUCCESS, object);
}

// TEX_OBJECT_DESTROY / SURF_OBJECT_DESTROY: an object the current context
// made, of that kind.
CommandResult CommandDispatch::destroy_sampled_object(GuestCommand& c) {
    const bool surface = c.desc.opcode == VGPU_OP_SURF_OBJECT_DESTROY;
    const uint64_t object = args_of<VGPU_OP_TEX_OBJECT_DESTROY, VGPU_OP_SURF_OBJECT_DESTROY>(c).handle;
    const auto it = sampled_.find({selected_device_, object});
    if (it == sampled_.end() || it->second.owner != ctx_ || it->second.surface != surface)
        return fail(VGPU_ERROR_INVALID_VALUE, surface ? "surface object" : "texture object");
    sampled_.erase(it);
    return done(backend_result(backend().arrays()->sampled_object_destroy(object, surface))); // made by it
}

// An object (a surface when `surface` is 1): its resource, into the payload.
CommandResult CommandDispatch::op_SAMPLED_OBJECT_RESOURCE(GuestCommand& c) {
    const auto [object, surface] = args_of<VGPU_OP_SAMPLED_OBJECT_RESOURCE>(c);
    const auto it = sampled_.find({selected_device_, object});
    if (it == sampled_.end() || it->second.owner != ctx_ || it->second.surface != (surface == 1))
        return fail(VGPU_ERROR_INVALID_VALUE, "texture or surface object");
    c.payload.fill(0);
    std::memcpy(c.payload.data(), &it->second.resource, sizeof it->second.resource);
    CommandResult r = done(VGPU_SUCCESS);
    r.write_payload = true;
    return r;
}

void CommandDispatch::free_sampled_objects_of(uint64_t ctx) {
    const int device = device_of(ctx);
    for (auto it = sampled_.begin(); it != sampled_.end();) {
        if (it->second.owner != ctx || it->first.first != device) {
            ++it;
            continue;
        }
        backend().arrays()->sampled_object_destroy(it->first.second, it->second.surface); // made by it
        it = sampled_.erase(it);
    }
}

CommandResult CommandDispatch::op_TEX_OBJECT_CREATE(GuestCommand& c) { return create_sampled_object(c); }
CommandResult CommandDispatch::op_SURF_OBJECT_CREATE(GuestCommand& c) { return create_sampled_object(c); }

CommandResult CommandDispatch::op_TEX_OBJECT_DESTROY(GuestCommand& c) { return destroy_sampled_object(c); }
CommandResult CommandDispatch::op_SURF_OBJECT_DESTROY(GuestCommand& c) { return destroy_sampled_object(c); }

} // namespace kvmgpu::vgpu
