// Handlers for modules, functions and kernel launches.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

CommandResult CommandDispatch::op_MODULE_LOAD_DATA(GuestCommand& c) {
    const auto [gpa, bytes] = args_of<VGPU_OP_MODULE_LOAD_DATA>(c);
    if (bytes == 0) return fail(VGPU_ERROR_INVALID_VALUE, "empty module image");
    if (bytes > opts_.max_module_bytes) return fail(VGPU_ERROR_INVALID_VALUE, "module image larger than max_module_bytes");
    if (modules_.size() >= modules_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "module table full");
    const uint8_t* image = guest_read(gpa, bytes);
    if (!image) return fail(VGPU_ERROR_INVALID_VALUE, "module image outside RAM");
    // The driver parses the image at leisure: give it a private copy, plus a
    // NUL after it so a PTX text image cannot make it read past the end.
    module_image_.resize(bytes + 1);
    // SAFETY: [image, image + bytes) was translated above.
    std::memcpy(module_image_.data(), image, bytes);
    module_image_[bytes] = 0;
    BackendModule m = 0;
    const Status s = backend_result(backend().module_load({module_image_.data(), bytes}, &m));
    if (s != VGPU_SUCCESS) return done(s);
    return done(VGPU_SUCCESS, *modules_.insert(ModuleEntry{m}, ctx_));
}

CommandResult CommandDispatch::op_MODULE_UNLOAD(GuestCommand& c) {
    const uint64_t handle = args_of<VGPU_OP_MODULE_UNLOAD>(c).handle;
    auto m = modules_.erase(handle, ctx_);
    if (!m) return fail(VGPU_ERROR_INVALID_HANDLE, "module handle");
    // Its functions die with it: their handles become stale.
    std::vector<uint64_t> dead;
    functions_.for_each([&](uint64_t h, const FunctionEntry& f) {
        if (f.module == handle) dead.push_back(h);
    });
    for (uint64_t h : dead) functions_.erase(h, ctx_);
    allocs_.drop_globals_of(m->module);
    return done(backend_result(backend().module_unload(m->module)));
}

// vgpu_args_name_lookup's name, no NUL: in the payload, or copied once
// from the guest RAM its gpa names. nullptr, or why it is refused.
const char* CommandDispatch::take_name(const GuestCommand& c, std::string* name) {
    const uint64_t bytes = args_of<VGPU_OP_MODULE_GET_FUNCTION, VGPU_OP_MODULE_GET_GLOBAL>(c).name_bytes;
    if (bytes == 0) {
        name->assign(reinterpret_cast<const char*>(c.payload.data()), c.desc.payload_len);
    } else {
        if (bytes <= VGPU_PAYLOAD_BYTES || bytes > VGPU_MAX_NAME_BYTES) return "name length";
        uint64_t gpa;
        if (c.desc.payload_len < sizeof gpa) return "no name address";
        std::memcpy(&gpa, c.payload.data(), sizeof gpa);
        const uint8_t* src = guest_read(gpa, bytes);
        if (!src) return "name outside RAM";
        // SAFETY: [src, src + bytes) was translated above; copied once.
        name->assign(reinterpret_cast<const char*>(src), bytes);
    }
    if (name->empty() || name->find('\0') != std::string::npos) return "name empty or with a NUL";
    return nullptr;
}

CommandResult CommandDispatch::op_MODULE_GET_FUNCTION(GuestCommand& c) {
    const uint64_t module = args_of<VGPU_OP_MODULE_GET_FUNCTION>(c).module;
    const ModuleEntry* m = modules_.find(module, ctx_);
    if (!m) return fail(VGPU_ERROR_INVALID_HANDLE, "module handle");
    std::string name;
    if (const char* why = take_name(c, &name)) return fail(VGPU_ERROR_INVALID_VALUE, why);
    BackendFunction f = 0;
    ParamLayout layout;
    const Status s = backend_result(backend().module_get_function(m->module, name, &f, &layout));
    if (s != VGPU_SUCCESS) return done(s);
    uint64_t h = 0;
    if (auto refused = function_handle(module, f, &layout, &h)) return *refused;
    // The layout comes along: a first launch needs it, and asking apart
    // would be a second round trip.
    const FunctionEntry* e = functions_.find(h, ctx_);
    put_param_descs(c, e->params, 0);
    CommandResult r = done(VGPU_SUCCESS, h, uint64_t{e->params.count()} | (e->params.total_bytes() << 32));
    r.write_payload = true;
    return r;
}

// The payload <- vgpu_param_desc of parameters first, first+1, ... (as many
// as it holds; first <= the count).
void CommandDispatch::put_param_descs(GuestCommand& c, const ParamLayout& params, uint64_t first) {
    const uint64_t n = std::min<uint64_t>(params.count() - first, VGPU_PAYLOAD_BYTES / sizeof(vgpu_param_desc));
    c.payload.fill(0);
    for (uint64_t i = 0; i < n; ++i) {
        // Offsets and sizes fit 16 bits: the buffer is at most VGPU_MAX_PARAM_BYTES.
        const vgpu_param_desc d{static_cast<uint16_t>(params.offsets[first + i]), static_cast<uint16_t>(params.sizes[first + i])};
        std::memcpy(c.payload.data() + i * sizeof d, &d, sizeof d);
    }
}

// The VM's handle for the backend's function f of `module`: the one it has,
// else a new one, with `layout` (null: the backend's, asked only then).
// nullopt, or the command's refusal.
std::optional<CommandResult> CommandDispatch::function_handle(uint64_t module, BackendFunction f,
                                                              ParamLayout* layout, uint64_t* out) {
    // Asking twice gives the same handle, so lookups in a loop cannot fill the table.
    uint64_t existing = 0;
    functions_.for_each([&](uint64_t h, const FunctionEntry& e) {
        if (e.module == module && e.function == f) existing = h;
    });
    if (existing) {
        *out = existing;
        return std::nullopt;
    }
    ParamLayout asked;
    if (layout == nullptr) {
        if (const Status s = backend_result(backend().function_layout(f, &asked)); s != VGPU_SUCCESS) return done(s);
        layout = &asked;
    }
    // Launches copy total_bytes() of parameters for the driver: a layout
    // with overlapping parameters would make that figure a lie.
    if (const std::string why = layout->malformed(); !why.empty())
        return fail(VGPU_ERROR_NOT_SUPPORTED, ("the function's parameter layout: " + why).c_str());
    auto h = functions_.insert(FunctionEntry{f, module, std::move(*layout)}, ctx_);
    if (!h) return fail(VGPU_ERROR_OUT_OF_MEMORY, "function table full");
    *out = *h;
    return std::nullopt;
}

// Handles of the module's kernels first, first+1,
// ... in the payload (uint64 each): result0 the module's count, result1 how
// many the payload got.
CommandResult CommandDispatch::op_MODULE_FUNCTIONS(GuestCommand& c) {
    const auto [module, first] = args_of<VGPU_OP_MODULE_FUNCTIONS>(c);
    const ModuleEntry* m = modules_.find(module, ctx_);
    if (!m) return fail(VGPU_ERROR_INVALID_HANDLE, "module handle");
    std::vector<BackendFunction> fs;
    const Status s = backend_result(backend().module_functions(m->module, &fs));
    if (s != VGPU_SUCCESS) return done(s);
    if (first > fs.size()) return fail(VGPU_ERROR_INVALID_VALUE, "first function past the last");
    const uint64_t n = std::min<uint64_t>(fs.size() - first, VGPU_PAYLOAD_BYTES / sizeof(uint64_t));
    c.payload.fill(0);
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t h = 0;
        if (auto refused = function_handle(module, fs[first + i], nullptr, &h)) return *refused;
        std::memcpy(c.payload.data() + i * sizeof h, &h, sizeof h);
    }
    CommandResult r = done(VGPU_SUCCESS, fs.size(), n);
    r.write_payload = true;
    return r;
}

// The variable named (as take_name reads it) is the VM's device memory
// from now until the module goes.
CommandResult CommandDispatch::op_MODULE_GET_GLOBAL(GuestCommand& c) {
    const ModuleEntry* m = modules_.find(args_of<VGPU_OP_MODULE_GET_GLOBAL>(c).module, ctx_);
    if (!m) return fail(VGPU_ERROR_INVALID_HANDLE, "module handle");
    std::string name;
    if (const char* why = take_name(c, &name)) return fail(VGPU_ERROR_INVALID_VALUE, why);
    uint64_t dptr = 0, bytes = 0;
    const Status s = backend_result(backend().module_get_global(m->module, name, &dptr, &bytes));
    if (s != VGPU_SUCCESS) return done(s);
    allocs_.add_global(dptr, bytes, m->module);
    return done(VGPU_SUCCESS, dptr, bytes);
}

// Parameters from `first` on, in the module's layout as
// cuFuncGetParamInfo gives it: result0 count, result1 buffer bytes.
CommandResult CommandDispatch::op_FUNC_GET_PARAM_INFO(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_FUNC_GET_PARAM_INFO>(c);
    const FunctionEntry* f = functions_.find(a.function, ctx_);
    if (!f) return fail(VGPU_ERROR_INVALID_HANDLE, "function handle");
    const uint64_t count = f->params.count();
    if (a.first > count) return fail(VGPU_ERROR_INVALID_VALUE, "first parameter past the last");
    put_param_descs(c, f->params, a.first);
    CommandResult r = done(VGPU_SUCCESS, count, f->params.total_bytes());
    r.write_payload = true;
    return r;
}

// A CUfunction_attribute -> result0 the value (an int).
CommandResult CommandDispatch::op_FUNC_GET_ATTRIBUTE(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_FUNC_GET_ATTRIBUTE>(c);
    const FunctionEntry* f = functions_.find(a.handle, ctx_);
    if (!f) return fail(VGPU_ERROR_INVALID_HANDLE, "function handle");
    if (a.attribute > 0xFFFF) return fail(VGPU_ERROR_INVALID_VALUE, "function attribute");
    int v = 0;
    const Status s = backend_result(backend().function_attribute(f->function, static_cast<int>(a.attribute), &v));
    return done(s, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

// A CUfunction_attribute set to a value (an int): the
// driver checks which attributes may be set and to what.
CommandResult CommandDispatch::op_FUNC_SET_ATTRIBUTE(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_FUNC_SET_ATTRIBUTE>(c);
    const FunctionEntry* f = functions_.find(a.handle, ctx_);
    if (!f) return fail(VGPU_ERROR_INVALID_HANDLE, "function handle");
    const auto value = static_cast<int64_t>(a.value);
    if (a.attribute > 0xFFFF || value < INT32_MIN || value > INT32_MAX)
        return fail(VGPU_ERROR_INVALID_VALUE, "function attribute or value");
    return done(backend_result(
        backend().set_function_attribute(f->function, static_cast<int>(a.attribute), static_cast<int>(value))));
}

CommandDispatch::LaunchShape CommandDispatch::launch_shape(const GuestCommand& c, bool with_stream) {
    LaunchShape l;
    auto bad = [&](uint32_t status, const char* why) {
        l.status = status, l.why = why;
        return l;
    };
    const auto a = args_of<VGPU_OP_LAUNCH_KERNEL_PACKED, VGPU_OP_GRAPH_ADD_KERNEL_NODE,
                           VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS, VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS>(c);
    l.function = functions_.find(a.function, ctx_);
    if (!l.function) return bad(VGPU_ERROR_INVALID_HANDLE, "function handle");
    if (with_stream && !stream_of(a.stream, &l.stream)) return bad(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    l.grid = Dim3{a.grid[0], a.grid[1], a.grid[2]};
    l.block = Dim3{a.block[0], a.block[1], a.block[2]};
    l.shared = a.shared_bytes;
    l.params = a.params;
    if (!l.grid.x || !l.grid.y || !l.grid.z || !l.block.x || !l.block.y || !l.block.z)
        return bad(VGPU_ERROR_INVALID_VALUE, "zero grid or block dimension");
    if (!launch_dims_ok(l.grid, l.block)) return bad(VGPU_ERROR_INVALID_VALUE, "grid or block beyond the device's limits");
    return l;
}

const char* CommandDispatch::take_param_buffer(const uint8_t* p, uint32_t len, uint32_t room, uint64_t bytes) {
    if (bytes > param_buffer_.size()) return "parameter buffer too large";
    const uint8_t* src = p;
    if (bytes > room) {
        uint64_t gpa;
        if (len < sizeof gpa) return "no parameter buffer address";
        std::memcpy(&gpa, p, sizeof gpa);
        src = guest_read(gpa, bytes);
        if (!src) return "parameter buffer outside RAM";
    } else if (len < bytes) {
        return "parameter buffer longer than the payload";
    }
    // SAFETY: [src, src + bytes) is the payload or was translated above; one
    // copy, so the guest cannot change a parameter after it was checked.
    if (bytes) std::memcpy(param_buffer_.data(), src, bytes);
    return nullptr;
}

// The cluster header a VGPU_CMD_FLAG_CLUSTER launch's payload starts with,
// into `mode`; nullptr, or why it is refused.
const char* CommandDispatch::take_cluster(const GuestCommand& c, LaunchMode* mode) {
    if (c.desc.payload_len < VGPU_LAUNCH_CLUSTER_BYTES) return "no cluster header";
    vgpu_launch_cluster h;
    std::memcpy(&h, c.payload.data(), sizeof h);
    const Dim3 cluster{h.dim[0], h.dim[1], h.dim[2]};
    if (!cluster_size_ok(cluster, VGPU_MAX_CLUSTER_BLOCKS)) return "cluster dimension zero or past VGPU_MAX_CLUSTER_BLOCKS";
    if (h.scheduling > 2) return "unknown cluster scheduling policy"; // CUclusterSchedulingPolicy: 0..2
    mode->has_cluster = true;
    mode->cluster = cluster;
    mode->cluster_scheduling = h.scheduling;
    return nullptr;
}

// vgpu_launch_args with params = the buffer's bytes; the parameter buffer
// in the payload (after the cluster header, with VGPU_CMD_FLAG_CLUSTER) or,
// when larger, at the guest-physical address it holds there.
CommandResult CommandDispatch::op_LAUNCH_KERNEL_PACKED(GuestCommand& c) {
    const LaunchShape l = launch_shape(c);
    if (l.why) return fail(l.status, l.why);
    const ParamLayout& layout = l.function->params;
    const uint64_t bytes = l.params;
    // Exactly the kernel's buffer: the driver reads every parameter at its
    // offset, so a shorter one would hand it bytes the guest never gave.
    if (bytes != layout.total_bytes()) return fail(VGPU_ERROR_INVALID_VALUE, "parameter buffer not the kernel's size");
    LaunchMode mode(is_cooperative(c));
    uint32_t skip = 0;
    if (c.desc.flags & VGPU_CMD_FLAG_CLUSTER) {
        if (const char* why = take_cluster(c, &mode)) return fail(VGPU_ERROR_INVALID_VALUE, why);
        skip = VGPU_LAUNCH_CLUSTER_BYTES;
    }
    if (const char* why = take_param_buffer(c.payload.data() + skip, c.desc.payload_len - skip,
                                            VGPU_PAYLOAD_BYTES - skip, bytes))
        return fail(VGPU_ERROR_INVALID_VALUE, why);
    // The buffer as it is: laid out by the function's own layout.
    Status st = backend_result(backend().launch_packed(l.function->function, l.grid, l.block, l.shared, l.stream,
                                                      {param_buffer_.data(), bytes}, layout, mode));
    if (st == VGPU_SUCCESS && !is_async(c)) st = backend_result(backend().stream_synchronize(l.stream));
    return done(st);
}

} // namespace kvmgpu::vgpu
