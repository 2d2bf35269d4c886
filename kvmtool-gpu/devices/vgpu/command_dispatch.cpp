// The opcode table, the checks every command gets before its handler runs,
// the helpers handlers share, and the VM-wide operations (reset, recovery).
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"
#include "kvmtool-gpu/abi/vgpu_abi_layout.h"
#include "kvmtool-gpu/devices/vgpu/alias_budget.h"


namespace kvmgpu::vgpu {

namespace {
// A handler for exactly the opcodes in VGPU_OPS (vgpu_ops.h).
template <class Table>
constexpr bool handles_exactly_the_opcodes(const Table& t) {
    for (uint32_t op = 0; op < t.size(); ++op)
        if ((t[op] != nullptr) != abi::vgpu_op_known(op)) return false;
    return true;
}

// Fewer than this many alias mappings (4 MiB of scattered 4 KiB frames) is
// worth a line at start: scattered registrations will be refused early.
constexpr uint64_t kFewAliasMappings = 1024;
} // namespace

// Indexed by opcode; nullptr = not an opcode (NOT_SUPPORTED). The opcodes
// and their facts are vgpu_ops.h's; this says which function runs each.
constexpr std::array<CommandDispatch::Handler, VGPU_OP_MAX_> CommandDispatch::kHandlers = [] {
    std::array<Handler, VGPU_OP_MAX_> t{};
    using D = CommandDispatch;
    t[VGPU_OP_NOP] = &D::op_nop;
    t[VGPU_OP_INIT] = &D::op_init;
    t[VGPU_OP_DEVICE_GET_COUNT] = &D::op_device_get_count;
    t[VGPU_OP_DEVICE_GET_ATTRIBUTE] = &D::op_device_get_attribute;
    t[VGPU_OP_DEVICE_GET_NAME] = &D::op_device_get_name;
    t[VGPU_OP_DEVICE_TOTAL_MEM] = &D::op_device_total_mem;
    t[VGPU_OP_CTX_SYNCHRONIZE] = &D::op_ctx_synchronize;
    t[VGPU_OP_MEM_ALLOC] = &D::op_mem_alloc;
    t[VGPU_OP_MEM_FREE] = &D::op_mem_free;
    t[VGPU_OP_MEM_GET_INFO] = &D::op_mem_get_info;
    t[VGPU_OP_MEMCPY_HTOD] = &D::op_memcpy_host;
    t[VGPU_OP_MEMCPY_DTOH] = &D::op_memcpy_host;
    t[VGPU_OP_MEMCPY_DTOD] = &D::op_memcpy_dtod;
    t[VGPU_OP_MEMCPY_HTOD_SG] = &D::op_memcpy_sg;
    t[VGPU_OP_MEMCPY_DTOH_SG] = &D::op_memcpy_sg;
    t[VGPU_OP_MEMSET_D8] = &D::op_memset;
    t[VGPU_OP_MEMSET_D32] = &D::op_memset;
    t[VGPU_OP_MEMSET_D16] = &D::op_memset;
    t[VGPU_OP_GUEST_RAM_DEVICE_PTR] = &D::op_guest_ram_device_ptr;
    t[VGPU_OP_MODULE_LOAD_DATA] = &D::op_module_load;
    t[VGPU_OP_MODULE_UNLOAD] = &D::op_module_unload;
    t[VGPU_OP_MODULE_GET_FUNCTION] = &D::op_module_get_function;
    t[VGPU_OP_FUNC_GET_PARAM_INFO] = &D::op_func_get_param_info;
    t[VGPU_OP_FUNC_GET_ATTRIBUTE] = &D::op_func_get_attribute;
    t[VGPU_OP_FUNC_SET_ATTRIBUTE] = &D::op_func_set_attribute;
    t[VGPU_OP_LAUNCH_KERNEL_PACKED] = &D::op_launch_kernel_packed;
    t[VGPU_OP_STREAM_CREATE] = &D::op_stream_create;
    t[VGPU_OP_STREAM_SYNCHRONIZE] = &D::op_stream_synchronize;
    t[VGPU_OP_STREAM_DESTROY] = &D::op_stream_destroy;
    t[VGPU_OP_EVENT_CREATE] = &D::op_event_create;
    t[VGPU_OP_EVENT_RECORD] = &D::op_event_record;
    t[VGPU_OP_EVENT_SYNCHRONIZE] = &D::op_event_synchronize;
    t[VGPU_OP_EVENT_ELAPSED_TIME] = &D::op_event_elapsed_time;
    t[VGPU_OP_EVENT_DESTROY] = &D::op_event_destroy;
    t[VGPU_OP_STREAM_QUERY] = &D::op_stream_query;
    t[VGPU_OP_STREAM_WAIT_EVENT] = &D::op_stream_wait_event;
    t[VGPU_OP_EVENT_QUERY] = &D::op_event_query;
    t[VGPU_OP_MODULE_GET_GLOBAL] = &D::op_module_get_global;
    t[VGPU_OP_CTX_CREATE] = &D::op_ctx_create;
    t[VGPU_OP_CTX_DESTROY] = &D::op_ctx_destroy;
    t[VGPU_OP_CTX_SET_CURRENT] = &D::op_ctx_set_current;
    t[VGPU_OP_PRIMARY_CTX_RETAIN] = &D::op_primary_ctx_retain;
    t[VGPU_OP_PRIMARY_CTX_RELEASE] = &D::op_primary_ctx_release;
    t[VGPU_OP_PRIMARY_CTX_STATE] = &D::op_primary_ctx_state;
    t[VGPU_OP_PRIMARY_CTX_SET_FLAGS] = &D::op_primary_ctx_set_flags;
    t[VGPU_OP_PRIMARY_CTX_RESET] = &D::op_primary_ctx_reset;
    t[VGPU_OP_MEMCPY_PEER] = &D::op_memcpy_peer;
    t[VGPU_OP_DEVICE_CAN_ACCESS_PEER] = &D::op_device_can_access_peer;
    t[VGPU_OP_HOST_REGISTER] = &D::op_host_register;
    t[VGPU_OP_HOST_UNREGISTER] = &D::op_host_unregister;
    t[VGPU_OP_CTX_ENABLE_PEER_ACCESS] = &D::op_ctx_peer_access;
    t[VGPU_OP_CTX_DISABLE_PEER_ACCESS] = &D::op_ctx_peer_access;
    t[VGPU_OP_FUNC_OCCUPANCY] = &D::op_func_occupancy;
    t[VGPU_OP_CTX_LIMIT] = &D::op_ctx_limit;
    t[VGPU_OP_DEVICE_P2P_ATTRIBUTE] = &D::op_device_p2p_attribute;
    t[VGPU_OP_VMM_GRANULARITY] = &D::op_vmm_granularity;
    t[VGPU_OP_VMM_RESERVE] = &D::op_vmm_reserve;
    t[VGPU_OP_VMM_FREE_RESERVATION] = &D::op_vmm_free_reservation;
    t[VGPU_OP_VMM_CREATE] = &D::op_vmm_create;
    t[VGPU_OP_VMM_RELEASE] = &D::op_vmm_release;
    t[VGPU_OP_VMM_MAP] = &D::op_vmm_map;
    t[VGPU_OP_VMM_UNMAP] = &D::op_vmm_unmap;
    t[VGPU_OP_VMM_SET_ACCESS] = &D::op_vmm_set_access;
    t[VGPU_OP_ARRAY_CREATE] = &D::op_array_create;
    t[VGPU_OP_ARRAY_DESTROY] = &D::op_array_destroy;
    t[VGPU_OP_ARRAY_GET_DESCRIPTOR] = &D::op_array_get_descriptor;
    t[VGPU_OP_MEMCPY_3D] = &D::op_memcpy_3d;
    t[VGPU_OP_TEX_OBJECT_CREATE] = &D::op_sampled_object_create;
    t[VGPU_OP_TEX_OBJECT_DESTROY] = &D::op_sampled_object_destroy;
    t[VGPU_OP_SURF_OBJECT_CREATE] = &D::op_sampled_object_create;
    t[VGPU_OP_SURF_OBJECT_DESTROY] = &D::op_sampled_object_destroy;
    t[VGPU_OP_SAMPLED_OBJECT_RESOURCE] = &D::op_sampled_object_resource;
    t[VGPU_OP_BLAS_CREATE] = &D::op_blas_create;
    t[VGPU_OP_BLAS_DESTROY] = &D::op_blas_destroy;
    t[VGPU_OP_BLAS_SET_STREAM] = &D::op_blas_set;
    t[VGPU_OP_BLAS_SET_MATH_MODE] = &D::op_blas_set;
    t[VGPU_OP_BLAS_SET_WORKSPACE] = &D::op_blas_set;
    t[VGPU_OP_BLAS_GET_VERSION] = &D::op_blas_get_version;
    t[VGPU_OP_BLAS_LEVEL1] = &D::op_blas_level1;
    t[VGPU_OP_BLAS_LEVEL2] = &D::op_blas_level2;
    t[VGPU_OP_BLAS_GEMM] = &D::op_blas_gemm;
    t[VGPU_OP_BLAS_LEVEL3] = &D::op_blas_level3;
    t[VGPU_OP_RAND_CREATE] = &D::op_rand_create;
    t[VGPU_OP_RAND_DESTROY] = &D::op_rand_destroy;
    t[VGPU_OP_RAND_SET_STREAM] = &D::op_rand_set;
    t[VGPU_OP_RAND_SET_SEED] = &D::op_rand_set;
    t[VGPU_OP_RAND_GENERATE] = &D::op_rand_generate;
    t[VGPU_OP_RAND_SET_OFFSET] = &D::op_rand_set;
    t[VGPU_OP_RAND_SET_ORDERING] = &D::op_rand_set;
    t[VGPU_OP_RAND_SET_DIMENSIONS] = &D::op_rand_set;
    t[VGPU_OP_RAND_GET_TABLE] = &D::op_rand_get_table;
    t[VGPU_OP_FFT_PLAN] = &D::op_fft_plan;
    t[VGPU_OP_FFT_DESTROY] = &D::op_fft_destroy;
    t[VGPU_OP_FFT_SET_STREAM] = &D::op_fft_set_stream;
    t[VGPU_OP_FFT_EXEC] = &D::op_fft_exec;
    t[VGPU_OP_FFT_PLAN_MANY] = &D::op_fft_plan_many;
    t[VGPU_OP_FFT_SET_WORK_AREA] = &D::op_fft_set_work_area;
    t[VGPU_OP_STREAM_BEGIN_CAPTURE] = &D::op_stream_begin_capture;
    t[VGPU_OP_STREAM_END_CAPTURE] = &D::op_stream_end_capture;
    t[VGPU_OP_STREAM_CAPTURE_INFO] = &D::op_stream_capture_info;
    t[VGPU_OP_GRAPH_CREATE] = &D::op_graph_create;
    t[VGPU_OP_GRAPH_DESTROY] = &D::op_graph_destroy;
    t[VGPU_OP_GRAPH_ADD_EMPTY_NODE] = &D::op_graph_add_empty_node;
    t[VGPU_OP_GRAPH_ADD_KERNEL_NODE] = &D::op_graph_add_kernel_node;
    t[VGPU_OP_GRAPH_ADD_MEMCPY_NODE] = &D::op_graph_add_memcpy_node;
    t[VGPU_OP_GRAPH_ADD_MEMSET_NODE] = &D::op_graph_add_memset_node;
    t[VGPU_OP_GRAPH_DEPENDENCIES] = &D::op_graph_dependencies;
    t[VGPU_OP_GRAPH_GET_NODES] = &D::op_graph_get_nodes;
    t[VGPU_OP_GRAPH_DESTROY_NODE] = &D::op_graph_destroy_node;
    t[VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS] = &D::op_graph_kernel_node_set_params;
    t[VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS] = &D::op_graph_kernel_node_set_params;
    t[VGPU_OP_GRAPH_INSTANTIATE] = &D::op_graph_instantiate;
    t[VGPU_OP_GRAPH_EXEC_DESTROY] = &D::op_graph_exec_destroy;
    t[VGPU_OP_GRAPH_LAUNCH] = &D::op_graph_launch;
    t[VGPU_OP_GRAPH_UPLOAD] = &D::op_graph_launch;
    t[VGPU_OP_GRAPH_EXEC_UPDATE] = &D::op_graph_exec_update;
    return t;
}();

CommandDispatch::CommandDispatch(const memmap::GuestMemory& mem, GpuBackend& backend, const VgpuOptions& opts,
                                 VgpuCounters& counters, uint32_t handle_seed)
    : mem_(mem), backend_(backend), opts_(opts), counters_(counters), log_limit_(opts.log_per_second),
      contexts_(HandleKind::Context, opts.max_handles, handle_seed),
      modules_(HandleKind::Module, opts.max_handles, handle_seed),
      functions_(HandleKind::Function, opts.max_handles, handle_seed),
      registrations_(HandleKind::Registration, opts.max_handles, handle_seed),
      alias_allowance_(AliasBudget::process().reserve(opts.max_alias_mappings)),
      arrays_(HandleKind::Array, opts.max_handles, handle_seed),
      blas_(HandleKind::Blas, opts.max_handles, handle_seed),
      rand_(HandleKind::Rand, opts.max_handles, handle_seed),
      fft_(HandleKind::Fft, opts.max_handles, handle_seed),
      streams_(HandleKind::Stream, opts.max_handles, handle_seed),
      events_(HandleKind::Event, opts.max_handles, handle_seed),
      graphs_(HandleKind::Graph, opts.max_handles, handle_seed),
      graph_nodes_(HandleKind::GraphNode, opts.max_graph_nodes, handle_seed),
      graph_execs_(HandleKind::GraphExec, opts.max_handles, handle_seed),
      allocs_(opts.device_mem_quota, opts.max_handles),
      vmm_physical_(HandleKind::Physical, opts.max_handles, handle_seed) {
    registered_bytes_limit_ = opts.max_registered_bytes;
    if (registered_bytes_limit_ == 0)
        for (const memmap::Region& r : mem_.regions()) registered_bytes_limit_ += r.size();
    if (alias_allowance_ < kFewAliasMappings)
        log_warn("vgpu: registered buffers may alias %llu host mappings in this VM (this process's share of "
                 "vm.max_map_count; %llu asked)",
                 static_cast<unsigned long long>(alias_allowance_), static_cast<unsigned long long>(opts.max_alias_mappings));
    restart_contexts();
}

CommandDispatch::~CommandDispatch() {
    registrations_.clear(); // unmaps the aliases before their mappings are given back
    AliasBudget::process().release(alias_allowance_);
    if (const uint64_t n = log_limit_.suppressed())
        log_info("vgpu: %llu more guest-command errors were not logged (rate limit)", static_cast<unsigned long long>(n));
}

CommandResult CommandDispatch::execute(GuestCommand& cmd) {
    static_assert(handles_exactly_the_opcodes(kHandlers),
                  "kHandlers: an opcode of VGPU_OPS without a handler, or a handler for a number not in VGPU_OPS");
    current_ = &cmd;
    const uint16_t op = cmd.desc.opcode;
    const uint32_t facts = vgpu_op_flags(op);
    CommandResult r;
    if (op >= VGPU_OP_MAX_ || kHandlers[op] == nullptr) {
        VgpuCounters::add(counters_.bad_opcodes);
        r = fail(VGPU_ERROR_NOT_SUPPORTED, "unknown opcode");
    } else if (cmd.desc.flags & ~uint32_t{VGPU_CMD_FLAG_ASYNC | VGPU_CMD_FLAG_COOPERATIVE}) {
        r = fail(VGPU_ERROR_INVALID_VALUE, "unknown flag bits");
    } else if ((cmd.desc.flags & VGPU_CMD_FLAG_COOPERATIVE) && !(facts & VGPU_OPF_COOP)) {
        r = fail(VGPU_ERROR_INVALID_VALUE, "cooperative flag on a command that is not a launch");
    } else if (cmd.desc.payload_len > VGPU_PAYLOAD_BYTES) {
        r = fail(VGPU_ERROR_INVALID_VALUE, "payload_len > VGPU_PAYLOAD_BYTES");
    } else if (ctx_ == 0 && (facts & VGPU_OPF_CTX)) {
        r = fail(VGPU_ERROR_INVALID_CONTEXT, "no current context");
    } else if ((facts & VGPU_OPF_CAPTURED) && capture_quota_exceeded()) {
        r = fail(VGPU_ERROR_OUT_OF_MEMORY, "work captured while a capture is open past max_graph_nodes");
    } else {
        VgpuCounters::add(counters_.per_opcode[op]);
        r = (this->*kHandlers[op])(cmd);
    }
    // Any command may have written device memory (a copy, a kernel, a
    // library call), except one that says it did not touch what is cached.
    if (!keeps_device_memory_) ++device_write_epoch_;
    keeps_device_memory_ = false;
    VgpuCounters::add(counters_.commands);
    if (r.status != VGPU_SUCCESS && r.status != VGPU_ERROR_NOT_READY) VgpuCounters::add(counters_.errors);
    counters_.ram_registered_bytes.store(backend_.registered_bytes(), std::memory_order_relaxed);
    counters_.ram_register_ns.store(backend_.register_ns(), std::memory_order_relaxed);
    current_ = nullptr;
    return r;
}

CommandResult CommandDispatch::fail(uint32_t status, const char* why) {
    if (log_limit_.allow()) {
        const unsigned op = current_ ? current_->desc.opcode : 0;
        const char* name = vgpu_op_name(op);
        const unsigned long long seq = current_ ? static_cast<unsigned long long>(current_->desc.seq) : 0;
        log_warn("vgpu: guest command op %u (%s) seq %llu: %s -> %s (%u)", op, name ? name : "unknown", seq, why,
                 status_name(status), status);
    }
    CommandResult r;
    r.status = status;
    return r;
}

CommandResult CommandDispatch::done(Status s, uint64_t r0, uint64_t r1) {
    if (s != VGPU_SUCCESS) return fail(s, "backend refused");
    CommandResult r;
    r.result[0] = r0;
    r.result[1] = r1;
    return r;
}

Status CommandDispatch::backend_result(Status s) {
    if (s == VGPU_SUCCESS || !backend_.recover_from(s)) return s;
    // The backend re-created its context: every object the VM held there is
    // gone; the other devices' are freed before the handles go.
    VgpuCounters::add(counters_.recoveries);
    log_warn("vgpu: sticky error %s (%u): the backend dropped its context; every VM handle is gone", status_name(s), s);
    release_other_devices(selected_device_);
    drop_handles();
    refresh_ram_windows();
    return s;
}

bool CommandDispatch::stream_of(uint64_t handle, BackendStream* out) {
    if (handle == 0) {
        *out = 0;
        return true;
    }
    const BackendStream* s = streams_.find(handle, ctx_);
    if (!s) return false;
    *out = *s;
    return true;
}

uint8_t* CommandDispatch::guest_span(uint64_t gpa, uint64_t bytes) {
    auto span = mem_.translate(memmap::GuestPhysAddr{gpa}, bytes);
    return span ? span->data() : nullptr;
}

void CommandDispatch::drop_handles() {
    restore_limits();
    unregister_all();
    restart_contexts();
    modules_.clear();
    functions_.clear();
    sampled_.clear();
    arrays_.clear();
    blas_.clear(); // a recovery lost the libraries' handles with the context; RESET destroyed them
    gemm_pointers_cache_ = {};
    rand_.clear();
    fft_.clear();
    graph_execs_.clear();
    graph_nodes_.clear();
    graphs_.clear();
    graph_node_count_ = captured_ops_ = 0;
    open_captures_ = 0;
    streams_.clear();
    events_.clear();
    vmm_physical_.clear();
    vmm_reserved_.clear();
    vmm_maps_.clear();
    allocs_.clear();
}

void CommandDispatch::reset() {
    // Each context's objects on its device, after its queued work. A sticky
    // error there makes the backend recover, which frees everything and
    // drops the handles: the handles gathered first then find nothing.
    std::vector<uint64_t> contexts;
    contexts_.for_each([&](uint64_t h, const ContextEntry&) { contexts.push_back(h); });
    for (uint64_t h : contexts) free_objects_of(h);
    drop_handles();
}

void CommandDispatch::release_other_devices(int lost) {
    int devices = 1;
    if (backend_.device_count(&devices) != VGPU_SUCCESS || devices < 2) return;
    std::vector<uint64_t> contexts;
    contexts_.for_each([&](uint64_t h, const ContextEntry& e) {
        if (static_cast<int>(e.device) != lost) contexts.push_back(h);
    });
    for (int d = 0; d < devices; ++d) {
        if (d == lost || backend_.select_device(d) != VGPU_SUCCESS) continue;
        // In one process a sticky error can reach every context: such a
        // device recovers (losing its objects) rather than free them.
        const Status st = backend_.ctx_synchronize();
        if (st != VGPU_SUCCESS && backend_.recover_from(st)) continue;
        for (uint64_t h : contexts)
            if (device_of(h) == d) free_objects_of(h, /*drain=*/false);
    }
    backend_.select_device(selected_device_);
}

void CommandDispatch::refresh_ram_windows() {
    // Every device's window onto guest RAM is the VM's.
    int devices = 1;
    if (backend_.device_count(&devices) != VGPU_SUCCESS) devices = 1;
    std::vector<std::pair<uint64_t, uint64_t>> windows;
    for (int d = 0; d < devices; ++d) {
        if (backend_.select_device(d) != VGPU_SUCCESS) continue;
        for (const memmap::Region& r : mem_.regions()) {
            const uint64_t dev = backend_.guest_ram_device_address(r.backing->data());
            if (dev != 0) windows.emplace_back(dev, r.size());
        }
    }
    backend_.select_device(selected_device_);
    allocs_.set_windows(std::move(windows));
}

} // namespace kvmgpu::vgpu
