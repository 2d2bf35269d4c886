// The checks every command gets before its handler runs (its opcode's facts
// from vgpu_ops.h), the helpers handlers share, and the VM-wide operations
// (reset, recovery).
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"
#include "kvmtool-gpu/abi/vgpu_abi_layout.h"
#include "kvmtool-gpu/devices/vgpu/alias_budget.h"


namespace kvmgpu::vgpu {

namespace {
// Fewer than this many alias mappings (4 MiB of scattered 4 KiB frames) is
// worth a line at start: scattered registrations will be refused early.
constexpr uint64_t kFewAliasMappings = 1024;
} // namespace

CommandDispatch::CommandDispatch(const memmap::GuestMemory& mem, DeviceBackends& devices, const VgpuOptions& opts,
                                 VgpuCounters& counters, uint32_t handle_seed)
    : mem_(mem), devices_(devices), opts_(opts), counters_(counters), log_limit_(opts.log_per_second),
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
    current_ = &cmd;
    const uint16_t op = cmd.desc.opcode;
    const uint32_t facts = vgpu_op_flags(op);
    CommandResult r;
    if (op >= VGPU_OP_MAX_ || kHandlers[op] == nullptr) {
        VgpuCounters::add(counters_.bad_opcodes);
        r = fail(VGPU_ERROR_NOT_SUPPORTED, "unknown opcode");
    } else if (cmd.desc.flags & ~uint32_t{VGPU_CMD_FLAG_ASYNC | VGPU_CMD_FLAG_COOPERATIVE | VGPU_CMD_FLAG_CLUSTER}) {
        r = fail(VGPU_ERROR_INVALID_VALUE, "unknown flag bits");
    } else if ((cmd.desc.flags & (VGPU_CMD_FLAG_COOPERATIVE | VGPU_CMD_FLAG_CLUSTER)) && !(facts & VGPU_OPF_COOP)) {
        r = fail(VGPU_ERROR_INVALID_VALUE, "cooperative or cluster flag on a command that is not a launch");
    } else if (cmd.desc.payload_len > VGPU_PAYLOAD_BYTES) {
        r = fail(VGPU_ERROR_INVALID_VALUE, "payload_len > VGPU_PAYLOAD_BYTES");
    } else if (ctx_ == 0 && (facts & VGPU_OPF_CTX)) {
        r = fail(VGPU_ERROR_INVALID_CONTEXT, "no current context");
    } else if ((facts & VGPU_OPF_CAPTURED) && capture_quota_exceeded()) {
        r = fail(VGPU_ERROR_OUT_OF_MEMORY, "work captured while a capture is open past max_graph_nodes");
    } else {
        VgpuCounters::add(counters_.per_opcode[op]);
        if (!(cmd.desc.flags & VGPU_CMD_FLAG_ASYNC)) VgpuCounters::add(counters_.waited_per_opcode[op]);
        r = (this->*kHandlers[op])(cmd);
    }
    if (r.status != VGPU_SUCCESS) written_.clear(); // what a failed command wrote is undefined, as the driver's
    // GRAPH_NEXT_NODE_DEPENDENCIES' handles are for the very next command: a
    // node it adds took them; any other command (or one refused before it
    // added its node) drops them, so they never reach a later node.
    if (op != VGPU_OP_GRAPH_NEXT_NODE_DEPENDENCIES && !next_node_deps_.handles.empty()) next_node_deps_ = {};
    if (!publish_written()) r = fail(VGPU_ERROR_UNKNOWN, "guest RAM out of reach (remote VMM)");
    // Any command may have written device memory (a copy, a kernel, a
    // library call), except one that says it did not touch what is cached.
    if (!keeps_device_memory_) ++device_write_epoch_;
    keeps_device_memory_ = false;
    VgpuCounters::add(counters_.commands);
    if (r.status != VGPU_SUCCESS && r.status != VGPU_ERROR_NOT_READY) VgpuCounters::add(counters_.errors);
    counters_.ram_registered_bytes.store(devices_.registered_bytes(), std::memory_order_relaxed);
    counters_.ram_register_ns.store(devices_.register_ns(), std::memory_order_relaxed);
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
    if (s == VGPU_SUCCESS || !backend().recover_from(s)) return s;
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

uint8_t* CommandDispatch::guest_view(uint64_t gpa, uint64_t bytes) {
    auto span = mem_.translate(memmap::GuestPhysAddr{gpa}, bytes);
    return span ? span->data() : nullptr;
}

const uint8_t* CommandDispatch::guest_read(uint64_t gpa, uint64_t bytes) {
    uint8_t* host = guest_view(gpa, bytes);
    if (host && remote_ram_ && !remote_ram_->fetch(gpa, host, bytes)) return nullptr;
    return host;
}

uint8_t* CommandDispatch::guest_write(uint64_t gpa, uint64_t bytes) {
    uint8_t* host = guest_view(gpa, bytes);
    if (host && remote_ram_) written_.push_back(WrittenSpan{gpa, host, bytes});
    return host;
}

bool CommandDispatch::sg_ranges_ready(bool htod) {
    if (!remote_ram_) return true;
    // Guest-contiguous neighbours travel as one span; a read asks for all at once.
    std::vector<GuestRamRemote::Span> spans;
    for (size_t i = 0; i < sg_list_.size();) {
        const uint64_t start = sg_list_[i].gpa.value;
        uint64_t bytes = sg_list_[i].len;
        size_t j = i + 1;
        while (j < sg_list_.size() && sg_list_[j].gpa.value == start + bytes &&
               guest_view(start, bytes + sg_list_[j].len))
            bytes += sg_list_[j++].len;
        if (!htod && !guest_write(start, bytes)) return false;
        spans.push_back({start, bytes});
        i = j;
    }
    return !htod || remote_ram_->fetch_all(spans);
}

bool CommandDispatch::capturing(BackendStream s, uint64_t* id) {
    uint32_t status = kCaptureNone;
    uint64_t capture = 0;
    const bool yes = open_captures_ > 0 && graph_backend() &&
                     graph_backend()->capture_status(s, &status, &capture) == VGPU_SUCCESS && status != kCaptureNone;
    if (id) *id = capture;
    return yes;
}

bool CommandDispatch::fetch_graph_reads(const std::vector<GuestRamUse>& uses) {
    for (const GuestRamUse& u : uses)
        if (!u.written && !guest_read(u.gpa, u.bytes)) return false;
    return true;
}

void CommandDispatch::mark_graph_writes(const std::vector<GuestRamUse>& uses) {
    for (const GuestRamUse& u : uses)
        if (u.written) guest_write(u.gpa, u.bytes);
}

bool CommandDispatch::publish_written() {
    if (written_.empty()) return true;
    // Copies to guest RAM may still be queued on a stream: they land first.
    const int devices = devices_.count();
    for (int d = 0; d < devices; ++d)
        if (devices_.select(d) == VGPU_SUCCESS) (void)backend().ctx_synchronize();
    devices_.select(selected_device_);
    bool ok = true;
    for (const WrittenSpan& w : written_) ok = remote_ram_->publish(w.gpa, w.host, w.bytes) && ok;
    written_.clear();
    return remote_ram_->flush() && ok;
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
    graph_events_.clear();
    retired_events_.clear(); // freed with their contexts (RESET), or lost with the backend's
    vmm_physical_.clear();
    vmm_reserved_.clear();
    vmm_maps_.clear();
    allocs_.clear();
    graph_allocations_.clear();
    capture_allocations_.clear();
    capture_of_stream_.clear();
    capture_ram_.clear();
    graph_memory_high_.clear();
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
    const int devices = devices_.count();
    if (devices < 2) return;
    std::vector<uint64_t> contexts;
    contexts_.for_each([&](uint64_t h, const ContextEntry& e) {
        if (static_cast<int>(e.device) != lost) contexts.push_back(h);
    });
    for (int d = 0; d < devices; ++d) {
        if (d == lost || devices_.select(d) != VGPU_SUCCESS) continue;
        // In one process a sticky error can reach every context: such a
        // device recovers (losing its objects) rather than free them.
        const Status st = backend().ctx_synchronize();
        if (st != VGPU_SUCCESS && backend().recover_from(st)) continue;
        for (uint64_t h : contexts)
            if (device_of(h) == d) free_objects_of(h, /*drain=*/false);
    }
    devices_.select(selected_device_);
}

void CommandDispatch::refresh_ram_windows() {
    // Every device's window onto guest RAM is the VM's; a remote copy of
    // guest RAM offers none (a kernel would read stale bytes).
    if (remote_ram_) return;
    const int devices = devices_.count();
    std::vector<std::pair<uint64_t, uint64_t>> windows;
    for (int d = 0; d < devices; ++d) {
        if (devices_.select(d) != VGPU_SUCCESS) continue;
        for (const memmap::Region& r : mem_.regions()) {
            const uint64_t dev = backend().guest_ram_device_address(r.backing->data());
            if (dev != 0) windows.emplace_back(dev, r.size());
        }
    }
    devices_.select(selected_device_);
    allocs_.set_windows(std::move(windows));
}

} // namespace kvmgpu::vgpu
