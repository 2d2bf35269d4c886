// Handlers for modules, functions and kernel launches.
#include <cstring>
#include <string_view>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

CommandResult CommandDispatch::op_module_load(GuestCommand& c) {
    const uint64_t gpa = c.desc.arg[0], bytes = c.desc.arg[1];
    if (bytes == 0) return fail(VGPU_ERROR_INVALID_VALUE, "empty module image");
    if (bytes > opts_.max_module_bytes) return fail(VGPU_ERROR_INVALID_VALUE, "module image larger than max_module_bytes");
    if (modules_.size() >= modules_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "module table full");
    const uint8_t* image = guest_span(gpa, bytes);
    if (!image) return fail(VGPU_ERROR_INVALID_VALUE, "module image outside RAM");
    // The driver parses the image at leisure: give it a private copy, plus a
    // NUL after it so a PTX text image cannot make it read past the end.
    module_image_.resize(bytes + 1);
    // SAFETY: [image, image + bytes) was translated above.
    std::memcpy(module_image_.data(), image, bytes);
    module_image_[bytes] = 0;
    BackendModule m = 0;
    const Status s = backend_result(backend_.module_load({module_image_.data(), bytes}, &m));
    if (s != VGPU_SUCCESS) return done(s);
    return done(VGPU_SUCCESS, *modules_.insert(ModuleEntry{m}));
}

CommandResult CommandDispatch::op_module_unload(GuestCommand& c) {
    const uint64_t handle = c.desc.arg[0];
    auto m = modules_.erase(handle);
    if (!m) return fail(VGPU_ERROR_INVALID_HANDLE, "module handle");
    // Its functions die with it: their handles become stale.
    std::vector<uint64_t> dead;
    functions_.for_each([&](uint64_t h, const FunctionEntry& f) {
        if (f.module == handle) dead.push_back(h);
    });
    for (uint64_t h : dead) functions_.erase(h);
    return done(backend_result(backend_.module_unload(m->module)));
}

// arg0 module; payload = the name, payload_len bytes, no NUL.
CommandResult CommandDispatch::op_module_get_function(GuestCommand& c) {
    const uint64_t module = c.desc.arg[0];
    const ModuleEntry* m = modules_.find(module);
    if (!m) return fail(VGPU_ERROR_INVALID_HANDLE, "module handle");
    const std::string_view name(reinterpret_cast<const char*>(c.payload.data()), c.desc.payload_len);
    if (name.empty() || name.find('\0') != std::string_view::npos)
        return fail(VGPU_ERROR_INVALID_VALUE, "function name empty or with a NUL");
    BackendFunction f = 0;
    ParamLayout layout;
    const Status s = backend_result(backend_.module_get_function(m->module, name, &f, &layout));
    if (s != VGPU_SUCCESS) return done(s);
    // Asking twice gives the same handle, so lookups in a loop cannot fill the table.
    uint64_t existing = 0;
    functions_.for_each([&](uint64_t h, const FunctionEntry& e) {
        if (e.module == module && e.function == f) existing = h;
    });
    if (existing) return done(VGPU_SUCCESS, existing);
    auto h = functions_.insert(FunctionEntry{f, module, std::move(layout)});
    if (!h) return fail(VGPU_ERROR_OUT_OF_MEMORY, "function table full");
    return done(VGPU_SUCCESS, *h);
}

// arg0 function, arg1 stream, arg2 gridX|gridY<<32, arg3 gridZ|blockX<<32,
// arg4 blockY|blockZ<<32, arg5 sharedMem|nparams<<32; payload = nparams
// vgpu_param_desc, then the bytes they point to.
CommandResult CommandDispatch::op_launch_kernel(GuestCommand& c) {
    const FunctionEntry* f = functions_.find(c.desc.arg[0]);
    if (!f) return fail(VGPU_ERROR_INVALID_HANDLE, "function handle");
    BackendStream s;
    if (!stream_of(c.desc.arg[1], &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    auto lo = [](uint64_t v) { return static_cast<uint32_t>(v); };
    auto hi = [](uint64_t v) { return static_cast<uint32_t>(v >> 32); };
    const Dim3 grid{lo(c.desc.arg[2]), hi(c.desc.arg[2]), lo(c.desc.arg[3])};
    const Dim3 block{hi(c.desc.arg[3]), lo(c.desc.arg[4]), hi(c.desc.arg[4])};
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        return fail(VGPU_ERROR_INVALID_VALUE, "zero grid or block dimension");
    if (!launch_dims_ok(grid, block)) return fail(VGPU_ERROR_INVALID_VALUE, "grid or block beyond the device's limits");
    const uint32_t shared = lo(c.desc.arg[5]), nparams = hi(c.desc.arg[5]);
    if (nparams > VGPU_MAX_KERNEL_PARAMS) return fail(VGPU_ERROR_INVALID_VALUE, "nparams > VGPU_MAX_KERNEL_PARAMS");
    const uint32_t desc_bytes = nparams * sizeof(vgpu_param_desc);
    if (desc_bytes > c.desc.payload_len) return fail(VGPU_ERROR_INVALID_VALUE, "param descriptors outside payload");

    // Each parameter is copied to a 16-byte-aligned home of its own: the
    // payload offsets are guest-chosen and may be misaligned.
    alignas(16) uint8_t storage[VGPU_PAYLOAD_BYTES + VGPU_MAX_KERNEL_PARAMS * 16];
    void* params[VGPU_MAX_KERNEL_PARAMS];
    uint16_t sizes[VGPU_MAX_KERNEL_PARAMS];
    uint32_t used = 0;
    for (uint32_t i = 0; i < nparams; ++i) {
        vgpu_param_desc d;
        std::memcpy(&d, c.payload.data() + i * sizeof d, sizeof d);
        if (d.size == 0) return fail(VGPU_ERROR_INVALID_VALUE, "zero-size parameter");
        // 16-bit fields: the sum cannot wrap in 32 bits.
        if (d.offset < desc_bytes || uint32_t{d.offset} + d.size > c.desc.payload_len)
            return fail(VGPU_ERROR_INVALID_VALUE, "parameter bytes outside payload");
        // Descriptors may overlap, so the sum of sizes is bounded only here.
        if (used + d.size > sizeof storage) return fail(VGPU_ERROR_INVALID_VALUE, "parameters larger than the payload");
        std::memcpy(storage + used, c.payload.data() + d.offset, d.size);
        params[i] = storage + used;
        sizes[i] = d.size;
        used += (d.size + 15u) & ~15u;
    }
    // The driver takes each parameter's size from the module, not from us:
    // a launch must supply exactly the kernel's layout, or the driver would
    // read past what the guest gave (host memory) or miss a parameter.
    const std::string mismatch = f->params.mismatch({sizes, nparams});
    if (!mismatch.empty()) return fail(VGPU_ERROR_INVALID_VALUE, mismatch.c_str());
    Status st = backend_result(backend_.launch(f->function, grid, block, shared, s, {params, nparams}, {sizes, nparams}));
    if (st == VGPU_SUCCESS && !is_async(c)) st = backend_result(backend_.stream_synchronize(s));
    return done(st);
}

} // namespace kvmgpu::vgpu
