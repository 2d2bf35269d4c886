// Handlers for contexts: created ones and each device's primary one, the
// current context, and freeing what a context made when it goes.
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
// CUctx_flags a guest may pass: a scheduling mode (CU_CTX_SCHED_AUTO, SPIN,
// YIELD or BLOCKING_SYNC), CU_CTX_MAP_HOST, CU_CTX_LMEM_RESIZE_TO_MAX. They
// are kept and reported back; the backend's context was made with its own.
bool context_flags_ok(uint64_t flags) {
    const uint64_t sched = flags & 0x7;
    return (flags & ~uint64_t{0x1f}) == 0 && (sched == 0 || sched == 1 || sched == 2 || sched == 4);
}
} // namespace

bool CommandDispatch::device_exists(uint64_t ordinal) {
    return ordinal < static_cast<uint64_t>(devices_.count());
}

uint64_t CommandDispatch::primary_context(uint32_t device) {
    if (primaries_.size() <= device) primaries_.resize(device + 1);
    PrimaryContext& p = primaries_[device];
    if (p.handle == 0) p.handle = contexts_.insert(ContextEntry{device, 0, true}).value_or(0);
    return p.handle;
}

void CommandDispatch::restart_contexts() {
    contexts_.clear();
    primaries_.clear();
    peer_access_.clear();
    make_current(primary_context(0));
}

int CommandDispatch::device_of(uint64_t ctx) {
    const ContextEntry* e = contexts_.find(ctx);
    return e ? static_cast<int>(e->device) : selected_device_;
}

void CommandDispatch::make_current(uint64_t ctx) {
    ctx_ = ctx;
    if (ctx == 0) return; // the backend stays on the last device: nothing runs without a context
    const int device = device_of(ctx);
    if (device != selected_device_ && devices_.select(device) == VGPU_SUCCESS) selected_device_ = device;
}

void CommandDispatch::free_objects_of(uint64_t ctx, bool drain) {
    // On the context's device; the current context's device afterwards.
    const int device = device_of(ctx), back = selected_device_;
    if (device != back) devices_.select(device);
    end_captures_of(ctx);
    // Its queued work may still use what is freed: let the device finish.
    if (drain) backend_result(backend().ctx_synchronize());
    destroy_blas_of(ctx); // before the streams they work on
    destroy_rand_of(ctx);
    destroy_fft_of(ctx);
    destroy_graphs_of(ctx);
    free_retired_events_of(ctx);
    events_.erase_owned_by(ctx, [&](BackendEvent e) {
        graph_events_.erase(e);
        backend().event_destroy(e);
    });
    streams_.erase_owned_by(ctx, [&](BackendStream s) { backend().stream_destroy(s); });
    functions_.erase_owned_by(ctx, [](const FunctionEntry&) {});
    free_sampled_objects_of(ctx); // before the arrays they sample
    arrays_.erase_owned_by(ctx, [&](const ArrayEntry& a) {
        backend().arrays()->array_destroy(a.array); // made by it: it has arrays
        allocs_.uncharge(a.charged);
    });
    modules_.erase_owned_by(ctx, [&](const ModuleEntry& m) {
        allocs_.drop_globals_of(m.module);
        backend().module_unload(m.module);
    });
    vmm_free_owned_by(ctx);
    uint64_t unfreed = 0;
    allocs_.erase_owned_by(ctx, [&](uint64_t dptr, uint64_t bytes) {
        if (backend().mem_free(dptr) != VGPU_SUCCESS) unfreed += bytes;
    });
    // Forgotten all the same, or the memory would outlive the handles and
    // the quota, and a VM could take any amount by repeating it.
    if (unfreed) log_warn("vgpu: the backend refused to free %llu bytes", static_cast<unsigned long long>(unfreed));
    if (device != back) devices_.select(back);
}

// The new context is current, as cuCtxCreate makes it.
CommandResult CommandDispatch::op_CTX_CREATE(GuestCommand& c) {
    const auto [flags, device] = args_of<VGPU_OP_CTX_CREATE>(c);
    if (!context_flags_ok(flags)) return fail(VGPU_ERROR_INVALID_VALUE, "unknown context flags");
    if (!device_exists(device)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    auto h = contexts_.insert(ContextEntry{static_cast<uint32_t>(device), static_cast<uint32_t>(flags), false});
    if (!h) return fail(VGPU_ERROR_OUT_OF_MEMORY, "context table full");
    make_current(*h);
    return done(VGPU_SUCCESS, *h);
}

CommandResult CommandDispatch::op_CTX_DESTROY(GuestCommand& c) {
    const uint64_t h = args_of<VGPU_OP_CTX_DESTROY>(c).handle;
    const ContextEntry* e = contexts_.find(h);
    if (!e) return fail(VGPU_ERROR_INVALID_CONTEXT, "context handle");
    if (e->primary) return fail(VGPU_ERROR_INVALID_CONTEXT, "a primary context is released, not destroyed");
    free_objects_of(h);
    contexts_.erase(h);
    std::erase_if(peer_access_, [h](const auto& p) { return p.first == h || p.second == h; });
    if (ctx_ == h) ctx_ = 0;
    return done(VGPU_SUCCESS);
}

CommandResult CommandDispatch::op_CTX_SET_CURRENT(GuestCommand& c) {
    const uint64_t h = args_of<VGPU_OP_CTX_SET_CURRENT>(c).handle;
    if (h != 0 && !contexts_.find(h)) return fail(VGPU_ERROR_INVALID_CONTEXT, "context handle");
    make_current(h);
    return done(VGPU_SUCCESS);
}

CommandResult CommandDispatch::op_PRIMARY_CTX_RETAIN(GuestCommand& c) {
    const uint64_t ordinal = args_of<VGPU_OP_PRIMARY_CTX_RETAIN>(c).device;
    if (!device_exists(ordinal)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    const auto device = static_cast<uint32_t>(ordinal);
    const uint64_t h = primary_context(device);
    if (h == 0) return fail(VGPU_ERROR_OUT_OF_MEMORY, "context table full");
    PrimaryContext& p = primaries_[device];
    if (p.retains == UINT32_MAX) return fail(VGPU_ERROR_INVALID_VALUE, "retain count would wrap");
    return done(VGPU_SUCCESS, h, ++p.retains);
}

// The last release frees what was made in it, as the driver's does.
// result0: the retains left.
CommandResult CommandDispatch::op_PRIMARY_CTX_RELEASE(GuestCommand& c) {
    const uint64_t ordinal = args_of<VGPU_OP_PRIMARY_CTX_RELEASE>(c).device;
    if (!device_exists(ordinal)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    const auto device = static_cast<uint32_t>(ordinal);
    if (primaries_.size() <= device || primaries_[device].retains == 0)
        return fail(VGPU_ERROR_INVALID_CONTEXT, "primary context not retained");
    PrimaryContext& p = primaries_[device];
    if (--p.retains == 0) {
        free_objects_of(p.handle);
        p.flags = 0;
    }
    return done(VGPU_SUCCESS, p.retains);
}

CommandResult CommandDispatch::op_PRIMARY_CTX_STATE(GuestCommand& c) {
    const uint64_t ordinal = args_of<VGPU_OP_PRIMARY_CTX_STATE>(c).device;
    if (!device_exists(ordinal)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    const auto device = static_cast<uint32_t>(ordinal);
    if (primaries_.size() <= device) return done(VGPU_SUCCESS, 0, 0);
    return done(VGPU_SUCCESS, primaries_[device].flags, primaries_[device].retains > 0);
}

CommandResult CommandDispatch::op_PRIMARY_CTX_SET_FLAGS(GuestCommand& c) {
    const auto [ordinal, flags] = args_of<VGPU_OP_PRIMARY_CTX_SET_FLAGS>(c);
    if (!device_exists(ordinal)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    if (!context_flags_ok(flags)) return fail(VGPU_ERROR_INVALID_VALUE, "unknown context flags");
    const auto device = static_cast<uint32_t>(ordinal);
    if (primary_context(device) == 0) return fail(VGPU_ERROR_OUT_OF_MEMORY, "context table full");
    primaries_[device].flags = static_cast<uint32_t>(flags);
    return done(VGPU_SUCCESS);
}

// Frees what was made in it; retains and currency stay, as with the driver.
CommandResult CommandDispatch::op_PRIMARY_CTX_RESET(GuestCommand& c) {
    const uint64_t ordinal = args_of<VGPU_OP_PRIMARY_CTX_RESET>(c).device;
    if (!device_exists(ordinal)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    const auto device = static_cast<uint32_t>(ordinal);
    if (primaries_.size() <= device || primaries_[device].handle == 0) return done(VGPU_SUCCESS);
    free_objects_of(primaries_[device].handle);
    primaries_[device].flags = 0;
    return done(VGPU_SUCCESS);
}

// -> result0 1 if device can map peer's memory.
CommandResult CommandDispatch::op_DEVICE_CAN_ACCESS_PEER(GuestCommand& c) {
    const auto [device, peer] = args_of<VGPU_OP_DEVICE_CAN_ACCESS_PEER>(c);
    if (!device_exists(device) || !device_exists(peer)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    int can = 0;
    const Status s =
        backend_result(devices_.can_access_peer(static_cast<int>(device), static_cast<int>(peer), &can));
    return done(s, can != 0);
}

// From the current context's device to the peer context's; the pairs
// enabled are kept here, so every backend answers ALREADY_ENABLED /
// NOT_ENABLED alike. ENABLE's flags must be 0.
CommandResult CommandDispatch::set_peer_access(uint64_t peer, uint64_t flags, bool enable) {
    const ContextEntry* p = contexts_.find(peer);
    if (!p) return fail(VGPU_ERROR_INVALID_CONTEXT, "peer context handle");
    if (flags != 0) return fail(VGPU_ERROR_INVALID_VALUE, "peer access flags must be 0");
    const auto pair = std::make_pair(ctx_, peer);
    if (enable && peer_access_.count(pair)) return fail(VGPU_ERROR_PEER_ACCESS_ALREADY_ENABLED, "already enabled");
    if (!enable && !peer_access_.count(pair)) return fail(VGPU_ERROR_PEER_ACCESS_NOT_ENABLED, "not enabled");
    const Status s = backend_result(devices_.set_peer_access(selected_device_, static_cast<int>(p->device), enable));
    if (s != VGPU_SUCCESS) return done(s);
    if (enable) peer_access_.insert(pair);
    else peer_access_.erase(pair);
    return done(VGPU_SUCCESS);
}

CommandResult CommandDispatch::op_CTX_ENABLE_PEER_ACCESS(GuestCommand& c) {
    const auto [peer, flags] = args_of<VGPU_OP_CTX_ENABLE_PEER_ACCESS>(c);
    return set_peer_access(peer, flags, true);
}
CommandResult CommandDispatch::op_CTX_DISABLE_PEER_ACCESS(GuestCommand& c) {
    return set_peer_access(args_of<VGPU_OP_CTX_DISABLE_PEER_ACCESS>(c).handle, 0, false);
}

} // namespace kvmgpu::vgpu
