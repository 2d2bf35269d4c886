// Handlers for arrays and 3-D copies. An array is a handle of the context
// that made it, charged to the VM's device-memory quota; a copy's every
// side is checked (its kind, a pitched side's span in guest RAM or in ONE
// of this VM's allocations, an array side inside the array's extent, in
// whole elements) before the backend sees it.
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
// What an array costs the quota: its elements' bytes rounded up to 64 KiB
// (the driver pads and tiles arrays; their number is bounded by max_handles).
constexpr uint64_t kArrayChargeGranule = 64 << 10;

// [first, first + count) inside [0, extent), without wrapping.
bool inside(uint64_t first, uint64_t count, uint64_t extent) { return first <= extent && count <= extent - first; }
} // namespace

CommandResult CommandDispatch::op_ARRAY_CREATE(GuestCommand& c) {
    if (c.desc.payload_len != sizeof(vgpu_array_desc)) return fail(VGPU_ERROR_INVALID_VALUE, "array descriptor size");
    vgpu_array_desc d;
    std::memcpy(&d, c.payload.data(), sizeof d);
    ArrayShape shape;
    bool not_supported = false;
    if (const char* why = check_array_shape(d, &shape, &not_supported))
        return fail(not_supported ? VGPU_ERROR_NOT_SUPPORTED : VGPU_ERROR_INVALID_VALUE, why);
    uint64_t charge = 0;
    if (__builtin_add_overflow(shape.bytes(), kArrayChargeGranule - 1, &charge))
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "array larger than any quota");
    charge &= ~(kArrayChargeGranule - 1);
    if (arrays_.size() >= arrays_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "array table full");
    if (!allocs_.charge(charge)) return fail(VGPU_ERROR_OUT_OF_MEMORY, "array refused by the VM's device-memory quota");
    ArrayBackend* ab = backend().arrays();
    if (!ab) return fail(VGPU_ERROR_NOT_SUPPORTED, "the backend has no arrays");
    BackendArray a = 0;
    const Status s = backend_result(ab->array_create(shape, &a));
    if (s != VGPU_SUCCESS) {
        allocs_.uncharge(charge);
        return done(s);
    }
    const auto h = arrays_.insert(ArrayEntry{a, shape, charge}, ctx_);
    if (!h) { // capacity was checked above; kept for safety
        ab->array_destroy(a);
        allocs_.uncharge(charge);
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "array table full");
    }
    return done(VGPU_SUCCESS, *h);
}

CommandResult CommandDispatch::op_ARRAY_DESTROY(GuestCommand& c) {
    const auto entry = arrays_.erase(args_of<VGPU_OP_ARRAY_DESTROY>(c).handle, ctx_);
    if (!entry) return fail(VGPU_ERROR_INVALID_HANDLE, "array handle");
    // Texture and surface objects on it stay, as in CUDA: a kernel that
    // samples one then reads what the driver freed in this VM's context.
    allocs_.uncharge(entry->charged);
    return done(backend_result(backend().arrays()->array_destroy(entry->array))); // made by it: it has arrays
}

CommandResult CommandDispatch::op_ARRAY_GET_DESCRIPTOR(GuestCommand& c) {
    const ArrayEntry* a = arrays_.find(args_of<VGPU_OP_ARRAY_GET_DESCRIPTOR>(c).handle, ctx_);
    if (!a) return fail(VGPU_ERROR_INVALID_HANDLE, "array handle");
    const vgpu_array_desc d = a->shape.desc();
    c.payload.fill(0);
    std::memcpy(c.payload.data(), &d, sizeof d);
    CommandResult r = done(VGPU_SUCCESS);
    r.write_payload = true;
    return r;
}

uint32_t CommandDispatch::copy_side(const vgpu_copy_side& in, const vgpu_copy3d& c, bool destination, CopySide* out,
                                   const char** why) {
    out->kind = in.kind;
    if (in.reserved != 0) {
        *why = "copy side: reserved field not 0";
        return VGPU_ERROR_INVALID_VALUE;
    }
    if (in.kind == VGPU_COPY_ARRAY) {
        const ArrayEntry* a = arrays_.find(in.base, ctx_);
        if (!a) {
            *why = "copy side: array handle";
            return VGPU_ERROR_INVALID_HANDLE;
        }
        const ArrayShape& s = a->shape;
        if (in.x_bytes % s.element_bytes != 0 || c.width_bytes % s.element_bytes != 0) {
            *why = "copy side: array offset or width not in whole elements";
            return VGPU_ERROR_INVALID_VALUE;
        }
        if (!inside(in.x_bytes, c.width_bytes, s.row_bytes()) || !inside(in.y, c.height, s.rows()) ||
            !inside(in.z, c.depth, s.slices())) {
            *why = "copy side: box outside the array";
            return VGPU_ERROR_INVALID_VALUE;
        }
        *out = CopySide{in.kind, nullptr, 0, a->array, s, in.x_bytes, in.y, in.z, 0, 0};
        return VGPU_SUCCESS;
    }
    if (in.kind != VGPU_COPY_HOST && in.kind != VGPU_COPY_DEVICE) {
        *why = "copy side: unknown kind";
        return VGPU_ERROR_INVALID_VALUE;
    }
    uint64_t first = 0, bytes = 0, at = 0;
    if (!vgpu_copy_span(&in, c.width_bytes, c.height, c.depth, &first, &bytes) ||
        __builtin_add_overflow(in.base, first, &at)) {
        *why = "copy side: pitch, height or offsets impossible";
        return VGPU_ERROR_INVALID_VALUE;
    }
    out->pitch = in.pitch;
    out->height = in.height;
    if (in.kind == VGPU_COPY_HOST) {
        // A pitched destination's span has gaps the copy leaves alone: a
        // remote copy of guest RAM reads them first, so they go back unchanged.
        out->host = destination ? (guest_read(at, bytes) ? guest_write(at, bytes) : nullptr)
                                : const_cast<uint8_t*>(guest_read(at, bytes));
        if (!out->host) {
            *why = "copy side: guest range outside RAM";
            return VGPU_ERROR_INVALID_VALUE;
        }
        if (const uint32_t s = backend_result(devices_.prepare_guest_ram(out->host, bytes)); s != VGPU_SUCCESS) {
            *why = "copy side: registering its guest RAM failed";
            return s;
        }
        return VGPU_SUCCESS;
    }
    if (!allocs_.contains(at, bytes)) {
        *why = "copy side: device range not this VM's";
        return VGPU_ERROR_INVALID_VALUE;
    }
    if (device_of(allocs_.owner_containing(at)) != selected_device_) {
        *why = "copy side: memory of another device (copy it with cuMemcpyPeer)";
        return VGPU_ERROR_INVALID_VALUE;
    }
    out->dptr = at;
    return VGPU_SUCCESS;
}

// On a stream; payload vgpu_copy3d.
CommandResult CommandDispatch::op_MEMCPY_3D(GuestCommand& c) {
    BackendStream s;
    if (!stream_of(args_of<VGPU_OP_MEMCPY_3D>(c).stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (c.desc.payload_len != sizeof(vgpu_copy3d)) return fail(VGPU_ERROR_INVALID_VALUE, "copy descriptor size");
    vgpu_copy3d in;
    std::memcpy(&in, c.payload.data(), sizeof in);
    if (in.width_bytes == 0 || in.height == 0 || in.depth == 0) return done(VGPU_SUCCESS); // nothing to copy
    if (ram_is_remote() && (in.src.kind == VGPU_COPY_HOST || in.dst.kind == VGPU_COPY_HOST) && capturing(s))
        return fail(VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED, "captured copy of guest RAM: a remote GPU has no view of it at launch");
    Copy3D copy;
    copy.width_bytes = in.width_bytes;
    copy.height = in.height;
    copy.depth = in.depth;
    const char* why = nullptr;
    if (const uint32_t st = copy_side(in.src, in, false, &copy.src, &why)) return fail(st, why);
    if (const uint32_t st = copy_side(in.dst, in, true, &copy.dst, &why)) return fail(st, why);
    return done(backend_result(backend().memcpy_3d(copy, s, is_async(c))));
}

} // namespace kvmgpu::vgpu
